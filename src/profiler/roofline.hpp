// Roofline classification of one GEMM call: is it bound by DRAM bandwidth or by arithmetic, and how close to that
// bound did it get. Pure arithmetic on numbers the caller measured (or, for the bytes, the analytic minimum).
#pragma once

#include "problem/gemm_problem.hpp"

namespace gemmtune {

enum class RooflineBound { Memory, Compute };
const char* to_string(RooflineBound b);  // "memory", "compute"

struct RooflineVerdict {
  RooflineBound bound = RooflineBound::Compute;
  double intensity = 0;          // FLOP per DRAM byte
  double ridge = 0;              // the intensity where the two ceilings meet: peak FLOP/s / peak bytes/s
  double attainable_tflops = 0;  // min(peak, intensity × bandwidth)
  double achieved_tflops = 0;
  double pct_of_bound = 0;       // achieved / attainable × 100
};

// Throws InputError unless every argument is finite and positive.
RooflineVerdict classify_roofline(double flops, double dram_bytes, double seconds, double peak_tflops,
                                  double peak_dram_tbytes_per_s);

// The fewest DRAM bytes p can move: each operand and result (Z and the bias included) touched once, 4 bytes each.
double min_dram_bytes(const GemmProblem& p);

}  // namespace gemmtune
