// Selection: which candidate runs a problem, and the sentence that says why (Runtime::explain).
//
// In order: the exact problem's cache entry; a nearby tuned shape's candidate where the evidence says it transfers;
// the default (cuBLASLt's heuristic first choice, or our best guess where cuBLASLt cannot run the problem). Every
// cached candidate is re-checked by `supports` before it is taken, since a cache outlives builds and library versions.
//
// Fallback with evidence: the default is what the program would run without gemmtune, so a stand-in must be likely
// to beat it on a shape nobody measured. Where the default is cuBLASLt's heuristic, the tuned shapes of the same
// kind within max_nearest_distance stand in only when every one of them
//   (a) chose one of our kernel variants: a tile variant generalizes across shapes, while a cuBLASLt algo config
//       (tile, split-k, swizzle) is picked for its shape (on the H100 a split-k-4 algo tuned at 384x1536x768 ran
//       400x1500x800 at 0.86x of the heuristic's own choice), and
//   (b) beat heuristic-first as a program pays by min_transfer_margin or more in every measured condition (the
//       margin the sweep stored with the entry; an entry without one never stands in), so that
//   (c) the neighbours agree: one tuned shape nearby that the heuristic won, or won by little, vetoes the others.
// Then the nearest of them whose candidate runs this problem stands in; else the default. When the runtime
// confirms stand-ins on first use (confirm_on_first_use), the trial on the real problem is the guard instead, and the
// question becomes which own variants are worth its time: up to max_trial_candidates of them, first the ones the
// sweeps measured fastest over heuristic-first at the kind's tuned shapes, weighted toward the nearest
// (variant_ranking.hpp: the winner at an untuned shape is often a variant no tuned shape chose), then, where the db
// has no measurements (a cache that came through import) or the list is short, the own-variant choices of tuned
// shapes that beat heuristic-first at all (a stored margin: the keep rule cleared noise), nearest first and at any
// distance, without the x1.10 or the agreement (a trial costs a millisecond each). Where the default is our
// own best guess (3xtf32, which cuBLASLt lacks), the nearest tuned shape that runs the problem stands in as before:
// a measured variant of a near shape knows more than a guess.
// A problem of a shape class that has variants of its own (SpecialistsOf: m ≤ 64) puts to the trial first those that
// no sweep measured at the kind's shapes, with a db or without, up to half of max_trial_candidates; the ranked variants
// fill the rest. On held-out seed 9723 (H200) no tuned shape had m ≤ 64, and the trial at 8x2048x352 fp32 timed 12
// ranked tile variants (1.1-2.1x heuristic-first's time in a stream with cold inputs) but no skinny one, which the
// sweep timed 1.42x faster than cuBLAS's sgemm with no epilogue and 1.77x with bias+gelu
// (results/nvidia-h200/fp32_ceiling_seed9723.json.gz). Half, not all beyond the limit: the trial's 60 ms of host time
// (first_use_trial.hpp) then ran out at 8x2048x352 tf32 with 33 challengers, before heuristic-first's algo at a
// framework's workspace, 1.11-1.20x in a stream before, was timed in full; and a ranked tile variant still won
// 26x13799x2048 tf32 (1.6x).
// An entry the fp32-equivalent policy admitted is taken only when the rules allow it, and as a nearest shape only for
// a k no longer than the one its accuracy was measured at (the error of a k-long sum grows with k).
// Pure logic: the GPU checks come in as functions, so the rules are tested without a GPU.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "runtime/cache_index.hpp"

namespace gemmtune::runtime {

enum class ChoiceSource { Exact, Nearest, Default, Pinned };
const char* to_string(ChoiceSource s);

struct Choice {
  Candidate candidate;
  ChoiceSource source = ChoiceSource::Default;
  std::string why;  // the explanation after the candidate id
  // A problem the cache had no usable exact entry for: what `sweep --from-misses` should tune.
  bool is_miss() const { return source == ChoiceSource::Nearest || source == ChoiceSource::Default; }
  // With a first-use trial: more own variants to time against the default besides `candidate`, each with where it
  // comes from ("ranked 2 of 40: x1.31 over heuristic-first at ...", "chosen at 1024x1024x1024, ..."). Empty otherwise.
  struct Alternative {
    Candidate candidate;
    std::string source;
  };
  std::vector<Alternative> trial_alternatives;
  // What a call inside a CUDA graph capture runs where that is not `candidate`: a first-use trial's winner faster
  // from a graph (first_use_trial.hpp: faster_in_graph), or a pin's. Its why is in `why`.
  std::optional<Candidate> in_graph;
};

// "" when candidate c can run problem p; otherwise why not.
using SupportCheck = std::function<std::string(const GemmProblem& p, const Candidate& c)>;

struct DefaultCandidate {
  Candidate candidate;
  std::string how;  // "cuBLASLt heuristic's first algo", "best-guess own variant for 3xtf32 (...)"
  bool heuristic_first = false;  // cuBLASLt's own first choice: what the program would run without gemmtune
};
// The candidate to use when the cache has nothing usable; throws when there is none.
using DefaultChooser = std::function<DefaultCandidate(const GemmProblem& p)>;
// What a tuned shape's candidate becomes when it stands in for p: for our wgmma variants, the twin staged or not as
// p's alignment asks (kernels::alignment_twin); a shape tuned with aligned operands chose a tile, not the cp.async
// pipeline that the same variant would fall back to at an unaligned p. Empty: the candidate as it is.
using TwinChooser = std::function<Candidate(const GemmProblem& p, const Candidate& c)>;
// The own variants made for p's shape class (the decode-sized skinny families where m ≤ 64), best guess first, and
// the words for them; none where p is of no such class. A first-use trial times those that the kind's measurements
// cannot rank: a db whose tuned shapes all lie outside the class measured none of them, and the tile variants it ranks
// were measured at shapes of another class; nor do times at shapes that `ranked_by` refuses.
struct Specialists {
  std::vector<Candidate> candidates;
  std::string what;  // "the skinny variants, made for decode-sized m"
  // Whether a sweep's times at a tuned shape place these specialists for the problem asked (empty: at any shape of
  // the kind). A skinny tile's time where it covers 64 rows in four row blocks says little of it at one row.
  std::function<bool(const GemmProblem& measured_at)> ranked_by;
};
using SpecialistsOf = std::function<Specialists(const GemmProblem& p)>;

struct SelectionRules {
  double max_nearest_distance = 0;
  // What a stand-in's stored margin over heuristic-first must reach in every measured condition.
  double min_transfer_margin = 1.10;
  // How many tuned shapes in range must have chosen the same own variant for it to stand in (every one in range must).
  int min_agreeing_neighbours = 2;
  // The runtime times a stand-in against the default on the real problem before keeping it (see above).
  bool confirm_on_first_use = false;
  // How many distinct own variants a first-use trial times against the default (the stand-in and alternatives):
  // RuntimeOptions::max_trial_candidates.
  int max_trial_candidates = 12;
  // Whether entries the fp32-equivalent policy admitted (3xtf32 for fp32 problems) may be used.
  bool fp32_equivalent = false;
  // Why the cache may be empty, for the explanation ("db 'x.db' not found"); "" when it was loaded.
  std::string cache_note;
};

Choice select_candidate(const CacheIndex& index, const GemmProblem& p, const SelectionRules& rules,
                        const SupportCheck& supports, const DefaultChooser& fallback, const TwinChooser& twin = {},
                        const SpecialistsOf& specialists = {});

}  // namespace gemmtune::runtime
