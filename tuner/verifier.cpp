#include "tuner/verifier.hpp"

#include <cmath>
#include <sstream>

#include "kernels/reference_gemm.hpp"

namespace gemmtune {

double verification_tolerance(const GemmProblem& p) {
  if (p.mode == MathMode::Tf32) return 1e-3;
  return 1e-6 * std::sqrt(static_cast<double>(p.k));
}

Verifier::Verifier(const GemmProblem& p, const ProblemBuffers& buffers, cudaStream_t s)
    : problem_(p), buffers_(buffers), y_ref_(buffers.y_count()) {
  if (p.epi.save_z) z_ref_ = DeviceBuffer<double>(buffers.y_count());
  kernels::reference_gemm(p, buffers.operands(0), y_ref_.get(), z_ref_.get(), s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
}

Verdict Verifier::check(const CandidateLauncher& launcher, cudaStream_t s) const {
  buffers_.poison_outputs(s);
  launcher.launch(buffers_.operands(0), s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  return compare(buffers_.y(), buffers_.z(), s);
}

Verdict Verifier::compare(const float* y, const float* z, cudaStream_t s) const {
  Verdict v;
  v.tolerance = verification_tolerance(problem_);
  const auto count = static_cast<std::int64_t>(buffers_.y_count());
  const double y_err = kernels::relative_frobenius_error(y, y_ref_.get(), count, s);
  const double z_err = problem_.epi.save_z ? kernels::relative_frobenius_error(z, z_ref_.get(), count, s) : 0.0;
  v.error = std::max(y_err, z_err);
  v.ok = std::isfinite(v.error) && v.error <= v.tolerance;
  if (!v.ok) {
    std::ostringstream os;
    os << "relative error Y " << y_err;
    if (problem_.epi.save_z) os << ", Z " << z_err;
    os << " exceeds tolerance " << v.tolerance << (std::isfinite(v.error) ? "" : " (NaN/Inf or unwritten elements)");
    v.message = os.str();
  }
  return v;
}

}  // namespace gemmtune
