// The in-place loader's plan (kernels/unit_loader.cuh) run on a CPU: every copy UnitCursor would issue for a tile is
// carried out on host memory as cp.async would (src-size bytes, the rest of the 16 zero-filled), and then every row
// of the raw tile must hold the matrix's floats at its shift, zeros past the matrix's edges, and no copy may have
// read a byte outside the matrix beyond the 16-byte unit of its first float. Odd and even leading dimensions, bases
// 0-3 floats off a 16-byte boundary, K-major and MN-major, interior and edge tiles, and later k tiles.
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/unit_loader.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kThreads = 128;

struct Matrix {
  std::vector<float> storage;
  const float* base = nullptr;  // rows × ld floats from here
  std::int64_t rows = 0, ld = 0;
};

// rows × ld floats whose value names their place, starting `skew` floats past a 16-byte boundary, with guard floats
// around them (a copy may touch the 16-byte unit of the first float, never more).
Matrix make_matrix(std::int64_t rows, std::int64_t ld, int skew) {
  Matrix m;
  m.storage.assign(static_cast<std::size_t>(rows * ld + 64), -1.f);
  float* aligned = m.storage.data();
  while (reinterpret_cast<std::uintptr_t>(aligned) % 16 != 0) ++aligned;
  float* base = aligned + 4 + skew;
  for (std::int64_t i = 0; i < rows * ld; ++i) base[i] = static_cast<float>(i);
  m.base = base;
  m.rows = rows;
  m.ld = ld;
  return m;
}

// The copies a test's tiles issued on load()'s path without bounds (whole) and on its general path (partial).
struct PathCounts {
  int whole = 0, partial = 0;
};

// Tile rows × len of stored rows row0.. (floats col0..) as a cursor lays it out for the tile kt tiles after k0, read
// back at each row's shift and compared with the matrix; bytes read outside the matrix counted. Where the cursor
// counts the tile among its whole tiles (load()'s path without bounds), every copy must be the whole unit at
// src + kt·step. Adds the tile's copies to `counts` by the path that issues them.
template <int kRows, int kLen, bool kMnMajor>
void check_tile(PathCounts& counts, const Matrix& m, std::int64_t row_limit, std::int64_t col_limit,
                std::int64_t tile_row0, std::int64_t k0, int kt) {
  constexpr int kStride = kLen + 4;
  using Cursor = UnitCursor<kRows, kLen, kStride, kThreads, kMnMajor>;
  OperandView op;
  op.ptr = m.base;
  op.ld = m.ld;
  op.rows = kMnMajor ? col_limit : row_limit;
  op.k = kMnMajor ? row_limit : col_limit;
  std::vector<float> raw(kRows * kStride, 12345.f);
  const float* const first = m.base;
  const float* const end = m.base + (m.rows - 1) * m.ld + (kMnMajor ? col_limit : col_limit);
  const float* const first_unit =
      reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(first) / 16 * 16);
  for (int tid = 0; tid < kThreads; ++tid) {
    const Cursor cursor(op, tile_row0, k0, 32, tid);
    for (int c = 0; c < Cursor::kCopies; ++c) {
      if (cursor.dst[c] < 0) continue;
      const typename Cursor::Copy u = cursor.copy(op, c, kt);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(u.src) % 16, 0u);
      ASSERT_GE(u.bytes, 0);
      ASSERT_LE(u.bytes, 16);
      if (kt < cursor.whole_tiles) {
        ASSERT_EQ(u.bytes, 16) << "tid " << tid << " copy " << c << ": counted whole, but not";
        ASSERT_EQ(u.src, cursor.src[c] + kt * cursor.step);
        ++counts.whole;
      } else {
        ++counts.partial;
      }
      if (u.bytes > 0) {
        ASSERT_GE(u.src, first_unit) << "tid " << tid << " copy " << c;
        ASSERT_LE(u.src + u.bytes / 4, end) << "tid " << tid << " copy " << c << " reads past the matrix";
      }
      float unit[4] = {0.f, 0.f, 0.f, 0.f};
      std::memcpy(unit, u.src, static_cast<std::size_t>(u.bytes));
      std::memcpy(raw.data() + u.dst, unit, sizeof(unit));
    }
  }
  // The tile's stored rows at this k tile, and each one's float j at raw[r·stride + shift + j].
  const std::int64_t row_start = kMnMajor ? k0 + kt * 32 : tile_row0;
  const std::int64_t col_start = kMnMajor ? tile_row0 : k0 + kt * 32;
  for (int r = 0; r < kRows; ++r) {
    const std::int64_t row = row_start + r;
    const int s = unit_shift(m.base + row * m.ld + col_start);
    for (int j = 0; j < kLen; ++j) {
      const std::int64_t col = col_start + j;
      const float want = row < row_limit && col < col_limit ? static_cast<float>(row * m.ld + col) : 0.f;
      ASSERT_EQ(raw[r * kStride + s + j], want) << "row " << row << " col " << col << " (shift " << s << ")";
    }
  }
}

TEST(UnitLoader, KMajorTilesHoldEveryRowAtItsShiftWithZerosPastTheEdgesForAnyLdAndBase) {
  PathCounts counts;
  for (const std::int64_t ld : {37, 38, 39, 40, 101}) {
    for (int skew = 0; skew < 4; ++skew) {
      const std::int64_t rows = 70, k = ld;  // k as long as the rows: the last row ends at the matrix's end
      const Matrix m = make_matrix(rows, ld, skew);
      for (const std::int64_t row0 : {std::int64_t{0}, std::int64_t{64}})  // interior, and 6 rows past the edge
        for (int kt = 0; kt * 32 < k; ++kt) check_tile<64, 32, false>(counts, m, rows, k, row0, 0, kt);
    }
  }
  EXPECT_GT(counts.whole, 0) << "no tile took the path without bounds";
  EXPECT_GT(counts.partial, 0) << "no tile took the path with bounds";
}

TEST(UnitLoader, MnMajorTilesHoldEveryKRowAtItsShiftWithZerosPastTheEdgesForAnyLdAndBase) {
  PathCounts counts;
  for (const std::int64_t ld : {129, 130, 131, 132, 195}) {
    for (int skew = 0; skew < 4; ++skew) {
      const std::int64_t k = 45, n = ld;
      const Matrix m = make_matrix(k, ld, skew);
      for (const std::int64_t col0 : {std::int64_t{0}, std::int64_t{64}})  // a full tile, and one past n's edge
        for (int kt = 0; kt * 32 < k; ++kt) check_tile<32, 64, true>(counts, m, k, n, col0, 0, kt);
    }
  }
  EXPECT_GT(counts.whole, 0) << "no tile took the path without bounds";
  EXPECT_GT(counts.partial, 0) << "no tile took the path with bounds";
}

TEST(UnitLoader, ShiftedFloat4PicksFourConsecutiveFloatsOfTwoUnits) {
  const float4 lo = make_float4(0.f, 1.f, 2.f, 3.f), hi = make_float4(4.f, 5.f, 6.f, 7.f);
  for (int s = 0; s < 4; ++s) {
    const float4 x = shifted_float4(lo, hi, s);
    EXPECT_EQ(x.x, static_cast<float>(s));
    EXPECT_EQ(x.y, static_cast<float>(s + 1));
    EXPECT_EQ(x.z, static_cast<float>(s + 2));
    EXPECT_EQ(x.w, static_cast<float>(s + 3));
  }
}

}  // namespace
}  // namespace gemmtune::kernels
