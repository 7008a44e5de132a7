// The validation layer every reader shares: each check refuses exactly the values gemmtune cannot have produced,
// with an InputError naming the document and the field, and accepts the ones it does produce.
#include "problem/validate.hpp"

#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

// The message of the InputError that f throws, or "" when it throws none.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, ErrorsNameTheDocumentAndTheFieldPath) {
  const FieldContext at("cache.json", "entries[3].stats");
  EXPECT_EQ(refusal([&] { require_in_range(at, "min_us", -1, 0, 5); }),
            "cache.json: entries[3].stats.min_us: -1 is outside [0, 5]");
  EXPECT_EQ(refusal([&] { require_finite(FieldContext("r.csv"), "x", std::numeric_limits<double>::infinity()); }),
            "r.csv: x: expected a finite number");
}

TEST(Validate, Iso8601AcceptsRealInstantsOnly) {
  for (const char* ok : {"2026-11-24T00:32:20Z", "2024-02-29T23:59:59Z", "2026-11-24T00:32:20.125Z",
                         "2026-11-24T00:32:20+05:30", "2026-12-31T23:59:60Z"})
    EXPECT_TRUE(is_iso8601_timestamp(ok)) << ok;
  for (const char* bad : {"", "202--11-24T00:32:20Z", "2026-11-24 00:32:20Z", "2026-13-01T00:00:00Z",
                          "2025-02-29T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-24T24:00:00Z", "2026-11-24T00:60:00Z",
                          "2026-11-24T00:32:20", "2026-11-24T00:32:20Zjunk", "2026-11-24T00:32:20.Z",
                          "2026-11-24T00:32:20+5:30", "2026-11-24T00:32:20+24:00", "2026-00-10T00:00:00Z"})
    EXPECT_FALSE(is_iso8601_timestamp(bad)) << bad;
}

TEST(Validate, Utf8IsWellFormedOrTheFirstBadByteIsNamed) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("H\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("ab\x81"), 2u);              // a continuation byte alone
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);            // an overlong '/'
  EXPECT_EQ(first_invalid_utf8("x\xED\xA0\x80"), 1u);       // a UTF-16 surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);   // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2u);          // cut short
}

TEST(Validate, SmClockIsUnknownOrPlausible) {
  const FieldContext at("s.json");
  for (double ok : {0.0, 100.0, 1980.04, 5000.0}) EXPECT_EQ(refusal([&] { require_sm_clock(at, "c", ok); }), "") << ok;
  for (double bad : {0.5, 99.0, 5001.0, -1.0, std::numeric_limits<double>::quiet_NaN()})
    EXPECT_NE(refusal([&] { require_sm_clock(at, "c", bad); }), "") << bad;
}

TEST(Validate, AVerifiedResultHasABoundedToleranceAndAnErrorWithinIt) {
  const FieldContext at("e.json");
  EXPECT_EQ(refusal([&] { require_verified(at, 3e-4, 1e-3); }), "");
  EXPECT_EQ(refusal([&] { require_verified(at, 0, 1); }), "");
  EXPECT_NE(refusal([&] { require_verified(at, 0, 0); }).find("e.json: tolerance:"), std::string::npos);
  EXPECT_NE(refusal([&] { require_verified(at, 0, 9.2e18); }).find("tolerance:"), std::string::npos);
  EXPECT_NE(refusal([&] { require_verified(at, -1, 1e-3); }).find("verify_error:"), std::string::npos);
  EXPECT_NE(refusal([&] { require_verified(at, 2e-3, 1e-3); }).find("verify_error:"), std::string::npos);
}

json good_stats() {
  return {{"median_us", 10.0}, {"p10_us", 9.8}, {"p90_us", 10.3}, {"mean_us", 10.1}, {"stddev_us", 0.13},
          {"min_us", 9.7},     {"max_us", 12.1}, {"samples", 47}, {"timer", "cupti"}, {"sm_clock_mhz", 1977.5}};
}

std::string stats_refusal(const json& stats, bool complete) {
  return refusal([&] { read_timing_stats(JsonFields(stats, "c.json", "stats"), complete); });
}

TEST(Validate, TimingStatsAreOrderedFiniteAndComplete) {
  EXPECT_EQ(stats_refusal(good_stats(), true), "");
  const struct {
    const char* field;
    json value;
  } bad[] = {{"median_us", 0},      {"p10_us", 10.5},    {"p90_us", 9.9},       {"min_us", -1e308},
             {"min_us", 9.9},       {"max_us", 0.0},     {"max_us", 10.2},      {"mean_us", -1e308},
             {"mean_us", 12.2},     {"stddev_us", -0.1}, {"stddev_us", 1.8e19}, {"samples", 0},
             {"samples", 1.5},      {"timer", ""},       {"timer", "wallclock"}, {"sm_clock_mhz", 0.5},
             {"median_us", "10"}};
  for (const auto& b : bad) {
    json s = good_stats();
    s[b.field] = b.value;
    EXPECT_EQ(stats_refusal(s, true).rfind(std::string("c.json: stats.") + b.field + ":", 0), 0u)
        << b.field << " = " << b.value << ": " << stats_refusal(s, true);
  }
  json missing = good_stats();
  missing.erase("timer");
  EXPECT_NE(stats_refusal(missing, true).find("stats.timer: missing"), std::string::npos);
}

