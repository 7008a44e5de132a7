// The standalone epilogue pass: every activation and output layout against the CPU epilogue, in place and with the
// scalar path, and the dropout mask's reproducibility and keep rate.
#include "kernels/epilogue_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <gtest/gtest.h>

#include "kernels/kernel_test_support.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

constexpr Activation kAllActivations[] = {Activation::None,    Activation::Relu,    Activation::LeakyRelu,
                                          Activation::Gelu,    Activation::GeluErf, Activation::Sigmoid,
                                          Activation::Tanh};

GemmProblem epilogue_problem(std::int64_t m, std::int64_t n, Activation act, OutputLayout out, bool save_z,
                             float dropout) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = 1;
  p.out = out;
  p.epi.bias = true;
  p.epi.act = act;
  p.epi.leaky_slope = 0.2f;
  p.epi.save_z = save_z;
  p.epi.dropout_p = dropout;
  return p;
}

// Runs launch_epilogue on random accumulators placed `shift` floats into their buffer (shift 1 forces the scalar
// per-row path; unshifted odd rows take the flat path, unshifted rows of 4k floats the vector rows) and checks Y and Z against the CPU epilogue: float transcendental functions are within a few ulps of fp64, so 1e-6.
void check_against_cpu(const GemmProblem& p, std::size_t shift, std::uint32_t seed) {
  const std::size_t count = static_cast<std::size_t>(p.m * p.n);
  const std::vector<float> acc = test::random_floats(count, seed, -3.f, 3.f);
  const std::vector<float> bias = test::random_floats(static_cast<std::size_t>(p.n), seed + 1);
  std::vector<float> acc_shifted(shift, 0.f);
  acc_shifted.insert(acc_shifted.end(), acc.begin(), acc.end());
  const auto acc_dev = test::to_device(acc_shifted);
  const auto bias_dev = test::to_device(bias);
  DeviceBuffer<float> y(count + shift), z(count + shift);
  test::poison(y);
  test::poison(z);
  GemmOperands x;
  x.bias = bias_dev.get();
  x.Y = y.get() + shift;
  x.Z = p.epi.save_z ? z.get() + shift : nullptr;
  x.seed = seed;
  x.offset = 77;
  launch_epilogue(p, acc_dev.get() + shift, x, nullptr);
  GT_CUDA_CALL(cudaDeviceSynchronize());

  std::vector<double> y_ref, z_ref;
  test::cpu_epilogue(p, std::vector<double>(acc.begin(), acc.end()), bias, x.seed, x.offset, y_ref,
                     p.epi.save_z ? &z_ref : nullptr);
  const std::vector<float> y_out = test::to_host(x.Y, count);
  EXPECT_LE(test::host_relative_error(y_out, y_ref), 1e-6) << p.key() << " shift " << shift;
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(y_out[i] == 0.f, y_ref[i] == 0.0) << "dropout mask differs at " << i << " in " << p.key();
  if (p.epi.save_z) {
    EXPECT_LE(test::host_relative_error(test::to_host(x.Z, count), z_ref), 1e-7) << p.key();
  }
}

TEST(EpilogueKernel, MatchesCpuEpilogueForEveryActivationLayoutAndAlignment) {
  GT_REQUIRE_GPU();
  std::uint32_t seed = 100;
  for (Activation act : kAllActivations)
    for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
      for (bool save_z : {false, true})
        for (float dropout : {0.f, 0.25f})
          for (std::size_t shift : {0u, 1u})
            // 37x29: stored rows of odd length, one element per step; 36x28 unshifted: 16-byte rows of vectors.
            for (const auto& [m, n] : {std::pair<int, int>{37, 29}, std::pair<int, int>{36, 28}})
              check_against_cpu(epilogue_problem(m, n, act, out, save_z, dropout), shift, seed++);
}

// Past 4096 blocks' worth of elements a thread of the flat path steps its (row, column) across grid strides, and the
// scalar rows path walks many rows per thread: both against the CPU on an odd output of 4.2M elements.
TEST(EpilogueKernel, OutputsLargerThanOneGridMatchTheCpuOnEveryPath) {
  GT_REQUIRE_GPU();
  std::uint32_t seed = 500;
  for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
    for (std::size_t shift : {0u, 1u})
      check_against_cpu(epilogue_problem(2049, 2051, Activation::Gelu, out, true, 0.25f), shift, seed++);
}

TEST(EpilogueKernel, WorksInPlaceOnYAndOnZ) {
  GT_REQUIRE_GPU();
  const GemmProblem p = epilogue_problem(61, 45, Activation::Gelu, OutputLayout::Transposed, true, 0.2f);
  const std::size_t count = static_cast<std::size_t>(p.m * p.n);
  const std::vector<float> acc = test::random_floats(count, 9);
  const std::vector<float> bias = test::random_floats(static_cast<std::size_t>(p.n), 10);
  const auto bias_dev = test::to_device(bias);
  std::vector<double> y_ref, z_ref;
  test::cpu_epilogue(p, std::vector<double>(acc.begin(), acc.end()), bias, 3, 4, y_ref, &z_ref);
  for (bool acc_in_y : {true, false}) {
    auto y = test::to_device(acc);
    auto z = test::to_device(acc);
    test::poison(acc_in_y ? z : y);
    GemmOperands x;
    x.bias = bias_dev.get();
    x.Y = y.get();
    x.Z = z.get();
    x.seed = 3;
    x.offset = 4;
    launch_epilogue(p, acc_in_y ? y.get() : z.get(), x, nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());
    EXPECT_LE(test::host_relative_error(test::to_host(y.get(), count), y_ref), 1e-6) << "acc in Y: " << acc_in_y;
    EXPECT_LE(test::host_relative_error(test::to_host(z.get(), count), z_ref), 1e-7) << "acc in Y: " << acc_in_y;
  }
}

