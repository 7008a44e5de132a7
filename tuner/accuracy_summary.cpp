// The accuracy benchmark's outputs: accuracy.json and the table. Pure functions of an AccuracyResult.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "tuner/accuracy_benchmark.hpp"

namespace gemmtune {
namespace {

// JSON has no infinity: a NaN/Inf result is written as null and read back as +inf.
nlohmann::json error_value(double e) { return std::isfinite(e) ? nlohmann::json(e) : nlohmann::json(nullptr); }
double read_error(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::infinity() : j.get<double>();
}

// cuBLASLt's own call, the yardstick; its algos on padded copies ("+pad") are a candidate of ours, counted with ours.
bool is_lt(const AccuracyRecord& r) {
  const std::string& c = r.candidate;
  return c.rfind("lt/", 0) == 0 && !(c.size() >= 4 && c.compare(c.size() - 4, 4, "+pad") == 0);
}

std::string formatted(const char* format, double v) {
  if (!std::isfinite(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}
std::string sci(double v) { return formatted("%.2e", v); }

}  // namespace

const char* to_string(InputDistribution d) {
  switch (d) {
    case InputDistribution::Uniform: return "uniform";
    case InputDistribution::WideExponent: return "wide";
    case InputDistribution::Positive: return "positive";
  }
  return "?";
}

InputDistribution parse_input_distribution(const std::string& s) {
  if (s == "uniform") return InputDistribution::Uniform;
  if (s == "wide") return InputDistribution::WideExponent;
  if (s == "positive") return InputDistribution::Positive;
  throw InputError("unknown input distribution '" + s + "' (uniform | wide | positive)");
}

double AccuracyRecord::ratio_to_lt_fp32() const {
  if (lt_fp32_rel_err > 0) return rel_err / lt_fp32_rel_err;
  return rel_err == 0 && lt_fp32_rel_err == 0 ? 1.0 : std::numeric_limits<double>::infinity();
}

const AccuracyRecord* worst_ratio_record(const AccuracyResult& r, MathMode mode) {
  const AccuracyRecord* worst = nullptr;
  for (const AccuracyRecord& rec : r.records)
    if (rec.mode == mode && !is_lt(rec) && (!worst || rec.ratio_to_lt_fp32() > worst->ratio_to_lt_fp32()))
      worst = &rec;
  return worst;
}

void to_json(nlohmann::json& j, const AccuracyResult& r) {
  nlohmann::json records = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const AccuracyRecord& rec : r.records)
    records.push_back({{"mode", to_string(rec.mode)},
                       {"candidate", rec.candidate},
                       {"k", rec.k},
                       {"dist", to_string(rec.dist)},
                       {"rel_err", error_value(rec.rel_err)},
                       {"lt_fp32_rel_err", error_value(rec.lt_fp32_rel_err)},
                       {"m", rec.m != 0 ? rec.m : r.m},
                       {"n", rec.n != 0 ? rec.n : r.n},
                       {"scale_bias", rec.scale_bias},
                       {"lt_fp32_scale_bias", rec.lt_fp32_scale_bias}});
  for (const AccuracySkip& s : r.skipped)
    skipped.push_back({{"mode", to_string(s.mode)}, {"candidate", s.candidate}, {"k", s.k}, {"reason", s.reason}});
  j = {{"device", r.device}, {"m", r.m}, {"n", r.n}, {"seed", r.seed}, {"records", records}, {"skipped", skipped}};
}

void from_json(const nlohmann::json& j, AccuracyResult& r) {
  r.device = j.at("device").get<DeviceIdentity>();
  r.m = j.at("m").get<std::int64_t>();
  r.n = j.at("n").get<std::int64_t>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.records.clear();
  // Files written before unaligned points were measured give no shape per record: theirs is the result's.
  for (const nlohmann::json& rec : j.at("records"))
    r.records.push_back({parse_math_mode(rec.at("mode").get<std::string>()), rec.at("candidate").get<std::string>(),
                         rec.at("k").get<std::int64_t>(), parse_input_distribution(rec.at("dist").get<std::string>()),
                         read_error(rec.at("rel_err")), read_error(rec.at("lt_fp32_rel_err")),
                         rec.value("m", r.m), rec.value("n", r.n), rec.value("scale_bias", 0.0),
                         rec.value("lt_fp32_scale_bias", 0.0)});
  r.skipped.clear();
  for (const nlohmann::json& s : j.at("skipped"))
    r.skipped.push_back({parse_math_mode(s.at("mode").get<std::string>()), s.at("candidate").get<std::string>(),
                         s.at("k").get<std::int64_t>(), s.at("reason").get<std::string>()});
}

void print_accuracy_table(const AccuracyResult& r, std::ostream& out) {
  struct Cell {
    double lt = -1, best = std::numeric_limits<double>::infinity(), worst = -1, worst_ratio = 0;
    // Scale biases: cuBLASLt fp32's on the same inputs (the yardstick, as for the error), our variants' largest.
    double lt_fp32_bias = 0, worst_bias = 0;
    bool lt_fp32_bias_known = false;
    int variants = 0;
  };
  // (dist, k, mode, shape) in the order the grid ran; an unaligned point's k differs from its aligned twin's.
  std::map<std::tuple<int, std::int64_t, int, std::int64_t, std::int64_t>, Cell> cells;
  for (const AccuracyRecord& rec : r.records) {
    Cell& c = cells[{static_cast<int>(rec.dist), rec.k, static_cast<int>(rec.mode), rec.m != 0 ? rec.m : r.m,
                     rec.n != 0 ? rec.n : r.n}];
    c.lt_fp32_bias = rec.lt_fp32_scale_bias;
    c.lt_fp32_bias_known = rec.lt_fp32_rel_err > 0;
    if (is_lt(rec)) {
      c.lt = rec.rel_err;
      continue;
    }
    ++c.variants;
    if (std::fabs(rec.scale_bias) > std::fabs(c.worst_bias)) c.worst_bias = rec.scale_bias;
    c.best = std::min(c.best, rec.rel_err);
    if (rec.rel_err > c.worst || std::isinf(rec.rel_err)) c.worst = rec.rel_err;
    c.worst_ratio = std::max(c.worst_ratio, rec.ratio_to_lt_fp32());
  }
  char line[256];
  std::snprintf(line, sizeof(line), "%-8s %6s %-7s %12s %4s %12s %12s %14s %12s %12s  %s\n", "dist", "k", "mode",
                "cuBLASLt", "own", "own best", "own worst", "worst/Lt fp32", "Lt fp32 bias", "own bias", "m x n");
  out << "relative Frobenius error vs fp64 (own: our variants and cuBLASLt on padded copies, +pad); bias: the scale "
         "bias beta of Y = (1 + beta) Y_fp64, own: the largest in magnitude\n"
      << line;
  for (const auto& [key, c] : cells) {
    const auto& [dist, k, mode, m, n] = key;
    std::snprintf(line, sizeof(line), "%-8s %6lld %-7s %12s %4d %12s %12s %14s %12s %12s  %lldx%lld\n",
                  to_string(static_cast<InputDistribution>(dist)), static_cast<long long>(k),
                  to_string(static_cast<MathMode>(mode)), c.lt < 0 ? "-" : sci(c.lt).c_str(), c.variants,
                  c.variants ? sci(c.best).c_str() : "-", c.variants ? sci(c.worst).c_str() : "-",
                  c.variants ? formatted("%.2f", c.worst_ratio).c_str() : "-",
                  c.lt_fp32_bias_known ? formatted("%+.2e", c.lt_fp32_bias).c_str() : "-",
                  c.variants ? formatted("%+.2e", c.worst_bias).c_str() : "-", static_cast<long long>(m),
                  static_cast<long long>(n));
    out << line;
  }
  for (const AccuracySkip& s : r.skipped)
    out << "skipped " << to_string(s.mode) << " " << s.candidate << " at k=" << s.k << ": " << s.reason << "\n";
}

}  // namespace gemmtune
