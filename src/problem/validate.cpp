#include "problem/validate.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "common/error.hpp"

namespace gemmtune {
namespace {

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool digits_at(const std::string& s, std::size_t pos, std::size_t count, int& value) {
  if (pos + count > s.size()) return false;
  value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    value = value * 10 + (s[i] - '0');
  }
  return true;
}

int days_in_month(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[month - 1];
}

// Reads an optional number field into v; false when absent.
bool optional_number(const JsonFields& f, const std::string& name, double& v) {
  if (!f.has(name)) return false;
  v = f.number(name);
  return true;
}

}  // namespace

FieldContext::FieldContext(std::string source, std::string path) : source_(std::move(source)), path_(std::move(path)) {}
FieldContext::FieldContext(const JsonFields& object) : source_(object.source()), path_(object.path()) {}

std::string FieldContext::name(const std::string& field) const {
  if (path_.empty()) return field;
  return field.empty() ? path_ : path_ + "." + field;
}

void FieldContext::fail(const std::string& field, const std::string& why) const {
  throw InputError(source_ + ": " + name(field) + ": " + why);
}

void require_finite(const FieldContext& at, const std::string& field, double v) {
  if (!std::isfinite(v)) at.fail(field, "expected a finite number");
}

void require_in_range(const FieldContext& at, const std::string& field, double v, double lo, double hi) {
  require_finite(at, field, v);
  if (v < lo || v > hi)
    at.fail(field, format_number(v) + " is outside [" + format_number(lo) + ", " + format_number(hi) + "]");
}

void require_one_of(const FieldContext& at, const std::string& field, const std::string& v,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  at.fail(field, "'" + v + "' is not one of " + list);
}

std::size_t first_invalid_utf8(const std::string& text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char b = byte(i);
    std::size_t length = 0;
    std::uint32_t cp = 0, min_cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      length = 2, cp = b & 0x1Fu, min_cp = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      length = 3, cp = b & 0x0Fu, min_cp = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      length = 4, cp = b & 0x07u, min_cp = 0x10000;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (std::size_t j = 1; j < length; ++j) {
      if ((byte(i + j) & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (byte(i + j) & 0x3Fu);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += length;
  }
  return std::string::npos;
}

bool is_iso8601_timestamp(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SS[.f+](Z|+hh:mm|-hh:mm)
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits_at(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !digits_at(s, 5, 2, month) || s[7] != '-' ||
      !digits_at(s, 8, 2, day) || s[10] != 'T' || !digits_at(s, 11, 2, hour) || s[13] != ':' ||
      !digits_at(s, 14, 2, minute) || s[16] != ':' || !digits_at(s, 17, 2, second))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 ||
      second > 60)  // 60: a leap second
    return false;
  std::size_t pos = 19;
  if (s[pos] == '.') {
    const std::size_t first = ++pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == first) return false;
  }
  if (pos < s.size() && s[pos] == 'Z') return pos + 1 == s.size();
  int offset_hours = 0, offset_minutes = 0;
  return pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && digits_at(s, pos + 1, 2, offset_hours) &&
         s[pos + 3] == ':' && digits_at(s, pos + 4, 2, offset_minutes) && offset_hours <= 23 && offset_minutes <= 59;
}

void require_iso8601(const FieldContext& at, const std::string& field, const std::string& s) {
  if (!is_iso8601_timestamp(s)) at.fail(field, "'" + s + "' is not an ISO-8601 timestamp (e.g. 2026-11-24T00:32:20Z)");
}

void require_sm_clock(const FieldContext& at, const std::string& field, double mhz) {
  require_finite(at, field, mhz);
  if (mhz != 0 && (mhz < kMinSmClockMhz || mhz > kMaxSmClockMhz))
    at.fail(field, format_number(mhz) + " MHz is not a plausible SM clock (0 for unknown, else " +
                       format_number(kMinSmClockMhz) + " to " + format_number(kMaxSmClockMhz) + ")");
}

