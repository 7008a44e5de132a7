#include "db/tuning_db.hpp"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/schema.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using test::lt_record;
using test::own_record;
using test::test_device;
using test::test_problem;
using test::test_run;

// Three candidates of one problem: a failed one that would be fastest, and two verified ones.
std::vector<MeasurementRecord> three_records(const GemmProblem& p, double best_us) {
  return {lt_record(p, 1, best_us * 0.5, MeasureStatus::VerifyFailed), lt_record(p, 2, best_us * 1.4),
          lt_record(p, 3, best_us)};
}

GemmProblem nth_problem(int i) { return test_problem(256 + 64 * i, 512, 128 + i); }

class TuningDbTest : public ::testing::Test {
 protected:
  std::string path() const { return scratch.path("gemmtune.db"); }
  test::ScratchDir scratch;
  DeviceIdentity device = test_device();
};

TEST_F(TuningDbTest, NewFileGetsTheSchemaWalAndSurvivesReopen) {
  std::int64_t run = 0;
  {
    TuningDb db(path());
    RunInfo info = test_run(device, "default");
    info.sm_clock_max_mhz = 1755;
    run = db.begin_run(info);
    db.finish_run(run);
  }
  TuningDb db(path());
  const std::vector<RunInfo> runs = db.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run);
  EXPECT_EQ(runs[0].device.key(), device.key());
  EXPECT_EQ(runs[0].device.cublaslt_version, device.cublaslt_version);
  EXPECT_EQ(runs[0].device.cuda_runtime, device.cuda_runtime);
  EXPECT_EQ(runs[0].profile, "default");
  EXPECT_EQ(runs[0].gemmtune_version, "0.1.0-test");
  EXPECT_EQ(runs[0].sm_clock_max_mhz, 1755);
  EXPECT_EQ(runs[0].started_at.size(), 20u) << runs[0].started_at;  // 2026-01-02T03:04:05Z
  EXPECT_FALSE(runs[0].finished_at.empty());

  SqliteDb raw(path(), SqliteDb::Access::ReadOnly);
  SqliteStatement mode = raw.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.column_text(0), "wal");
  EXPECT_EQ(inspect_schema(raw, schema_migrations()).state, SchemaState::Current);
}

TEST_F(TuningDbTest, MissingDirectoryIsAnInputErrorAndNothingIsCreated) {
  const std::string nested = scratch.path("no/such/dir/gemmtune.db");
  EXPECT_THROW(TuningDb db(nested), InputError);
  EXPECT_FALSE(std::filesystem::exists(scratch.path("no")));
}

TEST_F(TuningDbTest, ReadOnlyOpenOfAMissingFileIsAnInputErrorAndCreatesNothing) {
  EXPECT_THROW(TuningDb db(path(), TuningDb::Access::ReadOnly), InputError);
  EXPECT_FALSE(std::filesystem::exists(path()));
}

// Each refusal: InputError (exit 2), a message that says why, and the file's bytes exactly as before.
void expect_refused_unchanged(const std::string& path, const std::string& why) {
  const std::string before = test::read_bytes(path);
  for (TuningDb::Access access : {TuningDb::Access::ReadWrite, TuningDb::Access::ReadOnly}) {
    try {
      TuningDb db(path, access);
      ADD_FAILURE() << "opened " << path << " (expected: " << why << ")";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), ExitCode::BadInput);
    }
  }
  EXPECT_EQ(test::read_bytes(path), before) << path << " was modified";
}

TEST_F(TuningDbTest, RefusesANonSqliteFileAndLeavesItUnchanged) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "m,n,k,median_us\n";
  test::write_bytes(path(), text);
  expect_refused_unchanged(path(), "not a readable SQLite database");
}

TEST_F(TuningDbTest, RefusesASqliteFileOfAnotherApplicationAndLeavesItUnchanged) {
  {
    SqliteDb other(path(), SqliteDb::Access::ReadWriteCreate);
    other.exec("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ada')");
  }
  expect_refused_unchanged(path(), "another application");
}

TEST_F(TuningDbTest, RefusesANewerSchemaAndLeavesItUnchanged) {
  { TuningDb db(path()); }
  {
    SqliteDb raw(path(), SqliteDb::Access::ReadWrite);
    raw.exec("PRAGMA user_version = 99");
  }
  expect_refused_unchanged(path(), "newer than this build");
}

