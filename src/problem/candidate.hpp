// Candidate: one way to run a GemmProblem: one of our kernel variants, one cuBLASLt algo, or cuBLAS's own choice (the
// cublasSgemm call PyTorch's torch.mm makes, whose kernel cuBLAS picks by heuristics of its own at each call).
// A cuBLASLt algo is kept field by field (not as the opaque cublasLtMatmulAlgo_t) so it can be stored, diffed,
// and rebuilt with cublasLtMatmulAlgoInit + ConfigSetAttribute on another machine, then re-checked.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace gemmtune {

enum class Backend { Own, Lt, Blas };

struct LtAlgoFields {
  int algo_id = -1;
  int tile = 0;           // cublasLtMatmulTile_t
  int stages = 0;         // cublasLtMatmulStages_t
  int splitk = 1;         // 1 = no split-k
  int reduction = 0;      // cublasLtReductionScheme_t
  int swizzle = 0;        // CTA swizzling
  int custom = 0;         // custom option
  int cluster_shape = 0;  // cublasLtClusterShape_t (sm_90)
  int inner_shape = 0;    // cublasLtMatmulInnerShape_t
  bool operator==(const LtAlgoFields& o) const;
};

struct Candidate {
  Backend backend = Backend::Lt;
  std::string own_variant;    // Backend::Own: the registry name of the kernel variant
  LtAlgoFields lt;            // Backend::Lt
  int heuristic_rank = -1;    // Backend::Lt: position in the heuristic's answer (0 = its first choice), -1 = not from it
  bool lt_epilogue_kernel = false;  // Backend::Lt: our epilogue kernel runs after the GEMM (no cuBLASLt epilogue for it)
  // Backend::Lt: the GEMM runs on copies of the operands padded to 16-byte rows, into a padded output that our
  // epilogue kernel then reads (lt/lt_padding.hpp); lt_epilogue_kernel is true with it.
  bool lt_padded = false;
  // Backend::Lt: cuBLASLt's BIAS epilogue adds the bias and our epilogue kernel applies the rest (activation, Z,
  // dropout): the two kernels PyTorch eager runs for gelu(addmm(bias, x, w)). lt_epilogue_kernel is true with it.
  bool lt_bias_in_gemm = false;

  // Stable identity: "own/tf32_128x128x32_s3", "lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0" (+ "+epi" with our epilogue,
  // "+pad" padded, "+bias" cuBLASLt's bias then our epilogue) or "cublas/sgemm" (our epilogue kernel after it wherever the problem has an epilogue).
  std::string id() const;
  // Inverse of id(); throws InputError. heuristic_rank is not part of the identity.
  static Candidate parse_id(const std::string& id);
  // A cuBLASLt algo launched in thread-block clusters larger than 1x1x1 (cluster_shape 2 is 1x1x1; 0, AUTO, is what
  // the non-cluster algos report).
  bool lt_clustered() const { return backend == Backend::Lt && lt.cluster_shape > 2; }
};

const char* to_string(Backend b);
Backend parse_backend(const std::string& s);  // "own" | "lt" | "cublas"

void to_json(nlohmann::json& j, const Candidate& c);
void from_json(const nlohmann::json& j, Candidate& c);

}  // namespace gemmtune
