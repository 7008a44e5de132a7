// How 3xtf32 sums its products without the tensor core's shrink: two k8 steps per fresh accumulator, and the sum
// scaled back up by the fraction the tensor core's truncation takes on average.
//
// The tensor core's fp32 accumulation is not rounded to nearest: an mma's exact c + Σ products comes out cut toward
// zero to 24 bits (Fasi et al., PeerJ CS 2021; tests/kernels/tensor_core_model.hpp). A cut at a sum's full size takes
// half an ulp of it on average, always toward zero: for the mantissas sums have (Benford), 2^-24 × E[1/mantissa] =
// 4.3e-8 of the sum. Errors of random sign average out over the outputs of a loss; this one scales every output the
// same way. Measured with `gemmtune accuracy` (H200, m = n = 512, k = 1024 to 16384) as Y = (1 + β)·Y_fp64: β was
// −8.7e-8 (inputs in [−1, 1)) and −1.2e-7 (in [0, 1)) at every k with four k8 steps per fresh accumulator, −5.2e-8 to
// −5.6e-8 and −6.4e-8 to −6.5e-8 with two, −4.0e-8 to −4.4e-8 with one; cuBLASLt fp32's |β| stayed under 1e-9. A
// d_model-4096 training step under `apply --fp32-equivalent` ended its 50 steps 10× as far from the fp64 losses as
// cuBLAS fp32's, all of it from the forward GEMMs (issue 50).
//
// Being a fraction of each promoted sum, the shrink sums to the same fraction of Y: so Y is scaled back once, when the
// k loop ends, at no cost in the loop. How big the fraction is depends on how many cuts a fresh accumulator takes at
// full size, and on the inputs the more there are. Each step fewer costs a wait and a FADD per accumulator: one step
// per accumulator ran the wgmma kernels 13-16% slower than four (H200, 1001×16384×4096), and adding half an ulp to
// each promoted sum instead of scaling Y (exact in expectation, four more instructions an element) 52% slower. Two
// steps and the scale: 2-3% slower than four, and β of +4e-9 to +7e-9 with inputs in [−1, 1) or ±2^U(−8, 8) and
// −3.6e-8 to −3.8e-8 with inputs in [0, 1), where the cuts come at larger partial sums (H200, every 3xtf32 variant,
// k = 1024 to 16384); the d_model-4096 step's losses then ended 2.7e-4 to 4.6e-4 from fp64's, against 1.6e-3 to
// 1.8e-3 before and 1.1e-4 to 1.8e-4 for cuBLAS fp32 (results/nvidia-h200/apply_step_d4096_rounding_band.json).
#pragma once

namespace gemmtune::kernels {

// k8 steps of 3xtf32 products per fresh accumulator (above: why two).
inline constexpr int kSplit3xPromoteSteps = 2;

// Y ← Y·(1 + c), c chosen to undo β of about −6e-8 (the mma family's with two steps per accumulator). The FFMA adds
// Y·c exactly and rounds once, so an output moves by a whole ulp or not at all, and an output's ulp is 6e-8 to 1.2e-7
// of it: c = 5.0e-8 moves enough of them for an average of 6e-8 (simulated on outputs with a few ulps of error, it
// left −1.9e-9 of a −6.0e-8 shrink).
inline constexpr float kSplit3xUnshrink = 5.0e-8f;
__device__ __forceinline__ float split3x_unshrink(float y) { return fmaf(y, kSplit3xUnshrink, y); }

}  // namespace gemmtune::kernels
