// first_use_bench: what the first call of an untuned problem costs a program (issue 37), and that none waits out the
// blocking kernel's 10 s timeout.
//
// One process, the runtime with its default options (the first-use trial on) and CUDA's default module loading (lazy
// since CUDA 12.2, unless CUDA_MODULE_LOADING says otherwise: the JSON records which). After one warm-up problem (the
// CUDA context, cuBLASLt, the db's measurements: recorded apart, not among the records), COUNT problems no entry of the
// db names are drawn from a seeded generator (shapes as scripts/heldout_shapes.py draws them: m a few rows to 8192,
// n and k mostly LLM hidden and MLP sizes; epilogues none, bias, bias+relu, bias+gelu; modes tf32, fp32 and a few
// 3xtf32) and each is called twice: host wall time from Runtime::forward to its stream's completion, its operands
// allocated and filled beforehand, outside the time; the second call is what the GEMM costs once resolved.
//
//   first_use_bench --out DIR [--db FILE [--tuned]] [--count N] [--seed S] [--max-mnk X]
// --db: a tuned db (a `ci` or `quick` sweep), copied to DIR/first_use.db first so its misses table is left alone;
// without it the runtime has no db (every problem runs cuBLASLt's default or its unfused challenger).
// --tuned: the db's own forward entries instead (up to COUNT, in key order; those without save_z or dropout, which
// need buffers this benchmark does not make), what a tuned program's first calls cost: an entry that is one of the
// no-entry set goes to a first-use trial on the call's inputs (runtime.cpp: decide_by_trial), and a cuBLASLt or
// cuBLAS entry asks cuBLASLt's heuristic for that set. Writes
// DIR/first_use.json: {device, module_loading, db, seed, warmup, records: [{shape, mode, epilogue, first_call_ms,
// second_call_ms, source, candidate, explain}], summary: {count, max_ms, median_ms, p90_ms, over_100ms, targets,
// met}}, and prints the summary last. Exit 0 whether or not the targets were met (the JSON says); 2 bad usage; 3 no GPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "db/tuning_db.hpp"
#include "gemmtune/runtime.hpp"
#include "launch/random_fill.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

constexpr double kTargetMaxMs = 100, kTargetMedianMs = 20;
// heldout_shapes.py's: the hidden and MLP sizes of LLMs.
constexpr std::int64_t kModelDims[] = {768, 1024, 2048, 3072, 4096, 5120, 8192, 11008, 13824, 14336, 16384};
constexpr const char* kEpilogues[] = {"none", "bias", "bias+relu", "bias+gelu"};

struct Args {
  std::string out_dir;
  std::string db;
  int count = 500;
  std::uint64_t seed = 37;
  double max_mnk = 1.6e10;  // heldout_shapes.py's cap: one fp32 GEMM stays near a millisecond
  bool tuned = false;       // the db's own entries instead of untuned problems
};

// Draws problems as heldout_shapes.py draws shapes, plus an epilogue and a mode.
class ProblemDraw {
 public:
  explicit ProblemDraw(std::uint64_t seed) : rng_(seed) {}

  GemmProblem next(double max_mnk) {
    for (;;) {
      GemmProblem p;
      p.m = draw_m();
      p.n = draw_nk();
      p.k = draw_nk();
      if (static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) > max_mnk) continue;
      p.epi = Epilogue::parse(kEpilogues[pick(std::size(kEpilogues))]);
      const double mode = uniform();
      p.mode = mode < 0.45 ? MathMode::Tf32 : mode < 0.9 ? MathMode::Fp32 : MathMode::Tf32x3;
      return p;
    }
  }

 private:
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  std::int64_t log_uniform(double lo, double hi) {
    return std::llround(std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo))));
  }
  // Three in four a training step's or a prefill's tokens (64..8192), one in four a decode's few rows; a third padded
  // to a multiple of 8.
  std::int64_t draw_m() {
    std::int64_t m = uniform() < 0.75 ? log_uniform(64, 8192) : log_uniform(1, 63);
    if (uniform() < 0.35) m = std::max<std::int64_t>(1, m / 8 * 8);
    return std::clamp<std::int64_t>(m, 1, 8192);
  }
  std::int64_t draw_nk() {
    if (uniform() < 0.7) return kModelDims[pick(std::size(kModelDims))];
    const std::int64_t v = log_uniform(64, 16384);
    return uniform() < 0.5 ? v : std::max<std::int64_t>(64, v / 8 * 8);
  }

  std::mt19937_64 rng_;
};

