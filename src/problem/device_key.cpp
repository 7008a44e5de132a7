#include "problem/device_key.hpp"

#include <cstdio>
#include <limits>
#include <vector>

#include "common/error.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kFields = 5;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The key as an error message may show it: unprintable and non-ASCII bytes as \xNN, so a damaged key cannot garble
// the terminal or the CI log that prints the message.
std::string printable(const std::string& key) {
  std::string out;
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

std::vector<std::string> split_fields(const std::string& key) {
  std::vector<std::string> fields(1);
  for (char c : key) {
    if (c == '|')
      fields.emplace_back();
    else
      fields.back() += c;
  }
  return fields;
}

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
  throw InputError("device key '" + printable(key) + "': " + why);
}

// A decimal number as gemmtune writes one: digits only, no leading zero, at most `max`. False otherwise.
bool parse_number(const std::string& text, unsigned long long max, unsigned long long* value) {
  if (text.empty() || text.size() > 20 || (text[0] == '0' && text.size() > 1)) return false;
  unsigned long long v = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    const auto digit = static_cast<unsigned long long>(c - '0');
    if (v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

// The field after its fixed prefix or before its fixed suffix; false when the affix is not there.
bool strip(const std::string& field, const std::string& prefix, const std::string& suffix, std::string* rest) {
  if (field.size() < prefix.size() + suffix.size() || field.compare(0, prefix.size(), prefix) != 0 ||
      field.compare(field.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  *rest = field.substr(prefix.size(), field.size() - prefix.size() - suffix.size());
  return true;
}

}  // namespace

std::string format_device_key(const DeviceIdentity& d) {
  return d.gpu_name + "|sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor) + "|" +
         std::to_string(d.sm_count) + "sm|drv" + d.driver + "|lt" + std::to_string(d.cublaslt_version);
}

bool is_driver_version(const std::string& text) {
  int numbers = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == start) return false;
    ++numbers;
    if (i == text.size()) break;
    if (text[i] != '.' || ++i == text.size()) return false;
  }
  return numbers == 2 || numbers == 3;
}

DeviceIdentity parse_device_key(const std::string& key) {
  const std::vector<std::string> fields = split_fields(key);
  if (fields.size() != kFields)
    refuse(key, "expected <GPU name>|sm_<major><minor>|<SMs>sm|drv<driver>|lt<cuBLASLt version> (" +
                  std::to_string(kFields) + " fields separated by '|'), got " + std::to_string(fields.size()));

  DeviceIdentity d;
  d.gpu_name = fields[0];
  if (d.gpu_name.empty()) refuse(key, "the GPU name is empty");
  if (d.gpu_name.size() > kMaxGpuNameBytes)
    refuse(key, "the GPU name is longer than a driver's (" + std::to_string(kMaxGpuNameBytes) + " bytes)");
  for (char c : d.gpu_name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) refuse(key, "the GPU name has a byte a driver's name never has (not printable ASCII)");
  }

  std::string cc;
  unsigned long long cc_value = 0;
  if (!strip(fields[1], "sm_", "", &cc) || cc.size() < 2 || !parse_number(cc, 999, &cc_value))
    refuse(key, "'" + printable(fields[1]) + "' is not sm_<major><minor> (e.g. sm_90)");
  d.cc_major = static_cast<int>(cc_value / 10);
  d.cc_minor = static_cast<int>(cc_value % 10);
  if (d.cc_major < kMinComputeCapabilityMajor)
    refuse(key, "compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                  " is below " + std::to_string(kMinComputeCapabilityMajor) + ".0, which gemmtune needs");

  std::string sms;
  unsigned long long sm_value = 0;
  if (!strip(fields[2], "", "sm", &sms) ||
      !parse_number(sms, static_cast<unsigned long long>(std::numeric_limits<int>::max()), &sm_value) || sm_value == 0)
    refuse(key, "'" + printable(fields[2]) + "' is not <SM count>sm (e.g. 132sm)");
  d.sm_count = static_cast<int>(sm_value);

  if (!strip(fields[3], "drv", "", &d.driver) || (d.driver != kUnknownDriver && !is_driver_version(d.driver)))
    refuse(key, "'" + printable(fields[3]) + "' is not drv<driver version> (e.g. drv580.159.04, or drv" +
                  kUnknownDriver + ")");

  std::string lt;
  unsigned long long lt_value = 0;
  if (!strip(fields[4], "lt", "", &lt) ||
      !parse_number(lt, static_cast<unsigned long long>(std::numeric_limits<std::size_t>::max()), &lt_value) ||
      lt_value == 0)
    refuse(key, "'" + printable(fields[4]) + "' is not lt<cuBLASLt version> (e.g. lt130100)");
  d.cublaslt_version = static_cast<std::size_t>(lt_value);

  // Every field above was checked to print as it was read; this guards the whole against a rule that missed a case.
  if (format_device_key(d) != key) refuse(key, "not written as gemmtune writes it ('" + format_device_key(d) + "')");
  return d;
}

}  // namespace gemmtune
