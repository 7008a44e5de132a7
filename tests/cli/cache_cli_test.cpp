// `gemmtune cache` as users run it: the real binary, exit codes, and dbs that a refused input leaves byte for byte.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/sqlite_db.hpp"
#include "db/tuning_db.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;
using test::run_gemmtune;

class CacheCli : public ::testing::Test {
 protected:
  CacheCli() {
    TuningDb db(source());
    entries = test::store_test_cache(db);
  }
  std::string source() const { return scratch.path("source.db"); }
  // Exports the source db through the CLI and returns the document.
  json export_source() {
    const auto r = run_gemmtune({"cache", "export", "--db", source(), "--out", scratch.path("export.json")});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(test::read_bytes(scratch.path("export.json")));
  }
  // A target db that already holds one entry of its own, so "unchanged" is not "empty".
  std::string existing_target() {
    const std::string path = scratch.path("target.db");
    TuningDb db(path);
    const GemmProblem p = test::test_problem(512, 512, 512);
    db.store_problem(db.begin_run(test::test_run(test::test_device())), p, {test::lt_record(p, 3, 9.0)});
    return path;
  }
  void expect_import_refused(const std::string& file_text, const std::string& message) {
    const std::string target = existing_target();
    const std::string before = test::read_bytes(target);
    test::write_bytes(scratch.path("bad.json"), file_text);
    const auto r = run_gemmtune({"cache", "import", "--db", target, scratch.path("bad.json")});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_EQ(test::read_bytes(target), before) << "the db changed";
    EXPECT_FALSE(std::filesystem::exists(target + "-wal")) << "the db was opened for writing";
  }
  test::ScratchDir scratch;
  std::vector<CacheEntry> entries;
};

