// Which own variants a first-use trial tries on a shape nobody tuned, best first, from what the sweeps measured at the
// tuned shapes of its kind: not only the variant each tuned shape chose, but every one the sweep timed there.
//
// A variant's score is its speed over heuristic-first at the measured shapes, as a geometric mean weighted toward the
// nearest: weight exp(-d²/σ²) at log-shape distance d, σ = 1 (2.7x off in one dimension weighs 1/e). Why every
// variant: the winner at an untuned shape is often one that no tuned shape chose. Replayed over the H200's held-out
// seeds 1-6 (12 tuned and 12 untuned shapes per seed and kind, every candidate timed at both; best of a list of 8
// where it beat heuristic-first, else heuristic-first), the untuned tf32 shapes gained a geomean 1.116x from the
// variants the nearest tuned shapes chose, 1.158x from this ranking (σ 0.5: 1.141x, 2: 1.157x, unweighted 1.111x) and
// 1.184x from trying every variant; fp32 1.078x, 1.110x, 1.115x. Variants that lost to heuristic-first everywhere
// stay in the ranking: a list without those below 0.9x there gained 1.107x in tf32, less than the chosen variants.
#pragma once

#include <functional>
#include <vector>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "runtime/cache_index.hpp"

namespace gemmtune::runtime {

struct RankedVariant {
  Candidate candidate;  // as it would run the asked problem (its alignment twin)
  double speedup = 0;   // the weighted geometric mean of its speed over heuristic-first
  int shapes = 0;       // how many measured shapes it ran at
};

inline constexpr double kRankingSigma = 1.0;

// Variants measured as different twins of one tile (staged or not) are one variant here: `as_run` maps a measured
// candidate to what would run the asked problem, and the two merge under that id. Best first; ties by id.
std::vector<RankedVariant> rank_own_variants(const std::vector<MeasuredNeighbor>& measured,
                                             const std::function<Candidate(const Candidate&)>& as_run);

// An exact entry that is one of what the runtime tries without an entry (heuristic-first, or a no-entry challenger)
// is put to a first-use trial on the program's problem (runtime.cpp: decide_by_trial); these are the own variants that
// trial times beside it: those the sweep timed faster than heuristic-first at that very shape, by kernel time, fastest
// first (ties by id), at most max_rivals. Why: the sweep keeps heuristic-first unless a challenger beats it beyond
// noise in every condition, and against a split-k or clustered heuristic-first that bound is 6%, since where the
// sweep's workspace lies moves such an algo that much (candidate_choice.hpp: kWorkspacePlacementNoise); a runtime with
// no db at all times the same own variants against heuristic-first in the program's workspace, at a 1% floor. At
// 2x4096x768 tf32 (held-out seed 9725, H200) the sweep's table had own/skinny_mma_tf32_8x128x32_s4 at 7.90 us against
// heuristic-first's split-k 4 algo at 9.04, the entry pinned heuristic-first, and the program ran 0.894-0.976x a
// runtime with no db, whose trial kept the skinny variant. With its rivals in the trial, an entry and no entry decide
// among the same kind of candidates by the same rule.
//
// An own entry (`entry`) has rivals only where the sweep timed others within kRivalWithin of it: near-ties that trade
// conditions, warm against cold, which the sweep's finalist stage and a no-db runtime's trial each settle by their
// summed time over the four, so by noise. At 2x4096x768 bias+gelu fp32 (seed 9725 again, H200) the sweep kept
// own/skinny_fp32_8x128x64_s4, the no-db trial own/skinny_fp32_8x128x32_s3, and the entry ran 0.950-0.955x no entry
// warm and 1.027-1.032x cold; at 2x1152x11409 fp32 (seed 9726) the streamed and the plain skinny tile, 0.972x. The
// entry itself is no rival; there are none where the sweep did not measure the entry at the shape (an imported
// cache) or nothing is that near.
inline constexpr double kRivalWithin = 0.10;  // as the sweep's finalists by kernel time (tuner/sweep.cpp)
// Three: a first use of the entry then times a few sides more than the no-entry set's, not every variant the sweep ran
// there (the skinny families alone have dozens at a decode shape), within the trial's budgets (first_use_trial.hpp).
inline constexpr int kMaxEntryRivals = 3;
std::vector<RankedVariant> exact_shape_rivals(const std::vector<OwnVariantSpeed>& at_shape, int max_rivals,
                                              const Candidate* entry = nullptr);

}  // namespace gemmtune::runtime