TEST_F(TuningDbTest, RefusesAGemmtuneFileMissingATableAndLeavesItUnchanged) {
  { TuningDb db(path()); }
  {
    SqliteDb raw(path(), SqliteDb::Access::ReadWrite);
    raw.exec("DROP TABLE misses");
  }
  expect_refused_unchanged(path(), "table 'misses' is missing");
}

TEST_F(TuningDbTest, RefusesATruncatedFileAndLeavesItUnchanged) {
  {
    TuningDb db(path());
    const std::int64_t run = db.begin_run(test_run(device));
    for (int i = 0; i < 40; ++i) db.store_problem(run, nth_problem(i), three_records(nth_problem(i), 10.0 + i));
  }
  const std::string whole = test::read_bytes(path());
  ASSERT_GT(whole.size(), 8u * 4096) << "the fixture should span several pages";
  test::write_bytes(path(), whole.substr(0, whole.size() / 2));
  expect_refused_unchanged(path(), "damaged");

  test::write_bytes(path(), whole.substr(0, 60));  // cut inside the 100-byte header
  expect_refused_unchanged(path(), "damaged");
}

TEST_F(TuningDbTest, StoreProblemWritesMeasurementsDoneMarkAndCacheTogether) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem p = nth_problem(0);
  std::vector<MeasurementRecord> records = three_records(p, 20.0);
  records.push_back(own_record(p, "tf32_128x128x32_s3", 25.0));
  db.store_problem(run, p, records);

  const std::vector<MeasurementRecord> stored = db.measurements(run);
  ASSERT_EQ(stored.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    records[i].device_key = device.key();
    test::expect_same_record(stored[i], records[i]);
  }
  EXPECT_TRUE(db.problem_done(device.key(), p.key()));

  // The fastest verified record: the verify-failed one is faster still and must never be cached.
  const std::optional<CacheEntry> best = db.cached(device.key(), p.key());
  ASSERT_TRUE(best);
  test::expect_same_candidate(best->candidate, records[2].candidate);
  test::expect_same_stats(best->stats, records[2].stats);
  EXPECT_EQ(best->verify_error, records[2].verify_error);
  EXPECT_EQ(best->tolerance, records[2].tolerance);
  EXPECT_EQ(best->run_id, run);
  EXPECT_EQ(best->origin, "");
  EXPECT_EQ(best->gemmtune_version, "0.1.0-test");
}

TEST_F(TuningDbTest, CuBLASsOwnChoiceIsStoredMeasuredAndCachedUnderItsIdInTheSchemaAsItWas) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem p = nth_problem(0);
  std::vector<MeasurementRecord> records = three_records(p, 20.0);
  MeasurementRecord blas = lt_record(p, 4, 15.0);
  blas.candidate = Candidate::parse_id("cublas/sgemm");
  records.push_back(blas);
  db.store_problem(run, p, records);

  const std::vector<MeasurementRecord> stored = db.measurements(run);
  ASSERT_EQ(stored.size(), records.size());
  EXPECT_EQ(stored.back().candidate.backend, Backend::Blas);
  records.back().device_key = device.key();
  test::expect_same_record(stored.back(), records.back());
  const std::optional<CacheEntry> best = db.cached(device.key(), p.key());
  ASSERT_TRUE(best);
  EXPECT_EQ(best->candidate.id(), "cublas/sgemm");
  EXPECT_EQ(best->candidate.backend, Backend::Blas);
}

TEST_F(TuningDbTest, AFinalistDecisionChoosesTheCachedRecordAndStoresItsMarginPerCondition) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem p = nth_problem(0);
  // Record 2 is the fastest by kernel time; the finalist stage kept record 1 (say, heuristic-first) instead.
  const std::vector<MeasurementRecord> records = three_records(p, 20.0);
  CacheDecision decision{&records[1], {}};
  decision.evidence.conditions = {{"stream/warm", 1.0, 0.01}, {"graph/cold", 1.0, 0.01}};
  db.store_problem(run, p, records, &decision);
  const std::optional<CacheEntry> kept = db.cached(device.key(), p.key());
  ASSERT_TRUE(kept);
  test::expect_same_candidate(kept->candidate, records[1].candidate);
  EXPECT_EQ(kept->evidence.condition_names(), "stream/warm,graph/cold");
  EXPECT_EQ(kept->evidence.min_margin(), 1.0);

  const std::vector<MeasurementRecord> other = three_records(nth_problem(1), 20.0);
  const CacheDecision foreign{&records[2], {}};
  EXPECT_THROW(db.store_problem(run, nth_problem(1), other, &foreign), CheckError)
      << "a decision must name one of the problem's own records";
}

