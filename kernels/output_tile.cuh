// A block's finished accumulators go through shared memory before the epilogue: fragments land wherever the mma or
// thread-tile layout puts them, but from shared memory each warp writes whole rows of Y (or whole columns for the
// transposed store) with consecutive lanes on consecutive addresses. It also keeps the epilogue code (activation,
// Philox) in one short loop instead of inlined once per accumulator, which is most of the compile time saved.
//
// The epilogue used to cost more than the GEMM where the output is large against k (4096×4096×256: 67 MB of Y for
// 8.6 GFLOP): ncu counted ~80 instructions per element even without bias or activation (64-bit index math, a switch on
// the activation, one scalar store per step), issued by the 8 warps per SM a wgmma block has. So the common case,
// a row-major Y with n % 4 == 0 and 16-byte aligned Y and Z without dropout, takes a path of 16-byte row vectors:
// each thread keeps the same 4 columns (one bias read per column), steps down the rows with 32-bit tile indices and
// one 64-bit pointer increment, and runs the activation chosen at compile time. A row-major Y whose rows are not
// 16-byte aligned takes the same walk over a tile whose rows the family put shifted into line with Y's words
// (finish_shifted: the wgmma families), else one float at a time; transposed Y and dropout take the per-element path.
#pragma once

#include <cstdint>

#include "kernels/epilogue.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {

template <int kRows, int kCols, int kThreads>
struct OutputTile {
  static_assert(kRows % 8 == 0 && kCols % 32 == 0, "the walks below assume 8-row and 32-column multiples");
  // kCols + 4 (≡ 4 mod 32 banks) keeps rows 16-byte aligned for the vector walk, lets 8 lanes of a quarter warp read
  // 8 consecutive vectors of a row (the 128 bytes a wavefront serves), makes the wgmma families' put() (8 columns ×
  // 4 row pairs per warp: bank 8t + g) and the transposed walk's 8 rows × 4 columns (bank 4r + c) conflict-free.
  static constexpr int kStride = kCols + 4;
  static constexpr std::size_t kBytes = std::size_t{kRows} * kStride * sizeof(float);

  __device__ static void put(float* tile, int r, int c, float value) { tile[r * kStride + c] = value; }

  // Where a row-major Y's rows do not start on 16-byte boundaries, a family may put row r of the tile
  // row_shift(base, r, n) floats right of where put() would (and the bias already added), so that the tile's 16-byte
  // words line up with Y's: finish_shifted then stores whole words, as the vector walk does, where the scalar walk
  // stores a float at a time (3726×3654×291 tf32 bias+gelu, staged 256×128: 72.8 → 67.4 µs on an H200). base is -1
  // where the tile is not to be shifted: Y aligned (the vector walk), transposed or with dropout, or with save_z,
  // where the shifted walk ran slower than the scalar one (83.0 → 91.9 µs at that shape; not understood yet).
  __device__ static int row_shift_base(const EpilogueParams& e, BlockTile block) {
    if (e.transposed || e.dropout_p != 0.f || e.z || (e.n % 4 == 0 && aligned16(e.y))) return -1;
    return static_cast<int>((word(e.y) + block.row0 * e.n + block.col0) & 3);
  }
  // Tile row r's shift: the word offset of its first element in Y.
  __device__ static int row_shift(int base, int r, std::int64_t n) { return (base + r * static_cast<int>(n & 3)) & 3; }

  // Call after the barrier that follows every thread's put of a tile shifted from row_shift_base(e, block) = base.
  __device__ static void finish_shifted(const float* tile, const EpilogueParams& e, BlockTile block, int tid,
                                        int base) {
    const int rows = static_cast<int>(e.m - block.row0 < kRows ? e.m - block.row0 : kRows);
    const int cols = static_cast<int>(e.n - block.col0 < kCols ? e.n - block.col0 : kCols);
    with_activation(e.act, [&](auto act) {
      finish_shifted_rows<decltype(act)::value>(tile, e, block, tid, rows, cols, base);
    });
  }

  // Call after a barrier that follows every thread's put(). Every fused family's epilogue starts here, so this is
  // where a thread reads a device-side dropout offset, once. Stores at most max_rows rows of the tile.
  __device__ static void finish(const float* tile, const EpilogueParams& params, BlockTile block, int tid,
                                int max_rows = kRows) {
    const EpilogueParams e = with_dropout_offset(params);
    const int rows = static_cast<int>(e.m - block.row0 < max_rows ? e.m - block.row0 : max_rows);
    const int cols = static_cast<int>(e.n - block.col0 < kCols ? e.n - block.col0 : kCols);
    const bool plain_rows = !e.transposed && e.dropout_p == 0.f;
    if (plain_rows && e.n % 4 == 0 && aligned16(e.y) && (e.z == nullptr || aligned16(e.z)))
      with_activation(e.act, [&](auto act) {
        finish_row_vectors<decltype(act)::value>(tile, e, block, tid, rows, cols);
      });
    else if (kScalarWalk && plain_rows)
      with_activation(e.act, [&](auto act) {
        finish_row_scalars<decltype(act)::value>(tile, e, block, tid, rows, cols);
      });
    else
      finish_elements(tile, e, block, tid, rows, cols);
  }

