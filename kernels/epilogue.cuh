// The fused epilogue every kernel family ends with, and the math the fp64 reference and the backward share.
//
// Order (src/problem/gemm_problem.hpp): Z = acc + bias[col]; Y = act(Z); Y = Y·keep/(1−p).
// Dropout is stateless Philox4x32-10: key = the 64-bit seed, counter = (64-bit logical element index row·n + col,
// 64-bit offset). A kernel regenerates any element's mask bit from (seed, offset, row, col) alone, so there is no RNG
// kernel, no mask buffer, and the backward's gZ = gY ⊙ act'(Z) ⊙ keep/(1−p) sees the forward's mask. A new offset per
// step gives an independent mask (the offset is its own counter word, not added to the index). The offset comes by
// value, or from device memory (offset_ptr) read when the kernel runs: a CUDA graph captures the pointer, so a counter
// the graph advances on each replay gives each replayed step its own mask.
//
// Everything under `#if defined(__CUDACC__)` at the end is device code; the rest is __host__ __device__ and builds as
// plain C++ too, so host code (tests, the runtime, the fp64 reference) computes the same dropout bits and the same
// activation formulas. The kernels' own fp32 activations (namespace fast) are faster forms of those formulas, checked
// against them by the kernel tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/host_device.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

// Overloads pick the float or double C function, so the templates below stay in the precision they are given.
namespace math {
GT_HOST_DEVICE float exp(float x) { return expf(x); }
GT_HOST_DEVICE double exp(double x) { return ::exp(x); }
GT_HOST_DEVICE float tanh(float x) { return tanhf(x); }
GT_HOST_DEVICE double tanh(double x) { return ::tanh(x); }
GT_HOST_DEVICE float erf(float x) { return erff(x); }
GT_HOST_DEVICE double erf(double x) { return ::erf(x); }
}  // namespace math

// act(z). gelu is the tanh form, gelu_erf the exact one.
template <typename T>
GT_HOST_DEVICE T activation_forward(Activation act, T z, T leaky_slope) {
  constexpr T kSqrt2OverPi = T(0.7978845608028654);
  constexpr T kGeluCubic = T(0.044715);
  constexpr T kInvSqrt2 = T(0.7071067811865476);
  switch (act) {
    case Activation::None: return z;
    case Activation::Relu: return z > T(0) ? z : T(0);
    case Activation::LeakyRelu: return z > T(0) ? z : leaky_slope * z;
    case Activation::Gelu: return T(0.5) * z * (T(1) + math::tanh(kSqrt2OverPi * (z + kGeluCubic * z * z * z)));
    case Activation::GeluErf: return T(0.5) * z * (T(1) + math::erf(z * kInvSqrt2));
    case Activation::Sigmoid: return T(1) / (T(1) + math::exp(-z));
    case Activation::Tanh: return math::tanh(z);
  }
  return z;
}

// d act(z) / dz, for the backward's gZ = gY ⊙ act'(Z). relu and leaky_relu take the right-hand limit's complement at 0
// (derivative 0, resp. slope), as PyTorch does.
template <typename T>
GT_HOST_DEVICE T activation_derivative(Activation act, T z, T leaky_slope) {
  constexpr T kSqrt2OverPi = T(0.7978845608028654);
  constexpr T kGeluCubic = T(0.044715);
  constexpr T kInvSqrt2 = T(0.7071067811865476);
  constexpr T kInvSqrt2Pi = T(0.3989422804014327);
  switch (act) {
    case Activation::None: return T(1);
    case Activation::Relu: return z > T(0) ? T(1) : T(0);
    case Activation::LeakyRelu: return z > T(0) ? T(1) : leaky_slope;
    case Activation::Gelu: {
      const T t = math::tanh(kSqrt2OverPi * (z + kGeluCubic * z * z * z));
      return T(0.5) * (T(1) + t) + T(0.5) * z * (T(1) - t * t) * kSqrt2OverPi * (T(1) + T(3) * kGeluCubic * z * z);
    }
    case Activation::GeluErf:
      return T(0.5) * (T(1) + math::erf(z * kInvSqrt2)) + z * kInvSqrt2Pi * math::exp(T(-0.5) * z * z);
    case Activation::Sigmoid: {
      const T s = T(1) / (T(1) + math::exp(-z));
      return s * (T(1) - s);
    }
    case Activation::Tanh: {
      const T t = math::tanh(z);
      return T(1) - t * t;
    }
  }
  return T(1);
}

