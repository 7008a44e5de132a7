#include "support/sweep_fixture.hpp"

#include "support/tuning_fixtures.hpp"

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

std::string result_key(const nlohmann::json& doc, std::size_t index) {
  return doc["results"][index]["key"].get<std::string>();
}

}  // namespace gemmtune::test
