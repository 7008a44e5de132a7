// GemmProblem: one GEMM the tuner measures and the runtime runs, Y = epilogue(op(A)·op(B)).
//
// Row-major throughout (as the seed's smoke test): A is m×k, B is k×n, Y is m×n.
// trans_a: A is stored k×m (row-major) and read transposed; trans_b likewise (B stored n×k).
// out == Transposed: Y (and Z) are stored n×m, so the next op reads Yᵀ without a transpose kernel.
// Epilogue, in order: Z = acc + bias[col]; Y = act(Z); Y = Y·keep/(1−p) with keep = philox(seed, offset, row·n + col) ≥ p (the 64-bit index and offset are separate counter words).
// The dropout index is the logical (row, col) of Y, independent of the stored layout, so forward and backward
// regenerate the same mask.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace gemmtune {

enum class MathMode { Fp32, Tf32, Tf32x3 };
enum class Activation { None, Relu, LeakyRelu, Gelu, GeluErf, Sigmoid, Tanh };
enum class OutputLayout { RowMajor, Transposed };

// Which GEMM of a layer's step this is. Backward problems are tuned like forward ones:
//   Forward: Y = epi(op(A)·op(B)), with the problem's m, n, k.
//   GradA:   gA = gZ·op(B)ᵀ, gZ = gY ⊙ act'(Z) ⊙ mask  (m, n, k are the forward's; the GEMM is m×k×n)
//   GradB:   gB = op(A)ᵀ·gZ                           (the GEMM is k×n×m)
enum class Pass { Forward, GradA, GradB };

struct Epilogue {
  bool bias = false;              // per-column bias of length n
  Activation act = Activation::None;
  float leaky_slope = 0.01f;      // only meaningful for LeakyRelu
  bool save_z = false;            // also store the pre-activation Z for the backward pass
  float dropout_p = 0.0f;         // 0 disables dropout

  bool dropout() const { return dropout_p > 0.0f; }
  bool operator==(const Epilogue& o) const;

  // "bias+gelu+z", "leaky_relu=0.1+dropout=0.1", "none": the epilogue part of a problem key, also used by profiles.
  std::string key() const;
  static Epilogue parse(const std::string& spec);  // throws InputError naming the bad token
};

struct GemmProblem {
  Pass pass = Pass::Forward;
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  OutputLayout out = OutputLayout::RowMajor;
  Epilogue epi;
  MathMode mode = MathMode::Tf32;

  // Canonical, parseable key: "fwd:1024x1024x1024:nn:row:bias+gelu+z:tf32". Stable: the db and the gate key on it.
  std::string key() const;
  // Inverse of key(); throws InputError naming the bad part.
  static GemmProblem parse_key(const std::string& key);
  // Throws InputError if a dimension is < 1, p is outside [0, 1) or the slope is not finite.
  void validate() const;

  // "nn", "nt", "tn", "tt": A's letter first.
  std::string layout() const;
  // A problem with the same pass, layout, epilogue and mode: what "the same kind" means for nearest-shape lookup.
  std::string kind_key() const;

  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  // Row-major leading dimensions of the stored operands.
  std::int64_t lda() const { return trans_a ? m : k; }
  std::int64_t ldb() const { return trans_b ? k : n; }
  std::int64_t ldy() const { return out == OutputLayout::Transposed ? m : n; }

  bool operator==(const GemmProblem& o) const;
  bool operator!=(const GemmProblem& o) const { return !(*this == o); }
};

// Device pointers and per-call values for one GEMM; shapes come from the GemmProblem.
struct GemmOperands {
  const float* A = nullptr;
  const float* B = nullptr;
  const float* bias = nullptr;  // length n, required iff epi.bias
  float* Y = nullptr;
  float* Z = nullptr;           // required iff epi.save_z
  std::uint64_t seed = 0;       // dropout key
  std::uint64_t offset = 0;     // dropout counter base: a new offset per step gives a new mask
  // Device memory holding the counter base instead, read when the kernels run (then `offset` is ignored): a CUDA graph
  // captures the pointer, not the value, so a counter the graph advances (Runtime::advance_offset) gives every replay
  // its own mask. Null: the value above.
  const std::uint64_t* offset_ptr = nullptr;
};

const char* to_string(MathMode m);
const char* to_string(Activation a);
const char* to_string(Pass p);
MathMode parse_math_mode(const std::string& s);     // "fp32" | "tf32" | "3xtf32"
Activation parse_activation(const std::string& s);  // "none" | "relu" | "leaky_relu" | "gelu" | "gelu_erf" | ...
Pass parse_pass(const std::string& s);              // "fwd" | "bwd_a" | "bwd_b"

void to_json(nlohmann::json& j, const GemmProblem& p);
void from_json(const nlohmann::json& j, GemmProblem& p);

}  // namespace gemmtune
