#include "tuner/test_slowdown.hpp"

#include <cstdlib>
#include <string>

#include "cuda/cuda_call.hpp"

namespace gemmtune {
namespace {

__global__ void spin_ns(std::uint64_t ns) {
  std::uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < ns);
}

}  // namespace

double test_slowdown_pct(const Candidate& c) {
#ifdef GEMMTUNE_TEST_SLOWDOWN
  const std::string spec = GEMMTUNE_TEST_SLOWDOWN;  // "own:10"
  const auto colon = spec.find(':');
  if (colon != std::string::npos && spec.substr(0, colon) == to_string(c.backend))
    return std::strtod(spec.c_str() + colon + 1, nullptr);
#else
  (void)c;
#endif
  return 0.0;
}

void launch_spin_ns(std::uint64_t ns, cudaStream_t s) {
  spin_ns<<<1, 1, 0, s>>>(ns);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune
