#include "db/cache_json.hpp"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/tuning_db.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

TEST(CacheJson, ExportImportRoundTripIsLosslessForEveryField) {
  test::ScratchDir scratch;
  TuningDb source(scratch.path("source.db"));
  const std::vector<CacheEntry> exported = test::store_test_cache(source);
  ASSERT_EQ(exported.size(), 3u);

  write_cache_file(scratch.path("cache.json"), exported, source.path());
  const std::vector<CacheEntry> parsed = read_cache_file(scratch.path("cache.json"));
  TuningDb target(scratch.path("target.db"));
  const MergeCounts counts = target.merge_cache_entries(parsed);
  EXPECT_EQ(counts.added, 3);

  const std::vector<CacheEntry> imported = target.cache_entries();
  ASSERT_EQ(imported.size(), exported.size());
  for (std::size_t i = 0; i < exported.size(); ++i) {
    SCOPED_TRACE(exported[i].problem.key());
    test::expect_same_entry(imported[i], exported[i]);
    EXPECT_TRUE(imported[i].problem == exported[i].problem);
    // Measured in source.db, so the entry says so wherever it goes.
    EXPECT_EQ(imported[i].origin, source.path());
  }
}

// Stores `record` as the only entry of a fresh db, checks that the db and a cache file written from it give the same
// candidate back, and returns the db's entries.
std::vector<CacheEntry> stored_and_exported(const test::ScratchDir& scratch, const GemmProblem& p,
                                            const MeasurementRecord& record) {
  TuningDb source(scratch.path("source.db"));
  source.store_problem(source.begin_run(test::test_run(test::test_device())), p, {record});
  const std::vector<CacheEntry> stored = source.cache_entries();
  EXPECT_EQ(stored.size(), 1u);
  if (stored.size() != 1) return stored;
  EXPECT_EQ(stored[0].candidate.id(), record.candidate.id());
  write_cache_file(scratch.path("cache.json"), stored, source.path());
  const std::vector<CacheEntry> parsed = read_cache_file(scratch.path("cache.json"));
  EXPECT_EQ(parsed.size(), 1u);
  if (parsed.size() == 1) test::expect_same_entry(parsed[0], stored[0]);
  return stored;
}

TEST(CacheJson, APaddedEntryRoundTripsThroughTheDbAndAnExportAndOlderExportsReadAsNotPadded) {
  test::ScratchDir scratch;
  const GemmProblem p = test::test_problem(2759, 7137, 677);
  MeasurementRecord padded = test::lt_record(p, 23, 182.0);
  padded.candidate.lt_epilogue_kernel = true;
  padded.candidate.lt_padded = true;
  const std::vector<CacheEntry> stored = stored_and_exported(scratch, p, padded);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_TRUE(stored[0].candidate.lt_padded);

  // Exports written before padded candidates existed have no "padded" field, and their entries are not padded; an id
  // that says "+pad" beside a candidate that does not is refused.
  json doc = cache_to_json(stored, scratch.path("source.db"));
  json& candidate = doc["entries"][0]["candidate"];
  ASSERT_TRUE(candidate.at("padded").get<bool>());
  candidate.erase("padded");
  EXPECT_THROW(cache_from_json(doc, "older.json"), InputError);
  const std::string padded_id = candidate["id"].get<std::string>();
  candidate["id"] = padded_id.substr(0, padded_id.size() - 4) + "+epi";
  const std::vector<CacheEntry> older = cache_from_json(doc, "older.json");
  ASSERT_EQ(older.size(), 1u);
  EXPECT_FALSE(older[0].candidate.lt_padded);
  EXPECT_TRUE(older[0].candidate.lt_epilogue_kernel);
}

TEST(CacheJson, ABiasInGemmEntryRoundTripsThroughTheDbAndAnExportAndAFieldThatDisagreesWithItsIdIsRefused) {
  test::ScratchDir scratch;
  const GemmProblem p = test::test_problem(280, 1616, 216);
  MeasurementRecord split = test::lt_record(p, 55, 13.1);
  split.candidate.lt_epilogue_kernel = true;
  split.candidate.lt_bias_in_gemm = true;
  const std::vector<CacheEntry> stored = stored_and_exported(scratch, p, split);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_TRUE(stored[0].candidate.lt_bias_in_gemm);
  EXPECT_FALSE(stored[0].candidate.lt_padded);

  json doc = cache_to_json(stored, scratch.path("source.db"));
  json& candidate = doc["entries"][0]["candidate"];
  ASSERT_TRUE(candidate.at("bias_in_gemm").get<bool>());
  candidate.erase("bias_in_gemm");
  EXPECT_THROW(cache_from_json(doc, "edited.json"), InputError);
}