TEST_F(TuningDbTest, AVersionTwoDbMigratesAndItsEntriesReadAsNoMarginKnown) {
  {
    SqliteDb old(path(), SqliteDb::Access::ReadWriteCreate);
    const std::vector<SchemaMigration> v2(schema_migrations().begin(), schema_migrations().begin() + 2);
    migrate_schema(old, v2);
    ASSERT_EQ(inspect_schema(old, v2).version, 2);
    old.exec(
        "INSERT INTO algo_cache (device_key, problem_key, candidate_id, backend, own_variant, heuristic_rank, "
        "verify_error, tolerance, median_us, p10_us, p90_us, mean_us, stddev_us, min_us, max_us, samples, timer, "
        "sm_clock_mhz, run_id, origin, gemmtune_version, updated_at) VALUES ('" + device.key() + "', '" +
        nth_problem(0).key() + "', 'own/tf32_128x128x32_s3', 'own', 'tf32_128x128x32_s3', -1, 1e-4, 1e-3, 20, 19, "
        "21, 20, 0.5, 18, 23, 40, 'cupti', 1980, 3, '', '0.0.9', '2026-01-02T03:04:05Z')");
  }
  EXPECT_THROW(TuningDb(path(), TuningDb::Access::ReadOnly), InputError) << "a read-only open never migrates";
  const TuningDb db(path());
  const std::vector<CacheEntry> entries = db.cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].candidate.id(), "own/tf32_128x128x32_s3");
  EXPECT_EQ(entries[0].stats.median_us, 20.0);
  EXPECT_FALSE(entries[0].evidence.known());
  EXPECT_EQ(entries[0].evidence.describe(), "no margin over heuristic-first known");
}

// A 3xtf32 variant the fp32-equivalent policy admitted for an fp32 problem: measurements and cache say so.
TEST_F(TuningDbTest, ThePolicysAdmissionIsStoredWithTheMeasurementAndCarriedIntoTheCache) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem p = test_problem(2048, 2048, 2048, MathMode::Fp32);
  MeasurementRecord admitted = own_record(p, "3xtf32_128x64x64_w64x32_s2", 700.0);
  admitted.fp32_equivalent = true;
  std::vector<MeasurementRecord> records = {lt_record(p, 5, 1000.0), admitted};
  db.store_problem(run, p, records);

  const std::vector<MeasurementRecord> stored = db.measurements(run);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_FALSE(stored[0].fp32_equivalent);
  EXPECT_TRUE(stored[1].fp32_equivalent);
  const std::optional<CacheEntry> best = db.cached(device.key(), p.key());
  ASSERT_TRUE(best);
  EXPECT_EQ(best->candidate.own_variant, "3xtf32_128x64x64_w64x32_s2");
  EXPECT_EQ(best->problem.mode, MathMode::Fp32) << "the problem key stays fp32";
  EXPECT_TRUE(best->fp32_equivalent);

  // A later run without the policy: its fp32 winner replaces the entry, and the flag goes with it.
  const std::int64_t later = db.begin_run(test_run(device));
  db.store_problem(later, p, {lt_record(p, 5, 1000.0)});
  EXPECT_FALSE(db.cached(device.key(), p.key())->fp32_equivalent);
}

