// The fp64 reference against an independent CPU loop, over every layout, output layout and epilogue, on odd shapes.
#include "kernels/reference_gemm.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kernels/kernel_test_support.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

using test::ProblemData;

constexpr Activation kAllActivations[] = {Activation::None,    Activation::Relu,    Activation::LeakyRelu,
                                          Activation::Gelu,    Activation::GeluErf, Activation::Sigmoid,
                                          Activation::Tanh};

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

TEST(ReferenceGemm, MatchesCpuLoopForEveryLayoutOutputLayoutAndEpilogue) {
  GT_REQUIRE_GPU();
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1}, {7, 5, 3}, {19, 33, 40}};
  std::uint32_t seed = 1;
  int checked = 0;
  for (const Shape& s : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
        for (Activation act : kAllActivations)
          for (bool save_z : {false, true})
            for (float dropout : {0.f, 0.3f}) {
              GemmProblem p;
              p.m = s.m;
              p.n = s.n;
              p.k = s.k;
              p.trans_a = layout & 1;
              p.trans_b = layout & 2;
              p.out = out;
              p.epi.bias = act != Activation::Tanh;  // one activation without bias keeps the no-bias path covered
              p.epi.act = act;
              p.epi.leaky_slope = 0.07f;
              p.epi.save_z = save_z;
              p.epi.dropout_p = dropout;
              ProblemData d(p, seed++);
              const std::size_t count = static_cast<std::size_t>(p.m * p.n);
              DeviceBuffer<double> y_ref(count), z_ref(save_z ? count : 0);
              reference_gemm(p, d.operands(), y_ref.get(), z_ref.get(), nullptr);
              GT_CUDA_CALL(cudaDeviceSynchronize());
              std::vector<double> y_cpu, z_cpu;
              test::cpu_reference(d, y_cpu, save_z ? &z_cpu : nullptr);
              ASSERT_LE(max_abs_diff(test::to_host(y_ref.get(), count), y_cpu), 1e-12) << p.key();
              if (save_z) {
                ASSERT_LE(max_abs_diff(test::to_host(z_ref.get(), count), z_cpu), 1e-12) << p.key();
              }
              ++checked;
            }
  EXPECT_EQ(checked, 3 * 4 * 2 * 7 * 2 * 2);
}

TEST(RelativeFrobeniusError, IsExactForAKnownUniformScaling) {
  GT_REQUIRE_GPU();
  const std::vector<float> out = test::random_floats(10007, 5);
  std::vector<double> ref(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) ref[i] = 1.25 * static_cast<double>(out[i]);  // |o − 1.25o| / |1.25o|
  const auto out_dev = test::to_device(out);
  const auto ref_dev = test::to_device(ref);
  const double err = relative_frobenius_error(out_dev.get(), ref_dev.get(), static_cast<std::int64_t>(out.size()),
                                              nullptr);
  EXPECT_NEAR(err, 0.2, 1e-12);
}

TEST(OutputError, ScaleBiasIsTheScalingOfAScaledOutputAndNearZeroForNoiseOfRandomSign) {
  GT_REQUIRE_GPU();
  const std::vector<float> out = test::random_floats(100003, 7);
  const std::vector<float> noise = test::random_floats(out.size(), 8);
  std::vector<double> scaled(out.size()), noisy(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    scaled[i] = static_cast<double>(out[i]) / (1.0 - 1e-3);  // out = (1 − 1e-3)·ref exactly in double
    noisy[i] = static_cast<double>(out[i]) - 1e-3 * static_cast<double>(noise[i]);  // independent of out's sign
  }
  const auto out_dev = test::to_device(out);
  const auto count = static_cast<std::int64_t>(out.size());
  const OutputError shrunk = output_error(out_dev.get(), test::to_device(scaled).get(), count, nullptr);
  EXPECT_NEAR(shrunk.scale_bias, -1e-3, 1e-9);
  EXPECT_NEAR(shrunk.rel_err, 1e-3, 1e-9);
  const OutputError random = output_error(out_dev.get(), test::to_device(noisy).get(), count, nullptr);
  EXPECT_GT(random.rel_err, 5e-4);
  // Random signs leave β near rel_err/√count (3e-6 here): well under a tenth of the error.
  EXPECT_LT(std::fabs(random.scale_bias), 0.1 * random.rel_err);
}

TEST(RelativeFrobeniusError, IsInfiniteWhenAnyOutputIsNanOrInf) {
  GT_REQUIRE_GPU();
  std::vector<float> out = test::random_floats(5000, 6);
  std::vector<double> ref(out.begin(), out.end());
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> broken = out;
    broken[4321] = bad;
    const auto out_dev = test::to_device(broken);
    const auto ref_dev = test::to_device(ref);
    EXPECT_TRUE(std::isinf(relative_frobenius_error(out_dev.get(), ref_dev.get(), 5000, nullptr)));
  }
}

}  // namespace
}  // namespace gemmtune::kernels
