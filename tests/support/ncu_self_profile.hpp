// Profiles a workload test of this very test binary under ncu, with the command line `gemmtune ncu` would generate
// for a case, and imports the report: how the GPU tests check what the generated filter really selects.
#pragma once

#include <string>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "profiler/ncu_command.hpp"
#include "profiler/ncu_import.hpp"

namespace gemmtune::test {

// ncu on PATH or in /usr/local/cuda/bin; empty when it is not installed.
std::string ncu_executable();

// Runs ncu (section set "timing") on `this binary --gtest_filter=<workload_filter>`, selecting case (p, c), and
// imports the report written to report_path. Fails the test (and returns an empty import) when ncu fails. A workload
// is a DISABLED_ test, never run or counted as a test, which this run enables.
NcuImport profile_self_with_ncu(const GemmProblem& p, const Candidate& c, const std::string& workload_filter,
                                NcuCacheControl cache_control, int profiled_calls, const std::string& report_path);

}  // namespace gemmtune::test