TEST_F(TuningDbTest, OwnVariantSpeedsAreOverHeuristicFirstOfTheRunThatCompletedEachProblem) {
  TuningDb db(path());
  const GemmProblem p = test_problem(1000, 1000, 1000), q = test_problem(512, 512, 512);
  MeasurementRecord failed = own_record(p, "tf32_failed", 10.0);
  failed.status = MeasureStatus::VerifyFailed;
  MeasurementRecord admitted = own_record(p, "3xtf32_admitted", 10.0);
  admitted.fp32_equivalent = true;
  const std::int64_t first = db.begin_run(test_run(device));
  // Two rank-0 cuBLASLt records (the fused heuristic's, then the unfused baseline's): the first is heuristic-first.
  db.store_problem(first, p, {lt_record(p, 5, 100.0), lt_record(p, 10, 40.0), own_record(p, "tf32_a", 50.0),
                              own_record(p, "tf32_b", 200.0), failed, admitted});
  db.store_problem(first, q, {lt_record(q, 1, 30.0), own_record(q, "tf32_a", 20.0)});  // no heuristic-first
  const DeviceIdentity other = test_device("NVIDIA Other GPU");
  db.store_problem(db.begin_run(test_run(other)), p, {lt_record(p, 5, 100.0), own_record(p, "tf32_a", 10.0)});

  std::vector<OwnVariantSpeed> speeds = db.own_variant_speeds(device.key());
  ASSERT_EQ(speeds.size(), 2u);
  EXPECT_EQ(speeds[0].problem, p);
  EXPECT_EQ(speeds[0].candidate.id(), "own/tf32_a");
  EXPECT_DOUBLE_EQ(speeds[0].speedup, 2.0);
  EXPECT_EQ(speeds[1].candidate.id(), "own/tf32_b");
  EXPECT_DOUBLE_EQ(speeds[1].speedup, 0.5);

  // A later run of p replaces what the first measured there; q stays without a heuristic-first.
  const std::int64_t later = db.begin_run(test_run(device));
  db.store_problem(later, p, {lt_record(p, 5, 90.0), own_record(p, "tf32_a", 100.0)});
  speeds = db.own_variant_speeds(device.key());
  ASSERT_EQ(speeds.size(), 1u);
  EXPECT_DOUBLE_EQ(speeds[0].speedup, 0.9);
  EXPECT_EQ(db.own_variant_speeds(other.key()).size(), 1u);
}

TEST_F(TuningDbTest, OwnVariantSpeedsOfOneProblemAreThatProblemsAloneOverItsOwnHeuristicFirst) {
  TuningDb db(path());
  const GemmProblem p = test_problem(2, 4096, 768), q = test_problem(512, 512, 512);
  const std::int64_t run = db.begin_run(test_run(device));
  db.store_problem(run, p, {lt_record(p, 5, 9.0), own_record(p, "skinny_a", 7.5), own_record(p, "skinny_b", 10.0)});
  db.store_problem(run, q, {lt_record(q, 5, 30.0), own_record(q, "tf32_a", 20.0)});
  const std::vector<OwnVariantSpeed> at_p = db.own_variant_speeds(device.key(), p.key());
  ASSERT_EQ(at_p.size(), 2u);
  for (const OwnVariantSpeed& v : at_p) EXPECT_EQ(v.problem, p);
  EXPECT_EQ(at_p[0].candidate.id(), "own/skinny_a");
  EXPECT_DOUBLE_EQ(at_p[0].speedup, 9.0 / 7.5);
  EXPECT_DOUBLE_EQ(at_p[1].speedup, 0.9);
  const std::vector<OwnVariantSpeed> at_q = db.own_variant_speeds(device.key(), q.key());
  ASSERT_EQ(at_q.size(), 1u);
  EXPECT_DOUBLE_EQ(at_q[0].speedup, 1.5);
  EXPECT_TRUE(db.own_variant_speeds(device.key(), test_problem(64, 64, 64).key()).empty());
  EXPECT_TRUE(db.own_variant_speeds(test_device("NVIDIA Other GPU").key(), p.key()).empty());
  EXPECT_EQ(db.own_variant_speeds(device.key()).size(), 3u);
}

TEST_F(TuningDbTest, ADbOfSchemaVersionTwoIsMigratedToCarryThePolicyFlag) {
  {
    SqliteDb old(path(), SqliteDb::Access::ReadWriteCreate);
    const std::vector<SchemaMigration>& all = schema_migrations();
    migrate_schema(old, {all[0], all[1]});
    ASSERT_EQ(inspect_schema(old, schema_migrations()).version, 2);
  }
  TuningDb db(path());
  const GemmProblem p = test_problem(512, 512, 512, MathMode::Fp32);
  MeasurementRecord admitted = own_record(p, "3xtf32_64x64x32_w32x32_s3", 30.0);
  admitted.fp32_equivalent = true;
  db.store_problem(db.begin_run(test_run(device)), p, {admitted});
  EXPECT_TRUE(db.cached(device.key(), p.key())->fp32_equivalent);
}

