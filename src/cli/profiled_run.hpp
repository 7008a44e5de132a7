// The `gemmtune run` a profiler command wraps, and the candidate it runs: `ncu` must name the exact NVTX range of
// the case, so the candidate is settled when the command line is made, not left to the run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::cli {

// The candidate named by `candidate_id`; else the db's cached one for p, for `device_key` or, when that is empty,
// for the only device key that has p cached. nullopt when neither a candidate nor a db was given.
// Throws InputError when the db has no entry for p, or entries for several device keys and none was chosen.
std::optional<Candidate> resolve_candidate(const GemmProblem& p, const std::string& candidate_id,
                                           const std::string& db_path, const std::string& device_key);

// <this gemmtune> run <case options> [--candidate ID] --warmup W --iters N. The run times its N calls inside the
// case's NVTX range and between cudaProfilerStart/Stop; its W warm-up calls run outside both.
std::vector<std::string> run_argv(const GemmProblem& p, const std::optional<Candidate>& c, int warmup, int iters);

}  // namespace gemmtune::cli
