#include "profiler/process.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/error.hpp"

namespace gemmtune {
namespace {

TEST(Process, RunReturnsTheChildsExitStatus) {
  EXPECT_EQ(run_process({"/bin/sh", "-c", "exit 0"}), 0);
  EXPECT_EQ(run_process({"/bin/sh", "-c", "exit 7"}), 7);
}

TEST(Process, KilledChildReportsOneHundredTwentyEightPlusItsSignal) {
  EXPECT_EQ(run_process({"/bin/sh", "-c", "kill -9 $$"}), 128 + 9);
}

TEST(Process, CaptureKeepsStdoutAndStderrApart) {
  const ProcessOutput out = capture_process({"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"});
  EXPECT_EQ(out.status, 3);
  EXPECT_EQ(out.out, "to-out\n");
  EXPECT_EQ(out.err, "to-err\n");
}

// More than a pipe buffer on both streams at once: a reader draining one pipe at a time would deadlock here.
TEST(Process, CaptureDrainsBothStreamsOfALargeOutput) {
  const ProcessOutput out = capture_process(
      {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo 0123456789; echo abcdefghij >&2; i=$((i+1)); done"});
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.out.size(), 20000u * 11);
  EXPECT_EQ(out.err.size(), 20000u * 11);
}

TEST(Process, MissingExecutableIsABadInputNotACrash) {
  EXPECT_THROW(run_process({"gemmtune-no-such-tool-xyz"}), InputError);
  EXPECT_THROW(capture_process({"/nonexistent/ncu", "--import", "x"}), InputError);
}

TEST(Process, TheChildGetsTheGivenEnvironmentOnTopOfOurs) {
  ::setenv("GEMMTUNE_PROCESS_TEST_KEEP", "kept", 1);
  ::setenv("GEMMTUNE_PROCESS_TEST_SET", "old", 1);
  EXPECT_EQ(run_process({"sh", "-c",
                         "[ \"$GEMMTUNE_PROCESS_TEST_KEEP\" = kept ] && [ \"$GEMMTUNE_PROCESS_TEST_SET\" = new ] && "
                         "[ \"$GEMMTUNE_PROCESS_TEST_ADD\" = a=b ]"},
                        {"GEMMTUNE_PROCESS_TEST_SET=new", "GEMMTUNE_PROCESS_TEST_ADD=a=b"}),
            0);
  EXPECT_STREQ(std::getenv("GEMMTUNE_PROCESS_TEST_SET"), "old");  // ours is unchanged
  EXPECT_THROW(run_process({"gemmtune-no-such-tool-xyz"}, {"X=1"}), InputError);
}

TEST(Process, FindExecutableSearchesPathThenFallbacks) {
  EXPECT_EQ(find_executable("sh", {}).empty(), false);
  EXPECT_EQ(find_executable("gemmtune-no-such-tool-xyz", {"/nonexistent", "/bin/sh"}), "/bin/sh");
  EXPECT_EQ(find_executable("gemmtune-no-such-tool-xyz", {"/nonexistent"}), "");
}

}  // namespace
}  // namespace gemmtune
