// copy_rows_padded: a matrix copied into rows 16 bytes aligned, for the staged variants (operand_staging.hpp) and the
// padded cuBLASLt candidates (lt/lt_padding.hpp). Plain C++, so host code that only launches it needs no CUDA headers
// of the kernels.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmtune::kernels {

// One copy: rows × cols floats (src's rows ld_src apart) into dst, whose rows are ld_dst = cols rounded up to 4
// apart on a 16-byte base, each row zero-filled past cols.
struct PaddedCopy {
  const float* src = nullptr;
  std::int64_t ld_src = 0;
  float* dst = nullptr;
  std::int64_t ld_dst = 0, rows = 0, cols = 0;
};

// Makes one copy, or two (A's and B's) in the same kernel on s: a launch fewer where both operands are padded, which
// is a few microseconds of a small problem's call (527x435x293 tf32 takes 12-14 us in all). behind_previous_kernel: as
// a programmatic dependent launch behind the kernel before it on s (LaunchScratch::behind_previous_kernel).
void copy_rows_padded(const PaddedCopy& first, cudaStream_t s, const PaddedCopy& second = {},
                      bool behind_previous_kernel = false);

}  // namespace gemmtune::kernels
