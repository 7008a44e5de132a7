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
// The same with CUDA_VISIBLE_DEVICES empty, so that CUDA shows the command no GPU: how a test proves what gemmtune
// does without one on every machine, a GPU machine included, rather than skipping there.
CommandResult run_gemmtune_with_no_gpu_visible(const std::vector<std::string>& args);

}  // namespace gemmtune::test