 private:
  __device__ static bool aligned16(const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
  __device__ static std::int64_t word(const float* p) {
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) / sizeof(float));
  }

  static constexpr int kVectorsPerRow = kCols / 4;
  static_assert(kThreads % kVectorsPerRow == 0, "every thread keeps the same 4 columns in the vector walk");
  static constexpr int kRowStep = kThreads / kVectorsPerRow;
  // A step may be taller than the tile (8×64 with 256 threads: 16 rows a step); the threads past its rows have none.
  static_assert(kRows % kRowStep == 0 || kRowStep % kRows == 0, "the vector walk covers the tile in whole steps");
  // Vectors read from shared memory before any is stored: the compiler cannot move a tile read above a store to Y
  // (both are generic pointers), so the batch is what keeps several reads in flight.
  static constexpr int kBatch = kRows / kRowStep < 1 ? 1 : kRows / kRowStep < 4 ? kRows / kRowStep : 4;

  // n % 4 == 0 and col0 % 4 == 0, so a thread's 4 columns are all inside n or all outside.
  template <Activation kAct>
  __device__ static void finish_row_vectors(const float* tile, const EpilogueParams& e, BlockTile block, int tid,
                                            int rows, int cols) {
    const int c = tid % kVectorsPerRow * 4, first_row = tid / kVectorsPerRow;
    if (c >= cols) return;
    float bias[4] = {0.f, 0.f, 0.f, 0.f};
    if (e.bias) {
#pragma unroll
      for (int v = 0; v < 4; ++v) bias[v] = __ldg(e.bias + block.col0 + c + v);
    }
    const std::int64_t start = (block.row0 + first_row) * e.n + block.col0 + c;
    const std::int64_t row_step = std::int64_t{kRowStep} * e.n;
    float* y = e.y + start;
    float* z = e.z ? e.z + start : nullptr;
    for (int r0 = first_row; r0 < rows; r0 += kBatch * kRowStep) {
      float4 in[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (r0 + b * kRowStep < rows) in[b] = *reinterpret_cast<const float4*>(tile + (r0 + b * kRowStep) * kStride + c);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (r0 + b * kRowStep >= rows) break;
        const float4 zv = {in[b].x + bias[0], in[b].y + bias[1], in[b].z + bias[2], in[b].w + bias[3]};
        if (z) {
          *reinterpret_cast<float4*>(z) = zv;
          z += row_step;
        }
        *reinterpret_cast<float4*>(y) =
            make_float4(fast::activation<kAct>(zv.x, e.leaky_slope), fast::activation<kAct>(zv.y, e.leaky_slope),
                        fast::activation<kAct>(zv.z, e.leaky_slope), fast::activation<kAct>(zv.w, e.leaky_slope));
        y += row_step;
      }
    }
  }

  // A shifted tile: row r's floats sit at tile columns s .. s + cols − 1 (s its shift), so tile word w is Y's word
  // w of the row counted from s floats before the tile's first column, whole where 4w ≥ s and 4w + 4 ≤ s + cols.
  // The whole words take the vector walk's layout; a row's partial words (at most one at each end, the last possibly
  // past kCols) are stored afterwards a row per thread, so that no lane of the vector walk takes another path.
  template <Activation kAct>
  __device__ static void finish_shifted_rows(const float* tile, const EpilogueParams& e, BlockTile block, int tid,
                                             int rows, int cols, int base) {
    const auto activated = [&](float4 z) {
      return make_float4(fast::activation<kAct>(z.x, e.leaky_slope), fast::activation<kAct>(z.y, e.leaky_slope),
                         fast::activation<kAct>(z.z, e.leaky_slope), fast::activation<kAct>(z.w, e.leaky_slope));
    };
    // Where word 0 of row r lies in Y: 16-byte aligned, which is what the shift is for.
    const auto row_start = [&](int r, int s) { return (block.row0 + r) * e.n + block.col0 - s; };
    const int w = tid % kVectorsPerRow, first_row = tid / kVectorsPerRow;
    for (int r0 = first_row; r0 < rows; r0 += kBatch * kRowStep) {
      float4 in[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (r0 + b * kRowStep < rows)
          in[b] = *reinterpret_cast<const float4*>(tile + (r0 + b * kRowStep) * kStride + 4 * w);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int r = r0 + b * kRowStep;
        if (r >= rows) break;
        const int s = row_shift(base, r, e.n);
        if (4 * w < s || 4 * w + 4 > s + cols) continue;
        *reinterpret_cast<float4*>(e.y + row_start(r, s) + 4 * w) = activated(in[b]);
      }
    }
    for (int r = tid; r < rows; r += kThreads) {
      const int s = row_shift(base, r, e.n), end = s + cols;
      const int partial[2] = {s > 0 || end < 4 ? 0 : -1, end % 4 != 0 && end / 4 > 0 ? end / 4 : -1};
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (partial[i] < 0) continue;
        const int j = 4 * partial[i];
        const float4 yv = activated(*reinterpret_cast<const float4*>(tile + r * kStride + j));
        const float ys[4] = {yv.x, yv.y, yv.z, yv.w};
        float* const y = e.y + row_start(r, s) + j;
#pragma unroll
        for (int v = 0; v < 4; ++v)
          if (j + v >= s && j + v < end) y[v] = ys[v];
      }
    }
  }

  // Rows that are not 16-byte aligned (n % 4 != 0: an odd width, a vocabulary of 50257): the vector walk's layout
  // with one float per thread, so a warp still stores 128 consecutive bytes of a row. The per-element path took twice
  // its instructions: a staged 256×128 tile at 3726×3654×291 tf32 bias+gelu ran 165 µs on it, 76 on this (H200).
  static constexpr bool kScalarWalk = kThreads % kCols == 0;  // every thread keeps one column
  template <Activation kAct>
  __device__ static void finish_row_scalars(const float* tile, const EpilogueParams& e, BlockTile block, int tid,
                                            int rows, int cols) {
    if constexpr (kScalarWalk) {
      constexpr int kStep = kThreads / kCols;
      constexpr int kScalarBatch = kRows / kStep >= 16 ? 16 : kRows / kStep > 0 ? kRows / kStep : 1;
      const int c = tid % kCols, first_row = tid / kCols;
      if (c >= cols) return;
      const float bias = e.bias ? __ldg(e.bias + block.col0 + c) : 0.f;
      const std::int64_t start = (block.row0 + first_row) * e.n + block.col0 + c;
      const std::int64_t row_step = std::int64_t{kStep} * e.n;
      float* y = e.y + start;
      float* z = e.z ? e.z + start : nullptr;
      for (int r0 = first_row; r0 < rows; r0 += kScalarBatch * kStep) {
        float in[kScalarBatch];
#pragma unroll
        for (int b = 0; b < kScalarBatch; ++b)
          if (r0 + b * kStep < rows) in[b] = tile[(r0 + b * kStep) * kStride + c];
#pragma unroll
        for (int b = 0; b < kScalarBatch; ++b) {
          if (r0 + b * kStep >= rows) break;
          const float zv = in[b] + bias;
          if (z) {
            *z = zv;
            z += row_step;
          }
          *y = fast::activation<kAct>(zv, e.leaky_slope);
          y += row_step;
        }
      }
    }
  }

  // Row-major: a warp walks 32 consecutive columns of a row. Transposed: a warp takes 8 consecutive rows × 4 columns,
  // i.e. 4 stored rows of Yᵀ × 8 consecutive floats, whole 32-byte sectors.
  __device__ static void finish_elements(const float* tile, const EpilogueParams& e, BlockTile block, int tid,
                                         int rows, int cols) {
    static_assert(kRows * kCols % kThreads == 0, "threads split the tile evenly");
#pragma unroll 4
    for (int it = 0; it < kRows * kCols / kThreads; ++it) {
      const int i = tid + it * kThreads;
      const int r = e.transposed ? i / 32 % (kRows / 8) * 8 + i % 8 : i / kCols;
      const int c = e.transposed ? i / 32 / (kRows / 8) * 4 + i / 8 % 4 : i % kCols;
      if (r < rows && c < cols) store_output_element(e, block.row0 + r, block.col0 + c, tile[r * kStride + c]);
    }
  }
};

// A tile's partial sums from kParts parts of a block (the k-lanes or k-warps of the skinny families), laid out
// [part][row][column] in shared memory: threads store their float4s, and after a barrier the block adds them up in
// part order, so results do not depend on timing, into Output's tile.
template <int kRows, int kCols, int kParts, int kThreads>
struct TileParts {
  static constexpr int kFloats = kParts * kRows * kCols;

  __device__ static void store(float* sums, int part, int r, int c, const float (&v)[4]) {
    *reinterpret_cast<float4*>(sums + (part * kRows + r) * kCols + c) = make_float4(v[0], v[1], v[2], v[3]);
  }

  template <class Output>
  __device__ static void add_into(const float* sums, float* tile, int tid) {
#pragma unroll
    for (int j = 0; j < kRows * kCols / kThreads; ++j) {
      const int i = tid + j * kThreads;
      float sum = sums[i];
#pragma unroll
      for (int part = 1; part < kParts; ++part) sum += sums[part * kRows * kCols + i];
      Output::put(tile, i / kCols, i % kCols, sum);
    }
  }
};

}  // namespace gemmtune::kernels
