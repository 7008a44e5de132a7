#include "profiler/ncu_command.hpp"

#include "common/error.hpp"
#include "nvtx/case_range.hpp"
#include "profiler/file_name.hpp"
#include "profiler/ncu_import.hpp"

namespace gemmtune {
namespace {

std::string join(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace

const char* to_string(NcuCacheControl c) { return c == NcuCacheControl::None ? "none" : "all"; }

NcuCacheControl parse_ncu_cache_control(const std::string& text) {
  if (text == "none") return NcuCacheControl::None;
  if (text == "all") return NcuCacheControl::All;
  throw InputError("unknown cache control '" + text + "' (expected none or all)");
}

std::vector<std::string> ncu_profile_argv(const GemmProblem& p, const Candidate& c, const NcuCommandOptions& o,
                                          const std::vector<std::string>& target_argv) {
  if (o.profiled_calls < 1) throw InputError("ncu needs at least one profiled call");
  if (o.export_path.empty()) throw InputError("ncu needs a report path to export to");
  // Clocks stay as the GPU runs them (DEVICE.md: always --clock-control none here), so ncu's durations compare
  // with the sweep's.
  std::vector<std::string> argv = {o.ncu,
                                   "--clock-control", "none",
                                   "--cache-control", to_string(o.cache_control),
                                   "--nvtx",
                                   "--nvtx-include", ncu_nvtx_include(p, c),
                                   "--launch-count", std::to_string(o.profiled_calls * kMaxKernelsPerCall)};
  if (!o.kernel_regex.empty()) {
    argv.insert(argv.end(), {"--kernel-name-base", "demangled", "--kernel-name", "regex:" + o.kernel_regex});
  }
  if (!o.sections.ncu_set.empty()) argv.insert(argv.end(), {"--set", o.sections.ncu_set});
  for (const std::string& section : o.sections.sections) argv.insert(argv.end(), {"--section", section});
  std::vector<std::string> metrics = ncu_import_metrics();
  metrics.insert(metrics.end(), o.sections.metrics.begin(), o.sections.metrics.end());
  argv.insert(argv.end(), {"--metrics", join(metrics, ','), "--export", o.export_path, "--force-overwrite"});
  argv.insert(argv.end(), target_argv.begin(), target_argv.end());
  return argv;
}

std::string ncu_report_stem(const GemmProblem& p, const Candidate& c, NcuCacheControl cache_control) {
  return file_safe_name(p.key()) + "__" + file_safe_name(c.id()) + "__cc-" + to_string(cache_control);
}

std::string cache_control_of_report(const std::string& report_path) {
  for (const char* cc : {"none", "all"})
    if (report_path.find(std::string("__cc-") + cc + ".") != std::string::npos) return cc;
  return "unknown";
}

std::vector<std::string> ncu_import_argv(const std::string& ncu, const std::string& report_path) {
  return {ncu, "--import", report_path, "--csv", "--page", "raw", "--print-units", "base"};
}

}  // namespace gemmtune