TEST(Validate, SweepRecordsMayOmitTheExtremesButNotHalfOfThem) {
  json s = good_stats();
  for (const char* f : {"min_us", "max_us", "mean_us", "stddev_us", "timer", "sm_clock_mhz"}) s.erase(f);
  EXPECT_EQ(stats_refusal(s, false), "");
  s["min_us"] = 9.7;
  EXPECT_NE(stats_refusal(s, false).find("stats.max_us: missing"), std::string::npos);
}

// A mean summed in floating point may land an ulp below the minimum when every sample is equal.
TEST(Validate, RoundingOfAMeanOverEqualSamplesIsNotADisorder) {
  json s = good_stats();
  for (const char* f : {"median_us", "p10_us", "p90_us", "min_us", "max_us"}) s[f] = 31.841;
  s["mean_us"] = 31.840999999999998;
  s["stddev_us"] = 0;
  EXPECT_EQ(stats_refusal(s, true), "");
}

TEST(Validate, ProblemKeysAndCandidateIdsMustBeCanonical) {
  EXPECT_EQ(parse_canonical_problem_key("fwd:1024x512x256:nt:col:bias+gelu+z:tf32").m, 1024);
  for (const char* bad : {"fwd:01024x512x256:nn:row:none:tf32", "fwd:1x1x1:nn:row:z+bias:tf32",
                          "fwd:1x1x1:nn:row:leaky_relu:tf32", "fwd:1x1x1:nn:row:dropout=0.10:tf32",
                          "fwd:1x1x1:nn:row:dropout=0:tf32", "fwd:+1x1x1:nn:row:none:tf32"})
    EXPECT_NE(refusal([&] { parse_canonical_problem_key(bad); }), "") << bad;
  EXPECT_EQ(parse_canonical_candidate_id("own/tf32_64x64x32_w32x32_s3").own_variant, "tf32_64x64x32_w32x32_s3");
  EXPECT_EQ(parse_canonical_candidate_id("lt/a43-t18-s34-k-1-r2-w0-c0-cl3-i0+epi").lt.splitk, -1);
  for (const char* bad : {"own/a b", "own/x/../y", "own/'); DROP TABLE algo_cache;--", "lt/a+43-t18-s34-k1-r0-w0-c0-cl3-i0",
                          "lt/a043-t18-s34-k1-r0-w0-c0-cl3-i0"})
    EXPECT_NE(refusal([&] { parse_canonical_candidate_id(bad); }), "") << bad;
}

TEST(Validate, ProblemFieldsMustAgreeWithTheKey) {
  const GemmProblem p = parse_canonical_problem_key("fwd:1000x3000x257:nt:row:leaky_relu=0.37+dropout=0.1:fp32");
  const json good = p;
  EXPECT_EQ(refusal([&] { require_problem_fields_match(JsonFields(good, "e.json", "problem"), p); }), "");
  const struct {
    const char* field;
    json value;
  } bad[] = {{"pass", "bwd_a"},     {"pass", -1},         {"m", 1001},        {"layout", "nn"}, {"out", "col"},
             {"bias", true},        {"act", "relu"},      {"save_z", true},   {"save_z", "'); DROP TABLE x;--"},
             {"dropout", 0.2},      {"mode", "tf32"},     {"leaky_slope", 0.5}, {"key", "fwd:1x1x1:nn:row:none:tf32"}};
  for (const auto& b : bad) {
    json j = good;
    j[b.field] = b.value;
    EXPECT_EQ(refusal([&] { require_problem_fields_match(JsonFields(j, "e.json", "problem"), p); })
                  .rfind(std::string("e.json: problem.") + b.field + ":", 0),
              0u)
        << b.field << " = " << b.value;
  }
}

TEST(Validate, SweepRecordsOfTheFixtureAreAcceptedAndWrongOnesRefused) {
  const json doc = test::sweep_document(3);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(refusal([&] { validate_sweep_record(JsonFields(doc["results"][i], "s.json", "results[0]")); }), "");
  const auto refused = [&](const std::function<void(json&)>& mutate, const std::string& field) {
    json r = doc["results"][1];
    mutate(r);
    const std::string why = refusal([&] { validate_sweep_record(JsonFields(r, "s.json", "results[1]")); });
    EXPECT_EQ(why.rfind("s.json: results[1]." + field + ":", 0), 0u) << field << ": " << why;
  };
  refused([](json& r) { r["key"] = "fwd:1x1x1:nn:row:none:tf32"; }, "key");
  refused([](json& r) { r["key"] = "fwd:1x1x1:nn:row:none:tf32/own/a b"; }, "key");
  refused([](json& r) { r["problem_key"] = "fwd:1x1x1:nn:row:none:tf32"; }, "problem_key");
  refused([](json& r) { r["problem"]["save_z"] = !r["problem"]["save_z"].get<bool>(); }, "problem.save_z");
  refused([](json& r) { r["candidate"]["id"] = "own/other"; }, "candidate.id");
  refused([](json& r) { r["status"] = "great"; }, "status");
  refused([](json& r) { r["max_us"] = 0.0; }, "max_us");
  refused([](json& r) { r["sm_clock_mhz"] = 0.5; }, "sm_clock_mhz");
  refused([](json& r) { r["timer"] = ""; }, "timer");
  refused([](json& r) { r["tolerance"] = 0; }, "tolerance");
  refused([](json& r) { r["verify_error"] = 0.5; }, "verify_error");
  // Records that are not ok carry no statistics to check, but their key and status still are.
  json skipped = doc["results"][1];
  skipped["status"] = "unsupported";
  skipped["median_us"] = 0;
  EXPECT_EQ(refusal([&] { validate_sweep_record(JsonFields(skipped, "s.json", "results[1]")); }), "");
}

}  // namespace
}  // namespace gemmtune
