// The report of `gemmtune apply --report FILE`: per distinct call, how often it came, how often gemmtune ran it and
// with which candidate, and why the rest went to the library. Each process of the program writes its own part
// (<GEMMTUNE_APPLY_REPORT_DIR>/<pid>.apply.json, at exit); the CLI merges the parts into FILE.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gemmtune::apply {

inline constexpr const char* kReportPartSuffix = ".apply.json";

struct ReportRow {
  std::string api;        // the entry point: "cublasSgemm_v2", "cublasLtMatmul"
  std::string problem;    // the problem key where the call is one, else its shape in the library's terms
  std::uint64_t calls = 0;
  std::uint64_t routed_calls = 0;
  std::string candidate;  // what ran the routed calls ("own/...", "lt/...")
  std::string reason;     // why calls passed through; empty when every call was routed
};

// Rows of the same api, problem, candidate and reason become one, their calls added; the busiest first. Rows of no
// call are left out.
std::vector<ReportRow> merge_rows(const std::vector<ReportRow>& rows);

// {"calls", "routed_calls", "routed_share", "rows": [...]}: routed_share is routed_calls / calls (0 when no call).
nlohmann::json report_json(const std::vector<ReportRow>& rows);
// The rows of a report (or of one process's part) read from `source`; throws InputError naming the source and the
// field when j is not one.
std::vector<ReportRow> report_rows(const nlohmann::json& j, const std::string& source);

// Every part in dir, merged. A part that cannot be read throws InputError naming it; given `skipped`, it is left out
// instead, with a line naming it and why in *skipped.
std::vector<ReportRow> read_report_parts(const std::string& dir, std::vector<std::string>* skipped = nullptr);

}  // namespace gemmtune::apply
