#include "support/tuning_fixtures.hpp"

#include <gtest/gtest.h>

namespace gemmtune::test {

DeviceIdentity test_device(const std::string& gpu_name) {
  DeviceIdentity d;
  d.gpu_name = gpu_name;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.driver = "580.159.04";
  d.cuda_runtime = 13000;
  d.cublaslt_version = 130100;
  return d;
}

RunInfo test_run(const DeviceIdentity& device, const std::string& profile) {
  RunInfo r;
  r.device = device;
  r.gemmtune_version = "0.1.0-test";
  r.profile = profile;
  r.sm_clock_max_mhz = 1980;
  return r;
}

GemmProblem test_problem(std::int64_t m, std::int64_t n, std::int64_t k, MathMode mode) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.mode = mode;
  p.epi.bias = true;
  p.epi.act = Activation::Gelu;
  return p;
}

TimingStats test_stats(double median_us) {
  TimingStats s;
  s.median_us = median_us;
  s.p10_us = 0.98 * median_us;
  s.p90_us = 1.03 * median_us;
  s.mean_us = 1.01 * median_us;
  s.stddev_us = 0.013 * median_us;
  // A wide range around tight quantiles: tests that widen p10 and p90 (down to 0.7 and up to 1.4 times the median)
  // keep statistics the strict readers accept (min <= p10, p90 <= max).
  s.min_us = 0.5 * median_us;
  s.max_us = 2.0 * median_us;
  s.samples = 47;
  s.timer = "cupti";
  s.sm_clock_mhz = 1977.5;
  return s;
}

MeasurementRecord lt_record(const GemmProblem& p, int algo_id, double median_us, MeasureStatus status) {
  MeasurementRecord r;
  r.problem = p;
  r.candidate.backend = Backend::Lt;
  r.candidate.lt.algo_id = algo_id;
  r.candidate.lt.tile = 18;
  r.candidate.lt.stages = 8;
  r.candidate.lt.splitk = algo_id % 3 + 1;
  r.candidate.lt.reduction = algo_id % 2;
  r.candidate.lt.swizzle = 1;
  r.candidate.lt.custom = 2;
  r.candidate.lt.cluster_shape = 3;
  r.candidate.lt.inner_shape = 1;
  r.candidate.heuristic_rank = algo_id % 5;
  r.status = status;
  r.verify_error = status == MeasureStatus::VerifyFailed ? 0.5 : 3.1e-4;
  r.tolerance = 1e-3;
  if (status == MeasureStatus::Ok || status == MeasureStatus::VerifyFailed) r.stats = test_stats(median_us);
  if (status != MeasureStatus::Ok) r.message = "not ok: status " + std::string(to_string(status));
  return r;
}

MeasurementRecord own_record(const GemmProblem& p, const std::string& variant, double median_us) {
  MeasurementRecord r;
  r.problem = p;
  r.candidate.backend = Backend::Own;
  r.candidate.own_variant = variant;
  r.verify_error = 2.4e-4;
  r.tolerance = 1e-3;
  r.stats = test_stats(median_us);
  return r;
}

CacheEntry test_entry(const std::string& device_key, const GemmProblem& p, int algo_id, double median_us) {
  const MeasurementRecord r = lt_record(p, algo_id, median_us);
  CacheEntry e;
  e.device_key = device_key;
  e.problem = p;
  e.candidate = r.candidate;
  e.stats = r.stats;
  e.verify_error = r.verify_error;
  e.tolerance = r.tolerance;
  e.run_id = 7;
  e.origin = "elsewhere.db";
  e.gemmtune_version = "0.0.9";
  e.updated_at = "2026-01-02T03:04:05Z";
  return e;
}

std::vector<CacheEntry> store_test_cache(TuningDb& db) {
  const DeviceIdentity a = test_device(), b = test_device("NVIDIA Other GPU");
  const std::int64_t run_a = db.begin_run(test_run(a)), run_b = db.begin_run(test_run(b));
  GemmProblem dropout = test_problem(1000, 3000, 257, MathMode::Fp32);
  dropout.epi.act = Activation::LeakyRelu;
  dropout.epi.leaky_slope = 0.37f;
  dropout.epi.dropout_p = 0.1f;
  dropout.trans_b = true;
  MeasurementRecord with_epilogue = lt_record(dropout, 66, 123.456789);
  with_epilogue.candidate.lt_epilogue_kernel = true;
  db.store_problem(run_a, dropout, {with_epilogue});
  const GemmProblem square = test_problem(4096, 4096, 4096);
  // With the finalist stage's evidence, in the 4 decimals the db keeps, so the round trips compare exactly.
  const std::vector<MeasurementRecord> square_records = {lt_record(square, 21, 1234.5678901234567)};
  CacheDecision decision{&square_records[0], {}};
  decision.evidence.conditions = {{"stream/warm", 1.1234, 0.0123}, {"graph/cold", 1.0567, 0.01}};
  db.store_problem(run_a, square, square_records, &decision);
  db.store_problem(run_b, square, {own_record(square, "tf32_128x256x32_s4", 999.0 / 7.0)});
  return db.cache_entries();
}

void expect_same_candidate(const Candidate& a, const Candidate& b) {
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.own_variant, b.own_variant);
  EXPECT_TRUE(a.lt == b.lt) << a.id() << " vs " << b.id();
  EXPECT_EQ(a.heuristic_rank, b.heuristic_rank);
  EXPECT_EQ(a.lt_epilogue_kernel, b.lt_epilogue_kernel);
  EXPECT_EQ(a.lt_padded, b.lt_padded);
}

void expect_same_stats(const TimingStats& a, const TimingStats& b) {
  EXPECT_EQ(a.median_us, b.median_us);
  EXPECT_EQ(a.p10_us, b.p10_us);
  EXPECT_EQ(a.p90_us, b.p90_us);
  EXPECT_EQ(a.mean_us, b.mean_us);
  EXPECT_EQ(a.stddev_us, b.stddev_us);
  EXPECT_EQ(a.min_us, b.min_us);
  EXPECT_EQ(a.max_us, b.max_us);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.timer, b.timer);
  EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
}

void expect_same_record(const MeasurementRecord& a, const MeasurementRecord& b) {
  EXPECT_EQ(a.device_key, b.device_key);
  EXPECT_EQ(a.problem.key(), b.problem.key());
  expect_same_candidate(a.candidate, b.candidate);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.verify_error, b.verify_error);
  EXPECT_EQ(a.tolerance, b.tolerance);
  EXPECT_EQ(a.fp32_equivalent, b.fp32_equivalent);
  expect_same_stats(a.stats, b.stats);
}

void expect_same_entry(const CacheEntry& a, const CacheEntry& b) {
  EXPECT_EQ(a.device_key, b.device_key);
  EXPECT_EQ(a.problem.key(), b.problem.key());
  expect_same_candidate(a.candidate, b.candidate);
  expect_same_stats(a.stats, b.stats);
  EXPECT_EQ(a.verify_error, b.verify_error);
  EXPECT_EQ(a.tolerance, b.tolerance);
  EXPECT_EQ(a.fp32_equivalent, b.fp32_equivalent);
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.gemmtune_version, b.gemmtune_version);
  EXPECT_EQ(a.updated_at, b.updated_at);
  EXPECT_EQ(a.evidence.encode(), b.evidence.encode());
}

}  // namespace gemmtune::test
