// A child process that runs beside this one (run_process waits for its child; this does not): the sweep's
// per-GPU workers. Its stdout goes to /dev/null or is inherited, its stderr comes back through a pipe as lines.
// The child gets SIGTERM if this process dies first (PR_SET_PDEATHSIG), so no worker outlives its coordinator.
// RAII: a child still running when the object goes away is killed and reaped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace gemmtune {

class ChildProcess {
 public:
  enum class Stdout { Discard, Inherit };
  // Throws InputError when argv[0] cannot be started.
  ChildProcess(const std::vector<std::string>& argv, Stdout out);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The read end of the stderr pipe, for poll(); -1 once it reached end of file.
  int stderr_fd() const { return stderr_fd_; }
  // Reads what the pipe has (call when poll says it is readable) and appends each complete line to `lines`;
  // at end of file, the unterminated rest too. Never blocks longer than one read.
  void read_stderr(std::vector<std::string>& lines);
  void send_signal(int sig) const;
  // The exit status (128 + signal when killed, as a shell reports it) once the child ended; never blocks.
  std::optional<int> try_wait();
  int wait();

 private:
  void close_stderr();

  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  std::string partial_line_;
  std::optional<int> status_;
};

}  // namespace gemmtune
