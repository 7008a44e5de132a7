#include "apply/apply_report.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace gemmtune::apply {

std::vector<ReportRow> merge_rows(const std::vector<ReportRow>& rows) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ReportRow> merged;
  for (const ReportRow& r : rows) {
    if (r.calls == 0) continue;  // an outcome decided but never counted (a signature routed whose calls went elsewhere)
    ReportRow& m = merged[{r.api, r.problem, r.candidate, r.reason}];
    if (m.calls == 0 && m.routed_calls == 0) m = ReportRow{r.api, r.problem, 0, 0, r.candidate, r.reason};
    m.calls += r.calls;
    m.routed_calls += r.routed_calls;
  }
  std::vector<ReportRow> out;
  for (auto& [key, row] : merged) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const ReportRow& a, const ReportRow& b) { return a.calls > b.calls; });
  return out;
}

nlohmann::json report_json(const std::vector<ReportRow>& rows) {
  std::uint64_t calls = 0, routed = 0;
  nlohmann::json list = nlohmann::json::array();
  for (const ReportRow& r : rows) {
    calls += r.calls;
    routed += r.routed_calls;
    list.push_back({{"api", r.api},
                    {"problem", r.problem},
                    {"calls", r.calls},
                    {"routed_calls", r.routed_calls},
                    {"candidate", r.candidate},
                    {"reason", r.reason}});
  }
  const double share = calls == 0 ? 0.0 : static_cast<double>(routed) / static_cast<double>(calls);
  return {{"calls", calls}, {"routed_calls", routed}, {"routed_share", share}, {"rows", list}};
}

std::vector<ReportRow> report_rows(const nlohmann::json& j, const std::string& source) {
  const JsonFields f(j, source);
  std::vector<ReportRow> rows;
  for (const JsonFields& r : f.objects("rows")) {
    ReportRow row;
    row.api = r.string("api");
    row.problem = r.string("problem");
    const std::int64_t calls = r.integer("calls"), routed = r.integer("routed_calls");
    if (calls < 0 || routed < 0 || routed > calls) r.fail("routed_calls", "must be between 0 and calls");
    row.calls = static_cast<std::uint64_t>(calls);
    row.routed_calls = static_cast<std::uint64_t>(routed);
    row.candidate = r.string("candidate");
    row.reason = r.string("reason");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ReportRow> read_report_parts(const std::string& dir, std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::vector<fs::path> parts;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = kReportPartSuffix;
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      parts.push_back(e.path());
  }
  if (ec) throw InputError("cannot read the apply report parts in '" + dir + "': " + ec.message());
  std::sort(parts.begin(), parts.end());
  std::vector<ReportRow> rows;
  for (const fs::path& p : parts) {
    try {
      const std::vector<ReportRow> part = report_rows(read_json_file(p.string()), p.string());
      rows.insert(rows.end(), part.begin(), part.end());
    } catch (const InputError& e) {
      if (!skipped) throw;
      skipped->push_back(e.what());
    }
  }
  return merge_rows(rows);
}

}  // namespace gemmtune::apply
