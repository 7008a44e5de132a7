// A sweep killed midway, then rerun with --resume, finishes without measuring again what the first run stored.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "cuda/device_info.hpp"
#include "db/tuning_db.hpp"
#include "profile/sweep_profile.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"

extern char** environ;

namespace gemmtune {
namespace {

// Six problems, each slow enough (100 ms of sampling per candidate) that the sweep can be killed between them.
constexpr const char* kProfile = R"({
  "name": "resume-test", "shapes": [[128, 128, 128], [256, 128, 64], [64, 256, 128]],
  "epilogues": ["none", "bias+relu"], "modes": ["fp32"], "backends": ["lt"],
  "lt": {"top_k": 2}, "timing": {"min_samples": 20, "min_time_ms": 100, "max_time_ms": 120, "max_noise_pct": 0}})";

int count_done(const std::string& db_path, const std::string& device_key, const SweepProfile& profile) {
  const TuningDb db(db_path, TuningDb::Access::ReadOnly);
  int done = 0;
  for (const GemmProblem& p : profile.problems) done += db.problem_done(device_key, p.key()) ? 1 : 0;
  return done;
}

TEST(SweepResume, KilledSweepResumesWithoutRemeasuringStoredProblems) {
  GT_REQUIRE_GPU();
  test::ScratchDir dir;
  const std::string profile_path = dir.path("resume.json"), db_path = dir.path("t.db");
  test::write_bytes(profile_path, kProfile);
  const SweepProfile profile = parse_sweep_profile(kProfile, profile_path);
  const std::string device_key = query_device(0).identity.key();

  std::vector<std::string> args = {GEMMTUNE_BINARY, "sweep", "--profile", profile_path, "--db", db_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, GEMMTUNE_BINARY, nullptr, nullptr, argv.data(), environ), 0);

  int done_at_kill = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (access(db_path.c_str(), F_OK) == 0) {
      try {
        done_at_kill = count_done(db_path, device_key, profile);
      } catch (const Error&) {
        done_at_kill = 0;  // the file exists but its schema is not committed yet
      }
      if (done_at_kill >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed; make the profile slower";
  done_at_kill = count_done(db_path, device_key, profile);
  ASSERT_GE(done_at_kill, 2);
  ASSERT_LT(done_at_kill, static_cast<int>(profile.problems.size()));

  const auto r = test::run_gemmtune({"sweep", "--profile", profile_path, "--db", db_path, "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t skipped = 0;
  for (std::size_t pos = 0; (pos = r.output.find("skipped (--resume)", pos)) != std::string::npos; ++pos) ++skipped;
  EXPECT_EQ(skipped, static_cast<std::size_t>(done_at_kill)) << r.output;
  EXPECT_EQ(count_done(db_path, device_key, profile), static_cast<int>(profile.problems.size()));

  // No problem was measured by both runs: the killed run's stored problems are absent from the resumed run.
  const TuningDb db(db_path, TuningDb::Access::ReadOnly);
  const std::vector<RunInfo> runs = db.runs();
  ASSERT_EQ(runs.size(), 2u);
  std::set<std::string> first, second;
  for (const MeasurementRecord& m : db.measurements(runs[0].id)) first.insert(m.problem.key());
  for (const MeasurementRecord& m : db.measurements(runs[1].id)) second.insert(m.problem.key());
  EXPECT_EQ(first.size(), static_cast<std::size_t>(done_at_kill));
  for (const std::string& key : first) EXPECT_EQ(second.count(key), 0u) << key << " was measured twice";
  EXPECT_EQ(first.size() + second.size(), profile.problems.size());
}

}  // namespace
}  // namespace gemmtune
