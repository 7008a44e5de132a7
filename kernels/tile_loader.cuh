// cp.async loading of one operand tile into shared memory, for the families that stage tiles without registers.
#pragma once

#include <cstdint>

#include "kernels/operand_view.cuh"
#include "kernels/ptx.cuh"

namespace gemmtune::kernels {

// Issues this thread's cp.async copies of one rows×bk tile of `op` into `tile`, where Layout::offset(r, kk) places
// each float (the 4 floats of a chunk must stay adjacent and 16-byte aligned): 16-byte chunks where the operand allows,
// else two 8-byte or four 4-byte copies; floats outside the matrix are zero-filled (src-size < copy size) and never
// read. Interior tiles skip the bounds in every case, 4-byte copies too, which computed a bound and a select per
// float (kernels/PERFORMANCE.md: 0-4% on issue 49's shapes, 12-34% on the 128×128 s3 tile). kPath: ptx::CopyPath.
// kVec4: the launch already knows the operand's rows are 16-byte aligned, so the 8- and 4-byte paths and the branch
// to them per chunk are not compiled in.
template <class Layout, ptx::CopyPath kPath = ptx::CopyPath::BypassL1, bool kVec4 = false, int kRows, int kBk,
          int kThreads, bool kKMajorOnly>
__device__ __forceinline__ void load_tile_async(float* tile,
                                                const ChunkCursor<kRows, kBk, kThreads, kKMajorOnly>& cursor,
                                                const OperandView& op, std::int64_t k0) {
  using Cursor = ChunkCursor<kRows, kBk, kThreads, kKMajorOnly>;
  if (cursor.interior(k0)) {
#pragma unroll
    for (int c = 0; c < Cursor::kChunks; ++c) {
      float* const dst = tile + Layout::offset(cursor.tile_r(c), cursor.tile_kk(c));
      const float* const src = cursor.src(c, k0);
      if (kVec4 || op.vec4) {
        ptx::cp_async_16<kPath>(dst, src, 16);
      } else if (op.vec2) {
        ptx::cp_async_8(dst, src);
        ptx::cp_async_8(dst + 2, src + 2);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) ptx::cp_async_4(dst + i, src + i, 4);
      }
    }
    return;
  }
#pragma unroll
  for (int c = 0; c < Cursor::kChunks; ++c) {
    const int valid = cursor.valid(c, k0);
    const float* const src = cursor.src(c, k0);
    float* const dst = tile + Layout::offset(cursor.tile_r(c), cursor.tile_kk(c));
    if (kVec4 || op.vec4) {
      ptx::cp_async_16<kPath>(dst, valid > 0 ? src : op.ptr, valid * 4);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) ptx::cp_async_4(dst + i, i < valid ? src + i : op.ptr, i < valid ? 4 : 0);
    }
  }
}

}  // namespace gemmtune::kernels
