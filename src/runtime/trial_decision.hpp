// What runs after a first-use trial (first_use_trial.hpp): its winners, the one the trial keeps, the eager limit
// over them (kEagerCallLimit), what a call inside a graph capture runs instead, and the explain() text that says why.
// Pure: the trial's results in, the choice out, so each rule is tested without a GPU (runtime.cpp runs the trial).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "problem/candidate.hpp"
#include "runtime/first_use_trial.hpp"
#include "runtime/selection.hpp"
#include "runtime/variant_ranking.hpp"

namespace gemmtune::runtime {

// One challenger of a first-use trial: where it comes from, and how its trial went.
struct TrialChallenger {
  Candidate candidate;
  std::string name;
  bool no_entry = false;  // one of the no-entry set's (lt/no_entry_candidates.hpp), not a tuned shape's
  std::optional<ProgramTrial> times;  // none where it could not be tried
  std::string text;  // "first-use trial on this problem: ... vs heuristic-first ...", or why it failed
  bool out_of_budget = false;  // the trial's budget stopped it before it lost (ChallengerTrial::out_of_budget)
  bool eager = false;  // PyTorch eager's own call (lt/no_entry_candidates.hpp: eager_call), timed in full
};

// What the trial was held against, besides its challengers.
struct TrialSetting {
  bool exact = false;        // the choice is an exact entry
  bool own_entry = false;    // ... of our own kernels: its challengers are the near-ties the sweep timed beside it
  bool had_standin = false;  // the choice is a tuned shape's candidate standing in (ChoiceSource::Nearest)
  DefaultCandidate heuristic_first;  // what runs without an entry, the side every challenger was paired with
  std::optional<Candidate> eager;    // PyTorch eager's own call, where the limit applies
  std::string cost;                  // "; this first use took ... ms (...)", the end of the explain text
  // Eager's call is heuristic-first itself: every pair times it, and its ratios are all 1.
  bool eager_is_heuristic_first() const { return eager && eager->id() == heuristic_first.candidate.id(); }
};

// What a trial of `choice` times against heuristic-first, in the order of their first pairs: the stand-in (or the
// entry, and eager's call beside it), what cuBLAS and cuBLASLt offer in the runtime's place (`no_entry`: the no-entry
// set's challengers, lt/no_entry_candidates.hpp), the stand-in's alternatives, then the own variants the sweep timed
// at this shape (`rivals`). Where the budget runs out before every challenger has had one, the call PyTorch eager
// makes has had it before the 25-odd own variants ranked below the stand-in: at 206x5120x13824 bias+gelu fp32
// (held-out seed 9646, H200) those took the whole 50 ms before cublasSgemm was timed, and the program ran 0.968x eager
// in one process.
std::vector<TrialChallenger> trial_challengers(const Choice& choice, const TrialSetting& s,
                                              const std::vector<Candidate>& no_entry,
                                              const std::vector<RankedVariant>& rivals);

// "stream warm 12.10 us per call (slowest batch 12.31) vs heuristic-first 13.02 us (fastest batch 12.90), stream
// cold ..." over the conditions the challenger reached, the first in full words.
std::string trial_times_text(const ProgramTrial& t);

// Sets choice's candidate, source, why and in_graph from the trial of `tried` (in the order they were tried: the
// stand-in or the entry first where there is one; never empty).
void decide_after_trial(const std::vector<TrialChallenger>& tried, const TrialSetting& s, Choice& choice);

}  // namespace gemmtune::runtime
