// Tiles of rows that need not start on 16-byte boundaries, read in place in whole 16-byte units (issue 49).
//
// A tile row is kLen floats of a stored row (k of a K-major operand, n of an MN-major one) from float f of memory.
// Its floats lie in the 16-byte units from f & ~3 on, at most kLen / 4 + 1 of them, and s = f & 3 is where the row
// starts in the first one. Two ways to read them, a quarter of the loads that 4-byte pieces take, each a whole
// sector:
//  - UnitCursor copies the units whole (cp.async of 16 bytes) into a raw row of a shared tile (16-byte aligned,
//    kLen + 4 floats or more), where the row's float j lies at raw[s + j], for a reader that can add s (the wgmma
//    kernels' register operand);
//  - RegisterRows loads them into registers and shifts them there, for a tile that must be stored in a fixed layout
//    (the wgmma kernels' swizzled shared operand).
// Nothing outside the matrix is read or kept: the unit where a row ends is read only up to the end, and rows outside
// the matrix are zeros, so a reader sees zeros past the edges as from the aligned loaders. The floats before s (the
// previous k tile's, or the end of the previous row, in the same aligned unit as the row's first float) are read but
// never used, and so is a row's last unit where s = 0.
//
// The shift of stored row r is (f0 + r·ld + col) & 3: k tiles are a multiple of 4 floats, so it does not change
// along k, and rows 4 apart share it, so a reader computes it once for all the rows it owns.
#pragma once

#include <climits>
#include <cstdint>

#include "kernels/operand_view.cuh"
#include "kernels/ptx.cuh"

namespace gemmtune::kernels {

// Where a row starting at p starts in its 16-byte unit, in floats (0..3).
__host__ __device__ __forceinline__ int unit_shift(const float* p) {
  return static_cast<int>((reinterpret_cast<std::uintptr_t>(p) >> 2) & 3);
}

// This thread's copies of the kRows × kLen tiles of an operand along k, in rows kRawStride floats apart. K-major
// (kMnMajor false): the tile's rows are the operand's rows row0.., each kLen floats of k from k0. MN-major: its rows
// are k0.. (k), each kLen floats from row0 along the operand's rows. Everything that does not change along k is
// worked out once, as ChunkCursor does: per copy its source at the first k tile, its raw offset and how far the
// matrix reaches from it, so a k tile costs a few integer operations per copy.
template <int kRows, int kLen, int kRawStride, int kThreads, bool kMnMajor>
struct UnitCursor {
  static constexpr int kUnits = kLen / 4 + 1;  // the most units a row of kLen floats can touch
  static constexpr int kCopies = (kRows * kUnits + kThreads - 1) / kThreads;
  static constexpr int kOutside = INT_MIN / 2;  // "left" of a copy whose row lies outside the matrix
  static_assert(kLen % 4 == 0 && kRawStride % 4 == 0 && kRawStride >= kLen + 4, "whole, aligned raw rows");

  // One 16-byte copy: `bytes` (0-16) from src (16-byte aligned) to raw + dst, the rest of the 16 zero-filled.
  struct Copy {
    const float* src;
    int dst;
    int bytes;
  };

  const float* src[kCopies];  // the copy's unit at the first k tile
  int dst[kCopies];           // its raw offset; -1: the thread has no such copy
  // K-major: floats of the row inside the matrix from the unit's first on, at the first k tile. MN-major: the same
  // along the row (it does not move), and rows_left: stored rows (k) left from the copy's row at the first k tile.
  int left[kCopies];
  int rows_left[kMnMajor ? kCopies : 1];
  std::int64_t step;  // floats between one k tile's unit and the next's
  int kk;             // the tiles' width along k
  // The k tiles from the first on in which every copy of this thread is a whole unit inside the matrix (copy()'s
  // bytes 16): there load() issues them without working out bounds, which cost about 20 PTX instructions a copy (two
  // of them branches). At 16×50257×4096 the skinny 16×256 tiles then executed 104.0M → 56.2M instructions in tf32 and
  // 137.9M → 90.4M in 3xtf32 (H200, results/nvidia-h200/decode_m16_ncu_whole_units.txt).
  int whole_tiles = 0;

