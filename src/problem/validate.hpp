// The one validation layer for what gemmtune reads from files: cache exports, sweep results (the gate), profiles,
// ncu CSV, problem keys and candidate ids. A reader parses, then asks these checks; each throws an InputError
// "<file>: <field>: <why>" at the first wrong value, before the reader has written anything, so a refused file
// exits 2 and leaves every db and output as it was.
//
// The ranges are what gemmtune itself can produce: times are positive and ordered (min <= p10 <= median <= p90 <=
// max, min <= mean <= max), a measured SM clock is a real one, a cached or ok result was verified within a
// tolerance no looser than 1, timestamps are ISO-8601 UTC instants, and fields that repeat the key agree with it.
// It lives with the problem model because what it checks are the model's keys, candidates and timing statistics;
// common/, which every folder uses, includes nothing above it.
#pragma once

#include <initializer_list>
#include <string>

#include "common/json_fields.hpp"
#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {

// Names the document and the object a value came from: FieldContext("run.csv", "row 3").fail("clock_mhz", "...")
// throws InputError("run.csv: row 3.clock_mhz: ...").
class FieldContext {
 public:
  explicit FieldContext(std::string source, std::string path = "");
  explicit FieldContext(const JsonFields& object);
  std::string name(const std::string& field) const;
  [[noreturn]] void fail(const std::string& field, const std::string& why) const;

 private:
  std::string source_;
  std::string path_;
};

// A measured SM clock is 0 (not measured) or within these bounds, in MHz.
inline constexpr double kMinSmClockMhz = 100;
inline constexpr double kMaxSmClockMhz = 5000;
// The loosest verification tolerance gemmtune uses is far below this; a larger one verifies nothing.
inline constexpr double kMaxTolerance = 1;
// Kernel times above an hour are not a GEMM gemmtune timed.
inline constexpr double kMaxTimeUs = 3600e6;

void require_finite(const FieldContext& at, const std::string& field, double v);
// lo <= v <= hi, and finite.
void require_in_range(const FieldContext& at, const std::string& field, double v, double lo, double hi);
void require_one_of(const FieldContext& at, const std::string& field, const std::string& v,
                    std::initializer_list<const char*> allowed);

// Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF); npos when valid, else the
// offset of the first bad byte. Text that is not becomes a JSON string that cannot be written out again.
std::size_t first_invalid_utf8(const std::string& text);

// "2026-11-24T00:32:20Z" (optionally with fractional seconds, or a +hh:mm / -hh:mm offset instead of Z), a real
// calendar date and time of day.
bool is_iso8601_timestamp(const std::string& s);
void require_iso8601(const FieldContext& at, const std::string& field, const std::string& s);

// 0 (unknown) or in [kMinSmClockMhz, kMaxSmClockMhz].
void require_sm_clock(const FieldContext& at, const std::string& field, double mhz);

// A verified result: 0 < tolerance <= kMaxTolerance and 0 <= verify_error <= tolerance.
void require_verified(const FieldContext& at, double verify_error, double tolerance);

// The statistics of one timed case. complete: min, max, mean, stddev, timer and the SM clock are there too (a cache
// entry); otherwise only median, p10, p90 and samples are required and the others are checked when present (has()).
// The timer is "cupti" or "events".
TimingStats read_timing_stats(const JsonFields& f, bool complete);
void validate_timing_stats(const FieldContext& at, const TimingStats& s, bool has_extremes);

// A problem key as gemmtune writes it: parseable and canonical ("fwd:01024x..." or "relu+bias" are refused, since
// the db and the gate compare keys as strings).
GemmProblem parse_canonical_problem_key(const std::string& key);
// A candidate id as gemmtune writes it (own variants are [A-Za-z0-9_] names).
Candidate parse_canonical_candidate_id(const std::string& id);
// The problem object of an export or sweep record: each field it has agrees with the key's problem.
void require_problem_fields_match(const JsonFields& problem, const GemmProblem& from_key);

// One record of `sweep --json`: key "<problem key>/<candidate id>" (and problem_key, problem, candidate when
// present) consistent, status from its set; an ok record has verified, ordered statistics.
void validate_sweep_record(const JsonFields& record);

}  // namespace gemmtune
