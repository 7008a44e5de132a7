#include "support/ncu_self_profile.hpp"

#include <gtest/gtest.h>

#include "profiler/ncu_section_set.hpp"
#include "profiler/process.hpp"

namespace gemmtune::test {

std::string ncu_executable() { return find_executable("ncu", {"/usr/local/cuda/bin/ncu"}); }

NcuImport profile_self_with_ncu(const GemmProblem& p, const Candidate& c, const std::string& workload_filter,
                                NcuCacheControl cache_control, int profiled_calls, const std::string& report_path) {
  NcuCommandOptions o;
  o.ncu = ncu_executable();
  o.sections = load_ncu_section_set("timing", std::string(GEMMTUNE_SOURCE_DIR) + "/profiles/ncu");
  o.cache_control = cache_control;
  o.profiled_calls = profiled_calls;
  o.export_path = report_path;
  // GEMMTUNE_REQUIRE_GPU: the workload fails rather than skips. Its output passes through, and a "[  SKIPPED ]" line
  // in it would have ctest report this test as skipped, whatever it then found.
  const int status = run_process(ncu_profile_argv(p, c, o,
                                                  {self_executable(), "--gtest_also_run_disabled_tests",
                                                   "--gtest_filter=" + workload_filter}),
                                 {"GEMMTUNE_REQUIRE_GPU=1"});
  EXPECT_EQ(status, 0) << "ncu failed on " << workload_filter;
  if (status != 0) return {};
  const ProcessOutput out = capture_process(ncu_import_argv(o.ncu, report_path));
  EXPECT_EQ(out.status, 0) << out.err;
  if (out.status != 0) return {};
  return import_ncu_kernels(NcuRawTable::parse(out.out), to_string(cache_control), report_path);
}

}  // namespace gemmtune::test
