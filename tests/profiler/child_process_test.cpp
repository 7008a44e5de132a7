// ChildProcess: a child that runs beside this process, its stderr read back as lines, its exit status and signals.
#include "profiler/child_process.hpp"

#include <csignal>

#include <gtest/gtest.h>
#include <poll.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

std::vector<std::string> read_all_stderr(ChildProcess& child) {
  std::vector<std::string> lines;
  while (child.stderr_fd() >= 0) {
    pollfd fd{child.stderr_fd(), POLLIN, 0};
    ::poll(&fd, 1, 5000);
    child.read_stderr(lines);
  }
  return lines;
}

TEST(ChildProcess, StderrComesBackAsLinesAndStdoutIsDiscarded) {
  ChildProcess child({"sh", "-c", "echo to-stdout; echo one >&2; printf 'two\\nthree' >&2; exit 3"},
                     ChildProcess::Stdout::Discard);
  const std::vector<std::string> lines = read_all_stderr(child);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(child.wait(), 3);
  EXPECT_EQ(child.try_wait(), 3);
}

TEST(ChildProcess, ASignalledChildReportsOneTwentyEightPlusTheSignal) {
  ChildProcess child({"sleep", "30"}, ChildProcess::Stdout::Discard);
  EXPECT_FALSE(child.try_wait().has_value());
  child.send_signal(SIGTERM);
  EXPECT_EQ(child.wait(), 128 + SIGTERM);
}

TEST(ChildProcess, DestroyingARunningChildKillsAndReapsIt) {
  pid_t pid = 0;
  {
    ChildProcess child({"sleep", "30"}, ChildProcess::Stdout::Discard);
    pid = child.pid();
  }
  EXPECT_NE(::kill(pid, 0), 0) << "the child is gone, not a zombie";
}

TEST(ChildProcess, AProgramThatCannotStartIsBadInput) {
  EXPECT_THROW(ChildProcess({"/nonexistent/gemmtune-worker"}, ChildProcess::Stdout::Discard), InputError);
}

}  // namespace
}  // namespace gemmtune