TEST(CacheJson, ExportImportCarriesTheFp32EquivalentAdmissionAndOlderExportsReadAsNotAdmitted) {
  test::ScratchDir scratch;
  TuningDb source(scratch.path("source.db"));
  const GemmProblem p = test::test_problem(1024, 1024, 1024, MathMode::Fp32);
  MeasurementRecord admitted = test::own_record(p, "3xtf32_128x64x64_w64x32_s2", 120.0);
  admitted.fp32_equivalent = true;
  source.store_problem(source.begin_run(test::test_run(test::test_device())), p, {admitted});
  const std::vector<CacheEntry> exported = source.cache_entries();
  ASSERT_EQ(exported.size(), 1u);
  ASSERT_TRUE(exported[0].fp32_equivalent);

  json doc = cache_to_json(exported, source.path());
  EXPECT_EQ(doc.at("entries").at(0).at("fp32_equivalent"), true);
  const std::vector<CacheEntry> parsed = cache_from_json(doc, "export.json");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_TRUE(parsed[0].fp32_equivalent);
  TuningDb target(scratch.path("target.db"));
  target.merge_cache_entries(parsed);
  EXPECT_TRUE(target.cache_entries().at(0).fp32_equivalent);

  doc["entries"][0].erase("fp32_equivalent");  // an export of a build before the policy
  EXPECT_FALSE(cache_from_json(doc, "old.json").at(0).fp32_equivalent);
}

TEST(CacheJson, DocumentCarriesSchemaVersionAndEveryAlgoField) {
  test::ScratchDir scratch;
  TuningDb db(scratch.path("source.db"));
  const json doc = cache_to_json(test::store_test_cache(db), db.path());
  EXPECT_EQ(doc["schema"], "gemmtune.cache");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_TRUE(doc["gemmtune_version"].is_string());
  EXPECT_TRUE(doc["exported_at"].is_string());
  const json& algo = doc["entries"][1]["candidate"]["algo"];
  for (const char* field : {"algo_id", "tile", "stages", "splitk", "reduction", "swizzle", "custom", "cluster_shape",
                            "inner_shape"})
    EXPECT_TRUE(algo.contains(field)) << field;
}

// One valid document, then one mutation per case: the whole file must be refused with a message that names
// the entry and the field.
struct BadDocument {
  const char* what;
  std::function<void(json&)> mutate;
  const char* expected_message;
};

void PrintTo(const BadDocument& d, std::ostream* os) { *os << d.what; }

class CacheJsonRefuses : public ::testing::TestWithParam<BadDocument> {};

