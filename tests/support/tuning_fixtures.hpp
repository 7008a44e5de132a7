// Made-up devices, problems, measurements and cache entries for the db, cache and gate tests (no GPU involved).
// Statistics use values like 0.97·median on purpose: they are not short decimals, so a lossless round trip is
// actually tested.
#pragma once

#include <cstdint>
#include <string>

#include "db/cache_entry.hpp"
#include "db/tuning_db.hpp"
#include "problem/measurement.hpp"

namespace gemmtune::test {

DeviceIdentity test_device(const std::string& gpu_name = "NVIDIA Test GPU");
RunInfo test_run(const DeviceIdentity& device, const std::string& profile = "quick");
GemmProblem test_problem(std::int64_t m, std::int64_t n, std::int64_t k, MathMode mode = MathMode::Tf32);
TimingStats test_stats(double median_us);
MeasurementRecord lt_record(const GemmProblem& p, int algo_id, double median_us,
                            MeasureStatus status = MeasureStatus::Ok);
MeasurementRecord own_record(const GemmProblem& p, const std::string& variant, double median_us);
CacheEntry test_entry(const std::string& device_key, const GemmProblem& p, int algo_id, double median_us);

// Stores three problems and returns the cache, sorted as cache_entries() returns it: [0] an own entry of
// "NVIDIA Other GPU" (4096³ tf32), [1] an lt entry with our epilogue kernel (1000x3000x257 fp32, leaky_relu,
// dropout), [2] an lt entry (4096³ tf32), both of test_device().
std::vector<CacheEntry> store_test_cache(TuningDb& db);

// Field-by-field gtest expectations (exact, doubles included): what "lossless" means in the round-trip tests.
void expect_same_candidate(const Candidate& a, const Candidate& b);
void expect_same_stats(const TimingStats& a, const TimingStats& b);
void expect_same_record(const MeasurementRecord& a, const MeasurementRecord& b);
// Everything but origin, which says where an entry came from and so changes on import.
void expect_same_entry(const CacheEntry& a, const CacheEntry& b);

}  // namespace gemmtune::test
