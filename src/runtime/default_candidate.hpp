// The candidate a problem runs when the cache has nothing usable for it: cuBLASLt's heuristic first choice (with
// its fused epilogue where it has one), or, where cuBLASLt cannot run the problem (3xtf32), our best-guess variant.
#pragma once

#include <cstddef>
#include <optional>

#include "lt/lt_handles.hpp"
#include "runtime/selection.hpp"

namespace gemmtune::runtime {

// Throws CheckError when nothing can run p.
DefaultCandidate default_candidate(const GemmProblem& p, cublasLtHandle_t lt, std::size_t workspace_bytes,
                                   int sm_count);

// The first-use trial's challenger of a fused default: the same heuristic's first algo for p's plain GEMM, then our
// epilogue kernel. A fused cuBLASLt epilogue can cost more than a pass of its own over Y: on the H200's 48 held-out
// tf32 shapes, the GELU_BIAS call ran the same algo 1.1-1.6x slower than the plain GEMM at 23 of them
// (219x13536x223: 30.5 vs 20.0 us), and PyTorch's unfused call beat the fused one by up to 19%.
// nullopt when d is not cuBLASLt's fused call of an epilogue (nothing to take apart) or the heuristic has no algo.
std::optional<Candidate> unfused_challenger(const GemmProblem& p, const DefaultCandidate& d, cublasLtHandle_t lt,
                                            std::size_t workspace_bytes);

}  // namespace gemmtune::runtime
