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
  s.record = flag(lookup(kRecordEnv));
  s.report_dir = text(lookup(kReportDirEnv));
  return s;
}

std::vector<std::string> apply_environment(const ApplySettings& s) {
  return {std::string(kApplyEnv) + "=" + flag_text(s.on),
          std::string(kDbEnv) + "=" + s.db,
          std::string(kFp32EquivalentEnv) + "=" + flag_text(s.options.fp32_equivalent),
          std::string(kRecordEnv) + "=" + flag_text(s.record),
          std::string(kReportDirEnv) + "=" + s.report_dir};
}

}  // namespace gemmtune::apply
