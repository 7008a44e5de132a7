#include "profiler/ncu_nvtx_stack.hpp"

#include <algorithm>

#include "nvtx/nvtx_range.hpp"

namespace gemmtune {
namespace {

// The five fields between the range and its repeated message hold no ':' of their own: six separators.
constexpr std::size_t kSeparatorsBetween = 6;

std::optional<NvtxStackEntry> parse_entry(const std::string& entry) {
  const std::size_t domain_end = entry.find(':');
  if (domain_end == std::string::npos) return std::nullopt;
  const std::string rest = entry.substr(domain_end + 1);
  // rest = N + ":" + 5 fields + ":" + N: 2·c + 6 colons when N holds c of them.
  const auto colons = static_cast<std::size_t>(std::count(rest.begin(), rest.end(), ':'));
  if (colons < kSeparatorsBetween || (colons - kSeparatorsBetween) % 2 != 0) return std::nullopt;
  const std::size_t colons_in_name = (colons - kSeparatorsBetween) / 2;
  std::size_t name_end = rest.find(':');
  for (std::size_t i = 0; i < colons_in_name; ++i) name_end = rest.find(':', name_end + 1);
  const std::string name = rest.substr(0, name_end);
  if (rest.size() < name.size() || rest.compare(rest.size() - name.size(), name.size(), name) != 0) return std::nullopt;
  return NvtxStackEntry{entry.substr(0, domain_end), name};
}

}  // namespace

std::vector<NvtxStackEntry> parse_ncu_nvtx_stack(const std::string& cell) {
  std::vector<NvtxStackEntry> stack;
  std::size_t open = cell.find('"');
  while (open != std::string::npos) {
    const std::size_t close = cell.find('"', open + 1);
    if (close == std::string::npos) break;
    if (auto entry = parse_entry(cell.substr(open + 1, close - open - 1))) stack.push_back(std::move(*entry));
    open = cell.find('"', close + 1);
  }
  return stack;
}

std::optional<CaseRangeParts> case_of_kernel(const std::string& push_pop_cell) {
  const std::vector<NvtxStackEntry> stack = parse_ncu_nvtx_stack(push_pop_cell);
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if (it->domain != kNvtxDomain) continue;
    if (auto parts = parse_nvtx_case_range(it->range)) return parts;
  }
  return std::nullopt;
}

}  // namespace gemmtune
