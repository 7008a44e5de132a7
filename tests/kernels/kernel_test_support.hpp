// What the kernel tests share: random problem data on host and device, NaN poisoning, and an independent CPU fp64
// reference (its activation formulas are written out again here; only the Philox bits come from kernels/).
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::test {

// Uniform in [lo, hi): never zeros, so unwritten outputs and wrong indexing show.
std::vector<float> random_floats(std::size_t count, std::uint32_t seed, float lo = -1.f, float hi = 1.f);

template <typename T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  DeviceBuffer<T> dev(host.size());
  GT_CUDA_CALL(cudaMemcpy(dev.get(), host.data(), dev.bytes(), cudaMemcpyHostToDevice));
  return dev;
}

template <typename T>
std::vector<T> to_host(const T* dev, std::size_t count) {
  std::vector<T> host(count);
  GT_CUDA_CALL(cudaMemcpy(host.data(), dev, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Fills a float buffer with NaN (all bits set), so an element a kernel forgets to write fails the check.
void poison(DeviceBuffer<float>& buffer);

// Fresh random inputs of a problem, their device copies and output buffers of the problem's size.
struct ProblemData {
  ProblemData(const GemmProblem& problem, std::uint32_t seed);
  GemmOperands operands() const;

  GemmProblem p;
  std::vector<float> a, b, bias;
  DeviceBuffer<float> A, B, Bias, Y, Z;
  std::uint64_t dropout_seed, dropout_offset;
};

double cpu_activation(Activation act, double z, double slope);

// Y (and Z when z is non-null) of problem p in fp64, in p's output layout.
void cpu_reference(const ProblemData& d, std::vector<double>& y, std::vector<double>* z);

// The epilogue alone on given accumulators (acc in the output layout), as cpu_reference applies it.
void cpu_epilogue(const GemmProblem& p, const std::vector<double>& acc, const std::vector<float>& bias,
                  std::uint64_t seed, std::uint64_t offset, std::vector<double>& y, std::vector<double>* z);

// ||out − ref||_F / ||ref||_F on the host.
double host_relative_error(const std::vector<float>& out, const std::vector<double>& ref);

}  // namespace gemmtune::test

namespace gemmtune::kernels {
struct KernelVariant;
enum class Family;
}  // namespace gemmtune::kernels

namespace gemmtune::test {

// The tolerance on the relative Frobenius error: fp32 and 3xtf32 carry fp32 rounding (grows like √k), tf32
// carries its 10-bit mantissa (~5e-4 per input, independent of k).
double gemm_tolerance(const GemmProblem& p);

// Problems that, together, give every variant every layout × activation once, with save_z, dropout, the transposed
// store and the no-bias path spread over them, on shapes that put 1, 7, 127, 255, 1000 and 4095 in each of m, n and k
// (plus two shapes whose leading dimensions allow 16-byte loads, with edge tiles).
std::vector<GemmProblem> coverage_problems(MathMode mode);

struct VariantErrors {
  double y = 0.0, z = 0.0;
  int stray_writes = 0;  // with y_skew: floats of the skewed buffers outside Y and Z that lost their poison
};

// Fresh random inputs, NaN-poisoned outputs, one launch of v, relative Frobenius errors against the fp64 reference.
// skew > 0: A and B are read from copies that start `skew` floats past a 16-byte boundary (a sliced array's view);
// y_skew > 0: Y and Z are written that far past one.
VariantErrors run_against_reference(const kernels::KernelVariant& v, const GemmProblem& p, std::uint32_t seed,
                                    int skew = 0, int y_skew = 0);

// A variant that leaves p to another variant of its tile: a staged one with nothing to copy (its unstaged twin runs
// the same kernel), a _staged_b one where B is not read by class (its _staged twin makes the same copies), a Stream-K
// one that would not stream p or whose rows the copy engine cannot take (kernels/registry.hpp). Tests that run every
// variant on a problem set skip such pairs.
bool left_to_its_twin(const kernels::KernelVariant& v, const GemmProblem& p);

// Every variant of `family` (at least three) on every coverage problem of its mode; fails the test with the problem key
// on the first error over tolerance, and prints each variant's worst error.
void check_family_against_reference(kernels::Family family);
// The same on given problems, for a family that supports only some layouts (each problem must be supported); each
// runs in the mode of the variant.
void check_family_against_reference(kernels::Family family, const std::vector<GemmProblem>& problems);

}  // namespace gemmtune::test
