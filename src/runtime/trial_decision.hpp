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
};

// "stream warm 12.10 us per call (slowest batch 12.31) vs heuristic-first 13.02 us (fastest batch 12.90), stream
// cold ..." over the conditions the challenger reached, the first in full words.
std::string trial_times_text(const ProgramTrial& t);

// Sets choice's candidate, source, why and in_graph from the trial of `tried` (in the order they were tried: the
// stand-in or the entry first where there is one; never empty).
void decide_after_trial(const std::vector<TrialChallenger>& tried, const TrialSetting& s, Choice& choice);

}  // namespace gemmtune::runtime
