// DeviceInfo: what `gemmtune devices` prints and what identifies a machine in the db (DeviceIdentity).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "problem/measurement.hpp"

namespace gemmtune {

struct DeviceInfo {
  int index = 0;
  DeviceIdentity identity;
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  std::size_t shared_mem_per_block_optin = 0;
  int max_sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  int cuda_driver_api = 0;  // cudaDriverGetVersion, e.g. 13000

  // Nominal DRAM bandwidth from the memory clock and bus width (DDR: two transfers a clock).
  double nominal_dram_gbps() const { return 2.0 * memory_clock_mhz * 1e6 * (memory_bus_bits / 8.0) / 1e9; }
};

// What CUDA makes of this machine's GPUs. A machine without a GPU (no device, no NVIDIA driver) is told apart from one
// whose GPU CUDA cannot use (a driver older than the runtime, a broken install): the first has nothing to run on, the
// second is broken, and a GPU test run there must fail rather than skip (tests/support/gpu_test.hpp).
struct GpuProbe {
  enum class Verdict { Usable, NoGpu, Unusable };
  Verdict verdict = Verdict::NoGpu;
  int count = 0;       // usable devices
  std::string reason;  // "no usable CUDA GPU: ..." with CUDA's error and what says a GPU is there or not; "" if usable
};
GpuProbe probe_cuda_devices();
// Number of usable CUDA devices; throws NoGpuError with probe_cuda_devices()'s reason when there are none.
int cuda_device_count();
// Properties of device `index` (and makes it current). Throws NoGpuError for a bad index or compute capability < 8.0.
DeviceInfo query_device(int index);
// The NVIDIA kernel driver's version string ("580.159.04"), from /proc/driver/nvidia/version; "unknown" if absent.
std::string nvidia_driver_version();

void to_json(nlohmann::json& j, const DeviceInfo& d);

}  // namespace gemmtune