// The kernels' fast activations (an exp2 and a reciprocal on the multi-function unit) element by element against the
// independent fp64 formulas, over z in [-12, 12]: past where gelu and sigmoid saturate, and where 1 + tanh would
// cancel. Within 1e-6 of |y| (absolute below 1), the bound the float library forms meet on the host.
TEST(EpilogueKernel, FastActivationsTrackFp64ElementWiseAcrossTheirRange) {
  GT_REQUIRE_GPU();
  std::uint32_t seed = 500;
  for (Activation act : kAllActivations) {
    GemmProblem p = epilogue_problem(64, 256, act, OutputLayout::RowMajor, false, 0.f);
    p.epi.bias = false;
    const std::size_t count = static_cast<std::size_t>(p.m * p.n);
    const std::vector<float> acc = test::random_floats(count, seed++, -12.f, 12.f);
    const auto acc_dev = test::to_device(acc);
    DeviceBuffer<float> y(count);
    test::poison(y);
    GemmOperands x;
    x.Y = y.get();
    launch_epilogue(p, acc_dev.get(), x, nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());
    const std::vector<float> y_out = test::to_host(y.get(), count);
    for (std::size_t i = 0; i < count; ++i) {
      const double exact = test::cpu_activation(act, static_cast<double>(acc[i]), p.epi.leaky_slope);
      ASSERT_NEAR(static_cast<double>(y_out[i]), exact, 1e-6 * std::max(1.0, std::fabs(exact)))
          << to_string(act) << " at z=" << acc[i];
    }
  }
}

// Y of an all-kept-scale epilogue (no activation, no bias) over positive accumulators: 0 exactly where dropped.
// offset_ptr non-null: the offset is read from there, and `offset` is what a kernel ignoring it would use.
std::vector<float> dropout_output(std::int64_t m, std::int64_t n, float p_drop, std::uint64_t seed,
                                  std::uint64_t offset, const std::uint64_t* offset_ptr = nullptr) {
  GemmProblem p = epilogue_problem(m, n, Activation::None, OutputLayout::RowMajor, false, p_drop);
  p.epi.bias = false;
  const std::size_t count = static_cast<std::size_t>(m * n);
  const auto acc = test::to_device(test::random_floats(count, 11, 0.5f, 1.5f));
  DeviceBuffer<float> y(count);
  test::poison(y);
  GemmOperands x;
  x.Y = y.get();
  x.seed = seed;
  x.offset = offset;
  x.offset_ptr = offset_ptr;
  launch_epilogue(p, acc.get(), x, nullptr);
  GT_CUDA_CALL(cudaDeviceSynchronize());
  return test::to_host(y.get(), count);
}

double kept_fraction(const std::vector<float>& y) {
  std::size_t kept = 0;
  for (float v : y) kept += v != 0.f;
  return static_cast<double>(kept) / static_cast<double>(y.size());
}

double mask_agreement(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += (a[i] != 0.f) == (b[i] != 0.f);
  return static_cast<double>(same) / static_cast<double>(a.size());
}

TEST(EpilogueKernel, DropoutMaskIsReproducibleForSameSeedAndOffsetAndIndependentOtherwise) {
  GT_REQUIRE_GPU();
  const float p = 0.5f;
  const auto first = dropout_output(513, 1031, p, 1234, 0);
  EXPECT_EQ(first, dropout_output(513, 1031, p, 1234, 0));
  // Independent masks agree on a fraction p² + (1−p)² = 0.5 of elements; a shifted or reused stream would agree more.
  EXPECT_NEAR(mask_agreement(first, dropout_output(513, 1031, p, 1234, 1)), 0.5, 0.01);
  EXPECT_NEAR(mask_agreement(first, dropout_output(513, 1031, p, 1235, 0)), 0.5, 0.01);
}

TEST(EpilogueKernel, DropoutKeepRateIsWithinOnePercentOfOneMinusP) {
  GT_REQUIRE_GPU();
  for (float p : {0.1f, 0.5f, 0.9f}) EXPECT_NEAR(kept_fraction(dropout_output(2048, 2048, p, 99, 5)), 1.0 - p, 0.01);
}

// The pass after a cuBLASLt GEMM reads a device-side offset when it runs, on both of its paths (512x1024: rows of
// 16-byte vectors; 513x1031: one element per step): the mask is the value form's of the offset the device holds.
TEST(EpilogueKernel, ReadsTheDropoutOffsetFromDeviceMemoryWhenItRuns) {
  GT_REQUIRE_GPU();
  const DeviceBuffer<std::uint64_t> counter(1);
  using Shape = std::pair<std::int64_t, std::int64_t>;
  for (const auto& [m, n] : {Shape{512, 1024}, Shape{513, 1031}}) {
    for (const std::uint64_t offset : {std::uint64_t{42}, std::uint64_t{43}, std::uint64_t{1} << 40}) {
      GT_CUDA_CALL(cudaMemcpy(counter.get(), &offset, sizeof(offset), cudaMemcpyHostToDevice));
      GT_CUDA_CALL(cudaDeviceSynchronize());
      const auto by_value = dropout_output(m, n, 0.5f, 1234, offset);
      EXPECT_EQ(dropout_output(m, n, 0.5f, 1234, 0, counter.get()), by_value) << m << "x" << n << " offset " << offset;
      EXPECT_NEAR(mask_agreement(by_value, dropout_output(m, n, 0.5f, 1234, 0)), 0.5, 0.01);
    }
  }
}

}  // namespace
}  // namespace gemmtune::kernels
