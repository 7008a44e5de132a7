// `gemmtune nsys` as users run it: nsys is not installed on the team's machines, so the lines are checked as text
// and --exec's failure to find nsys must be a clear error.
#include <string>

#include <gtest/gtest.h>

#include "support/run_gemmtune.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

TEST(NsysCli, PrintsACaptureRangeProfileAndItsKernelSummary) {
  const auto r = run_gemmtune({"nsys", "--m", "64", "--n", "64", "--k", "64", "--candidate",
                               "lt/a1-t2-s3-k1-r0-w0-c0-cl0-i0", "--nsys", "nsys"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nsys profile --trace=cuda,nvtx,cublas --capture-range=cudaProfilerApi "
                          "--capture-range-end=stop --export=sqlite --force-overwrite=true "
                          "--output=results/nsys/fwd_64x64x64_nn_row_none_tf32__lt_a1-t2-s3-k1-r0-w0-c0-cl0-i0 "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" run --m 64 --n 64 --k 64 --mode tf32 --candidate lt/a1-t2-s3-k1-r0-w0-c0-cl0-i0 "
                          "--warmup 5 --iters 20"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nsys stats --report cuda_gpu_kern_sum --report nvtx_kern_sum "
                          "results/nsys/fwd_64x64x64_nn_row_none_tf32__lt_a1-t2-s3-k1-r0-w0-c0-cl0-i0.nsys-rep"),
            std::string::npos)
      << r.output;
}

TEST(NsysCli, WithoutACandidateTheRunChoosesItsOwn) {
  const auto r = run_gemmtune({"nsys", "--m", "64", "--n", "64", "--k", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("--candidate"), std::string::npos) << r.output;
}

TEST(NsysCli, ExecWithoutNsysIsAClearBadUsageError) {
  const auto r = run_gemmtune({"nsys", "--m", "64", "--n", "64", "--k", "64", "--exec", "--nsys",
                               "/nonexistent/nsys", "--out-dir", "/tmp/gemmtune-nsys-test"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot run '/nonexistent/nsys'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune
