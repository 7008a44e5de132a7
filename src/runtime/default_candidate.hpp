// The candidate a problem runs when the cache has nothing usable for it: cuBLASLt's heuristic first choice (with
// its fused epilogue where it has one: the no-entry set's heuristic-first, lt/no_entry_candidates.hpp), or, where
// cuBLASLt cannot run the problem (3xtf32), our best-guess variant.
#pragma once

#include <cstddef>

#include "lt/lt_handles.hpp"
#include "runtime/selection.hpp"

namespace gemmtune::runtime {

// Throws CheckError when nothing can run p.
DefaultCandidate default_candidate(const GemmProblem& p, cublasLtHandle_t lt, std::size_t workspace_bytes,
                                   int sm_count);

}  // namespace gemmtune::runtime
