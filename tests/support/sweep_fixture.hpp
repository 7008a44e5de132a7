// Made-up `gemmtune sweep --json` documents for the gate tests, built from real MeasurementRecord and
// DeviceIdentity json so they have exactly the sweep's format. Every case has tight statistics
// (p10 = 0.98·median, p90 = 1.03·median) unless a test widens them.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace gemmtune::test {

nlohmann::json sweep_document(int cases, const std::string& profile = "ci",
                              const std::string& gpu_name = "NVIDIA Test GPU");
// Multiplies every timing of result `index` (median, p10, p90, ...) by factor.
void scale_result(nlohmann::json& doc, std::size_t index, double factor);
void scale_all_results(nlohmann::json& doc, double factor);
std::string result_key(const nlohmann::json& doc, std::size_t index);

}  // namespace gemmtune::test
