// gemmtune accuracy: the error of every variant in every mode, and of cuBLASLt fp32/tf32, against fp64 on the same
// inputs over a grid of k and two input distributions (tuner/accuracy_benchmark.hpp). Writes accuracy.json (what
// `gemmtune report --accuracy` draws) and prints the table.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/list_option.hpp"
#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "tuner/accuracy_benchmark.hpp"

namespace gemmtune::cli {
namespace {

struct AccuracyArgs {
  std::int64_t m = 512, n = 512;
  std::string ks = "256,1024,4096,16384";
  std::string dists = "uniform,wide";
  std::string modes = "fp32,tf32,3xtf32";
  int device = 0;
  std::string out;
  std::uint64_t seed = 0;
  double max_3xtf32_ratio = 0;
  bool aligned_only = false;
  bool quiet = false;
};

std::int64_t parse_k(const std::string& s) {
  std::size_t used = 0;
  long long k = 0;
  try {
    k = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || k < 1) throw InputError("--k: '" + s + "' is not a positive integer");
  return k;
}

AccuracySettings settings_of(const AccuracyArgs& a) {
  AccuracySettings s;
  s.m = a.m;
  s.n = a.n;
  s.seed = a.seed;
  s.unaligned = !a.aligned_only;
  s.ks.clear();
  for (const std::string& k : split_list(a.ks)) s.ks.push_back(parse_k(k));
  s.dists.clear();
  for (const std::string& d : split_list(a.dists)) s.dists.push_back(parse_input_distribution(d));
  s.modes.clear();
  for (const std::string& m : split_list(a.modes)) s.modes.push_back(parse_math_mode(m));
  if (s.m < 1 || s.n < 1) throw InputError("--m and --n must be >= 1");
  if (s.ks.empty() || s.dists.empty() || s.modes.empty()) throw InputError("--k, --dist and --modes must not be empty");
  return s;
}

void run(const AccuracyArgs& a) {
  const AccuracySettings settings = settings_of(a);
  cuda_device_count();  // no GPU: say so (exit 3) before creating any output directory
  const AccuracyResult result = run_accuracy_benchmark(settings, a.device, a.quiet);
  const std::string out = a.out.empty() ? "results/" + result.device.slug() + "/accuracy.json" : a.out;
  const std::filesystem::path parent = std::filesystem::path(out).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw InputError("cannot create directory '" + parent.string() + "': " + ec.message());
  {
    std::ofstream file(out);
    file << nlohmann::json(result).dump(2) << "\n";
    if (!file) throw InputError("cannot write '" + out + "'");
  }
  print_accuracy_table(result, std::cout);
  std::cout << "wrote " << out << "\n";
  const AccuracyRecord* worst = worst_ratio_record(result, MathMode::Tf32x3);
  if (worst)
    std::cout << "3xtf32 worst error / cuBLASLt fp32's: " << worst->ratio_to_lt_fp32() << " (" << worst->candidate
              << ", k=" << worst->k << ", " << to_string(worst->dist) << ")\n";
  if (a.max_3xtf32_ratio > 0 && worst && !(worst->ratio_to_lt_fp32() <= a.max_3xtf32_ratio))
    throw CheckError("a 3xtf32 variant's error is above " + std::to_string(a.max_3xtf32_ratio) +
                     "x cuBLASLt fp32's (see the table)");
}

}  // namespace

void register_accuracy(CLI::App& app) {
  auto a = std::make_shared<AccuracyArgs>();
  auto* cmd = app.add_subcommand(
      "accuracy", "Error vs fp64 of every variant in every mode and of cuBLASLt fp32/tf32, over k and inputs");
  cmd->add_option("--m", a->m, "Rows of Y")->capture_default_str();
  cmd->add_option("--n", a->n, "Columns of Y")->capture_default_str();
  cmd->add_option("--k", a->ks, "Inner dimensions, comma-separated")->capture_default_str();
  cmd->add_option("--dist", a->dists, "Input distributions: uniform ([-1,1)), wide (±2^U(-8,8)), positive ([0,1))")
      ->capture_default_str();
  cmd->add_option("--modes", a->modes, "Modes of our variants, comma-separated (fp32,tf32,3xtf32)")
      ->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--out", a->out, "Where accuracy.json goes (default: results/<gpu>/accuracy.json)");
  cmd->add_option("--seed", a->seed, "Input seed (default: a fresh one, recorded in the JSON)");
  cmd->add_option("--max-3xtf32-ratio", a->max_3xtf32_ratio,
                  "Exit 1 when a 3xtf32 variant's error exceeds this multiple of cuBLASLt fp32's at any point");
  cmd->add_flag("--aligned-only", a->aligned_only,
                "Skip the points whose rows are not 16-byte aligned ((m|1) x (n|1) x (k|3), staged and +pad candidates)");
  cmd->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
