// Made-up `gemmtune sweep --json` documents for the gate tests, built from real MeasurementRecord and
// DeviceIdentity json so they have exactly the sweep's format. Every case has tight statistics
// (p10 = 0.98·median, p90 = 1.03·median) unless a test widens them.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "gate/baseline_check.hpp"

namespace gemmtune::test {

nlohmann::json sweep_document(int cases, const std::string& profile = "ci",
                              const std::string& gpu_name = "NVIDIA Test GPU");
// Multiplies every timing of result `index` (median, p10, p90, ...) by factor.
void scale_result(nlohmann::json& doc, std::size_t index, double factor);
void scale_all_results(nlohmann::json& doc, double factor);
std::string result_key(const nlohmann::json& doc, std::size_t index);
// What a sweep of a plan would write on a GPU: per planned problem one ok record per planned own candidate (with
// device_dependent, also per candidate of a family this machine cannot run: what an sm_90 GPU would plan) and two
// cuBLASLt records (heuristic ranks 0 and 1), with made-up timings. The profile is the plan's.
nlohmann::json sweep_document_for_plan(const PlannedKeys& plan, bool device_dependent = true);
// profiles/<name>.json of the source tree, planned as `sweep --profile NAME` plans it, as record keys.
PlannedKeys source_tree_plan_keys(const std::string& profile_name);

}  // namespace gemmtune::test