TEST_F(TuningDbTest, StoreProblemFailingMidwayStoresNothingOfThatProblem) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem a = nth_problem(0), b = nth_problem(1);
  db.store_problem(run, a, three_records(a, 10.0));

  std::vector<MeasurementRecord> records = three_records(b, 12.0);
  records.insert(records.begin() + 2, lt_record(b, 9, std::nan("")));  // NaN median: refused by NOT NULL, third row
  EXPECT_THROW(db.store_problem(run, b, records), SqliteError);

  EXPECT_FALSE(db.problem_done(device.key(), b.key()));
  EXPECT_FALSE(db.cached(device.key(), b.key()));
  EXPECT_EQ(db.measurements(run).size(), 3u);  // a's only
  EXPECT_TRUE(db.problem_done(device.key(), a.key()));
  EXPECT_TRUE(db.cached(device.key(), a.key()));
}

TEST_F(TuningDbTest, StoreProblemRefusesRecordsOfAnotherProblemOrDevice) {
  TuningDb db(path());
  const std::int64_t run = db.begin_run(test_run(device));
  const GemmProblem a = nth_problem(0), b = nth_problem(1);
  EXPECT_THROW(db.store_problem(run, a, {lt_record(a, 1, 5.0), lt_record(b, 1, 5.0)}), CheckError);
  MeasurementRecord other = lt_record(a, 1, 5.0);
  other.device_key = test_device("NVIDIA Other GPU").key();
  EXPECT_THROW(db.store_problem(run, a, {other}), CheckError);
  EXPECT_THROW(db.store_problem(run + 1, a, {lt_record(a, 1, 5.0)}), InputError);
  EXPECT_TRUE(db.measurements(run).empty());
}

TEST_F(TuningDbTest, ProblemWithNoVerifiedRecordIsDoneButLeavesTheCacheAsItWas) {
  TuningDb db(path());
  const GemmProblem p = nth_problem(0);
  const std::int64_t first = db.begin_run(test_run(device));
  db.store_problem(first, p, three_records(p, 10.0));
  const std::int64_t second = db.begin_run(test_run(device));
  db.store_problem(second, p, {lt_record(p, 4, 1.0, MeasureStatus::VerifyFailed),
                               lt_record(p, 5, 0, MeasureStatus::Unsupported)});
  EXPECT_TRUE(db.problem_done(device.key(), p.key()));
  ASSERT_TRUE(db.cached(device.key(), p.key()));
  EXPECT_EQ(db.cached(device.key(), p.key())->run_id, first);
}

TEST_F(TuningDbTest, CacheRuleNewerRunWinsOtherwiseTheFasterEntry) {
  TuningDb db(path());
  const GemmProblem p = nth_problem(0);
  const auto cached_median = [&] { return db.cached(device.key(), p.key())->stats.median_us; };

  const std::int64_t r1 = db.begin_run(test_run(device));
  const std::int64_t r2 = db.begin_run(test_run(device));  // started before r1 stored anything: runs overlap
  db.store_problem(r2, p, {lt_record(p, 1, 30.0)});
  db.store_problem(r1, p, {lt_record(p, 2, 40.0)});  // an earlier run, slower: keeps r2's
  EXPECT_EQ(cached_median(), 30.0);
  db.store_problem(r1, p, {lt_record(p, 3, 25.0)});  // an earlier run, faster: replaces
  EXPECT_EQ(cached_median(), 25.0);

  const std::int64_t r3 = db.begin_run(test_run(device));
  db.store_problem(r3, p, {lt_record(p, 4, 27.0)});  // a later run replaces even when slower
  EXPECT_EQ(cached_median(), 27.0);

  db.merge_cache_entries({test::test_entry(device.key(), p, 5, 26.0)});
  EXPECT_EQ(cached_median(), 26.0);
  db.store_problem(r3, p, {lt_record(p, 6, 28.0)});  // an imported entry gives way to any local run
  EXPECT_EQ(cached_median(), 28.0);
  EXPECT_EQ(db.cached(device.key(), p.key())->origin, "");
}

