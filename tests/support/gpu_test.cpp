#include "support/gpu_test.hpp"

#include <cstdlib>

#include "cuda/device_info.hpp"

namespace gemmtune::test {

GpuTestBlocker gpu_test_blocker() {
  const GpuProbe probe = probe_cuda_devices();
  return {probe.reason, probe.verdict == GpuProbe::Verdict::Unusable};
}

std::string gpu_unavailable_reason() { return gpu_test_blocker().reason; }

bool gpu_test_skips_fail() {
  const char* value = std::getenv("GEMMTUNE_REQUIRE_GPU");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

const char* gpu_test_skip_heading() {
  return gpu_test_skips_fail() ? "GEMMTUNE_REQUIRE_GPU is set, so this GPU test fails where it would skip:"
                               : "GPU test skipped:";
}

}  // namespace gemmtune::test
