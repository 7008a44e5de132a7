// An operand as the TMA pipeline reads it: one tensor map, or one per class of rows (kernels/row_classes.hpp) for a
// matrix whose rows do not start on 16-byte boundaries.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/cuda_call.hpp"
#include "kernels/row_classes.hpp"

#include <cudaTypedefs.h>

namespace gemmtune::kernels {

// cuTensorMapEncodeTiled through the runtime's driver entry point, so the library needs no link against libcuda.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GT_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw CheckError("the CUDA driver has no cuTensorMapEncodeTiled, which the wgmma TMA pipeline needs");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A row-major rows×cols fp32 matrix (row stride ld floats) read in boxes of box_rows × box_cols. L2 promotion to 128
// bytes, not 256: with every SM pulling a 128×128 tile's boxes, pairs sharing A landed them 18-25% slower at 256 in
// both leases that measured it (874-889 clocks a k tile against 710-751; unpaired 6-12% slower in one lease, level in
// the other; results/nvidia-h200/wgmma_rate_probe.txt, whose probe asks for the others).
inline CUtensorMap tensor_map_2d(const float* base, std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_rows,
                                 int box_cols, CUtensorMapSwizzle swizzle,
                                 CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims,
                                               strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                               promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    throw CheckError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(status)) +
                     ") for a " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix, ld " +
                     std::to_string(ld));
  return map;
}

struct TmaOperand {
  CUtensorMap map[kMaxRowClasses];  // whole_rows: map[0] is the whole matrix; rows_by_class(c): map[j], rows j, j + c…
  unsigned shifts = 0;               // rows_by_class: s_j in bits 3j .. 3j + 2

  __host__ __device__ int shift(int j) const { return static_cast<int>(shifts >> (3 * j)) & 7; }
};

// The whole matrix in one map: its base and ld must be 16-byte aligned.
inline TmaOperand whole_rows(const float* base, std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_rows,
                             int box_cols, CUtensorMapSwizzle swizzle) {
  TmaOperand op;
  op.map[0] = tensor_map_2d(base, rows, cols, ld, box_rows, box_cols, swizzle);
  return op;
}

// Any rows (at least `classes`, 4 or 8) of floats: a map per class, each class's rows aligned to 4·classes bytes,
// boxes of class_box_rows × box_cols, unswizzled.
inline TmaOperand rows_by_class(const float* base, std::int64_t rows, std::int64_t cols, std::int64_t ld, int classes,
                                int class_box_rows, int box_cols) {
  TmaOperand op;
  for (int j = 0; j < classes; ++j) {
    const float* const row = base + j * ld;
    const int s = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) >> 2) & static_cast<unsigned>(classes - 1));
    op.map[j] = tensor_map_2d(row - s, (rows - j + classes - 1) / classes, cols + s, classes * ld, class_box_rows,
                              box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    op.shifts |= static_cast<unsigned>(s) << (3 * j);
  }
  return op;
}

}  // namespace gemmtune::kernels
