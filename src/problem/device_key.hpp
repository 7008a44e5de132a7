// The device key: the machine a measurement is valid for, as the db, the cache exports, the sweep JSON, the gate and
// the runtime's lookup spell it. This is the one place its format is defined:
//   "<GPU name>|sm_<major><minor>|<SM count>sm|drv<driver>|lt<cuBLASLt version>"
//   "NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100"
// The GPU name is the driver's (cudaDeviceProp::name: at most 255 bytes), printable ASCII without '|'. The compute
// capability is one gemmtune runs on (major >= kMinComputeCapabilityMajor, minor one digit). The driver is the
// kernel module's version ("580.159.04": two or three dot-separated numbers) or "unknown" where /proc does not say.
// Numbers are written in decimal without signs or leading zeros. Keys are compared as strings everywhere, so a key
// is valid only when its fields print it back byte for byte: no spelling of a key is normalised into another.
#pragma once

#include <cstddef>
#include <string>

#include "problem/measurement.hpp"

namespace gemmtune {

// Our tensor-core kernels use mma.sync tf32 and cp.async: Ampere (sm_80) or newer. query_device refuses older GPUs,
// so no key below this was ever written.
inline constexpr int kMinComputeCapabilityMajor = 8;
// The driver field when the kernel module's version is unknown.
inline constexpr const char* kUnknownDriver = "unknown";
// cudaDeviceProp::name is 256 bytes with its terminating NUL.
inline constexpr std::size_t kMaxGpuNameBytes = 255;

// The key of an identity, field for field (DeviceIdentity::key()).
std::string format_device_key(const DeviceIdentity& d);

// The identity a key was written from (cuda_runtime, which the key does not hold, is 0). Throws InputError
// "device key '<key, unprintable bytes as \xNN>': <the first thing wrong>" for any string format_device_key could not
// have produced from the identity of a GPU gemmtune runs on.
DeviceIdentity parse_device_key(const std::string& key);

// "580.159.04", "535.54": what nvidia_driver_version() reads from /proc/driver/nvidia/version.
bool is_driver_version(const std::string& text);

}  // namespace gemmtune
