#include "gate/baseline_runs.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "gate/sweep_results.hpp"

namespace gemmtune {
namespace {

void require_same(const std::string& what, const std::string& first, const BaselineRun& first_run,
                  const std::string& other, const BaselineRun& other_run) {
  if (first != other)
    throw InputError("cannot combine " + other_run.source + " with " + first_run.source + ": " + what + " '" + other +
                     "' is not '" + first + "' (a baseline's runs are of one build on one GPU, one profile)");
}

const nlohmann::json* find_record(const std::map<std::string, const nlohmann::json*>& by_key, const std::string& key) {
  const auto it = by_key.find(key);
  return it == by_key.end() ? nullptr : it->second;
}

}  // namespace

CombinedBaseline combine_baseline_runs(const std::vector<BaselineRun>& runs,
                                       const std::map<std::string, std::string>& notes) {
  if (runs.size() < 2)
    throw InputError("a baseline needs at least two sweeps recorded together to know its run-to-run spread (got " +
                     std::to_string(runs.size()) + ")");
  std::vector<SweepResults> parsed;
  for (const BaselineRun& run : runs) {
    parsed.push_back(sweep_results_from_json(run.document, run.source));
    if (run.document.contains("baseline"))
      throw InputError(run.source + " is already a combined baseline; combine the sweeps it was made of");
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    require_same("device key", parsed[0].device_key, runs[0], parsed[i].device_key, runs[i]);
    require_same("profile", parsed[0].profile, runs[0], parsed[i].profile, runs[i]);
    require_same("gemmtune version", parsed[0].gemmtune_version, runs[0], parsed[i].gemmtune_version, runs[i]);
  }

  // The documents are valid (parsed above), so every record is an object with a string key and status.
  std::vector<std::map<std::string, const nlohmann::json*>> by_key(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const nlohmann::json& r : runs[i].document.at("results")) by_key[i].emplace(r.at("key").get<std::string>(), &r);

  CombinedBaseline out;
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json dropped = nlohmann::json::array();
  const auto drop = [&](const std::string& key, const std::string& why) {
    dropped.push_back({{"key", key}, {"why", why}});
    ++out.dropped;
  };
  for (const nlohmann::json& first : runs[0].document.at("results")) {
    const std::string key = first.at("key").get<std::string>();
    const std::string status = first.at("status").get<std::string>();
    std::vector<const nlohmann::json*> records;
    std::string why;
    for (std::size_t i = 0; i < runs.size() && why.empty(); ++i) {
      const nlohmann::json* r = find_record(by_key[i], key);
      if (r == nullptr)
        why = "not in run " + std::to_string(i + 1) + " (" + runs[i].source + ")";
      else if (r->at("status").get<std::string>() != status)
        why = status + " in run 1, " + r->at("status").get<std::string>() + " in run " + std::to_string(i + 1);
      else
        records.push_back(r);
    }
    if (!why.empty()) {
      drop(key, why);
      continue;
    }
    if (status != "ok") {
      results.push_back(first);
      continue;
    }
    std::vector<double> medians;
    for (const nlohmann::json* r : records) medians.push_back(r->at("median_us").get<double>());
    std::vector<std::size_t> order(records.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });
    const std::size_t reference = order[(order.size() - 1) / 2];
    // Rounded up to 0.01%: a current run exactly like the slowest recorded one must pass, and in floating point
    // reference × (1 + spread/100) can round just below its median.
    const double spread_pct = std::ceil(1e4 * (medians[order.back()] / medians[order.front()] - 1.0)) / 100.0;
    nlohmann::json combined = *records[reference];
    combined["run_to_run"] = {{"runs", records.size()},
                              {"medians_us", medians},
                              {"reference_run", reference + 1},
                              {"spread_pct", spread_pct}};
    results.push_back(std::move(combined));
    ++out.cases;
    out.max_spread_pct = std::max(out.max_spread_pct, spread_pct);
  }
  for (std::size_t i = 1; i < runs.size(); ++i)
    for (const auto& [key, record] : by_key[i])
      if (find_record(by_key[0], key) == nullptr) drop(key, "not in run 1 (" + runs[0].source + ")");

  const nlohmann::json& device = runs[0].document.at("device");
  nlohmann::json recorded = {{"device", device.value("name", nlohmann::json())},
                             {"device_key", parsed[0].device_key},
                             {"driver", device.value("driver", nlohmann::json())},
                             {"cublaslt_version", device.value("cublaslt_version", nlohmann::json())},
                             {"cuda_runtime", device.value("cuda_runtime", nlohmann::json())},
                             {"gemmtune_version", parsed[0].gemmtune_version},
                             {"profile", parsed[0].profile}};
  for (const auto& [name, value] : notes) recorded[name] = value;
  nlohmann::json run_list = nlohmann::json::array();
  for (const BaselineRun& run : runs)
    run_list.push_back({{"source", run.source},
                        {"run_id", run.document.value("run_id", nlohmann::json())},
                        {"started_at", run.document.value("started_at", nlohmann::json())},
                        {"finished_at", run.document.value("finished_at", nlohmann::json())}});

  out.document = runs[0].document;
  out.document.erase("problems");
  out.document["results"] = std::move(results);
  out.document["baseline"] = {{"schema", kBaselineSchemaName},
                              {"schema_version", kBaselineSchemaVersion},
                              {"recorded", std::move(recorded)},
                              {"runs", std::move(run_list)},
                              {"dropped", std::move(dropped)}};
  return out;
}

}  // namespace gemmtune
