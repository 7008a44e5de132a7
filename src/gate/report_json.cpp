#include <nlohmann/json.hpp>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

nlohmann::json timing_json(const CaseTiming& t) {
  return {{"median_us", t.median_us}, {"p10_us", t.p10_us},   {"p90_us", t.p90_us},
          {"samples", t.samples},     {"fp32_equivalent", t.fp32_equivalent}};
}

nlohmann::json run_json(const SweepResults& s) {
  return {{"source", s.source}, {"profile", s.profile}, {"gemmtune_version", s.gemmtune_version}};
}

}  // namespace

nlohmann::json gate_json(const GateResult& r) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& c : r.cases)
    cases.push_back({{"key", c.key},
                     {"verdict", to_string(c.verdict)},
                     {"within_noise", c.within_noise},
                     {"throttled", c.throttled},
                     {"ratio", c.ratio},
                     {"baseline", timing_json(c.baseline)},
                     {"current", timing_json(c.current)}});
  nlohmann::json missing = nlohmann::json::array();
  for (const MissingCase& m : r.missing) missing.push_back({{"key", m.key}, {"why", m.why}});
  return {{"schema", "gemmtune.gate"},
          {"schema_version", 1},
          {"outcome", to_string(r.outcome())},
          {"exit_code", r.exit_code()},
          {"device_key", r.device_key},
          {"threshold_pct", r.options.threshold_pct},
          {"allow_missing", r.options.allow_missing},
          {"rule", gate_rule_text(r.options)},
          {"baseline", run_json(r.baseline_info)},
          {"current", run_json(r.current_info)},
          {"regressed", r.count(Verdict::Regressed)},
          {"improved", r.count(Verdict::Improved)},
          {"cases", std::move(cases)},
          {"missing", std::move(missing)},
          {"not_in_profile", r.not_in_profile}};
}

}  // namespace gemmtune
