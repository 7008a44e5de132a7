// One error type per exit code, and one call-check helper that throws with the call's text, file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace gemmtune {

// The CLI's exit codes are a contract with CI scripts (docs/design.md, "Exit codes"): keep the numbers.
enum class ExitCode : int { Ok = 0, CheckFailed = 1, BadInput = 2, NoGpu = 3 };

// Every gemmtune failure carries the exit code the CLI should end with.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad usage or input: a malformed profile, a corrupt db, a negative shape.
struct InputError : Error {
  explicit InputError(const std::string& what) : Error(ExitCode::BadInput, what) {}
};

// A call that would take device memory past a cap its caller set (RuntimeOptions::max_scratch_bytes); it allocated
// and enqueued nothing.
struct MemoryBudgetError : InputError {
  using InputError::InputError;
};

// No usable GPU: no driver, no device, an unsupported compute capability.
struct NoGpuError : Error {
  explicit NoGpuError(const std::string& what) : Error(ExitCode::NoGpu, what) {}
};

// A check failed: a wrong result, a gate regression, a failed library call.
struct CheckError : Error {
  explicit CheckError(const std::string& what) : Error(ExitCode::CheckFailed, what) {}
};

namespace detail {
// Formats "<library> error <code> (<name>): <call> at <file>:<line>" and throws; never returns.
[[noreturn]] void throw_call_error(const char* library, long long code, const std::string& name, const char* call,
                                   const char* file, int line);
}  // namespace detail

}  // namespace gemmtune
