#include "nvtx/case_range.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "nvtx/nvtx_range.hpp"

namespace gemmtune {
namespace {

constexpr char kPartSeparator = '|';

void require_no_reserved(const std::string& text, const char* what) {
  if (text.find_first_of("|@") != std::string::npos)
    throw InputError(std::string(what) + " '" + text + "' contains '|' or '@', which NVTX case range names reserve");
}

}  // namespace

std::string nvtx_case_range(const GemmProblem& p, const Candidate& c) {
  const std::string key = p.key();
  std::string id = c.id();
  require_no_reserved(key, "problem key");
  require_no_reserved(id, "candidate id");
  std::replace(id.begin(), id.end(), '/', kPartSeparator);
  return key + kPartSeparator + id;
}

std::optional<CaseRangeParts> parse_nvtx_case_range(const std::string& range) {
  // <problem key>|<backend>|<rest of the candidate id>: exactly two separators, no '/' or '@' anywhere.
  const std::size_t first = range.find(kPartSeparator);
  if (first == std::string::npos || first == 0) return std::nullopt;
  const std::size_t second = range.find(kPartSeparator, first + 1);
  if (second == std::string::npos || second == first + 1 || second + 1 == range.size()) return std::nullopt;
  if (range.find(kPartSeparator, second + 1) != std::string::npos) return std::nullopt;
  if (range.find_first_of("/@") != std::string::npos) return std::nullopt;
  CaseRangeParts parts;
  parts.problem_key = range.substr(0, first);
  parts.candidate_id = range.substr(first + 1, second - first - 1) + "/" + range.substr(second + 1);
  return parts;
}

std::string ncu_nvtx_include(const GemmProblem& p, const Candidate& c) {
  return std::string(kNvtxDomain) + "@" + nvtx_case_range(p, c) + "/";
}

}  // namespace gemmtune