void require_verified(const FieldContext& at, double verify_error, double tolerance) {
  require_finite(at, "tolerance", tolerance);
  require_finite(at, "verify_error", verify_error);
  if (!(tolerance > 0 && tolerance <= kMaxTolerance))
    at.fail("tolerance", format_number(tolerance) + " is outside (0, " + format_number(kMaxTolerance) + "]");
  if (verify_error < 0)
    at.fail("verify_error", format_number(verify_error) + " is negative: the result was not verified");
  if (verify_error > tolerance)
    at.fail("verify_error", format_number(verify_error) + " is above its tolerance " + format_number(tolerance));
}

void validate_timing_stats(const FieldContext& at, const TimingStats& s, bool has_extremes) {
  // A mean summed in floating point, or a quantile interpolated between two samples, may land an ulp outside the
  // samples it came from; a relative slack of 1e-9 accepts that rounding and nothing a real disorder would give.
  const auto below = [](double v) { return v * (1 - 1e-9); };
  const auto above = [](double v) { return v * (1 + 1e-9); };
  require_in_range(at, "median_us", s.median_us, 0, kMaxTimeUs);
  if (!(s.median_us > 0)) at.fail("median_us", "must be > 0");
  require_in_range(at, "p10_us", s.p10_us, 0, above(s.median_us));
  if (!(s.p10_us > 0)) at.fail("p10_us", "must be > 0");
  require_in_range(at, "p90_us", s.p90_us, below(s.median_us), kMaxTimeUs);
  if (s.samples < 1) at.fail("samples", std::to_string(s.samples) + " is below 1");
  if (!has_extremes) return;
  require_in_range(at, "min_us", s.min_us, 0, above(s.p10_us));
  if (!(s.min_us > 0)) at.fail("min_us", "must be > 0");
  require_in_range(at, "max_us", s.max_us, below(s.p90_us), kMaxTimeUs);
  require_in_range(at, "mean_us", s.mean_us, below(s.min_us), above(s.max_us));
  // The sample standard deviation of values spread over [min, max] is below max - min.
  require_in_range(at, "stddev_us", s.stddev_us, 0, above(s.max_us - s.min_us));
}

TimingStats read_timing_stats(const JsonFields& f, bool complete) {
  const FieldContext at(f);
  TimingStats s;
  s.median_us = f.number("median_us");
  s.p10_us = f.number("p10_us");
  s.p90_us = f.number("p90_us");
  const std::int64_t samples = f.integer("samples");
  if (samples < 1 || samples > INT32_MAX) at.fail("samples", std::to_string(samples) + " is outside [1, 2^31)");
  s.samples = static_cast<int>(samples);
  bool has_extremes = complete;
  if (complete) {
    s.min_us = f.number("min_us");
    s.max_us = f.number("max_us");
    s.mean_us = f.number("mean_us");
    s.stddev_us = f.number("stddev_us");
  } else {
    const bool has_min = optional_number(f, "min_us", s.min_us);
    const bool has_max = optional_number(f, "max_us", s.max_us);
    const bool has_mean = optional_number(f, "mean_us", s.mean_us);
    const bool has_stddev = optional_number(f, "stddev_us", s.stddev_us);
    has_extremes = has_min || has_max || has_mean || has_stddev;
    if (has_extremes && !(has_min && has_max && has_mean && has_stddev))
      at.fail(has_min ? (has_max ? (has_mean ? "stddev_us" : "mean_us") : "max_us") : "min_us",
              "missing (min_us, max_us, mean_us and stddev_us come together)");
  }
  if (complete || f.has("timer")) {
    s.timer = f.string("timer");
    require_one_of(at, "timer", s.timer, {"cupti", "events"});
  }
  if (complete || f.has("sm_clock_mhz")) s.sm_clock_mhz = f.number("sm_clock_mhz");
  if (f.has("events_per_call_us")) {
    s.events_per_call_us = f.number("events_per_call_us");
    require_in_range(at, "events_per_call_us", s.events_per_call_us, 0, kMaxTimeUs);
  }
  validate_timing_stats(at, s, has_extremes);
  require_sm_clock(at, "sm_clock_mhz", s.sm_clock_mhz);
  return s;
}

