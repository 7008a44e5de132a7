#include "profiler/nsys_command.hpp"

namespace gemmtune {

std::vector<std::string> nsys_profile_argv(const std::string& nsys, const std::string& output_stem,
                                           const std::vector<std::string>& target_argv) {
  std::vector<std::string> argv = {nsys,
                                   "profile",
                                   "--trace=cuda,nvtx,cublas",
                                   "--capture-range=cudaProfilerApi",
                                   "--capture-range-end=stop",
                                   "--export=sqlite",
                                   "--force-overwrite=true",
                                   "--output=" + output_stem};
  argv.insert(argv.end(), target_argv.begin(), target_argv.end());
  return argv;
}

std::vector<std::string> nsys_stats_argv(const std::string& nsys, const std::string& output_stem) {
  return {nsys, "stats", "--report", "cuda_gpu_kern_sum", "--report", "nvtx_kern_sum", output_stem + ".nsys-rep"};
}

}  // namespace gemmtune