TEST_F(TuningDbTest, ProblemDoneIsPerDeviceKeyAndSurvivesReopen) {
  const DeviceIdentity other = test_device("NVIDIA Other GPU");
  {
    TuningDb db(path());
    const std::int64_t run = db.begin_run(test_run(device));
    for (int i = 0; i < 3; ++i) db.store_problem(run, nth_problem(i), three_records(nth_problem(i), 5.0));
  }
  TuningDb db(path());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(db.problem_done(device.key(), nth_problem(i).key())) << i;
  EXPECT_FALSE(db.problem_done(device.key(), nth_problem(3).key()));
  EXPECT_FALSE(db.problem_done(other.key(), nth_problem(0).key()));
}

TEST_F(TuningDbTest, QuotesAndSqlInEveryStringRoundTripAndHarmNothing) {
  const DeviceIdentity odd = test_device("GPU 'single' \"double\"; DROP TABLE runs; --");
  TuningDb db(path());
  RunInfo info = test_run(odd, "it's \"quoted\"");
  const std::int64_t run = db.begin_run(info);
  const GemmProblem p = nth_problem(0);
  MeasurementRecord r = own_record(p, "v'1\"; DELETE FROM algo_cache; --", 3.0);
  r.message = "it's 'fine'";
  db.store_problem(run, p, {r});

  EXPECT_EQ(db.runs().at(0).device.gpu_name, odd.gpu_name);
  EXPECT_EQ(db.runs().at(0).profile, info.profile);
  EXPECT_TRUE(db.problem_done(odd.key(), p.key()));
  const std::optional<CacheEntry> e = db.cached(odd.key(), p.key());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->candidate.own_variant, r.candidate.own_variant);
  EXPECT_EQ(db.measurements(run).at(0).message, r.message);
  db.record_misses(odd.key(), {p.key()});
  EXPECT_EQ(db.misses(odd.key()), std::vector<std::string>{p.key()});
}

TEST_F(TuningDbTest, CacheEntriesFilterByDeviceModeAndShape) {
  TuningDb db(path());
  const DeviceIdentity other = test_device("NVIDIA Other GPU");
  const std::int64_t run = db.begin_run(test_run(device));
  const std::int64_t other_run = db.begin_run(test_run(other));
  const GemmProblem small = test_problem(256, 256, 256), large = test_problem(4096, 4096, 4096),
                    fp32 = test_problem(1024, 1024, 1024, MathMode::Fp32);
  for (const GemmProblem& p : {small, large, fp32}) db.store_problem(run, p, {lt_record(p, 1, 8.0)});
  db.store_problem(other_run, small, {lt_record(small, 1, 8.0)});

  EXPECT_EQ(db.cache_entries().size(), 4u);
  CacheFilter f;
  f.device_key = device.key();
  EXPECT_EQ(db.cache_entries(f).size(), 3u);
  f.mode = MathMode::Fp32;
  ASSERT_EQ(db.cache_entries(f).size(), 1u);
  EXPECT_EQ(db.cache_entries(f)[0].problem.key(), fp32.key());
  f.mode.reset();
  f.max_dim = 1024;
  EXPECT_EQ(db.cache_entries(f).size(), 2u);
  f.min_dim = 512;
  EXPECT_EQ(db.cache_entries(f).size(), 1u);
}

TEST_F(TuningDbTest, MergeKeepsTheFasterEntryPerDeviceKeyAndNeverMixesDevices) {
  TuningDb db(path());
  const GemmProblem p = nth_problem(0);
  const std::string a = device.key(), b = test_device("NVIDIA Other GPU").key();
  MergeCounts counts = db.merge_cache_entries({test::test_entry(a, p, 1, 10.0), test::test_entry(b, p, 2, 50.0)});
  EXPECT_EQ(counts.added, 2);
  counts = db.merge_cache_entries({test::test_entry(a, p, 3, 12.0), test::test_entry(b, p, 4, 40.0)});
  EXPECT_EQ(counts.kept, 1);
  EXPECT_EQ(counts.replaced, 1);
  EXPECT_EQ(db.cached(a, p.key())->candidate.lt.algo_id, 1);  // 10 < 12
  EXPECT_EQ(db.cached(b, p.key())->candidate.lt.algo_id, 4);  // 40 < 50, and a's 10 never crossed over
  EXPECT_EQ(db.cached(b, p.key())->origin, "elsewhere.db");  // an entry's own origin is kept

  CacheEntry unnamed = test::test_entry(a, p, 5, 1.0);
  unnamed.origin.clear();  // would pass for a measurement of this db
  EXPECT_THROW(db.merge_cache_entries({unnamed}), CheckError);
  EXPECT_EQ(db.cached(a, p.key())->candidate.lt.algo_id, 1);
}

