#include "profiler/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace gemmtune {

const char* to_string(RooflineBound b) { return b == RooflineBound::Memory ? "memory" : "compute"; }

RooflineVerdict classify_roofline(double flops, double dram_bytes, double seconds, double peak_tflops,
                                  double peak_dram_tbytes_per_s) {
  for (double v : {flops, dram_bytes, seconds, peak_tflops, peak_dram_tbytes_per_s})
    if (!std::isfinite(v) || v <= 0)
      throw InputError("roofline needs positive, finite FLOPs, bytes, time and peaks");
  RooflineVerdict r;
  r.intensity = flops / dram_bytes;
  r.ridge = peak_tflops / peak_dram_tbytes_per_s;  // TFLOP/s over TB/s: FLOP per byte
  r.bound = r.intensity < r.ridge ? RooflineBound::Memory : RooflineBound::Compute;
  r.attainable_tflops = std::min(peak_tflops, r.intensity * peak_dram_tbytes_per_s);
  r.achieved_tflops = flops / seconds / 1e12;
  r.pct_of_bound = 100.0 * r.achieved_tflops / r.attainable_tflops;
  return r;
}

double min_dram_bytes(const GemmProblem& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  // Every pass touches an m×k, a k×n and an m×n matrix; Z is one more m×n, written forward (save_z) or read
  // backward (act' needs it).
  double elements = m * k + k * n + m * n;
  const bool backward = p.pass != Pass::Forward;
  if (backward ? p.epi.act != Activation::None : p.epi.save_z) elements += m * n;
  if (p.epi.bias) elements += n;
  return elements * sizeof(float);
}

}  // namespace gemmtune
