// Nominal peak throughputs of the GPUs gemmtune knows, from NVIDIA's datasheets (dense tensor-core figures, boost
// clock). They are ceilings for a roofline, not measurements: DEVICE.md's H100 reaches ~400 of its 495 TF32 TFLOP/s
// and ~51 of its 67 FP32 TFLOP/s with cuBLASLt.
#pragma once

#include <optional>
#include <string>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

struct GpuPeaks {
  std::string model;        // the datasheet's name, e.g. "H100 SXM5"
  double fp32_tflops = 0;   // FFMA, no tensor cores
  double tf32_tflops = 0;   // tensor cores, dense
  double dram_tbytes_per_s = 0;

  // 3xtf32 issues three TF32 products per output product, so its ceiling is a third of TF32's.
  double tflops(MathMode mode) const;
};

// Matches the CUDA device name (cudaDeviceProp::name, the first field of a device key), e.g.
// "NVIDIA H100 80GB HBM3"; nullopt for a GPU not in the table.
std::optional<GpuPeaks> nominal_peaks(const std::string& gpu_name);

// The GPU name part of a DeviceIdentity key ("NVIDIA H100 80GB HBM3|sm_90|..." -> "NVIDIA H100 80GB HBM3").
std::string gpu_name_of_device_key(const std::string& device_key);

}  // namespace gemmtune