TEST_F(TuningDbTest, MissesCountRepeatsMostMissedFirstAndRefuseBadKeys) {
  TuningDb db(path());
  const std::string k1 = nth_problem(1).key(), k2 = nth_problem(2).key();
  db.record_misses(device.key(), {k1, k2});
  db.record_misses(device.key(), {k2});
  EXPECT_EQ(db.misses(device.key()), (std::vector<std::string>{k2, k1}));
  EXPECT_TRUE(db.misses("another device").empty());
  EXPECT_THROW(db.record_misses(device.key(), {k1, "not-a-key"}), InputError);
  EXPECT_EQ(db.misses(device.key()).size(), 2u);
}

// One profiled kernel of the first problem's case on this fixture's device.
NcuKernelMetrics ncu_row(const DeviceIdentity& device, const std::string& report_path) {
  NcuKernelMetrics m;
  m.device_key = device.key();
  m.problem_key = nth_problem(0).key();
  m.candidate_id = "lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0";
  m.kernel_name = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32";
  m.cache_control = "none";
  m.report_path = report_path;
  return m;
}

TEST_F(TuningDbTest, NcuMetricsRoundTripEveryField) {
  TuningDb db(path());
  NcuKernelMetrics m = ncu_row(device, "reports/case 1.ncu-rep");
  m.launch_index = 1;
  m.duration_us = 41.25;
  m.sm_throughput_pct = 81.5;
  m.memory_throughput_pct = 40.125;
  m.dram_throughput_pct = 12.5;
  m.achieved_occupancy_pct = -1;
  m.registers_per_thread = 168;
  m.shared_mem_bytes = 232448;
  m.dram_bytes = 3.5e7;
  m.l2_hit_rate_pct = 77.75;
  m.top_stalls = R"([{"reason": "long_scoreboard", "pct": 31.5}])";
  m.imported_at = "2026-11-22T10:00:00Z";
  m.clock_mhz = 1815.5;
  db.insert_ncu_metrics({m, m});
  const std::vector<NcuKernelMetrics> rows = db.ncu_metrics(device.key());
  ASSERT_EQ(rows.size(), 2u);
  const NcuKernelMetrics& r = rows[0];
  EXPECT_EQ(r.problem_key, m.problem_key);
  EXPECT_EQ(r.candidate_id, m.candidate_id);
  EXPECT_EQ(r.kernel_name, m.kernel_name);
  EXPECT_EQ(r.launch_index, m.launch_index);
  EXPECT_EQ(r.duration_us, m.duration_us);
  EXPECT_EQ(r.sm_throughput_pct, m.sm_throughput_pct);
  EXPECT_EQ(r.memory_throughput_pct, m.memory_throughput_pct);
  EXPECT_EQ(r.dram_throughput_pct, m.dram_throughput_pct);
  EXPECT_EQ(r.achieved_occupancy_pct, m.achieved_occupancy_pct);
  EXPECT_EQ(r.registers_per_thread, m.registers_per_thread);
  EXPECT_EQ(r.shared_mem_bytes, m.shared_mem_bytes);
  EXPECT_EQ(r.dram_bytes, m.dram_bytes);
  EXPECT_EQ(r.l2_hit_rate_pct, m.l2_hit_rate_pct);
  EXPECT_EQ(r.top_stalls, m.top_stalls);
  EXPECT_EQ(r.cache_control, m.cache_control);
  EXPECT_EQ(r.report_path, m.report_path);
  EXPECT_EQ(r.imported_at, m.imported_at);
  EXPECT_EQ(r.clock_mhz, m.clock_mhz);
  EXPECT_TRUE(db.ncu_metrics("another device").empty());
}

TEST_F(TuningDbTest, ReimportingAnNcuReportReplacesItsRowsAndKeepsOtherReports) {
  TuningDb db(path());
  NcuKernelMetrics m = ncu_row(device, "reports/a.ncu-rep");
  m.duration_us = 10;
  NcuKernelMetrics other = ncu_row(device, "reports/b.ncu-rep");
  db.insert_ncu_metrics({m, m, other});
  m.duration_us = 12;
  db.insert_ncu_metrics({m, m});
  const std::vector<NcuKernelMetrics> rows = db.ncu_metrics(device.key());
  ASSERT_EQ(rows.size(), 3u);
  int from_a = 0;
  for (const NcuKernelMetrics& r : rows) {
    if (r.report_path != m.report_path) continue;
    ++from_a;
    EXPECT_EQ(r.duration_us, 12);
  }
  EXPECT_EQ(from_a, 2);
}