GemmProblem parse_canonical_problem_key(const std::string& key) {
  const GemmProblem p = GemmProblem::parse_key(key);
  const std::string canonical = p.key();
  if (canonical != key)
    throw InputError("problem key '" + key + "' is not canonical (gemmtune writes '" + canonical + "')");
  return p;
}

Candidate parse_canonical_candidate_id(const std::string& id) {
  const Candidate c = Candidate::parse_id(id);
  if (c.backend == Backend::Own)
    for (char ch : c.own_variant)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_')
        throw InputError("candidate id '" + id + "': an own variant is a name of letters, digits and '_'");
  if (c.id() != id) throw InputError("candidate id '" + id + "' is not canonical (gemmtune writes '" + c.id() + "')");
  return c;
}

void require_problem_fields_match(const JsonFields& problem, const GemmProblem& from_key) {
  const FieldContext at(problem);
  const auto same_string = [&](const char* field, const std::string& expected) {
    if (problem.has(field) && problem.string(field) != expected)
      at.fail(field, "'" + problem.string(field) + "' disagrees with the problem key ('" + expected + "')");
  };
  const auto same_integer = [&](const char* field, std::int64_t expected) {
    if (problem.has(field) && problem.integer(field) != expected)
      at.fail(field, std::to_string(problem.integer(field)) + " disagrees with the problem key (" +
                         std::to_string(expected) + ")");
  };
  const auto same_boolean = [&](const char* field, bool expected) {
    if (problem.has(field) && problem.boolean(field) != expected)
      at.fail(field, std::string("disagrees with the problem key (") + (expected ? "true" : "false") + ")");
  };
  const auto same_number = [&](const char* field, float expected) {
    if (problem.has(field) && static_cast<float>(problem.number(field)) != expected)
      at.fail(field, format_number(problem.number(field)) + " disagrees with the problem key (" +
                         format_number(expected) + ")");
  };
  same_string("key", from_key.key());
  same_string("pass", to_string(from_key.pass));
  same_integer("m", from_key.m);
  same_integer("n", from_key.n);
  same_integer("k", from_key.k);
  same_string("layout", from_key.layout());
  same_string("out", from_key.out == OutputLayout::Transposed ? "col" : "row");
  same_boolean("bias", from_key.epi.bias);
  same_string("act", to_string(from_key.epi.act));
  same_boolean("save_z", from_key.epi.save_z);
  same_number("dropout", from_key.epi.dropout_p);
  same_string("mode", to_string(from_key.mode));
  if (from_key.epi.act == Activation::LeakyRelu)
    same_number("leaky_slope", from_key.epi.leaky_slope);
  else if (problem.has("leaky_slope"))
    at.fail("leaky_slope", "present, but the problem key's activation is not leaky_relu");
}

void validate_sweep_record(const JsonFields& r) {
  const FieldContext at(r);
  const std::string key = r.string("key");
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) at.fail("key", "'" + key + "' is not <problem key>/<candidate id>");
  const GemmProblem problem = r.parse("key", [&] { return parse_canonical_problem_key(key.substr(0, slash)); });
  const Candidate candidate = r.parse("key", [&] { return parse_canonical_candidate_id(key.substr(slash + 1)); });
  if (r.has("problem_key") && r.string("problem_key") != problem.key())
    at.fail("problem_key", "'" + r.string("problem_key") + "' disagrees with the key");
  if (r.has("problem")) require_problem_fields_match(r.object("problem"), problem);
  if (r.has("candidate")) {
    const JsonFields c = r.object("candidate");
    if (c.string("id") != candidate.id()) FieldContext(c).fail("id", "'" + c.string("id") + "' disagrees with the key");
  }
  const std::string status = r.string("status");
  r.parse("status", [&] { return parse_measure_status(status); });
  if (status != to_string(MeasureStatus::Ok)) return;
  read_timing_stats(r, false);
  if (r.has("verify_error") || r.has("tolerance"))
    require_verified(at, r.number("verify_error"), r.number("tolerance"));
}

}  // namespace gemmtune
