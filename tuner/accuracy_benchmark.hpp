// The accuracy benchmark (`gemmtune accuracy`): on the same fresh inputs, the relative Frobenius error (and the scale
// bias, kernels/reference_gemm.hpp) against the fp64 reference of every own variant in every mode and of cuBLASLt's fp32 and tf32 (its heuristic's first algo),
// over a grid of k and two input distributions, at an aligned shape and one whose rows are not 16-byte aligned (there
// also cuBLASLt's first algo on padded copies, a candidate of ours). What tells a 3xtf32 kernel that is fp32-accurate from one that
// merely passes the verifier's 1e-6·√k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "problem/gemm_problem.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {

enum class InputDistribution {
  Uniform,       // [-1, 1)
  WideExponent,  // ±2^U(−8, 8): sums whose terms differ by up to 2^32 in magnitude
  Positive,      // [0, 1): every partial sum grows in one direction, as a GELU's outputs times a positive weight do
};
const char* to_string(InputDistribution d);             // "uniform" | "wide" | "positive"
InputDistribution parse_input_distribution(const std::string& s);  // throws InputError

struct AccuracySettings {
  std::int64_t m = 512, n = 512;
  std::vector<std::int64_t> ks{256, 1024, 4096, 16384};
  std::vector<InputDistribution> dists{InputDistribution::Uniform, InputDistribution::WideExponent};
  std::vector<MathMode> modes{MathMode::Fp32, MathMode::Tf32, MathMode::Tf32x3};
  // Also, per k, a point whose rows are not 16-byte aligned, (m|1) × (n|1) × (k|3): A's rows (k floats) and B's and
  // Y's (n floats) start off 16-byte boundaries, where our staged variants and cuBLASLt's candidates on padded copies
  // ("+pad") run instead of the aligned kernels.
  bool unaligned = true;
  std::size_t workspace_bytes = std::size_t{64} << 20;  // cuBLASLt's and the split-k variants' scratch
  std::uint64_t seed = 0;                                // 0: a fresh one
};

struct AccuracyRecord {
  MathMode mode = MathMode::Fp32;
  std::string candidate;         // "own/<variant>" or "lt/<algo>"
  std::int64_t k = 0;
  InputDistribution dist = InputDistribution::Uniform;
  double rel_err = 0;            // ‖Y − Y_fp64‖_F / ‖Y_fp64‖_F (+inf for NaN/Inf or unwritten elements)
  double lt_fp32_rel_err = 0;    // cuBLASLt fp32's on the same inputs
  std::int64_t m = 0, n = 0;     // the point's rows and columns; 0: the result's m and n
  double scale_bias = 0;         // kernels::OutputError::scale_bias: the part of the error that scales every output
  double lt_fp32_scale_bias = 0;  // cuBLASLt fp32's on the same inputs
  double ratio_to_lt_fp32() const;
};

struct AccuracySkip {
  MathMode mode = MathMode::Fp32;
  std::string candidate;
  std::int64_t k = 0;
  std::string reason;
};

struct AccuracyResult {
  DeviceIdentity device;
  std::int64_t m = 0, n = 0;
  std::uint64_t seed = 0;
  std::vector<AccuracyRecord> records;
  std::vector<AccuracySkip> skipped;
};

// Runs the grid on GPU `device`; progress lines on stderr unless quiet. Throws NoGpuError without a GPU.
AccuracyResult run_accuracy_benchmark(const AccuracySettings& settings, int device, bool quiet);

// The worst record of `mode` by its ratio to cuBLASLt fp32's error; null when there is none.
const AccuracyRecord* worst_ratio_record(const AccuracyResult& r, MathMode mode);

void to_json(nlohmann::json& j, const AccuracyResult& r);
void from_json(const nlohmann::json& j, AccuracyResult& r);
// Per (dist, k) and mode: cuBLASLt's error, our variants' best and worst, and the worst one's ratio to cuBLASLt fp32.
void print_accuracy_table(const AccuracyResult& r, std::ostream& out);

}  // namespace gemmtune
