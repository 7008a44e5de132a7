// The no-entry candidate set: what the runtime runs, or puts to its first-use trial, for a problem the cache has no
// entry for, as far as cuBLASLt decides it: the heuristic's first algo with its fused epilogue (heuristic-first, the
// default), and where that epilogue is fused, the same heuristic's first algo for the plain GEMM followed by our
// epilogue kernel (the unfused challenger). A fused cuBLASLt epilogue can cost more than a pass of its own over Y: on
// the H200's 48 held-out tf32 shapes the GELU_BIAS call ran the same algo 1.1-1.6x slower than the plain GEMM at 23
// of them (219x13536x223: 30.5 vs 20.0 us), and PyTorch's unfused call beat the fused one by up to 19%.
//
// Where a stored matrix's rows are not 16-byte aligned (k or n not a multiple of 4, row-major), every cuBLASLt algo
// runs its unaligned kernels, and the same heuristic's first algo on padded copies (lt/lt_padding.hpp) is a third
// challenger: 2759x7137x677 bias+gelu tf32 ran 182 us that way against 358 (H200, unaligned_padding_probe.json).
//
// One definition for both sides of issue 37: the runtime (runtime/default_candidate.hpp, runtime.cpp) runs this set,
// and the sweep times it in its finalist stage (tuner/sweep.cpp), so an entry is kept only where it beats what the
// runtime would run without one (problem/candidate_choice.hpp: choose_over_no_entry). A cache that kept cuBLASLt's
// fused GELU_BIAS at 2723x3333x1536 fp32 (742-755 us) ran slower than the runtime with no db at all (713-715 us, its
// trial picked the plain GEMM + our epilogue) because the sweep had never timed the unfused call (H100).
// The runtime's other challengers (own variants ranked from what the sweeps measured at other shapes) depend on the
// db, not on the problem: the sweep times every own variant anyway.
//
// What a framework would run is a challenger too (issue 48): PyTorch calls the same cuBLASLt heuristic with its own,
// smaller workspace (cuBLASLt 1 MiB up to 2.4, then cuBLAS's 4 or 32 MiB; none where a program sets it to 0), and the
// heuristic answers a smaller workspace with other algos (no split-k whose partials do not fit). On the H200's
// held-out records PyTorch eager beat heuristic-first at 64 MiB by up to 28% (209x14336x3072 tf32: 82 vs 105 us).
// So heuristic-first is asked again at each of kFrameworkWorkspaces below the runtime's own, and every algo it
// answers that the set does not hold yet is a challenger. cuBLAS picks by heuristics of its own (lt/blas_gemm.hpp):
// its own choice, the call torch.mm makes, is the last challenger, wherever it can run the problem. Where the problem
// has a bias and more, the call PyTorch eager makes for gelu(addmm(...)) is one too: cuBLASLt's BIAS epilogue, then
// our kernel for the rest (LtEpilogueMode::BiasInGemm), at the runtime's workspace and each framework's. On seed
// 9607 (H200) eager's two kernels beat both our fused GELU_BIAS and cublasSgemm + our epilogue by up to 15% at
// 280x1616x216 fp32 bias+gelu (13.1 against 15.0 us).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lt/lt_gemm.hpp"

namespace gemmtune {

// The heuristic's first algo for a problem in an epilogue mode, asked to fit max_workspace bytes, or nullopt where it
// has none.
using HeuristicFirstOf = std::function<std::optional<Candidate>(LtEpilogueMode, std::size_t max_workspace)>;

// The workspaces frameworks give cuBLASLt and cuBLAS (above): none, 1, 4 and 32 MiB.
inline constexpr std::size_t kFrameworkWorkspaces[] = {0, std::size_t{1} << 20, std::size_t{4} << 20,
                                                       std::size_t{32} << 20};

struct NoEntryCandidates {
  Candidate heuristic_first;            // what runs unless a challenger beats it on the problem
  std::vector<Candidate> challengers;   // what the first-use trial puts against it
};

// The rule, within workspace_bytes (the workspace the caller has). heuristic_first: first_of(PreferFused); the
// unfused challenger only where it is cuBLASLt's own epilogue over a non-empty one (a default that already runs our
// epilogue kernel, or a problem without one, has nothing to take apart); the bias-in-GEMM one where
// LtGemm::bias_in_gemm_unsupported_reason is empty; the padded one wherever the problem has rows to pad
// (LtGemm::padding_unsupported_reason); then the same default, unfused and bias-in-GEMM calls at each framework
// workspace smaller than workspace_bytes, where they answer an algo not in the set yet; then cuBLAS's own choice.
// Nullopt where the heuristic has no algo: then cuBLASLt is no default.
std::vector<Candidate> no_entry_challengers(const GemmProblem& gemm, const Candidate& heuristic_first,
                                            const HeuristicFirstOf& first_of, std::size_t workspace_bytes);
std::optional<NoEntryCandidates> no_entry_candidates(const GemmProblem& gemm, const HeuristicFirstOf& first_of,
                                                     std::size_t workspace_bytes);

// The workspace PyTorch 2.11 (the CUDA 13.0 wheel) gives cuBLASLt for addmm: 1 MiB, as its own API log shows on
// the H100 (results/nvidia-h100-80gb-hbm3/torch_lt_calls.txt: maxWorkspaceSizeinBytes=1048576, so no split-k whose
// partials need more); its mm goes through cuBLAS, which asks cuBLASLt with 32 MiB. Later sources share cuBLAS's
// 32 MiB by default (TORCH_CUBLASLT_UNIFIED_WORKSPACE); CUBLASLT_WORKSPACE_SIZE sets it.
inline constexpr std::size_t kTorchLtWorkspace = std::size_t{1} << 20;

// Which of the set is the call PyTorch eager (2.11) makes for `gemm`, as far as the set can copy it: addmm with a bias
// over rows and columns of more than one element runs cuBLASLt's heuristic-first at kTorchLtWorkspace with its BIAS
// epilogue (the bias-in-GEMM call where something follows the bias, the fused one where the bias is all), the
// activation after it; mm, and addmm on a single row or column, run cuBLAS's own choice. Asked of first_of at
// min(kTorchLtWorkspace, workspace_bytes); nullopt where that call cannot run gemm. Its id may be heuristic-first's.
std::optional<Candidate> eager_call(const GemmProblem& gemm, const HeuristicFirstOf& first_of,
                                    std::size_t workspace_bytes);

// What a challenger of the set is, for explain(): "the plain GEMM, then our epilogue kernel", ...
std::string no_entry_challenger_kind(const Candidate& c);

// first_of asked of cuBLASLt for `gemm` (the GEMM a pass runs, problem/pass_gemm.hpp). cuBLASLt must be able to run
// gemm (LtGemm::unsupported_reason empty).
HeuristicFirstOf lt_heuristic_first_of(const GemmProblem& gemm, cublasLtHandle_t lt);

}  // namespace gemmtune