  // k0: the first k tile's first k.
  __host__ __device__ UnitCursor(const OperandView& op, std::int64_t row0, std::int64_t k0, int k_width, int tid)
      : step(kMnMajor ? k_width * op.ld : k_width), kk(k_width) {
    for (int c = 0; c < kCopies; ++c) {
      const int i = tid + c * kThreads;
      const int r = i / kUnits, u = i % kUnits;
      dst[c] = i < kRows * kUnits ? r * kRawStride + 4 * u : -1;
      const std::int64_t row = kMnMajor ? k0 + r : row0 + r, col = kMnMajor ? row0 : k0;
      const std::int64_t row_limit = kMnMajor ? op.k : op.rows, col_limit = kMnMajor ? op.rows : op.k;
      const float* const start = op.ptr + row * op.ld + col;
      const int s = unit_shift(start);
      src[c] = start - s + 4 * u;
      const std::int64_t floats = col_limit - col + s - 4 * u;
      const int clamped = static_cast<int>(floats < INT_MAX / 2 ? floats : INT_MAX / 2);
      if constexpr (kMnMajor) {
        left[c] = clamped;
        const std::int64_t rows = row_limit - row;
        rows_left[c] = static_cast<int>(rows < INT_MAX / 2 ? rows : INT_MAX / 2);
      } else {
        left[c] = row < row_limit ? clamped : kOutside;
      }
    }
    int min_left = INT_MAX, min_rows_left = INT_MAX;
    for (int c = 0; c < kCopies; ++c) {
      if (dst[c] < 0) continue;
      min_left = left[c] < min_left ? left[c] : min_left;
      if constexpr (kMnMajor) min_rows_left = rows_left[c] < min_rows_left ? rows_left[c] : min_rows_left;
    }
    if (min_left >= 4) {
      // K-major: left[c] − kt·kk ≥ 4 for every copy. MN-major: its column is whole (left ≥ 4, fixed along k) and
      // rows_left[c] − kt·kk > 0.
      if constexpr (kMnMajor)
        whole_tiles = min_rows_left > 0 ? (min_rows_left - 1) / k_width + 1 : 0;
      else
        whole_tiles = (min_left - 4) / k_width + 1;
    }
  }

  // Copy c (dst[c] >= 0) of the k tile kt tiles after the first; nothing of it is read where bytes is 0.
  __host__ __device__ Copy copy(const OperandView& op, int c, int kt) const {
    int bytes;
    if constexpr (kMnMajor) {
      bytes = rows_left[c] - kt * kk > 0 && left[c] > 0 ? 4 * (left[c] < 4 ? left[c] : 4) : 0;
    } else {
      const int l = left[c] - kt * kk;
      bytes = l >= 4 ? 16 : l > 0 ? 4 * l : 0;
    }
    // A copy that reads nothing still needs a 16-byte aligned source: the unit of the operand's first float.
    const auto first_unit = reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(op.ptr) & ~std::uintptr_t{15});
    return Copy{bytes > 0 ? src[c] + kt * step : first_unit, dst[c], bytes};
  }

  // Issues the copies of the k tile kt tiles after the first into raw. kPath: ptx::CopyPath.
  template <ptx::CopyPath kPath = ptx::CopyPath::BypassL1>
  __device__ void load(float* raw, const OperandView& op, int kt) const {
    if (kt < whole_tiles) {
      const std::int64_t offset = kt * step;
#pragma unroll
      for (int c = 0; c < kCopies; ++c) {
        if (kRows * kUnits % kThreads != 0 && c == kCopies - 1 && dst[c] < 0) continue;  // only the last may be none
        ptx::cp_async_16<kPath>(raw + dst[c], src[c] + offset, 16);
      }
      return;
    }
#pragma unroll
    for (int c = 0; c < kCopies; ++c) {
      if (kRows * kUnits % kThreads != 0 && c == kCopies - 1 && dst[c] < 0) continue;  // only the last may be none
      const Copy u = copy(op, c, kt);
      ptx::cp_async_16<kPath>(raw + u.dst, u.src, u.bytes);
    }
  }
};

