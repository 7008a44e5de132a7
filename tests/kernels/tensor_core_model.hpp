// A CPU model of how the 3xtf32 kernels (kernels/mma_gemm.cuh) sum a dot product, to tell apart the causes of their
// error growing with k without a GPU: the tf32 split, the tensor core's accumulation, and the promotion into FADD.
//
// The mma accumulation model follows Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores"
// (PeerJ CS 2021): products of tf32 operands are exact, and the fp32 result of c + Σ products is not rounded to
// nearest. Two readings of "truncated" are modelled: the sum of one mma's k8 products and c is exact and the result is
// rounded toward zero (RoundResultTowardZero), or each term is first truncated toward zero to the largest term's
// 24-bit grid and only those are summed (TruncateAlignedTerms). Which one the hardware is, is what the numbers tell.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace gemmtune::test {

enum class MmaAccumulation {
  RoundToNearest,         // what FADD does: the reference point
  RoundResultTowardZero,  // exact c + Σ8 products, then truncated to 24 bits
  TruncateAlignedTerms,   // every term truncated to the largest term's 24-bit grid, then summed
};

// How a 3xtf32 dot product is summed. promote_every_k8_steps = 0: every mma adds into the one running sum (the
// kernels before the fix); n > 0: n k8 steps go into a fresh accumulator, which FADD then adds into the running sum.
struct SplitDotModel {
  MmaAccumulation accumulation = MmaAccumulation::RoundToNearest;
  int promote_every_k8_steps = 0;
};

// tf32 operand rounded to nearest (ties away from zero), as kernels/ptx.cuh's to_tf32_exact.
float tf32_round_nearest(float x);

// Σ a[i]·b[i] as a 3xtf32 kernel computes it: per k8 step, small·big, big·small, big·big (the kernels' order).
// a.size() == b.size(), a multiple of 8.
float split_tf32_dot(const std::vector<float>& a, const std::vector<float>& b, SplitDotModel model);

// Σ a[i]·b[i] with one FFMA per element in order: the SIMT fp32 kernels' summation.
float ffma_dot(const std::vector<float>& a, const std::vector<float>& b);

enum class InputDistribution { Uniform, WideExponent, Positive };  // [-1, 1); ±2^U(−8, 8); [0, 1)

// Relative Frobenius error against an exact (fp64) reference over `dots` independent k-long dot products of fresh
// inputs drawn from `seed`; `dot` is split_tf32_dot with a model, or ffma_dot.
using DotFn = std::function<float(const std::vector<float>& a, const std::vector<float>& b)>;
double relative_dot_error(int k, int dots, InputDistribution dist, std::uint64_t seed, const DotFn& dot);
// The scale bias β of the same dots, Σ(dot − exact)·exact / Σexact² (kernels/reference_gemm.hpp: OutputError).
double dot_scale_bias(int k, int dots, InputDistribution dist, std::uint64_t seed, const DotFn& dot);

}  // namespace gemmtune::test
