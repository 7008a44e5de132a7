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

}  // namespace gemmtune::runtime
