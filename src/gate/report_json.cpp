#include <nlohmann/json.hpp>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

nlohmann::json timing_json(const CaseTiming& t) {
  nlohmann::json j = {{"key", t.key},       {"candidate", t.candidate.id()}, {"median_us", t.median_us},
                      {"p10_us", t.p10_us}, {"p90_us", t.p90_us},            {"samples", t.samples},
                      {"sm_clock_mhz", t.sm_clock_mhz}, {"fp32_equivalent", t.fp32_equivalent}};
  if (t.run_to_run_pct > 0) j["run_to_run_pct"] = t.run_to_run_pct;
  return j;
}

nlohmann::json comparison_json(const CaseComparison& c) {
  return {{"key", c.key},
          {"verdict", to_string(c.verdict)},
          {"within_noise", c.within_noise},
          {"throttled", c.throttled},
          {"threshold_pct", c.threshold_pct},
          {"within_run_to_run", c.within_run_to_run},
          {"ratio", c.ratio},
          {"baseline", timing_json(c.baseline)},
          {"current", timing_json(c.current)}};
}

// A case also says whether it needed more than its own evidence (gate.hpp, rule 4) and what backed it.
nlohmann::json case_json(const CaseComparison& c) {
  nlohmann::json j = comparison_json(c);
  j["picked"] = c.picked;
  j["family"] = {{"name", c.family}, {"cases", c.family_cases}, {"slower", c.family_slower}};
  j["isolated"] = c.isolated;
  return j;
}

nlohmann::json run_json(const SweepResults& s) {
  return {{"source", s.source}, {"profile", s.profile}, {"gemmtune_version", s.gemmtune_version}};
}

}  // namespace

nlohmann::json gate_json(const GateResult& r) {
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemComparison& p : r.problems)
    problems.push_back({{"problem_key", p.problem_key},
                        {"verdict", to_string(p.verdict())},
                        {"best", comparison_json(p.best)},
                        {"chosen", comparison_json(p.chosen)}});
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& c : r.cases) cases.push_back(case_json(c));
  nlohmann::json missing = nlohmann::json::array();
  for (const MissingCase& m : r.missing) missing.push_back({{"key", m.key}, {"why", m.why}});
  nlohmann::json new_cases = nlohmann::json::array();
  for (const NewCase& n : r.new_cases) new_cases.push_back({{"key", n.key}, {"why", n.why}});
  return {{"schema", "gemmtune.gate"},
          {"schema_version", 2},
          {"outcome", to_string(r.outcome())},
          {"exit_code", r.exit_code()},
          {"device_key", r.device_key},
          {"threshold_pct", r.options.threshold_pct},
          {"lone_threshold_pct", r.options.lone_threshold_pct},
          {"allow_missing", r.options.allow_missing},
          {"per_problem", r.options.per_problem},
          {"rule", gate_rule_text(r.options)},
          {"baseline", run_json(r.baseline_info)},
          {"current", run_json(r.current_info)},
          {"regressed_problems", r.count_problems(Verdict::Regressed)},
          {"improved_problems", r.count_problems(Verdict::Improved)},
          {"regressed", r.count(Verdict::Regressed)},
          {"improved", r.count(Verdict::Improved)},
          {"within_run_to_run", r.count_within_run_to_run()},
          {"isolated", r.count_isolated()},
          {"problems", std::move(problems)},
          {"cases", std::move(cases)},
          {"missing", std::move(missing)},
          {"new", std::move(new_cases)},
          {"new_problems", r.new_problems},
          {"not_in_profile", r.not_in_profile}};
}

}  // namespace gemmtune
