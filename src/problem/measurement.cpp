#include "problem/measurement.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "problem/device_key.hpp"

namespace gemmtune {

const char* to_string(MeasureStatus s) {
  switch (s) {
    case MeasureStatus::Ok: return "ok";
    case MeasureStatus::VerifyFailed: return "verify_failed";
    case MeasureStatus::Unsupported: return "unsupported";
    case MeasureStatus::Error: return "error";
  }
  return "?";
}

MeasureStatus parse_measure_status(const std::string& s) {
  for (MeasureStatus st : {MeasureStatus::Ok, MeasureStatus::VerifyFailed, MeasureStatus::Unsupported, MeasureStatus::Error})
    if (s == to_string(st)) return st;
  throw InputError("unknown measurement status '" + s + "'");
}

std::string DeviceIdentity::key() const { return format_device_key(*this); }

std::string DeviceIdentity::slug() const {
  std::string out;
  for (char c : gpu_name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-gpu" : out;
}

void to_json(nlohmann::json& j, const TimingStats& s) {
  j = nlohmann::json{{"median_us", s.median_us}, {"p10_us", s.p10_us},   {"p90_us", s.p90_us},
                     {"mean_us", s.mean_us},     {"stddev_us", s.stddev_us}, {"min_us", s.min_us},
                     {"max_us", s.max_us},       {"samples", s.samples}, {"timer", s.timer},
                     {"sm_clock_mhz", s.sm_clock_mhz}, {"events_per_call_us", s.events_per_call_us},
                     {"stopped_by", s.stopped_by}};
}

void from_json(const nlohmann::json& j, TimingStats& s) {
  s.median_us = j.at("median_us").get<double>();
  s.p10_us = j.value("p10_us", s.median_us);
  s.p90_us = j.value("p90_us", s.median_us);
  s.mean_us = j.value("mean_us", s.median_us);
  s.stddev_us = j.value("stddev_us", 0.0);
  s.min_us = j.value("min_us", s.p10_us);
  s.max_us = j.value("max_us", s.p90_us);
  s.samples = j.value("samples", 0);
  s.timer = j.value("timer", std::string());
  s.sm_clock_mhz = j.value("sm_clock_mhz", 0.0);
  s.events_per_call_us = j.value("events_per_call_us", 0.0);
  s.stopped_by = j.value("stopped_by", std::string());
}

void to_json(nlohmann::json& j, const MeasurementRecord& r) {
  j = nlohmann::json{{"key", r.key()},
                     {"device_key", r.device_key},
                     {"problem_key", r.problem.key()},
                     {"problem", r.problem},
                     {"candidate", r.candidate},
                     {"status", to_string(r.status)},
                     {"message", r.message},
                     {"verify_error", r.verify_error},
                     {"tolerance", r.tolerance},
                     {"fp32_equivalent", r.fp32_equivalent},
                     {"tflops", r.tflops()}};
  nlohmann::json stats = r.stats;
  j.update(stats);  // statistics sit at the top level of a record: median_us, p10_us, ... (what the gate reads)
}

void from_json(const nlohmann::json& j, MeasurementRecord& r) {
  r.device_key = j.value("device_key", std::string());
  if (!j.contains("problem_key") || !j["problem_key"].is_string())
    throw InputError("measurement record has no string field 'problem_key'");
  r.problem = GemmProblem::parse_key(j["problem_key"].get<std::string>());
  r.candidate = j.at("candidate").get<Candidate>();
  r.status = parse_measure_status(j.value("status", std::string("ok")));
  r.message = j.value("message", std::string());
  r.verify_error = j.value("verify_error", -1.0);
  r.tolerance = j.value("tolerance", 0.0);
  r.fp32_equivalent = j.value("fp32_equivalent", false);  // absent in records of builds before the policy
  r.stats = j.get<TimingStats>();
}

void to_json(nlohmann::json& j, const DeviceIdentity& d) {
  j = nlohmann::json{{"key", d.key()},           {"name", d.gpu_name}, {"cc_major", d.cc_major},
                     {"cc_minor", d.cc_minor},   {"sm_count", d.sm_count}, {"driver", d.driver},
                     {"cuda_runtime", d.cuda_runtime}, {"cublaslt_version", d.cublaslt_version}};
}

void from_json(const nlohmann::json& j, DeviceIdentity& d) {
  d.gpu_name = j.at("name").get<std::string>();
  d.cc_major = j.at("cc_major").get<int>();
  d.cc_minor = j.at("cc_minor").get<int>();
  d.sm_count = j.at("sm_count").get<int>();
  d.driver = j.at("driver").get<std::string>();
  d.cuda_runtime = j.value("cuda_runtime", 0);
  d.cublaslt_version = j.value("cublaslt_version", std::size_t{0});
}

}  // namespace gemmtune
