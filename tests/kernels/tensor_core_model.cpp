#include "kernels/tensor_core_model.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace gemmtune::test {
namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// v truncated toward zero to a multiple of 2^e (exact in double for the magnitudes used here).
double truncate_to_grid(double v, int e) { return std::ldexp(std::trunc(std::ldexp(v, -e)), e); }

int binary_exponent(double v) {
  int e = 0;
  std::frexp(v, &e);  // v = m·2^e, 0.5 ≤ |m| < 1
  return e;
}

// v truncated toward zero to fp32's 24 significant bits.
float truncate_to_fp32(double v) { return v == 0 ? 0.0f : static_cast<float>(truncate_to_grid(v, binary_exponent(v) - 24)); }

// One m16n8k8 element: c + Σ a[i]·b[i] over 8 k, with tf32 a and b (their products are exact in double).
float mma_k8(float c, const float* a, const float* b, MmaAccumulation accumulation) {
  double products[8];
  for (int i = 0; i < 8; ++i) products[i] = static_cast<double>(a[i]) * static_cast<double>(b[i]);
  if (accumulation == MmaAccumulation::TruncateAlignedTerms) {
    int largest = binary_exponent(c);
    bool any = c != 0;
    for (double p : products)
      if (p != 0) {
        largest = any ? std::max(largest, binary_exponent(p)) : binary_exponent(p);
        any = true;
      }
    if (!any) return 0.0f;
    double sum = truncate_to_grid(c, largest - 24);
    for (double p : products) sum += truncate_to_grid(p, largest - 24);
    return truncate_to_fp32(sum);
  }
  double sum = c;  // 9 terms of ≤ 24 bits within the range the inputs span: exact, or within 2^-53 of exact
  for (double p : products) sum += p;
  return accumulation == MmaAccumulation::RoundToNearest ? static_cast<float>(sum) : truncate_to_fp32(sum);
}

struct DotSums {
  double error_sq = 0, ref_sq = 0, error_ref = 0;
};

DotSums dot_sums(int k, int dots, InputDistribution dist, std::uint64_t seed, const DotFn& dot) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f), unit(0.0f, 1.0f), exponent(-8.0f, 8.0f);
  auto draw = [&] {
    if (dist == InputDistribution::Uniform) return uniform(rng);
    if (dist == InputDistribution::Positive) return unit(rng);
    const float sign = uniform(rng) < 0 ? -1.0f : 1.0f;
    return sign * std::exp2(exponent(rng));
  };
  DotSums sums;
  std::vector<float> a(static_cast<std::size_t>(k)), b(static_cast<std::size_t>(k));
  for (int d = 0; d < dots; ++d) {
    double ref = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = draw();
      b[i] = draw();
      ref += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    }
    const double error = static_cast<double>(dot(a, b)) - ref;
    sums.error_sq += error * error;
    sums.ref_sq += ref * ref;
    sums.error_ref += error * ref;
  }
  return sums;
}

}  // namespace

float tf32_round_nearest(float x) { return float_of((bits_of(x) + 0x1000u) & 0xffffe000u); }

float split_tf32_dot(const std::vector<float>& a, const std::vector<float>& b, SplitDotModel model) {
  float sum = 0, partial = 0;
  const std::size_t k = a.size();
  for (std::size_t s = 0; s < k; s += 8) {
    float a_big[8], a_small[8], b_big[8], b_small[8];
    for (std::size_t i = 0; i < 8; ++i) {
      a_big[i] = tf32_round_nearest(a[s + i]);
      a_small[i] = tf32_round_nearest(a[s + i] - a_big[i]);
      b_big[i] = tf32_round_nearest(b[s + i]);
      b_small[i] = tf32_round_nearest(b[s + i] - b_big[i]);
    }
    float& into = model.promote_every_k8_steps > 0 ? partial : sum;
    into = mma_k8(into, a_small, b_big, model.accumulation);
    into = mma_k8(into, a_big, b_small, model.accumulation);
    into = mma_k8(into, a_big, b_big, model.accumulation);
    const auto step = static_cast<int>(s / 8) + 1;
    if (model.promote_every_k8_steps > 0 && step % model.promote_every_k8_steps == 0) {
      sum += partial;
      partial = 0;
    }
  }
  return sum + partial;
}

float ffma_dot(const std::vector<float>& a, const std::vector<float>& b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum = std::fma(a[i], b[i], sum);
  return sum;
}

double relative_dot_error(int k, int dots, InputDistribution dist, std::uint64_t seed, const DotFn& dot) {
  const DotSums sums = dot_sums(k, dots, dist, seed, dot);
  return std::sqrt(sums.error_sq / sums.ref_sq);
}

double dot_scale_bias(int k, int dots, InputDistribution dist, std::uint64_t seed, const DotFn& dot) {
  const DotSums sums = dot_sums(k, dots, dist, seed, dot);
  return sums.error_ref / sums.ref_sq;
}

}  // namespace gemmtune::test
