#include "cuda/device_info.hpp"

#include <cublasLt.h>

#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cuda/cuda_call.hpp"
#include "problem/device_key.hpp"

namespace gemmtune {

int cuda_device_count() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later queries report their own status
    throw NoGpuError(std::string("no usable CUDA GPU: ") + cudaGetErrorString(err));
  }
  if (count == 0) throw NoGpuError("no usable CUDA GPU: no CUDA devices found");
  return count;
}

std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return kUnknownDriver;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ..."
  static const std::regex version(R"((\d+\.\d+(\.\d+)?))");
  std::smatch m;
  return std::regex_search(line, m, version) ? m.str(1) : kUnknownDriver;
}

DeviceInfo query_device(int index) {
  const int count = cuda_device_count();
  if (index < 0 || index >= count)
    throw NoGpuError("no CUDA device " + std::to_string(index) + " (this machine has " + std::to_string(count) + ")");
  GT_CUDA_CALL(cudaSetDevice(index));
  cudaDeviceProp prop{};
  GT_CUDA_CALL(cudaGetDeviceProperties(&prop, index));

  DeviceInfo d;
  d.index = index;
  d.identity.gpu_name = prop.name;
  d.identity.cc_major = prop.major;
  d.identity.cc_minor = prop.minor;
  d.identity.sm_count = prop.multiProcessorCount;
  d.identity.driver = nvidia_driver_version();
  GT_CUDA_CALL(cudaRuntimeGetVersion(&d.identity.cuda_runtime));
  d.identity.cublaslt_version = cublasLtGetVersion();
  GT_CUDA_CALL(cudaDriverGetVersion(&d.cuda_driver_api));
  d.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  d.global_mem_bytes = prop.totalGlobalMem;
  d.shared_mem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.memory_bus_bits = prop.memoryBusWidth;
  int khz = 0;
  GT_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index));
  d.max_sm_clock_mhz = khz / 1000;
  GT_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index));
  d.memory_clock_mhz = khz / 1000;

  if (prop.major < kMinComputeCapabilityMajor)
    throw NoGpuError(std::string("unsupported GPU '") + prop.name + "' (compute capability " +
                     std::to_string(prop.major) + "." + std::to_string(prop.minor) + "): gemmtune needs " +
                     std::to_string(kMinComputeCapabilityMajor) + ".0 or newer");
  return d;
}

void to_json(nlohmann::json& j, const DeviceInfo& d) {
  j = nlohmann::json{{"index", d.index},
                     {"name", d.identity.gpu_name},
                     {"key", d.identity.key()},
                     {"slug", d.identity.slug()},
                     {"compute_capability", std::to_string(d.identity.cc_major) + "." + std::to_string(d.identity.cc_minor)},
                     {"sm_count", d.identity.sm_count},
                     {"l2_bytes", d.l2_bytes},
                     {"global_mem_bytes", d.global_mem_bytes},
                     {"shared_mem_per_block_optin", d.shared_mem_per_block_optin},
                     {"max_sm_clock_mhz", d.max_sm_clock_mhz},
                     {"memory_clock_mhz", d.memory_clock_mhz},
                     {"memory_bus_bits", d.memory_bus_bits},
                     {"nominal_dram_gbps", d.nominal_dram_gbps()},
                     {"driver", d.identity.driver},
                     {"cuda_driver_api", d.cuda_driver_api},
                     {"cuda_runtime", d.identity.cuda_runtime},
                     {"cublaslt_version", d.identity.cublaslt_version},
                     {"identity", d.identity}};
}

}  // namespace gemmtune
