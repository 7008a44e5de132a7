// lt_addmm_probe: which algo does cuBLASLt's heuristic give PyTorch eager's addmm, and which of PyTorch's settings
// makes it differ from the runtime's `+bias` query? (issue 48)
//
// On the H200, eager's gelu(addmm(b, x, w)) at 70x5120x13824 tf32 ran the sm90 64x128x32 kernel without segment-k,
// and none of the runtime's BIAS-epilogue answers (workspaces 0, 1, 4, 32, 64 MiB) was that kernel
// (results/nvidia-h200/eager_kernels_addmm_form.txt). PyTorch's cuBLASLt call (CUDABlas.cpp gemm_and_bias) differs
// from ours in three ways that could change the heuristic's answer: it passes the cuBLAS handle (with its math mode
// set) where a cuBLASLt handle goes, it sets the minimum-alignment preferences from the pointers, and it asks at its
// cuBLASLt workspace (1 MiB unless CUBLASLT_WORKSPACE_SIZE says else). This asks the heuristic for one algo, as
// PyTorch does, for row-major NN Y = X·W + bias (cuBLASLt's column-major Yᵀ = Wᵀ·Xᵀ, the BIAS epilogue), under each
// combination of: handle (cuBLASLt's own, or the cuBLAS handle with TF32 math as PyTorch sets it), alignment
// preferences (unset, or 256 bytes for A, B, C and D as aligned tensors give), and workspace (0, 1, 4, 32, 64 MiB),
// and prints the algo's fields as a candidate id (lt/a..-t..-s..-k..-...).
//
//   lt_addmm_probe [MODE:MxNxK ...]    MODE tf32 or fp32; default: the held-out benchmark's eager wins of seed 9610
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/device_buffer.hpp"
#include "lt/blas_handle.hpp"
#include "lt/lt_gemm.hpp"

namespace gemmtune {
namespace {

struct Case {
  bool tf32 = true;
  std::uint64_t m = 0, n = 0, k = 0;
};

Case parse_case(const std::string& text) {
  Case c;
  unsigned long long m = 0, n = 0, k = 0;
  char mode[8] = {};
  if (std::sscanf(text.c_str(), "%7[a-z0-9]:%llux%llux%llu", mode, &m, &n, &k) != 4 || m == 0 || n == 0 || k == 0 ||
      (std::string(mode) != "tf32" && std::string(mode) != "fp32"))
    throw InputError("bad case '" + text + "' (expected MODE:MxNxK, MODE tf32 or fp32)");
  c.tf32 = std::string(mode) == "tf32";
  c.m = m;
  c.n = n;
  c.k = k;
  return c;
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  GT_LT_CALL(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}

template <typename T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  GT_LT_CALL(cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof(value)));
}

// The heuristic's first algo for PyTorch's addmm call on `c`, as a candidate id, or why there is none.
std::string first_algo(cublasLtHandle_t handle, const Case& c, const float* bias, std::size_t workspace,
                       bool alignment_prefs) {
  cublasLtMatmulDesc_t raw_desc = nullptr;
  GT_LT_CALL(cublasLtMatmulDescCreate(&raw_desc, c.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F));
  const LtMatmulDesc desc(raw_desc);
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
  // Yᵀ (n×m, ld n) = Wᵀ (n×k, ld n) · Xᵀ (k×m, ld k), as PyTorch lays out row-major addmm.
  const LtMatrixLayout a = make_lt_layout(c.n, c.k, static_cast<std::int64_t>(c.n));
  const LtMatrixLayout b = make_lt_layout(c.k, c.m, static_cast<std::int64_t>(c.k));
  const LtMatrixLayout d = make_lt_layout(c.n, c.m, static_cast<std::int64_t>(c.n));
  cublasLtMatmulPreference_t raw_pref = nullptr;
  GT_LT_CALL(cublasLtMatmulPreferenceCreate(&raw_pref));
  const LtPreference pref(raw_pref);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<std::uint64_t>(workspace));
  if (alignment_prefs) {
    const std::uint32_t aligned = 256;  // what PyTorch's _getAlignment gives a 256-byte aligned pointer
    for (const auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      set_pref(raw_pref, attr, aligned);
  }
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle, raw_desc, a.get(), b.get(), d.get(), d.get(),
                                                           raw_pref, 1, &result, &returned);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string("heuristic failed: ") + cublasLtGetStatusName(st);
  if (returned == 0) return "no algo";
  Candidate cand;
  cand.lt = LtGemm::read_algo_fields(result.algo);
  return cand.id() + " (workspace " + std::to_string(result.workspaceSize) + " B)";
}

void probe(const Case& c, cublasLtHandle_t lt, cublasLtHandle_t blas_as_lt) {
  const DeviceBuffer<float> bias(c.n);  // the heuristic reads the pointer's alignment, not its contents
  std::printf("== %s:%llux%llux%llu, BIAS epilogue\n", c.tf32 ? "tf32" : "fp32", static_cast<unsigned long long>(c.m),
              static_cast<unsigned long long>(c.n), static_cast<unsigned long long>(c.k));
  for (const bool blas_handle : {false, true})
    for (const bool alignment_prefs : {false, true})
      for (const std::size_t mib : {0, 1, 4, 32, 64})
        std::printf("  %-28s %-16s %2zu MiB  %s\n", blas_handle ? "cuBLAS handle (PyTorch)" : "cuBLASLt handle (ours)",
                    alignment_prefs ? "aligned 256 B" : "no alignment", mib,
                    first_algo(blas_handle ? blas_as_lt : lt, c, bias.get(), mib << 20, alignment_prefs).c_str());
}

int run(int argc, char** argv) {
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) cases.push_back(parse_case(argv[i]));
  if (cases.empty())
    for (const char* text : {"tf32:70x5120x13824", "tf32:144x16384x4096", "tf32:64x8192x8192", "fp32:280x1616x216"})
      cases.push_back(parse_case(text));
  const LtHandle lt = make_lt_handle();
  const BlasHandle blas = make_blas_handle();
  for (const Case& c : cases) {
    // PyTorch sets the math mode on the handle it then hands to cuBLASLt (CublasHandlePool.cpp).
    GT_BLAS_CALL(cublasSetMathMode(blas.get(), c.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    probe(c, lt.get(), reinterpret_cast<cublasLtHandle_t>(blas.get()));
  }
  return 0;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    return gemmtune::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lt_addmm_probe: %s\n", e.what());
    return 1;
  }
}
