// The GPU memory a problem needs, computed before anything is allocated (so `run` and `sweep` refuse a problem
// that cannot fit with exit 2 instead of failing in cudaMalloc).
#include "launch/device_footprint.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "launch/problem_buffers.hpp"

namespace gemmtune {
namespace {

GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

TEST(DeviceFootprint, CountsInputsPerSetOutputsAndTheFp64Reference) {
  const GemmProblem p = problem(100, 200, 300);
  // A (100x300) + B (300x200) floats per set; Y (100x200) float and its fp64 reference.
  const std::uint64_t per_set = (100 * 300 + 300 * 200) * 4;
  const std::uint64_t y = 100 * 200 * (4 + 8);
  EXPECT_EQ(verify_and_time_bytes(p, 1, 0), per_set + y);
  EXPECT_EQ(verify_and_time_bytes(p, 3, 4096), 3 * per_set + y + 4096);
}

TEST(DeviceFootprint, BiasAndSavedZAddTheirBuffers) {
  GemmProblem p = problem(100, 200, 300);
  p.epi.bias = true;
  p.epi.save_z = true;
  const std::uint64_t per_set = (100 * 300 + 300 * 200 + 200) * 4;
  EXPECT_EQ(verify_and_time_bytes(p, 2, 0), 2 * per_set + 2 * 100 * 200 * (4 + 8));
  EXPECT_EQ(backward_gradient_bytes(p), (100 * 200 + 100 * 300 + 300 * 200 + 200) * 4);
}

// The case of issue 16: 100000^3 needs 200 GB, far beyond any GPU, and the sum must not wrap around to a small number.
TEST(DeviceFootprint, HugeProblemsNeedHundredsOfGigabytesAndSaturateInsteadOfWrapping) {
  EXPECT_EQ(verify_and_time_bytes(problem(100000, 100000, 100000), 1, 0),
            std::uint64_t{100000} * 100000 * (4 + 4 + 4 + 8));
  const std::int64_t max_dim = (std::int64_t{1} << 31) - 1;
  EXPECT_EQ(verify_and_time_bytes(problem(max_dim, max_dim, max_dim), ProblemBuffers::kMaxSets, 0),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(DeviceFootprint, InputSetsExceedTwiceTheL2UpToTheLimit) {
  const GemmProblem small = problem(64, 64, 64);  // 32 KiB per set
  EXPECT_EQ(input_set_count(small, 0), 1);
  EXPECT_EQ(input_set_count(small, 50u << 20), ProblemBuffers::kMaxSets);
  const GemmProblem large = problem(4096, 4096, 4096);  // 128 MiB per set: one set already exceeds 2x 50 MiB
  EXPECT_EQ(input_set_count(large, 50u << 20), 1);
  const GemmProblem medium = problem(1024, 1024, 1024);  // 8 MiB per set: 100 MiB / 8 MiB + 1 = 13 sets
  EXPECT_EQ(input_set_count(medium, 50u << 20), 13);
}

TEST(DeviceFootprint, DescribesBytesInGibibytesAndExactly) {
  EXPECT_EQ(describe_bytes(std::uint64_t{3} << 29), "1.50 GiB (1610612736 bytes)");
}

}  // namespace
}  // namespace gemmtune
