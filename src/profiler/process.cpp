#include "profiler/process.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw CheckError(std::string("pipe: ") + std::strerror(errno));
  Pipe p;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return p;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw CheckError(std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// This process's environment with `overrides` ("NAME=VALUE") in place of the variables they name.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || name_of(o) == name_of(entry);
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

// Forks and execs argv with the given descriptors (or -1 to inherit) as stdout and stderr, and with `env` as its
// environment (nullptr: this process's). The exec error, if any, comes back through a close-on-exec pipe: an empty
// read means the exec succeeded.
pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd,
            const std::vector<std::string>* env = nullptr) {
  if (argv.empty()) throw InputError("no command to run");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (env) {
    for (const std::string& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  Pipe exec_status = make_pipe();
  std::fflush(nullptr);  // what this process printed so far must come before the child's output
  const pid_t pid = ::fork();
  if (pid < 0) throw CheckError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    if (env)
      ::execvpe(args[0], args.data(), envp.data());
    else
      ::execvp(args[0], args.data());
    const int error = errno;
    [[maybe_unused]] const ssize_t written = ::write(exec_status.write.get(), &error, sizeof(error));
    ::_exit(127);
  }
  exec_status.write.reset();
  int error = 0;
  ssize_t got = 0;
  do got = ::read(exec_status.read.get(), &error, sizeof(error));
  while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof(error))) {
    wait_for(pid);
    throw InputError("cannot run '" + argv[0] + "': " + std::strerror(error));
  }
  return pid;
}

}  // namespace

int run_process(const std::vector<std::string>& argv) { return wait_for(spawn(argv, -1, -1)); }

int run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  const std::vector<std::string> full = environment_with(env);
  return wait_for(spawn(argv, -1, -1, &full));
}

ProcessOutput capture_process(const std::vector<std::string>& argv) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  const pid_t pid = spawn(argv, out.write.get(), err.write.get());
  out.write.reset();
  err.write.reset();

  ProcessOutput result;
  // Both pipes are drained together: a child blocked on a full stderr pipe would never finish its stdout.
  pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  char buffer[1 << 16];
  while (open_pipes > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw CheckError(std::string("poll: ") + std::strerror(errno));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_pipes;
      }
    }
  }
  result.status = wait_for(pid);
  return result;
}

std::string find_executable(const std::string& name, const std::vector<std::string>& fallbacks) {
  const auto executable = [](const std::string& path) { return ::access(path.c_str(), X_OK) == 0; };
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const std::size_t end = std::min(dirs.find(':', start), dirs.size());
      const std::string dir = dirs.substr(start, end - start);
      if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
      start = end + 1;
    }
  }
  for (const std::string& f : fallbacks)
    if (executable(f)) return f;
  return "";
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw CheckError("cannot resolve /proc/self/exe: " + ec.message());
  return exe.string();
}

}  // namespace gemmtune
