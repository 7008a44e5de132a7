// The options that name one case on the command line, shared by `gemmtune run`, `gemmtune ncu` and `gemmtune nsys`:
//   --m M --n N --k K [--layout nn|nt|tn|tt] [--out row|col] [--bias] [--act NAME] [--leaky-slope S] [--save-z]
//   [--dropout P] [--mode fp32|tf32|3xtf32] [--pass fwd|bwd_a|bwd_b]
// and their inverse, so a command that prints a `gemmtune run` line writes the same problem back as options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "problem/gemm_problem.hpp"

namespace gemmtune::cli {

struct CaseOptions {
  std::int64_t m = 0, n = 0, k = 0;
  std::string layout = "nn";
  std::string out = "row";
  bool bias = false;
  std::string act = "none";
  float leaky_slope = 0.01f;
  bool save_z = false;
  float dropout = 0.0f;
  std::string mode = "tf32";
  std::string pass = "fwd";

  // Throws InputError naming the bad option.
  GemmProblem problem() const;
};

// Adds the options above to cmd. When `required` is false, --m/--n/--k may be left out (a command that can also
// take its cases from a db) and case_given() tells whether they were.
void add_case_options(CLI::App& cmd, CaseOptions& o, bool required = true);
bool case_given(const CaseOptions& o);

// The options that make `p` again, defaults left out: {"--m", "1024", ..., "--mode", "tf32"}.
std::vector<std::string> case_arguments(const GemmProblem& p);

}  // namespace gemmtune::cli
