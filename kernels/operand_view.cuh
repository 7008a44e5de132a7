// op(A) and op(B)ᵀ seen the same way by every kernel: a rows×k matrix, element (r, kk), stored either k-contiguous
// ("K-major") or rows-contiguous ("MN-major"). The four layouts NN/NT/TN/TT are index math on this view, never a
// transpose kernel: A is K-major unless trans_a, B (read as op(B)ᵀ, n×k) is K-major only when trans_b.
#pragma once

#include <cstdint>

#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

struct OperandView {
  const float* ptr = nullptr;
  std::int64_t ld = 0;      // row-major leading dimension of the stored matrix
  std::int64_t rows = 0;    // m for A, n for B
  std::int64_t k = 0;
  bool k_major = false;     // element (r, kk) at r·ld + kk; else at kk·ld + r
  bool vec4 = false;        // 16-byte loads along the contiguous dimension are legal (ld % 4 == 0, 16-byte base)
  bool vec2 = false;        // 8-byte loads are (ld % 2 == 0, 8-byte base): half the copies of 4-byte ones

  __host__ __device__ std::int64_t offset(std::int64_t r, std::int64_t kk) const {
    return k_major ? r * ld + kk : kk * ld + r;
  }
};

inline bool aligned_16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
inline bool aligned_8(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 8 == 0; }

inline OperandView operand_a(const GemmProblem& p, const GemmOperands& x) {
  OperandView v;
  v.ptr = x.A;
  v.ld = p.lda();
  v.rows = p.m;
  v.k = p.k;
  v.k_major = !p.trans_a;
  v.vec4 = v.ld % 4 == 0 && aligned_16(x.A);
  v.vec2 = v.ld % 2 == 0 && aligned_8(x.A);
  return v;
}

inline OperandView operand_b(const GemmProblem& p, const GemmOperands& x) {
  OperandView v;
  v.ptr = x.B;
  v.ld = p.ldb();
  v.rows = p.n;
  v.k = p.k;
  v.k_major = p.trans_b;
  v.vec4 = v.ld % 4 == 0 && aligned_16(x.B);
  v.vec2 = v.ld % 2 == 0 && aligned_8(x.B);
  return v;
}

// This thread's share of loading rows×bk tiles of an operand, in chunks of 4 floats contiguous in memory: chunk c of
// tile t is chunk tid + c·kThreads of the tile. Everything that does not change along k is computed once, so the loaders
// keep a few registers per operand instead of an address per chunk. Floats outside the matrix are not read: valid()
// says how many of a chunk's 4 are inside (0..4), and the loaders zero-fill the rest, so edge tiles need no other case.
// kKMajorOnly: the operand is always K-major (wgmma's A), so only that walk must split evenly (192 rows do not split
// evenly among 256 threads along the rows).
template <int kRows, int kBk, int kThreads, bool kKMajorOnly = false>
struct ChunkCursor {
  static constexpr int kChunks = kRows * kBk / 4 / kThreads;
  static_assert(kChunks * kThreads * 4 == kRows * kBk, "threads must split a tile into whole 4-float chunks");
  static_assert(kThreads % (kBk / 4) == 0 && (kKMajorOnly || kThreads % (kRows / 4) == 0),
                "each thread's chunks share a k or a row");

  const float* base;             // this thread's first chunk at k0 = 0
  std::int64_t chunk_step;       // stored distance between its consecutive chunks
  std::int64_t k_stride;         // stored distance per unit of k
  std::int64_t contiguous_left;  // floats left along the contiguous dimension from the first chunk (at k0 = 0)
  std::int64_t other_left;       // rows (K-major) or k (MN-major) left from the first chunk
  int r, kk;                     // tile position of the first chunk
  int step_r, step_kk;           // tile distance between consecutive chunks
  bool k_major;
  bool rows_inside;              // the tile's rows all lie inside the matrix
  std::int64_t k;

  // k_major is the operand's; MMA kernels pass it as a compile-time constant so the branches fold away.
  __device__ ChunkCursor(const OperandView& op, bool is_k_major, std::int64_t row0, int tid)
      : k_major(kKMajorOnly || is_k_major), rows_inside(row0 + kRows <= op.rows), k(op.k) {
    if (k_major) {
      r = tid / (kBk / 4);
      kk = tid % (kBk / 4) * 4;
      step_r = kThreads / (kBk / 4);
      step_kk = 0;
      contiguous_left = op.k - kk;
      other_left = op.rows - (row0 + r);
      chunk_step = step_r * op.ld;
      k_stride = 1;
    } else {
      kk = tid / (kRows / 4);
      r = tid % (kRows / 4) * 4;
      step_kk = kThreads / (kRows / 4);
      step_r = 0;
      contiguous_left = op.rows - (row0 + r);
      other_left = op.k - kk;
      chunk_step = step_kk * op.ld;
      k_stride = op.ld;
    }
    base = op.ptr + (k_major ? (row0 + r) * op.ld + kk : std::int64_t{kk} * op.ld + row0 + r);
  }

  // Every chunk of the tile at k0 lies inside the matrix: the loaders' fast path, no per-chunk bounds.
  __device__ bool interior(std::int64_t k0) const { return rows_inside && k0 + kBk <= k; }

  __device__ const float* src(int c, std::int64_t k0) const { return base + c * chunk_step + k0 * k_stride; }
  __device__ int tile_r(int c) const { return r + c * step_r; }
  __device__ int tile_kk(int c) const { return kk + c * step_kk; }

  __device__ int valid(int c, std::int64_t k0) const {
    const std::int64_t contiguous = k_major ? contiguous_left - k0 : contiguous_left;
    const std::int64_t other = k_major ? other_left - c * step_r : other_left - k0 - c * step_kk;
    if (other <= 0 || contiguous <= 0) return 0;
    return contiguous >= 4 ? 4 : static_cast<int>(contiguous);
  }
};

}  // namespace gemmtune::kernels