struct Philox4x32Block {
  std::uint32_t word[4];
};

GT_HOST_DEVICE void mul_hi_lo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
#endif
}

// Philox4x32-10 (Salmon et al., SC'11; Random123's constants and round order).
GT_HOST_DEVICE Philox4x32Block philox4x32_10(Philox4x32Block counter, std::uint32_t key0, std::uint32_t key1) {
  std::uint32_t* c = counter.word;
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(0xD2511F53u, c[0], hi0, lo0);
    mul_hi_lo(0xCD9E8D57u, c[2], hi1, lo1);
    const Philox4x32Block next{{hi1 ^ c[1] ^ key0, lo1, hi0 ^ c[3] ^ key1, lo0}};
    counter = next;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return counter;
}

// Uniform in [0, 1) with 24 random bits: exact in float, so host and device agree bit for bit on every keep decision.
GT_HOST_DEVICE float dropout_uniform(std::uint64_t seed, std::uint64_t offset, std::uint64_t element) {
  const Philox4x32Block counter{{static_cast<std::uint32_t>(element), static_cast<std::uint32_t>(element >> 32),
                                 static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32)}};
  const Philox4x32Block r =
      philox4x32_10(counter, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return static_cast<float>(r.word[0] >> 8) * (1.0f / 16777216.0f);
}

// keep ⇔ uniform ≥ p, so P(keep) = 1 − p up to the 2^-24 grid.
GT_HOST_DEVICE bool dropout_keep(std::uint64_t seed, std::uint64_t offset, std::uint64_t element, float p) {
  return dropout_uniform(seed, offset, element) >= p;
}

// The dropout counter base of a launch: *offset_ptr when the caller gave one, else the value. On the device the load
// happens when the kernel runs, which is what makes a captured launch see a counter advanced after the capture.
GT_HOST_DEVICE std::uint64_t dropout_offset(std::uint64_t offset, const std::uint64_t* offset_ptr) {
  return offset_ptr ? *offset_ptr : offset;
}

// What a kernel needs to finish output elements; built once per launch on the host, passed by value.
struct EpilogueParams {
  float* y = nullptr;
  float* z = nullptr;            // non-null iff save_z
  const float* bias = nullptr;   // non-null iff the problem has a bias
  std::int64_t m = 0, n = 0;     // logical shape of Y
  bool transposed = false;       // Y and Z stored n×m
  Activation act = Activation::None;
  float leaky_slope = 0.f;
  float dropout_p = 0.f;         // 0: no dropout
  std::uint64_t seed = 0, offset = 0;
  const std::uint64_t* offset_ptr = nullptr;  // non-null: the offset is read here, at run time (dropout_offset)
};

inline EpilogueParams make_epilogue_params(const GemmProblem& p, const GemmOperands& x) {
  EpilogueParams e;
  e.y = x.Y;
  e.z = p.epi.save_z ? x.Z : nullptr;
  e.bias = p.epi.bias ? x.bias : nullptr;
  e.m = p.m;
  e.n = p.n;
  e.transposed = p.out == OutputLayout::Transposed;
  e.act = p.epi.act;
  e.leaky_slope = p.epi.leaky_slope;
  e.dropout_p = p.epi.dropout_p;
  e.seed = x.seed;
  e.offset = x.offset;
  e.offset_ptr = x.offset_ptr;
  return e;
}

// e with its dropout offset read, once: every kernel calls this where its epilogue starts, so a thread loads
// *offset_ptr once instead of once per element (the copy's offset_ptr is null, so apply_dropout loads nothing), and a
// launch without dropout never touches the pointer.
GT_HOST_DEVICE EpilogueParams with_dropout_offset(EpilogueParams e) {
  if (e.dropout_p > 0.f) e.offset = dropout_offset(e.offset, e.offset_ptr);
  e.offset_ptr = nullptr;
  return e;
}

// Stored position of logical element (row, col) of Y or Z.
GT_HOST_DEVICE std::int64_t output_index(const EpilogueParams& e, std::int64_t row, std::int64_t col) {
  return e.transposed ? col * e.m + row : row * e.n + col;
}

// Dropout of logical element (row, col) of Y, in precision T: y·keep/(1−p), y itself without dropout.
template <typename T>
GT_HOST_DEVICE T apply_dropout(const EpilogueParams& e, std::int64_t row, std::int64_t col, T y) {
  if (e.dropout_p <= 0.f) return y;
  const auto element = static_cast<std::uint64_t>(row * e.n + col);
  const bool keep = dropout_keep(e.seed, dropout_offset(e.offset, e.offset_ptr), element, e.dropout_p);
  return keep ? y * (T(1) / (T(1) - T(e.dropout_p))) : T(0);
}