TEST_F(TuningDbTest, FinishingAnUnknownRunIsAnInputError) {
  TuningDb db(path());
  EXPECT_THROW(db.finish_run(12345), InputError);
}

TEST_F(TuningDbTest, TwoConnectionsInOneProcessInterleaveWrites) {
  TuningDb first(path());
  TuningDb second(path());
  const std::int64_t r1 = first.begin_run(test_run(device));
  const std::int64_t r2 = second.begin_run(test_run(device));
  for (int i = 0; i < 5; ++i) {
    first.store_problem(r1, nth_problem(i), three_records(nth_problem(i), 10.0));
    second.store_problem(r2, nth_problem(i + 5), three_records(nth_problem(i + 5), 10.0));
  }
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(first.problem_done(device.key(), nth_problem(i).key())) << i;
  EXPECT_EQ(second.measurements(r1).size(), 15u);
}

// Runs body in a child process and returns its exit status; the child never returns into the test runner.
template <class F>
pid_t spawn(F body) {
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
      code = 1;
    }
    _exit(code);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(TuningDbTest, TwoProcessesCreatingAndWritingOneFileBothCommitEverything) {
  constexpr int kProblems = 40;
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  const auto writer = [&] {
    close(gate[1]);
    char go = 0;
    if (read(gate[0], &go, 1) < 0) return 1;  // returns 0 (EOF) once the parent lets both go at once
    TuningDb db(path());                      // both race to create the same new file
    const std::int64_t run = db.begin_run(test_run(device));
    for (int i = 0; i < kProblems; ++i)
      db.store_problem(run, nth_problem(i), three_records(nth_problem(i), 10.0 + i));
    db.finish_run(run);
    return 0;
  };
  const pid_t a = spawn(writer);
  const pid_t b = spawn(writer);
  close(gate[0]);
  close(gate[1]);
  EXPECT_EQ(wait_exit_code(a), 0);
  EXPECT_EQ(wait_exit_code(b), 0);

  TuningDb db(path());
  const std::vector<RunInfo> runs = db.runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const RunInfo& run : runs) {
    EXPECT_FALSE(run.finished_at.empty());
    EXPECT_EQ(db.measurements(run.id).size(), 3u * kProblems);
  }
  for (int i = 0; i < kProblems; ++i) {
    EXPECT_TRUE(db.problem_done(device.key(), nth_problem(i).key())) << i;
    EXPECT_EQ(db.cached(device.key(), nth_problem(i).key())->stats.median_us, 10.0 + i) << i;
  }
}

TEST_F(TuningDbTest, KilledWriterLeavesEveryCommittedProblemAndNoneOfTheOpenOne) {
  const pid_t child = spawn([&] {
    TuningDb db(path());
    const std::int64_t run = db.begin_run(test_run(device));
    for (int i = 0; i < 5; ++i) db.store_problem(run, nth_problem(i), three_records(nth_problem(i), 10.0));
    // Killed halfway through the sixth problem's transaction: its done mark is written but not committed.
    SqliteDb raw(path(), SqliteDb::Access::ReadWrite);
    SqliteTransaction tx(raw);
    SqliteStatement done = raw.prepare("INSERT INTO problems_done VALUES (?1, ?2, ?3, 'now')");
    done.bind(1, device.key()).bind(2, nth_problem(5).key()).bind(3, run).run();
    raise(SIGKILL);
    return 0;
  });
  EXPECT_EQ(wait_exit_code(child), 128 + SIGKILL);
  EXPECT_TRUE(std::filesystem::exists(path() + "-wal")) << "the kill should leave a WAL for recovery to replay";

  TuningDb db(path());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(db.problem_done(device.key(), nth_problem(i).key())) << i;
  EXPECT_FALSE(db.problem_done(device.key(), nth_problem(5).key()));
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_TRUE(db.runs()[0].finished_at.empty());
  EXPECT_EQ(db.measurements(db.runs()[0].id).size(), 15u);
}

}  // namespace
}  // namespace gemmtune
