#include "cuda/device_info.hpp"

#include <cublasLt.h>
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <system_error>

#include <nlohmann/json.hpp>

#include "cuda/cuda_call.hpp"
#include "problem/device_key.hpp"

namespace gemmtune {

namespace {

// A device node of the NVIDIA kernel driver, or its user-space library that loads: a GPU is installed here, whatever
// CUDA says. Empty when there is neither.
std::string nvidia_driver_evidence() {
  std::string found;
  const auto add = [&found](const std::string& what) { found += (found.empty() ? "" : ", ") + what; };
  for (const char* node : {"/dev/nvidiactl", "/dev/nvidia0"})
    if (std::error_code ignored; std::filesystem::exists(node, ignored)) add(node);
  const std::unique_ptr<void, int (*)(void*)> libcuda(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL), dlclose);
  if (libcuda) add("libcuda.so.1 loads");
  return found;
}

}  // namespace

GpuProbe probe_cuda_devices() {
  GpuProbe probe;
  const cudaError_t err = cudaGetDeviceCount(&probe.count);
  if (err == cudaSuccess && probe.count > 0) {
    probe.verdict = GpuProbe::Verdict::Usable;
    return probe;
  }
  cudaGetLastError();  // clear the sticky-free error so later queries report their own status
  probe.count = 0;
  if (err == cudaSuccess || err == cudaErrorNoDevice) {
    probe.reason = std::string("no usable CUDA GPU: ") +
                   (err == cudaSuccess ? "no CUDA devices found" : cudaGetErrorString(err));
    return probe;
  }
  // Without a driver the runtime reports cudaErrorInsufficientDriver, which is also what a too-old driver gives.
  const std::string evidence = nvidia_driver_evidence();
  if (evidence.empty()) {
    probe.reason = std::string("no usable CUDA GPU: ") + cudaGetErrorString(err) +
                   " (no NVIDIA driver here: no /dev/nvidiactl or /dev/nvidia0, no libcuda.so.1)";
    return probe;
  }
  probe.verdict = GpuProbe::Verdict::Unusable;
  probe.reason = std::string("no usable CUDA GPU: ") + cudaGetErrorString(err) + ", yet an NVIDIA driver is here (" +
                 evidence + "): CUDA cannot use this machine's GPU";
  return probe;
}

int cuda_device_count() {
  const GpuProbe probe = probe_cuda_devices();
  if (probe.verdict != GpuProbe::Verdict::Usable) throw NoGpuError(probe.reason);
  return probe.count;
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
