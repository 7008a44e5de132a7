#include "lt/lt_padding.hpp"

namespace gemmtune {
namespace {

std::int64_t round4(std::int64_t x) { return (x + 3) / 4 * 4; }

// 256-byte starts, as the copies' 16-byte stores and cuBLASLt's aligned kernels want.
std::size_t boundary(std::size_t floats) { return (floats + 63) / 64 * 64; }

}  // namespace

std::optional<LtPadding> lt_padding(const GemmProblem& gemm) {
  const bool col_out = gemm.out == OutputLayout::Transposed;
  // A dimension is padded where it is some stored matrix's leading dimension and not a multiple of 4: A is m×k (its
  // rows k long) or, transposed, k×m; B is k×n or n×k; Y is m×n or, transposed, n×m.
  const bool pad_m = gemm.m % 4 != 0 && (gemm.trans_a || col_out);
  const bool pad_n = gemm.n % 4 != 0 && (!gemm.trans_b || !col_out);
  const bool pad_k = gemm.k % 4 != 0 && (!gemm.trans_a || gemm.trans_b);
  if (!pad_m && !pad_n && !pad_k) return std::nullopt;

  LtPadding out;
  out.padded = gemm;
  out.padded.epi = Epilogue{};
  if (pad_m) out.padded.m = round4(gemm.m);
  if (pad_n) out.padded.n = round4(gemm.n);
  if (pad_k) out.padded.k = round4(gemm.k);
  const GemmProblem& q = out.padded;
  const auto stored = [](std::int64_t rows, std::int64_t cols, std::int64_t prows, std::int64_t pcols) {
    return StoredShape{rows, cols, prows, pcols};
  };
  out.a = gemm.trans_a ? stored(gemm.k, gemm.m, q.k, q.m) : stored(gemm.m, gemm.k, q.m, q.k);
  out.b = gemm.trans_b ? stored(gemm.n, gemm.k, q.n, q.k) : stored(gemm.k, gemm.n, q.k, q.n);
  out.y = col_out ? stored(gemm.n, gemm.m, q.n, q.m) : stored(gemm.m, gemm.n, q.m, q.n);
  std::size_t at = 0;
  if (out.a.changes()) {
    out.a_at = at;
    at = boundary(at + out.a.padded_floats());
  }
  if (out.b.changes()) {
    out.b_at = at;
    at = boundary(at + out.b.padded_floats());
  }
  out.d_at = at;
  out.floats = out.y.changes() ? at + out.y.padded_floats() : at;
  return out;
}

PaddedCall padded_call(const LtPadding& pad, const GemmOperands& x, float* padding) {
  PaddedCall c;
  c.a = x.A;
  c.b = x.B;
  if (pad.a.changes()) {
    c.copies[c.n_copies++] = {x.A, pad.a.cols, padding + pad.a_at, pad.a.padded_cols, pad.a.rows, pad.a.cols};
    c.a = padding + pad.a_at;
  }
  if (pad.b.changes()) {
    c.copies[c.n_copies++] = {x.B, pad.b.cols, padding + pad.b_at, pad.b.padded_cols, pad.b.rows, pad.b.cols};
    c.b = padding + pad.b_at;
  }
  c.d = pad.y.changes() ? padding + pad.d_at : nullptr;
  return c;
}

}  // namespace gemmtune
