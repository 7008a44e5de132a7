// run_gemmtune: runs the real gemmtune binary (GEMMTUNE_BINARY, set by the test build) and returns its exit code
// and output, so tests check exit codes and messages the way CI and users see them.
#pragma once

#include <string>
#include <vector>

namespace gemmtune::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

CommandResult run_gemmtune(const std::vector<std::string>& args);

}  // namespace gemmtune::test
