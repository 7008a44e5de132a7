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

// Number of usable CUDA devices; throws NoGpuError with CUDA's reason when there are none.
int cuda_device_count();
// Properties of device `index` (and makes it current). Throws NoGpuError for a bad index or compute capability < 8.0.
DeviceInfo query_device(int index);
// The NVIDIA kernel driver's version string ("580.159.04"), from /proc/driver/nvidia/version; "unknown" if absent.
std::string nvidia_driver_version();

void to_json(nlohmann::json& j, const DeviceInfo& d);

}  // namespace gemmtune
