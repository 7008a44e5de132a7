// The NVTX push/pop stack ncu records with each kernel, as its raw page prints it in the column
// "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg":
//     <thread id>  "<domain>:<range>:<payload type>:<payload>:<color type>:<color>:<message type>:<message>"  ...
// one quoted entry per open range, outermost first. The range name appears twice (as the range and as its
// message) and may itself hold ':' (problem keys do), so an entry is split by that symmetry, not by position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nvtx/case_range.hpp"

namespace gemmtune {

// The column's name in ncu 2025.3's raw page (checked on an H100).
inline constexpr const char* kNcuPushPopColumn =
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";

struct NvtxStackEntry {
  std::string domain;
  std::string range;
};

// Outermost first; entries that do not have the documented shape are left out.
std::vector<NvtxStackEntry> parse_ncu_nvtx_stack(const std::string& cell);

// The innermost range of the gemmtune domain that names a case; nullopt when the kernel ran outside every case.
std::optional<CaseRangeParts> case_of_kernel(const std::string& push_pop_cell);

}  // namespace gemmtune
