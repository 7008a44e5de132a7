#include "support/run_gemmtune.hpp"

#include <cstdio>
#include <stdexcept>

#include <sys/wait.h>

namespace gemmtune::test {
namespace {

// Single quotes protect everything but a single quote, which becomes '\''.
std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `environment` is prefixed to the command line: shell assignments for the command alone.
CommandResult run_with_environment(const std::string& environment, const std::vector<std::string>& args) {
  std::string command = environment + shell_quote(GEMMTUNE_BINARY);
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandResult result;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace

CommandResult run_gemmtune(const std::vector<std::string>& args) { return run_with_environment("", args); }

CommandResult run_gemmtune_with_no_gpu_visible(const std::vector<std::string>& args) {
  return run_with_environment("CUDA_VISIBLE_DEVICES= ", args);
}

}  // namespace gemmtune::test
