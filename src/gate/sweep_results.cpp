#include "gate/sweep_results.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "problem/device_key.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/validate.hpp"

namespace gemmtune {

SweepResults sweep_results_from_json(const nlohmann::json& doc, const std::string& source) {
  const JsonFields top(doc, source);
  const std::string schema = top.string("schema");
  if (schema != kSweepSchemaName)
    top.fail("schema", "'" + schema + "' is not a gemmtune sweep result (expected '" + kSweepSchemaName + "')");
  const std::int64_t version = top.integer("schema_version");
  if (version != kSweepSchemaVersion)
    top.fail("schema_version", std::to_string(version) + " is not supported (this build reads version " +
                                   std::to_string(kSweepSchemaVersion) + ")");
  SweepResults out;
  out.source = source;
  const JsonFields device = top.object("device");
  out.device_key = device.string("key");
  device.parse("key", [&] { return parse_device_key(out.device_key); });
  out.profile = top.string("profile");
  out.gemmtune_version = top.string("gemmtune_version");

  std::set<std::string> seen;
  for (const JsonFields& r : top.objects("results")) {
    validate_sweep_record(r);
    CaseTiming c;
    c.key = r.string("key");
    c.status = r.string("status");
    if (!seen.insert(c.key).second) r.fail("key", "'" + c.key + "' appears twice");
    const std::size_t slash = c.key.find('/');
    if (slash == std::string::npos) r.fail("key", "'" + c.key + "' is not <problem key>/<candidate id>");
    c.problem_key = c.key.substr(0, slash);
    c.problem_kind = GemmProblem::parse_key(c.problem_key).kind_key();  // validate_sweep_record parsed it already
    c.candidate = r.parse("key", [&] { return Candidate::parse_id(c.key.substr(slash + 1)); });
    // Which cuBLASLt answer was the heuristic's first choice decides the per-problem choice (candidate_choice.hpp).
    if (r.has("candidate") && r.object("candidate").has("heuristic_rank"))
      c.candidate.heuristic_rank = static_cast<int>(r.object("candidate").integer("heuristic_rank"));
    if (c.ok()) {
      c.median_us = r.number("median_us");
      c.p10_us = r.number("p10_us");
      c.p90_us = r.number("p90_us");
      c.samples = static_cast<int>(r.integer("samples"));
      if (r.has("sm_clock_mhz")) c.sm_clock_mhz = r.number("sm_clock_mhz");
      c.fp32_equivalent = r.has("fp32_equivalent") && r.boolean("fp32_equivalent");
      if (r.has("run_to_run")) {
        c.run_to_run_pct = r.object("run_to_run").number("spread_pct");
        if (!(c.run_to_run_pct >= 0)) r.object("run_to_run").fail("spread_pct", "must be >= 0");
      }
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

SweepResults read_sweep_results(const std::string& path) {
  return sweep_results_from_json(read_json_file(path), path);
}

}  // namespace gemmtune
