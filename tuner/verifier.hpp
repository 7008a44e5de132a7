// Verifier: every candidate is checked once against an fp64 reference before it may be timed or cached.
//
// Tolerance is on the relative Frobenius error ‖out − ref‖/‖ref‖ and depends on the math mode: fp32 and 3xtf32
// carry fp32 rounding, which grows like √k over a k-long dot product (1e-6·√k); tf32 keeps 10 mantissa bits of
// each input, about 5e-4 relative per product, independent of k (1e-3). Z is checked too when it is kept.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

double verification_tolerance(const GemmProblem& p);

struct Verdict {
  bool ok = false;
  double error = 0;      // the larger of Y's and Z's relative errors (+inf if an element was NaN/Inf or unwritten)
  double tolerance = 0;
  std::string message;   // why it failed
};

class Verifier {
 public:
  // Computes the fp64 reference of p on input set 0 of `buffers`; synchronizes s.
  Verifier(const GemmProblem& p, const ProblemBuffers& buffers, cudaStream_t s);

  // Poisons the outputs, runs the candidate once on input set 0, and compares. Synchronizes s.
  Verdict check(const CandidateLauncher& launcher, cudaStream_t s) const;
  // Compares outputs already produced on input set 0 (for callers that launch by other means).
  Verdict compare(const float* y, const float* z, cudaStream_t s) const;

 private:
  GemmProblem problem_;
  const ProblemBuffers& buffers_;
  DeviceBuffer<double> y_ref_, z_ref_;
};

}  // namespace gemmtune
