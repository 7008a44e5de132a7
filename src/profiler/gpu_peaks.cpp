#include "profiler/gpu_peaks.hpp"

#include <vector>

namespace gemmtune {
namespace {

struct KnownGpu {
  std::vector<const char*> name_parts;  // all must occur in the CUDA device name
  GpuPeaks peaks;
};

// Most specific first: "H100 PCIe" before the bare "H100" of the SXM part, "L40S" and "L40" before "L4".
const std::vector<KnownGpu>& known_gpus() {
  static const std::vector<KnownGpu> gpus = {
      {{"H100", "PCIe"}, {"H100 PCIe", 51.2, 378.0, 2.0}},
      {{"H100", "NVL"}, {"H100 NVL", 60.0, 417.5, 3.9}},
      {{"H100"}, {"H100 SXM5", 67.0, 495.0, 3.35}},
      {{"H200", "NVL"}, {"H200 NVL", 60.0, 417.5, 4.8}},
      {{"H200"}, {"H200 SXM", 67.0, 495.0, 4.8}},
      {{"A100", "80GB", "PCIe"}, {"A100 80GB PCIe", 19.5, 156.0, 1.935}},
      {{"A100", "80GB"}, {"A100 80GB SXM4", 19.5, 156.0, 2.039}},
      {{"A100"}, {"A100 40GB", 19.5, 156.0, 1.555}},
      {{"L40S"}, {"L40S", 91.6, 183.0, 0.864}},
      {{"L40"}, {"L40", 90.5, 90.5, 0.864}},
      {{"L4"}, {"L4", 30.3, 60.0, 0.3}},
  };
  return gpus;
}

}  // namespace

double GpuPeaks::tflops(MathMode mode) const {
  switch (mode) {
    case MathMode::Fp32: return fp32_tflops;
    case MathMode::Tf32: return tf32_tflops;
    case MathMode::Tf32x3: return tf32_tflops / 3.0;
  }
  return 0;
}

std::optional<GpuPeaks> nominal_peaks(const std::string& gpu_name) {
  for (const KnownGpu& gpu : known_gpus()) {
    bool all = true;
    for (const char* part : gpu.name_parts) all = all && gpu_name.find(part) != std::string::npos;
    if (all) return gpu.peaks;
  }
  return std::nullopt;
}

std::string gpu_name_of_device_key(const std::string& device_key) { return device_key.substr(0, device_key.find('|')); }

}  // namespace gemmtune
