#include "support/lt_test_gemm.hpp"

#include <random>
#include <vector>

#include "common/error.hpp"

namespace gemmtune::test {
namespace {

constexpr std::size_t kMaxWorkspace = std::size_t{64} << 20;

DeviceBuffer<float> random_device_floats(std::int64_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> host(static_cast<std::size_t>(count));
  for (float& v : host) v = dist(rng);
  DeviceBuffer<float> dev(host.size());
  GT_CUDA_CALL(cudaMemcpy(dev.get(), host.data(), dev.bytes(), cudaMemcpyHostToDevice));
  return dev;
}

Candidate first_heuristic_candidate(const LtGemm& gemm) {
  const std::vector<Candidate> top = gemm.heuristic(1, kMaxWorkspace);
  if (top.empty()) throw CheckError("cuBLASLt heuristic returned no algo for " + gemm.problem().key());
  return top.front();
}

}  // namespace

LtTestGemm::LtTestGemm(const GemmProblem& p, std::uint32_t seed)
    : handle_(make_lt_handle()),
      gemm_(handle_.get(), p),
      candidate_(first_heuristic_candidate(gemm_)),
      algo_(gemm_.make_algo(candidate_.lt)),
      a_(random_device_floats(p.m * p.k, seed)),
      b_(random_device_floats(p.k * p.n, seed + 1)),
      y_(static_cast<std::size_t>(p.m * p.n)) {
  std::size_t needed = 0;
  const std::string why_not = gemm_.check(algo_, kMaxWorkspace, &needed);
  if (!why_not.empty()) throw CheckError("heuristic algo fails its own check: " + why_not);
  workspace_ = DeviceBuffer<unsigned char>(needed);
}

void LtTestGemm::run(cudaStream_t s) const {
  GemmOperands x;
  x.A = a_.get();
  x.B = b_.get();
  x.Y = y_.get();
  gemm_.run(algo_, x, workspace_.get(), workspace_.bytes(), s);
}

}  // namespace gemmtune::test
