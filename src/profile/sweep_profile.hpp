// SweepProfile: what a sweep measures (profiles/*.json): problems, candidate settings and the timing rule.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

struct LtSearchSettings {
  int top_k = 8;                          // the heuristic's first K algos
  std::size_t workspace_bytes = 64u << 20;
  bool by_algo_id = false;                // also ask the heuristic once per algo id (wider search)
  int per_algo_id = 4;
  // Also time cuBLASLt GEMM + our separate epilogue kernel, and where the problem has a bias and more, cuBLASLt's
  // BIAS epilogue + our kernel for the rest.
  bool unfused_baseline = false;
};

// The stopping rule (tuner/stopping_rule.hpp): sample until the median is known well enough, with enough samples
// and time spent, or until the time cap.
struct TimingSettings {
  int warmup_calls = 5;
  int batch_calls = 20;        // back-to-back calls queued behind the blocking kernel per batch
  int min_samples = 40;
  double max_noise_pct = 0.5;  // stop once the median's relative standard error is ≤ this...
  double min_time_ms = 10;     // ...and at least this much kernel time was sampled
  double max_time_ms = 400;    // hard cap per candidate
  // false: inputs rotate over sets larger than 2× L2 and calls run back to back (a layer inside a model);
  // true: L2 is evicted (twice its size read) before every call, nvbench's "cold" measurement (a GEMM whose inputs
  // come from DRAM).
  bool l2_flush = false;
  // The finalist stage (problem/candidate_choice.hpp, tuner/program_timing.hpp): heuristic-first and up to
  // `finalists` of the fastest other candidates are re-timed as a program pays, end to end over back-to-back calls,
  // in each measured condition: launched into a stream and/or as a CUDA graph (profile "launch": "stream", "graph"
  // or "both"), with the same buffers every call (warm L2) and/or inputs rotated past 2× L2 (cold; profile "l2").
  // A candidate replaces heuristic-first only where it wins beyond noise in every condition. 0 finalists: no stage,
  // the ranking's choice is cached and no margin is recorded.
  bool launch_stream = true, launch_graph = true;
  bool l2_warm = true, l2_cold = true;
  int finalists = 3;
  // Spend sampling only where the choice can still change (tuner/candidate_pruning.hpp): a candidate whose first
  // batch is clearly slower than the best so far is not sampled to convergence, and the finalist stage times only
  // challengers that can still beat heuristic-first. false: every candidate and finalist is timed in full, for
  // profiles whose per-candidate numbers are compared side by side (the gate's ci, the kernel benchmarks).
  bool prune = true;
};

struct SweepProfile {
  std::string name;
  std::string description;
  std::vector<GemmProblem> problems;  // every shape × layout × out × epilogue × mode, in sweep order
  std::vector<std::string> backends;  // "own", "lt"
  LtSearchSettings lt;
  TimingSettings timing;
  // "fp32_equivalent": fp32 problems also try our 3xtf32 variants, admitted per problem by the accuracy rule of
  // problem/fp32_equivalent.hpp. Off by default; `sweep --fp32-equivalent` turns it on.
  bool fp32_equivalent = false;
};

// Loads a profile by name (profiles/<name>.json, searched in `profiles_dir`) or by path (anything with a '/' or
// ending in .json). Throws InputError naming the file and the bad field.
SweepProfile load_sweep_profile(const std::string& name_or_path, const std::string& profiles_dir);
// Parses profile text; `origin` names it in errors.
SweepProfile parse_sweep_profile(const std::string& json_text, const std::string& origin);

// $GEMMTUNE_PROFILES when set, else profiles/ in data_dir() (common/data_dir.hpp).
std::string default_profiles_dir();

}  // namespace gemmtune