TEST_F(CacheCli, ExportThenImportIsLosslessForEveryEntry) {
  export_source();
  const std::string target = scratch.path("new/dir/target.db");
  const auto r = run_gemmtune({"cache", "import", "--db", target, scratch.path("export.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 added"), std::string::npos) << r.output;
  const std::vector<CacheEntry> imported = TuningDb(target, TuningDb::Access::ReadOnly).cache_entries();
  ASSERT_EQ(imported.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    test::expect_same_entry(imported[i], entries[i]);
    EXPECT_EQ(imported[i].origin, source());
  }
}

TEST_F(CacheCli, ImportRefusesMalformedJsonAndLeavesTheDbUnchanged) {
  expect_import_refused(R"({"schema": "gemmtune.cache", "schema_version": 1, "entries": [{)", "not valid JSON");
}

TEST_F(CacheCli, ImportRefusesAnotherSchemaVersionAndLeavesTheDbUnchanged) {
  json doc = export_source();
  doc["schema_version"] = 2;
  expect_import_refused(doc.dump(), "schema_version: 2 is not supported");
}

TEST_F(CacheCli, ImportRefusesATruncatedFileAndLeavesTheDbUnchanged) {
  const std::string whole = export_source().dump(2);
  expect_import_refused(whole.substr(0, whole.size() * 2 / 3), "not valid JSON");
}

TEST_F(CacheCli, ImportRefusesTheWholeFileForOneBadEntry) {
  json doc = export_source();
  doc["entries"][2]["stats"]["median_us"] = 0;  // entries 0 and 1 are fine, and must not be imported either
  expect_import_refused(doc.dump(), "entries[2].stats.median_us: must be > 0");
}

// What a mutation fuzzer got `cache import` to accept before the readers were strict (issue 16): each is now
// refused with exit 2, a message naming the entry and the field, and the target db left byte for byte.
TEST_F(CacheCli, ImportRefusesEveryValueTheMutationFuzzerGotAccepted) {
  const json good = export_source();
  const struct {
    const char* field;
    json::json_pointer at;
    json value;
  } mutations[] = {
      {"tolerance", json::json_pointer("/entries/1/tolerance"), 0},
      {"tolerance", json::json_pointer("/entries/1/tolerance"), 9.2e18},
      {"stats.mean_us", json::json_pointer("/entries/1/stats/mean_us"), -1e308},
      {"stats.min_us", json::json_pointer("/entries/1/stats/min_us"), -1e308},
      {"stats.max_us", json::json_pointer("/entries/1/stats/max_us"), 0.0},
      {"stats.stddev_us", json::json_pointer("/entries/1/stats/stddev_us"), 1.8e19},
      {"stats.sm_clock_mhz", json::json_pointer("/entries/1/stats/sm_clock_mhz"), 0.5},
      {"stats.timer", json::json_pointer("/entries/1/stats/timer"), ""},
      {"updated_at", json::json_pointer("/entries/1/updated_at"), "202--11-24T00:32:20Z"},
      {"problem.save_z", json::json_pointer("/entries/1/problem/save_z"), "'); DROP TABLE algo_cache;--"},
      {"problem.pass", json::json_pointer("/entries/1/problem/pass"), -1},
      // The same fields with values of the right type that still disagree with the problem key.
      {"problem.pass", json::json_pointer("/entries/1/problem/pass"), "bwd_a"},
      {"problem.m", json::json_pointer("/entries/1/problem/m"), 3},
  };
  for (const auto& m : mutations) {
    SCOPED_TRACE(std::string(m.field) + " = " + m.value.dump());
    json bad = good;
    ASSERT_TRUE(bad.contains(m.at)) << m.at.to_string();
    bad[m.at] = m.value;
    expect_import_refused(bad.dump(), "entries[1]." + std::string(m.field) + ":");
  }
  json flipped = good;
  flipped["entries"][1]["problem"]["save_z"] = !good["entries"][1]["problem"]["save_z"].get<bool>();
  expect_import_refused(flipped.dump(), "entries[1].problem.save_z: disagrees with the problem key");
}

// Found by fuzz_cache_import (tests/fuzz/regressions/fuzz_cache_import/number_beyond_double_range): a number beyond
// a double's range made the JSON parser throw out_of_range, not parse_error, and import exited 1 instead of 2.
TEST_F(CacheCli, ImportRefusesANumberBeyondADoublesRangeAsBadInput) {
  std::string text = export_source().dump();
  const std::string median = "\"median_us\":";
  const std::size_t at = text.find(median);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + median.size(), "1e999,\"x\":");
  expect_import_refused(text, "not valid JSON");
}

// Issue 37: an export whose device key is not one gemmtune writes (problem/device_key.hpp) was imported as is.
TEST_F(CacheCli, ImportRefusesADeviceKeyGemmtuneCouldNotHaveWritten) {
  const json good = export_source();
  const std::string key = good["entries"][1]["device_key"].get<std::string>();
  std::string separator_replaced = key;
  separator_replaced[separator_replaced.find('|')] = '/';
  std::string digit_replaced = key;
  digit_replaced[digit_replaced.find("sm_") + 3] = 'x';
  for (const std::string& bad_key : {std::string("lt/a-1"), separator_replaced, digit_replaced}) {
    SCOPED_TRACE(bad_key);
    json bad = good;
    bad["entries"][1]["device_key"] = bad_key;
    expect_import_refused(bad.dump(), "entries[1].device_key: device key '" + bad_key + "': ");
  }
}

TEST_F(CacheCli, MergeRefusesADbHoldingADeviceKeyGemmtuneCouldNotHaveWrittenAndChangesNothing) {
  const std::string damaged = scratch.path("damaged.db");
  std::filesystem::copy_file(source(), damaged);
  {
    const SqliteDb raw(damaged, SqliteDb::Access::ReadWrite);
    raw.exec("UPDATE algo_cache SET device_key = 'lt/a-1' WHERE rowid = (SELECT min(rowid) FROM algo_cache)");
  }
  const std::string target = existing_target();
  const std::string before = test::read_bytes(target);
  const auto r = run_gemmtune({"cache", "merge", "--db", target, damaged});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(damaged + ": device keys: device key 'lt/a-1': "), std::string::npos) << r.output;
  EXPECT_EQ(test::read_bytes(target), before);
}

