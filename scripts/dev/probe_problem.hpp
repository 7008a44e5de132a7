// The probes' problem argument, "MxNxK:mode:epilogue" (a forward NN row-major problem), read by the db's own key
// parser, so a probe rejects what GemmProblem::parse_key rejects.
#pragma once

#include <string>

#include "common/error.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

inline GemmProblem parse_probe_problem(const std::string& text) {
  const auto c1 = text.find(':'), c2 = text.find(':', c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos)
    throw InputError("expected MxNxK:mode:epilogue, got '" + text + "'");
  return GemmProblem::parse_key("fwd:" + text.substr(0, c1) + ":nn:row:" + text.substr(c2 + 1) + ":" +
                                text.substr(c1 + 1, c2 - c1 - 1));
}

}  // namespace gemmtune