template <typename T>
struct EpilogueValues {
  T z, y;
};

// Z and Y of logical element (row, col) from its accumulator, in precision T (float in kernels, double in the
// reference); the bias is already read, so the caller decides how (it is 0 without one).
template <typename T>
GT_HOST_DEVICE EpilogueValues<T> epilogue_values(const EpilogueParams& e, std::int64_t row, std::int64_t col, T acc,
                                                 T bias) {
  const T z = acc + bias;
  return {z, apply_dropout<T>(e, row, col, activation_forward<T>(e.act, z, T(e.leaky_slope)))};
}

// Calls f(std::integral_constant<Activation, act>{}): code that takes the activation as a compile-time constant runs
// the switch once, not once per element.
template <Activation kAct>
using ActivationConstant = std::integral_constant<Activation, kAct>;

template <class F>
GT_HOST_DEVICE void with_activation(Activation act, F&& f) {
  switch (act) {
    case Activation::None: f(ActivationConstant<Activation::None>{}); return;
    case Activation::Relu: f(ActivationConstant<Activation::Relu>{}); return;
    case Activation::LeakyRelu: f(ActivationConstant<Activation::LeakyRelu>{}); return;
    case Activation::Gelu: f(ActivationConstant<Activation::Gelu>{}); return;
    case Activation::GeluErf: f(ActivationConstant<Activation::GeluErf>{}); return;
    case Activation::Sigmoid: f(ActivationConstant<Activation::Sigmoid>{}); return;
    case Activation::Tanh: f(ActivationConstant<Activation::Tanh>{}); return;
  }
}

#if defined(__CUDACC__)
// The kernels' fp32 activations. gelu and sigmoid are written through one exp2 and one reciprocal on the
// multi-function unit (~7 instructions instead of tanhf's ~25):
//   gelu(z) = ½z(1 + tanh u) = z·sigmoid(2u) = z / (1 + 2^(−2u·log2 e)),  u = √(2/π)(z + 0.044715 z³).
// This form is also better conditioned than 1 + tanh u, which cancels for negative z: every step has a small relative
// error (ex2.approx and rcp.approx are within ~2 ulp; the exponent's own rounding adds |2u|·2⁻²⁴), so the result is
// within ~5e-7 relative of the fp64 formula wherever it is not flushed to 0 (far below gelu's minimum, where the exact
// value is under 1e-37). The other activations keep the shared formulas: tanh's and gelu_erf's library forms are
// exact near 0, where an exp form would cancel.
namespace fast {

__device__ __forceinline__ float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float reciprocal(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

template <Activation kAct>
__device__ __forceinline__ float activation(float z, float leaky_slope) {
  constexpr float kLog2e = 1.4426950408889634f;
  if constexpr (kAct == Activation::Gelu) {
    constexpr float kLinear = -2.f * kLog2e * 0.7978845608028654f, kCubic = kLinear * 0.044715f;
    return z * reciprocal(1.f + exp2(z * fmaf(kCubic, z * z, kLinear)));
  } else if constexpr (kAct == Activation::Sigmoid) {
    return reciprocal(1.f + exp2(-kLog2e * z));
  } else {
    return activation_forward<float>(kAct, z, leaky_slope);
  }
}

__device__ __forceinline__ float activation(Activation act, float z, float leaky_slope) {
  float y = z;
  with_activation(act, [&](auto constant) { y = activation<decltype(constant)::value>(z, leaky_slope); });
  return y;
}

}  // namespace fast

// Finishes logical element (row, col) of Y from its fp32 accumulator (no bias yet) and stores Y, and Z with save_z,
// in the output layout: the general path of every kernel family's epilogue (any layout, alignment, dropout). Elements
// outside m×n (edge tiles) are dropped.
__device__ __forceinline__ void store_output_element(const EpilogueParams& e, std::int64_t row, std::int64_t col,
                                                     float acc) {
  if (row >= e.m || col >= e.n) return;
  const float z = acc + (e.bias ? __ldg(e.bias + col) : 0.f);
  const std::int64_t at = output_index(e, row, col);
  if (e.z) e.z[at] = z;
  e.y[at] = apply_dropout(e, row, col, fast::activation(e.act, z, e.leaky_slope));
}
#endif

}  // namespace gemmtune::kernels
