// The NVTX range name of one timed case (problem × candidate), and the ncu filter that selects exactly that range.
//
// Scheme (the one place it is defined): in NVTX domain "gemmtune", the push/pop range
//     <problem key>|<candidate id, its '/' written as '|'>
// e.g. fwd:1024x1024x1024:nn:row:bias+gelu:tf32|lt|a21-t18-s8-k1-r0-w0-c0-cl0-i0
//      fwd:1024x1024x1024:nn:row:none:tf32|own|tf32_128x128x32_w64x64_s3
//
// Why not the first design's "gemmtune/<problem>/<candidate>" (docs/design.md): ncu's --nvtx-include reads '@' as the
// end of the domain name and '/' as the boundary between nested push/pop ranges, so a name with '/' in it can never
// be matched as one range.
// The domain takes the place of the "gemmtune/" prefix, and '|' (which neither a problem key nor a candidate id may
// contain) separates the parts, so a name splits back into its problem key and candidate id without ambiguity.
//
// The matching ncu filter is "gemmtune@<range>/": the trailing '/' selects push/pop ranges, and a non-regex range
// name is compared whole, so it matches that case and no other, even one whose name it prefixes
// ("...-i0" against "...-i0+epi"). Kernels are matched wherever the range is on the domain's stack, so ranges the
// runtime pushes inside a case, or a sweep pushes around it, do not hide its kernels.
#pragma once

#include <optional>
#include <string>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

// Throws InputError if the problem key or candidate id holds a character the scheme reserves ('|', '@').
std::string nvtx_case_range(const GemmProblem& p, const Candidate& c);

struct CaseRangeParts {
  std::string problem_key;
  std::string candidate_id;
};

// Inverse of nvtx_case_range on the name alone; nullopt when the name is not a gemmtune case range.
std::optional<CaseRangeParts> parse_nvtx_case_range(const std::string& range);

// The --nvtx-include argument that selects the kernels launched inside that case's range: "gemmtune@<range>/".
std::string ncu_nvtx_include(const GemmProblem& p, const Candidate& c);

}  // namespace gemmtune