TEST_F(CacheCli, MergeRefusesARunWhoseDeviceKeyWasEditedIntoAnotherWellFormedOne) {
  const std::string damaged = scratch.path("damaged.db");
  std::filesystem::copy_file(source(), damaged);
  {
    const SqliteDb raw(damaged, SqliteDb::Access::ReadWrite);
    raw.exec("UPDATE runs SET device_key = replace(device_key, 'sm_90', 'sm_80')");
  }
  const auto r = run_gemmtune({"cache", "merge", scratch.path("out.db"), damaged});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not the one its device's fields make"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(scratch.path("out.db")));
}

TEST_F(CacheCli, AMalformedDeviceKeyOptionIsAUsageError) {
  const auto r = run_gemmtune({"cache", "show", "--db", source(), "--device-key", "H100"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("device key 'H100': expected"), std::string::npos) << r.output;
}

TEST_F(CacheCli, MergeTellsDbsFromExportsByContentKeepsTheFasterEntryAndNeverMixesDevices) {
  // The export, with the test device's 4096³ entry made faster, under a name that says "db"; the db under a name
  // that says "json". The other device's entry gets slower in the export: it must stay the db's.
  json doc = export_source();
  // Every timing of the entry scaled together, so the statistics stay ordered as the import requires.
  const auto set_median = [](json& stats, double median_us) {
    const double factor = median_us / stats["median_us"].get<double>();
    for (const char* f : {"median_us", "p10_us", "p90_us", "mean_us", "stddev_us", "min_us", "max_us"})
      stats[f] = stats[f].get<double>() * factor;
    stats["median_us"] = median_us;  // exactly, for the comparison below
  };
  set_median(doc["entries"][2]["stats"], 1000.0);
  set_median(doc["entries"][0]["stats"], 500.0);
  test::write_bytes(scratch.path("export-named.db"), doc.dump());
  std::filesystem::copy_file(source(), scratch.path("db-named.json"));

  const std::string out = scratch.path("merged.db");
  const auto r = run_gemmtune({"cache", "merge", "--db", out, scratch.path("db-named.json"),
                               scratch.path("export-named.db")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const TuningDb merged(out, TuningDb::Access::ReadOnly);
  const std::vector<CacheEntry> result = merged.cache_entries();
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0].device_key, entries[0].device_key);
  EXPECT_EQ(result[0].stats.median_us, entries[0].stats.median_us);  // the db's, faster than the export's 500
  // The db came whole (its runs and measurements too), so its entries are now the merged db's own.
  EXPECT_EQ(result[0].origin, "");
  EXPECT_EQ(merged.runs().size(), 2u);
  EXPECT_EQ(result[2].stats.median_us, 1000.0);  // the export's, faster than the db's 1234.57
  EXPECT_EQ(result[2].device_key, entries[2].device_key);
  EXPECT_NE(result[0].device_key, result[2].device_key);
}

TEST_F(CacheCli, MergeNamesTheTargetFirstAndWritesTheSweepDocumentTheGateReads) {
  // Two shard dbs of one device, one problem each, as two `--shard I/2` sweeps would leave them.
  const DeviceIdentity device = test::test_device();
  const GemmProblem a = test::test_problem(512, 512, 512), b = test::test_problem(1024, 1024, 1024);
  for (const auto& [name, p] : {std::pair{"shard-0.db", a}, std::pair{"shard-1.db", b}}) {
    TuningDb db(scratch.path(name));
    const std::int64_t run = db.begin_run(test::test_run(device, "ci"));
    db.store_problem(run, p, {test::lt_record(p, 1, 20.0), test::own_record(p, "variant", 19.0)});
    db.finish_run(run);
  }
  const std::string out = scratch.path("merged/merged.db"), doc = scratch.path("merged/merged.json");
  auto r = run_gemmtune({"cache", "merge", out, scratch.path("shard-0.db"), scratch.path("shard-1.db"),
                         "--sweep-json", doc});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 run added (0 already there), 1 problem with 2 measurements, 1 done-mark"),
            std::string::npos)
      << r.output;
  const TuningDb merged(out, TuningDb::Access::ReadOnly);
  EXPECT_EQ(merged.runs().size(), 2u);
  EXPECT_EQ(merged.cache_entries().size(), 2u);
  const json sweep = json::parse(test::read_bytes(doc));
  EXPECT_EQ(sweep["schema"], "gemmtune.sweep");
  EXPECT_EQ(sweep["profile"], "ci");
  EXPECT_EQ(sweep["results"].size(), 4u);
  // The gate reads it: the merged sweep against itself passes.
  r = run_gemmtune({"gate", "--baseline", doc, "--current", doc});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Merging again adds nothing.
  r = run_gemmtune({"cache", "merge", out, scratch.path("shard-0.db"), scratch.path("shard-1.db")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 runs added (1 already there), 0 problems with 0 measurements"), std::string::npos)
      << r.output;
  EXPECT_EQ(run_gemmtune({"cache", "merge", out}).exit_code, 2) << "a target with no input is refused";
}

TEST_F(CacheCli, MergeWithOneBadInputChangesNothing) {
  const std::string target = existing_target();
  const std::string before = test::read_bytes(target);
  test::write_bytes(scratch.path("bad.json"), R"({"schema": "something.else"})");
  const auto r = run_gemmtune({"cache", "merge", "--db", target, source(), scratch.path("bad.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(test::read_bytes(target), before);
}

TEST_F(CacheCli, ShowPrintsEveryEntryGroupedByDeviceAndFilters) {
  auto r = run_gemmtune({"cache", "show", "--db", source()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const CacheEntry& e : entries) {
    EXPECT_NE(r.output.find(e.problem.key()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(e.candidate.id()), std::string::npos) << r.output;
  }
  EXPECT_NE(r.output.find("3 entries on 2 device keys"), std::string::npos) << r.output;
  // The margin over heuristic-first, worst condition, and the conditions measured; "?" where none is known.
  EXPECT_NE(r.output.find("vs heur."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x1.057"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(stream/warm,graph/cold)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("        ?  run"), std::string::npos) << r.output;

  r = run_gemmtune({"cache", "show", "--db", source(), "--mode", "fp32"});
  EXPECT_NE(r.output.find("1 entry on 1 device key"), std::string::npos) << r.output;
  r = run_gemmtune({"cache", "show", "--db", source(), "--device-key", entries[0].device_key, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(r.output);
  EXPECT_EQ(doc["schema"], "gemmtune.cache");
  EXPECT_EQ(doc["entries"].size(), 1u);
}

TEST_F(CacheCli, ShowWithoutDbReadsTheDefaultDb) {
  test::ScopedEnv env;
  env.set("GEMMTUNE_DB", source());
  const auto r = run_gemmtune({"cache", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 entries on 2 device keys"), std::string::npos) << r.output;
}

TEST_F(CacheCli, ExportFiltersByShape) {
  const auto r = run_gemmtune(
      {"cache", "export", "--db", source(), "--out", scratch.path("small.json"), "--max-dim", "3000"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(test::read_bytes(scratch.path("small.json")));
  ASSERT_EQ(doc["entries"].size(), 1u);
  EXPECT_EQ(doc["entries"][0]["problem"]["m"], 1000);
}

TEST_F(CacheCli, ShowRefusesANonDbFileAndAMissingOneWithExitTwo) {
  test::write_bytes(scratch.path("notes.db"), "these are notes, not a database\n");
  auto r = run_gemmtune({"cache", "show", "--db", scratch.path("notes.db")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(test::read_bytes(scratch.path("notes.db")), "these are notes, not a database\n");
  r = run_gemmtune({"cache", "show", "--db", scratch.path("missing.db")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(scratch.path("missing.db")));
  EXPECT_EQ(run_gemmtune({"cache", "show", "--db", source(), "--mode", "fp16"}).exit_code, 2);
}

}  // namespace
}  // namespace gemmtune
