#include "support/sweep_fixture.hpp"

#include "profile/sweep_profile.hpp"
#include "support/tuning_fixtures.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_keys.hpp"

namespace gemmtune::test {

nlohmann::json sweep_document(int cases, const std::string& profile, const std::string& gpu_name) {
  const DeviceIdentity device = test_device(gpu_name);
  nlohmann::json results = nlohmann::json::array();
  for (int i = 0; i < cases; ++i) {
    // Two candidates per problem, as a sweep has several per problem.
    const GemmProblem p = test_problem(256 << (i / 2 % 5), 512, 128 * (i / 10 + 1));
    MeasurementRecord r = lt_record(p, 10 + i % 2, 20.0 + 3.5 * i);
    r.device_key = device.key();
    results.push_back(r);
  }
  return {{"schema", "gemmtune.sweep"}, {"schema_version", 1},         {"gemmtune_version", "0.1.0-test"},
          {"device", device},          {"profile", profile},          {"results", std::move(results)}};
}

void scale_result(nlohmann::json& doc, std::size_t index, double factor) {
  nlohmann::json& r = doc["results"][index];
  for (const char* field : {"median_us", "p10_us", "p90_us", "mean_us", "min_us", "max_us"})
    r[field] = r[field].get<double>() * factor;
}

void scale_all_results(nlohmann::json& doc, double factor) {
  for (std::size_t i = 0; i < doc["results"].size(); ++i) scale_result(doc, i, factor);
}

nlohmann::json sweep_document_for_plan(const PlannedKeys& plan, bool device_dependent) {
  const DeviceIdentity device = test_device();
  nlohmann::json results = nlohmann::json::array();
  double median = 10;
  const auto add = [&](MeasurementRecord r) {
    r.device_key = device.key();
    results.push_back(r);
    median *= 1.01;
  };
  const auto variant = [](const std::string& id) { return Candidate::parse_id(id).own_variant; };
  for (const PlannedProblemKeys& pp : plan.problems) {
    const GemmProblem problem = GemmProblem::parse_key(pp.problem_key);
    for (const std::string& id : pp.own_candidates) add(own_record(problem, variant(id), median));
    if (device_dependent)
      for (const DeviceDependentCandidate& d : pp.own_device_dependent) add(own_record(problem, variant(d.id), median));
    for (const int algo : {20, 21}) add(lt_record(problem, algo, median));  // heuristic ranks 0 and 1
  }
  return {{"schema", "gemmtune.sweep"}, {"schema_version", 1},  {"gemmtune_version", "0.1.0-test"},
          {"device", device},          {"profile", plan.profile}, {"results", std::move(results)}};
}

PlannedKeys source_tree_plan_keys(const std::string& profile_name) {
  const SweepProfile profile = load_sweep_profile(profile_name, std::string(GEMMTUNE_SOURCE_DIR) + "/profiles");
  return planned_keys(make_sweep_plan(profile, {}, {}), profile.lt.workspace_bytes);
}

std::string result_key(const nlohmann::json& doc, std::size_t index) {
  return doc["results"][index]["key"].get<std::string>();
}

}  // namespace gemmtune::test