TEST_P(CacheJsonRefuses, WholeDocumentWithAMessageNamingTheField) {
  test::ScratchDir scratch;
  TuningDb db(scratch.path("source.db"));
  json doc = cache_to_json(test::store_test_cache(db), db.path());
  GetParam().mutate(doc);
  try {
    cache_from_json(doc, "cache.json");
    FAIL() << "accepted a document with " << GetParam().what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().expected_message), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("cache.json: ", 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Mutations, CacheJsonRefuses,
    ::testing::Values(
        BadDocument{"another schema", [](json& d) { d["schema"] = "gemmtune.sweep"; }, "schema: 'gemmtune.sweep'"},
        BadDocument{"a newer schema version", [](json& d) { d["schema_version"] = 2; },
                    "schema_version: 2 is not supported"},
        BadDocument{"no entries", [](json& d) { d.erase("entries"); }, "entries: missing"},
        BadDocument{"entries not an array", [](json& d) { d["entries"] = json::object(); },
                    "entries: expected an array"},
        BadDocument{"a zero median", [](json& d) { d["entries"][1]["stats"]["median_us"] = 0; },
                    "entries[1].stats.median_us: must be > 0"},
        BadDocument{"a median as a string", [](json& d) { d["entries"][2]["stats"]["median_us"] = "12"; },
                    "entries[2].stats.median_us: expected a number, got string"},
        BadDocument{"p90 below the median", [](json& d) { d["entries"][0]["stats"]["p90_us"] = 1.0; },
                    "entries[0].stats.p90_us"},
        BadDocument{"a failed entry", [](json& d) { d["entries"][1]["status"] = "verify_failed"; },
                    "entries[1].status: 'verify_failed'"},
        BadDocument{"a bad problem key", [](json& d) { d["entries"][0]["problem_key"] = "fwd:0x1x1:nn:row:none:tf32"; },
                    "entries[0].problem_key: bad shape"},
        BadDocument{"a problem that disagrees with its key",
                    [](json& d) { d["entries"][0]["problem"]["key"] = "fwd:1x1x1:nn:row:none:tf32"; },
                    "entries[0].problem.key: 'fwd:1x1x1:nn:row:none:tf32' disagrees with the problem key"},
        BadDocument{"a bad candidate id", [](json& d) { d["entries"][1]["candidate"]["id"] = "lt/a21-oops"; },
                    "entries[1].candidate.id: bad candidate id"},
        BadDocument{"an algo field that disagrees with the id",
                    [](json& d) { d["entries"][1]["candidate"]["algo"]["stages"] = 99; },
                    "entries[1].candidate.algo.stages: does not match the candidate id"},
        BadDocument{"an epilogue flag that disagrees with the id",
                    [](json& d) { d["entries"][1]["candidate"]["epilogue_kernel"] = false; },
                    "entries[1].candidate.epilogue_kernel: does not match"},
        BadDocument{"a negative verify error", [](json& d) { d["entries"][2]["verify_error"] = -1; },
                    "entries[2].verify_error: -1 is negative"},
        BadDocument{"an error above its tolerance", [](json& d) { d["entries"][2]["verify_error"] = 0.5; },
                    "entries[2].verify_error: 0.5 is above its tolerance"},
        BadDocument{"a missing run", [](json& d) { d["entries"][2].erase("run"); }, "entries[2].run: missing"},
        BadDocument{"a run id that is not an integer", [](json& d) { d["entries"][2]["run"]["id"] = 1.5; },
                    "entries[2].run.id: expected an integer"},
        BadDocument{"an empty device key", [](json& d) { d["entries"][2]["device_key"] = ""; },
                    "entries[2].device_key: must not be empty"},
        BadDocument{"a candidate id for a device key", [](json& d) { d["entries"][0]["device_key"] = "lt/a-1"; },
                    "entries[0].device_key: device key 'lt/a-1': expected"},
        BadDocument{"a device key with a separator replaced",
                    [](json& d) {
                      std::string key = d["entries"][1]["device_key"].get<std::string>();
                      key[key.rfind('|')] = '!';
                      d["entries"][1]["device_key"] = key;
                    },
                    "entries[1].device_key: device key 'NVIDIA Test GPU|sm_90|132sm|drv580.159.04!lt130100'"},
        BadDocument{"a control byte in the device key",
                    [](json& d) { d["entries"][2]["device_key"] = "NVIDIA\x01GPU|sm_90|132sm|drv580.159.04|lt1"; },
                    "entries[2].device_key: device key 'NVIDIA\\x01GPU|sm_90"},
        BadDocument{"one problem twice", [](json& d) { d["entries"].push_back(d["entries"][1]); },
                    "entries[3].problem_key: the same device key and problem key as entries[1]"},
        BadDocument{"an entry that is not an object", [](json& d) { d["entries"][1] = 5; },
                    "entries[1]: expected an object"},
        BadDocument{"a margin without conditions",
                    [](json& d) { d["entries"][2]["margin"]["conditions"] = json::array(); },
                    "entries[2].margin.conditions: must not be empty"},
        BadDocument{"a zero margin", [](json& d) { d["entries"][2]["margin"]["conditions"][0]["margin"] = 0; },
                    "entries[2].margin.conditions[0].margin: must be > 0"},
        BadDocument{"a condition name the db cannot store",
                    [](json& d) { d["entries"][2]["margin"]["conditions"][1]["condition"] = "graph;cold"; },
                    "entries[2].margin.conditions[1].condition: must be a non-empty name"}),
    [](const ::testing::TestParamInfo<BadDocument>& param_info) {
      std::string name;
      for (const char* c = param_info.param.what; *c != '\0'; ++c)
        if (std::isalnum(static_cast<unsigned char>(*c))) name += *c;
      return name;
    });

TEST(CacheJson, AnExportWithoutMarginsReadsAsNoMarginKnownAndAMarginRoundTrips) {
  test::ScratchDir scratch;
  TuningDb db(scratch.path("source.db"));
  json doc = cache_to_json(test::store_test_cache(db), db.path());
  ASSERT_TRUE(doc["entries"][0]["margin"].is_null()) << "stored without a finalist stage";
  ASSERT_EQ(doc["entries"][2]["margin"]["conditions"].size(), 2u);
  EXPECT_EQ(doc["entries"][2]["margin"]["min"], 1.0567);
  const std::vector<CacheEntry> with = cache_from_json(doc, "cache.json");
  EXPECT_EQ(with[2].evidence.encode(), "stream/warm=1.1234~0.0123;graph/cold=1.0567~0.0100");

  doc["entries"][2].erase("margin");  // what a gemmtune before schema 3 exported
  const std::vector<CacheEntry> without = cache_from_json(doc, "cache.json");
  EXPECT_FALSE(without[2].evidence.known());
}

TEST(CacheJson, MalformedOrMissingFileIsAnInputErrorNamingIt) {
  test::ScratchDir scratch;
  test::write_bytes(scratch.path("bad.json"), R"({"schema": "gemmtune.cache", "entries": [)");
  EXPECT_THROW(read_cache_file(scratch.path("bad.json")), InputError);
  EXPECT_THROW(read_cache_file(scratch.path("missing.json")), InputError);
}

}  // namespace
}  // namespace gemmtune
