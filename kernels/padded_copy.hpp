// copy_rows_padded: a matrix copied into rows 16 bytes aligned, for the staged variants (operand_staging.hpp) and the
// padded cuBLASLt candidates (lt/lt_padding.hpp). Plain C++, so host code that only launches it needs no CUDA headers
// of the kernels.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmtune::kernels {

// Copies rows × cols floats (src's rows ld_src apart) into dst, whose rows are ld_dst = cols rounded up to 4 apart
// on a 16-byte base, zero-filling each row past cols. One kernel on s.
void copy_rows_padded(const float* src, std::int64_t ld_src, float* dst, std::int64_t ld_dst, std::int64_t rows,
                      std::int64_t cols, cudaStream_t s);

}  // namespace gemmtune::kernels
