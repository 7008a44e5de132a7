#include "apply/apply_settings.hpp"

#include <cstring>

namespace gemmtune::apply {
namespace {

bool flag(const char* value) { return value && std::strcmp(value, "1") == 0; }

std::string text(const char* value) { return value ? value : ""; }

const char* flag_text(bool on) { return on ? "1" : "0"; }

}  // namespace

ApplySettings read_apply_settings(const std::function<const char*(const char*)>& lookup) {
  ApplySettings s;
  s.on = flag(lookup(kApplyEnv));
  s.db = text(lookup(kDbEnv));
  s.options.fp32_equivalent = flag(lookup(kFp32EquivalentEnv));
  s.options.host_yield = !flag(lookup(kNoHostYieldEnv));
  s.record = flag(lookup(kRecordEnv));
  s.report_dir = text(lookup(kReportDirEnv));
  // A cap the program's launcher set and we cannot read must not be dropped: nothing is routed instead.
  const std::string memory = text(lookup(kMemoryEnv));
  if (!memory.empty()) {
    if (const std::optional<std::size_t> mib = parse_memory_mib(memory))
      s.memory_mib = *mib;
    else
      s.error = std::string(kMemoryEnv) + "='" + memory + "' is not a whole number of MiB";
  }
  return s;
}

std::optional<std::size_t> parse_memory_mib(const std::string& text) {
  // At most 9 digits: up to a PiB, and the byte count cannot overflow.
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return static_cast<std::size_t>(std::stoull(text));
}

std::vector<std::string> apply_environment(const ApplySettings& s) {
  return {std::string(kApplyEnv) + "=" + flag_text(s.on),
          std::string(kDbEnv) + "=" + s.db,
          std::string(kFp32EquivalentEnv) + "=" + flag_text(s.options.fp32_equivalent),
          std::string(kNoHostYieldEnv) + "=" + flag_text(!s.options.host_yield),
          std::string(kRecordEnv) + "=" + flag_text(s.record),
          std::string(kReportDirEnv) + "=" + s.report_dir,
          std::string(kMemoryEnv) + "=" + std::to_string(s.memory_mib)};
}

}  // namespace gemmtune::apply
