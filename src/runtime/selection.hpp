// Selection: which candidate runs a problem, and the sentence that says why (Runtime::explain).
//
// In order: the exact problem's cache entry; the nearest tuned shapes of the same kind within max_distance, nearest
// first; the default (cuBLASLt's heuristic, or our best guess where cuBLASLt cannot run the problem). Every cached
// candidate is re-checked by `supports` before it is taken, since a cache outlives builds and library versions.
// An entry the fp32-equivalent policy admitted is taken only when the rules allow it, and as a nearest shape only for
// a k no longer than the one its accuracy was measured at (the error of a k-long sum grows with k).
// Pure logic: the GPU checks come in as functions, so the rules are tested without a GPU.
#pragma once

#include <functional>
#include <string>

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
};

// "" when candidate c can run problem p; otherwise why not.
using SupportCheck = std::function<std::string(const GemmProblem& p, const Candidate& c)>;

struct DefaultCandidate {
  Candidate candidate;
  std::string how;  // "cuBLASLt heuristic's first algo", "best-guess own variant for 3xtf32 (...)"
};
// The candidate to use when the cache has nothing usable; throws when there is none.
using DefaultChooser = std::function<DefaultCandidate(const GemmProblem& p)>;

struct SelectionRules {
  double max_nearest_distance = 0;
  // Whether entries the fp32-equivalent policy admitted (3xtf32 for fp32 problems) may be used.
  bool fp32_equivalent = false;
  // Why the cache may be empty, for the explanation ("db 'x.db' not found"); "" when it was loaded.
  std::string cache_note;
};

Choice select_candidate(const CacheIndex& index, const GemmProblem& p, const SelectionRules& rules,
                        const SupportCheck& supports, const DefaultChooser& fallback);

}  // namespace gemmtune::runtime