// Where B's stored rows k0 + i (i = 0..3) start in their 16-byte units, for an MN-major B read as raw units from
// column col (the skinny families): their tiles start at multiples of 4 rows, and 4 rows of B are 4·ld floats, a
// whole number of units, so rows 4 apart share a shift and these four serve every row a block reads. All zero where
// B's rows are 16-byte aligned. Two bits each in one word: an array indexed by a thread's row would go to local memory.
struct RowShifts {
  unsigned bits = 0;
  __device__ RowShifts() = default;
  __device__ RowShifts(const OperandView& b, std::int64_t col) {
#pragma unroll
    for (int i = 0; i < 4; ++i) bits |= static_cast<unsigned>(unit_shift(b.ptr + i * b.ld + col)) << (2 * i);
  }
  __device__ int operator[](int i) const { return static_cast<int>(bits >> (2 * i) & 3u); }
};

// Floats s..s+3 of two adjacent 16-byte units lo, hi (s = 0..3), picked in selects (an indexed array would go to local
// memory).
__host__ __device__ __forceinline__ float4 shifted_float4(const float4& lo, const float4& hi, int s) {
  const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const auto pick = [&](int i) { return s == 0 ? v[i] : s == 1 ? v[i + 1] : s == 2 ? v[i + 2] : v[i + 3]; };
  return make_float4(pick(0), pick(1), pick(2), pick(3));
}

// A K-major tile of kRows rows × kLen floats of k fetched into registers as aligned 16-byte units and shifted there:
// this thread owns kSeg consecutive 4-float chunks of one row and holds the kSeg + 1 units they span. The loads are
// plain (LDG.128 on the read-only path), so the caller fetches tile kt + 1 while tile kt is multiplied and stores it
// into the shared tile a k tile later: shared memory sees the same stores as from an aligned operand's copies, with
// no raw tile and no pass over one (which made a shared-memory version of this 10-60% slower than 4-byte copies).
template <int kRows, int kLen, int kThreads>
struct RegisterRows {
  static constexpr int kChunks = kLen / 4;  // per row
  static constexpr int kSeg = kRows * kChunks / kThreads;
  static constexpr int kHeld = kSeg + 1;
  static constexpr int kOutside = INT_MIN / 2;
  static_assert(kRows * kChunks % kThreads == 0 && kSeg >= 1 && kChunks % kSeg == 0,
                "each thread owns whole chunks of one row");

  float4 unit[kHeld];
  const float* base;  // this thread's first unit at the first k tile
  int left0;          // floats of the row inside the matrix from base on, at the first k tile; kOutside: no row
  int row, chunk0, shift;

  __device__ RegisterRows(const OperandView& op, std::int64_t row0, std::int64_t k0, int tid)
      : row(tid / (kChunks / kSeg)), chunk0(tid % (kChunks / kSeg) * kSeg) {
    const float* const start = op.ptr + (row0 + row) * op.ld + k0;
    shift = unit_shift(start);
    base = start - shift + 4 * chunk0;
    const std::int64_t floats = op.k - k0 + shift - 4 * chunk0;
    left0 = row0 + row >= op.rows ? kOutside : static_cast<int>(floats < INT_MAX / 2 ? floats : INT_MAX / 2);
  }

  // Loads the units of the k tile kt tiles after the first; past the matrix, zeros (nothing outside it is read).
  __device__ void fetch(int kt) {
    const float* const p = base + kt * kLen;
    const int left = left0 - kt * kLen;
    if (left >= 4 * kHeld) {
#pragma unroll
      for (int j = 0; j < kHeld; ++j) unit[j] = __ldg(reinterpret_cast<const float4*>(p) + j);
      return;
    }
#pragma unroll
    for (int j = 0; j < kHeld; ++j) {
      const int l = left - 4 * j;
      if (l >= 4) {
        unit[j] = __ldg(reinterpret_cast<const float4*>(p) + j);
      } else {
        float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (i < l) v[i] = __ldg(p + 4 * j + i);
        unit[j] = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  }

  // Chunk j (0..kSeg-1) of this thread's part of the row: k0 + 4·(chunk0 + j) .. + 3.
  __device__ float4 chunk(int j) const { return shifted_float4(unit[j], unit[j + 1], shift); }
};

}  // namespace gemmtune::kernels
