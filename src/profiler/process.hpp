// Running the profilers gemmtune drives (ncu, nsys) as child processes: fork and exec, no shell in between, so the
// argv a command line was printed from is exactly what runs.
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

// Runs argv[0] (looked up on PATH when it has no '/') with stdin, stdout and stderr inherited, and waits.
// Returns its exit status, or 128 + the signal that killed it (as a shell reports it).
// Throws InputError when it cannot be started (not found, not executable).
int run_process(const std::vector<std::string>& argv);
// As run_process, with "NAME=VALUE" entries set in the child's environment (replacing NAME where it is set).
int run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env);

struct ProcessOutput {
  int status = 0;
  std::string out;
  std::string err;
};

// As run_process, but collects the child's stdout and stderr.
ProcessOutput capture_process(const std::vector<std::string>& argv);

// `name` on PATH, else the first of `fallbacks` that is an executable file; empty when none is.
std::string find_executable(const std::string& name, const std::vector<std::string>& fallbacks);

// This process's executable, resolved through /proc/self/exe, so a printed command names the same gemmtune.
std::string self_executable();

}  // namespace gemmtune