// A forward problem's operands, filled with fresh values.
struct Operands {
  Operands(const GemmProblem& p, std::uint64_t seed, cudaStream_t s)
      : a(static_cast<std::size_t>(p.m * p.k)), b(static_cast<std::size_t>(p.k * p.n)),
        bias(p.epi.bias ? static_cast<std::size_t>(p.n) : 0), y(static_cast<std::size_t>(p.m * p.n)) {
    fill_uniform(a.get(), a.size(), seed, -1.f, 1.f, s);
    fill_uniform(b.get(), b.size(), seed + 1, -1.f, 1.f, s);
    if (bias.size()) fill_uniform(bias.get(), bias.size(), seed + 2, -1.f, 1.f, s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  }
  GemmOperands operands() const {
    GemmOperands x;
    x.A = a.get();
    x.B = b.get();
    x.bias = bias.get();
    x.Y = y.get();
    return x;
  }
  DeviceBuffer<float> a, b, bias, y;
};

std::string shape_of(const GemmProblem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

std::string source_of(const std::string& explanation) {
  for (const char* s : {"exact", "nearest", "default", "pinned"})
    if (explanation.find(std::string("[") + s + "]") != std::string::npos) return s;
  return "?";
}

struct CallTimes {
  double first_ms = 0;   // the first call: resolving the problem (the trial included), then the GEMM
  double second_ms = 0;  // the next call, the same way: what the GEMM itself costs the host
};

// Host milliseconds of p's first and second call: Runtime::forward, then its stream's completion.
CallTimes call_ms(Runtime& rt, const GemmProblem& p, std::uint64_t seed, cudaStream_t s) {
  const Operands x(p, seed, s);
  CallTimes t;
  for (double* ms : {&t.first_ms, &t.second_ms}) {
    const auto t0 = std::chrono::steady_clock::now();
    rt.forward(p, x.operands(), s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return t;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void run(const Args& a) {
  std::filesystem::create_directories(a.out_dir);
  const DeviceInfo device = query_device(0);
  // The db's entries: a problem one of them names is not untuned; with --tuned, the problems to call.
  std::set<std::string> tuned;
  std::vector<GemmProblem> entries;
  std::string db = (std::filesystem::path(a.out_dir) / "first_use_nodb.db").string();
  std::filesystem::remove(db);
  if (!a.db.empty()) {
    if (!std::filesystem::exists(a.db)) throw InputError("first_use_bench: no db at '" + a.db + "'");
    for (const CacheEntry& e : TuningDb(a.db, TuningDb::Access::ReadOnly).cache_entries()) {
      if (tuned.insert(e.problem.key()).second && e.problem.pass == Pass::Forward && !e.problem.epi.save_z &&
          !e.problem.epi.dropout())
        entries.push_back(e.problem);
    }
    std::sort(entries.begin(), entries.end(),
              [](const GemmProblem& x, const GemmProblem& y) { return x.key() < y.key(); });
    if (a.tuned && entries.empty())
      throw InputError("first_use_bench: the db at '" + a.db + "' has no forward entry without save_z or dropout");
    db = (std::filesystem::path(a.out_dir) / "first_use.db").string();
    std::filesystem::copy_file(a.db, db, std::filesystem::copy_options::overwrite_existing);
  }
  const char* loading = std::getenv("CUDA_MODULE_LOADING");

  const CudaStream stream;
  Runtime rt(db);
  std::mt19937_64 fresh(a.seed);
  GemmProblem warmup;
  warmup.m = 64;
  warmup.n = 768;
  warmup.k = 768;
  warmup.mode = MathMode::Tf32;
  warmup.epi = Epilogue::parse("bias+gelu");
  const double warmup_ms = call_ms(rt, warmup, fresh(), stream.get()).first_ms;

  ProblemDraw draw(a.seed);
  std::set<std::string> seen = {warmup.key()};
  json records = json::array();
  std::vector<double> times;
  const std::size_t count =
      a.tuned ? std::min(entries.size(), static_cast<std::size_t>(a.count)) : static_cast<std::size_t>(a.count);
  while (times.size() < count) {
    const GemmProblem p = a.tuned ? entries[times.size()] : draw.next(a.max_mnk);
    if (!a.tuned && (tuned.count(p.key()) || !seen.insert(p.key()).second)) continue;
    const CallTimes t = call_ms(rt, p, fresh(), stream.get());
    const double ms = t.first_ms;
    times.push_back(ms);
    const std::string explanation = rt.explain(p);
    records.push_back({{"shape", shape_of(p)},
                       {"mode", to_string(p.mode)},
                       {"epilogue", p.epi.key()},
                       {"first_call_ms", ms},
                       {"second_call_ms", t.second_ms},
                       {"source", source_of(explanation)},
                       {"candidate", rt.candidate_id(p)},
                       {"explain", explanation}});
    std::printf("%4zu %-18s %-6s %-10s %9.2f ms  %s\n", times.size(), shape_of(p).c_str(), to_string(p.mode),
                p.epi.key().c_str(), ms, rt.candidate_id(p).c_str());
    std::fflush(stdout);
  }

  const double max_ms = *std::max_element(times.begin(), times.end());
  const double median_ms = quantile(times, 0.5), p90_ms = quantile(times, 0.9);
  const auto over = std::count_if(times.begin(), times.end(), [](double t) { return t > kTargetMaxMs; });
  const bool met = max_ms <= kTargetMaxMs && median_ms <= kTargetMedianMs;
  json out;
  out["device"] = device.identity;
  out["gpu_slug"] = device.identity.slug();
  out["module_loading"] = loading ? loading : "default (lazy since CUDA 12.2)";
  out["db"] = a.db.empty() ? json(nullptr) : json(a.db);
  out["seed"] = a.seed;
  out["tuned"] = a.tuned;
  out["method"] = std::string("one process, the runtime's default options; per problem, host wall time from "
                              "Runtime::forward to the completion of its stream, operands allocated and filled "
                              "beforehand; ") +
                  (a.tuned ? "the db's own forward entries without save_z or dropout, in key order"
                           : "problems drawn as scripts/heldout_shapes.py draws shapes (m*n*k <= " +
                                 std::to_string(a.max_mnk) + "), none an entry of the db names") +
                  ", after one warm-up problem";
  out["warmup"] = {{"shape", shape_of(warmup)}, {"mode", to_string(warmup.mode)},
                   {"epilogue", warmup.epi.key()}, {"first_call_ms", warmup_ms}};
  out["records"] = records;
  out["summary"] = {{"count", times.size()},
                    {"max_ms", max_ms},
                    {"median_ms", median_ms},
                    {"p90_ms", p90_ms},
                    {"over_100ms", over},
                    {"targets", {{"max_ms", kTargetMaxMs}, {"median_ms", kTargetMedianMs}}},
                    {"met", met}};
  const std::string path = (std::filesystem::path(a.out_dir) / "first_use.json").string();
  write_json_file(path, out);
  std::printf("first use of %zu %s problems on %s (%s module loading, db %s): max %.2f ms, median %.2f ms, p90 "
              "%.2f ms, %ld over %.0f ms (warm-up problem %.2f ms) -> %s\n",
              times.size(), a.tuned ? "tuned" : "untuned", device.identity.gpu_name.c_str(),
              loading ? loading : "default",
              a.db.empty() ? "none" : a.db.c_str(), max_ms, median_ms, p90_ms, static_cast<long>(over), kTargetMaxMs,
              warmup_ms, path.c_str());
  std::printf("targets: every first call <= %.0f ms, median <= %.0f ms: %s\n", kTargetMaxMs, kTargetMedianMs,
              met ? "met" : "MISSED");
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  gemmtune::Args a;
  const char* usage =
      "usage: first_use_bench --out DIR [--db FILE [--tuned]] [--count N] [--seed S] [--max-mnk X]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--out" && has_value) {
      a.out_dir = argv[++i];
    } else if (arg == "--db" && has_value) {
      a.db = argv[++i];
    } else if (arg == "--tuned") {
      a.tuned = true;
    } else if (arg == "--count" && has_value) {
      a.count = std::atoi(argv[++i]);
      if (a.count < 1 || a.count > 100000) {
        std::fprintf(stderr, "first_use_bench: --count must be 1..100000\n%s", usage);
        return 2;
      }
    } else if (arg == "--seed" && has_value) {
      a.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-mnk" && has_value) {
      a.max_mnk = std::strtod(argv[++i], nullptr);
      if (!(a.max_mnk >= 1)) {
        std::fprintf(stderr, "first_use_bench: --max-mnk must be a number >= 1\n%s", usage);
        return 2;
      }
    } else {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (a.out_dir.empty()) {
    std::fprintf(stderr, "first_use_bench: --out is required\n%s", usage);
    return 2;
  }
  if (a.tuned && a.db.empty()) {
    std::fprintf(stderr, "first_use_bench: --tuned needs --db\n%s", usage);
    return 2;
  }
  try {
    gemmtune::run(a);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "first_use_bench: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "first_use_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
