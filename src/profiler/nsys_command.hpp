// The Nsight Systems command lines for one case: a timeline of just the measured region, and its kernel summary.
//
// --capture-range=cudaProfilerApi records only between cudaProfilerStart and cudaProfilerStop, which the profiled
// `gemmtune run` calls around its timed calls (profiler/capture_range.hpp), so set-up, verification and warm-up
// stay out of the timeline. nsys is not installed on the team's GPU machine: these lines are tested as text.
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

// nsys profile -t cuda,nvtx,cublas --capture-range=cudaProfilerApi --capture-range-end=stop --export sqlite
//   --force-overwrite true -o <output_stem> <target_argv...>; nsys adds .nsys-rep (and .sqlite) to the stem.
std::vector<std::string> nsys_profile_argv(const std::string& nsys, const std::string& output_stem,
                                           const std::vector<std::string>& target_argv);

// nsys stats --report cuda_gpu_kern_sum --report nvtx_kern_sum <output_stem>.nsys-rep: per-kernel GPU time, and
// the same split by the NVTX case range the kernels ran in.
std::vector<std::string> nsys_stats_argv(const std::string& nsys, const std::string& output_stem);

}  // namespace gemmtune
