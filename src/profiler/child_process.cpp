#include "profiler/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, Stdout out) {
  if (argv.empty()) throw InputError("no command to run");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int err_pipe[2], exec_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw CheckError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    throw CheckError(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) {
    const int error = errno;
    for (int fd : {err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    throw CheckError(std::string("fork: ") + std::strerror(error));
  }
  if (pid_ == 0) {
    // Only async-signal-safe calls from here to exec.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);  // the parent died before prctl took effect
    ::dup2(err_pipe[1], STDERR_FILENO);
    if (out == Stdout::Discard) {
      const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
    }
    ::execvp(args[0], args.data());
    const int error = errno;
    [[maybe_unused]] const ssize_t written = ::write(exec_pipe[1], &error, sizeof(error));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  stderr_fd_ = err_pipe[0];
  int error = 0;
  ssize_t got = 0;
  do got = ::read(exec_pipe[0], &error, sizeof(error));
  while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(error))) {
    wait();
    throw InputError("cannot run '" + argv[0] + "': " + std::strerror(error));
  }
}

ChildProcess::~ChildProcess() {
  if (!status_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(stderr_fd_);
}

void ChildProcess::close_stderr() { close_fd(stderr_fd_); }

void ChildProcess::read_stderr(std::vector<std::string>& lines) {
  if (stderr_fd_ < 0) return;
  char buffer[1 << 14];
  const ssize_t n = ::read(stderr_fd_, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    if (!partial_line_.empty()) lines.push_back(std::move(partial_line_));
    partial_line_.clear();
    close_stderr();
    return;
  }
  partial_line_.append(buffer, static_cast<std::size_t>(n));
  std::size_t start = 0;
  for (std::size_t end; (end = partial_line_.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(partial_line_.substr(start, end - start));
  partial_line_.erase(0, start);
}

void ChildProcess::send_signal(int sig) const {
  if (!status_ && pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::try_wait() {
  if (status_) return status_;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) status_ = exit_status(status);
  return status_;
}

int ChildProcess::wait() {
  if (status_) return *status_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0)
    if (errno != EINTR) throw CheckError(std::string("waitpid: ") + std::strerror(errno));
  status_ = exit_status(status);
  return *status_;
}

}  // namespace gemmtune
