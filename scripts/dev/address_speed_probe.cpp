// address_speed_probe: is a cuBLASLt algo's slow speed a matter of when it runs, or of where its operands lie? (issue 48)
//
// Until d936b37 the first-use trial held a clustered default to a 12% floor because clustered algos were seen at one of
// two speeds about 20% apart. The trial timed candidates on its own scratch inputs; the program and the benchmark on
// theirs. One clustered challenger ran 121.1 us per call in the trial and 137.2 in the benchmark
// (160x13824x5120 tf32, seed 9619), and a 1x1x1 twin was as unsteady as its clustered algo (cluster_twin_probe.txt).
// If speed follows the allocation, every set of buffers has a speed of its own and keeps it; if it follows time, all
// sets slow down together in the same rounds. Both, it found: results/nvidia-h200/address_speed_probe.txt.
//
//   address_speed_probe PROBLEM_KEY [SETS=8 [TOP_K=3 [ROUNDS=30 [VARY=all|a|b|y]]]]
//
// SETS separately allocated buffer sets (A, B, bias, Y), the heuristic's first TOP_K algos at a 64 MiB workspace.
// VARY: which operands come from set i (the others from set 0): all of them, or only A, only B, only Y. Per
// round every (set, algo) pair runs one batch of 10 warm calls queued behind a blocking kernel, in an order shuffled
// per round, CUDA events around the batch. Printed per algo: each set's median over the rounds (as a ratio to the
// fastest set's), the spread between sets (slowest set's median over fastest's) against the spread within one set
// over time (median over sets of p90/p10), and the spread of the round factors (a round's batches over their sets'
// medians, the median over sets: what moves every set at once).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "launch/blocked_batch.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = std::size_t{64} << 20;
constexpr int kCalls = 10;

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void probe(const GemmProblem& p, int sets, int top_k, int rounds, const std::string& vary, cudaStream_t s) {
  const LtHandle lt = make_lt_handle();
  const GemmProblem g = pass_gemm(p);
  const LtGemm gemm(lt.get(), g);
  std::vector<Candidate> algos_found = gemm.heuristic(top_k, kWorkspace);
  if (algos_found.empty()) throw CheckError("cuBLASLt's heuristic has no algo for " + p.key());
  std::vector<cublasLtMatmulAlgo_t> algos;
  for (const Candidate& c : algos_found) {
    algos.push_back(gemm.make_algo(c.lt));
    std::size_t needed = 0;
    if (const std::string why = gemm.check(algos.back(), kWorkspace, &needed); !why.empty())
      throw CheckError(c.id() + ": cuBLASLt refuses its own heuristic's algo: " + why);
  }
  const int n_algos = static_cast<int>(algos.size());
  DeviceBuffer<unsigned char> workspace(kWorkspace);
  // Each set its own allocations (l2_bytes 0 gives one input set), a spacer of 2-64 MiB before each so that the sets
  // start at unrelated offsets of the allocator's pools.
  std::vector<std::unique_ptr<ProblemBuffers>> buffers;
  std::vector<DeviceBuffer<unsigned char>> spacers;
  std::mt19937 spacing(11);
  for (int i = 0; i < sets; ++i) {
    spacers.emplace_back((std::size_t{2} + spacing() % 63) << 20);
    buffers.push_back(std::make_unique<ProblemBuffers>(p, 0, 100 + i, s));
  }
  BlockingKernel blocker;
  const CudaEvent start, stop;
  const auto batch_us = [&](int algo, int set) {
    const GemmOperands own = buffers[static_cast<std::size_t>(set)]->operands(0);
    GemmOperands x = buffers.front()->operands(0);
    if (vary == "all") x = own;
    if (vary == "a") x.A = own.A;
    if (vary == "b") x.B = own.B;
    if (vary == "y") x.Y = own.Y;
    return blocked_batch_us(blocker, start, stop, s, kCalls, [&](int) {
      gemm.run(algos[static_cast<std::size_t>(algo)], x, workspace.get(), kWorkspace, s);
    });
  };
  for (int a = 0; a < n_algos; ++a) {  // loads each kernel (not behind the blocking kernel), then touches every set
    gemm.run(algos[static_cast<std::size_t>(a)], buffers.front()->operands(0), workspace.get(), kWorkspace, s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    for (int set = 0; set < sets; ++set) batch_us(a, set);
  }

  // us[a][set][round]
  std::vector<std::vector<std::vector<double>>> us(static_cast<std::size_t>(n_algos),
                                                   std::vector<std::vector<double>>(static_cast<std::size_t>(sets)));
  std::vector<std::pair<int, int>> order;
  for (int a = 0; a < n_algos; ++a)
    for (int set = 0; set < sets; ++set) order.emplace_back(a, set);
  std::mt19937 shuffle(7);
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (const auto& [a, set] : order)
      us[static_cast<std::size_t>(a)][static_cast<std::size_t>(set)].push_back(batch_us(a, set));
  }

  std::printf("%s: %d sets (varying %s) x %d algos, %d rounds of %d calls, shuffled per round\n", p.key().c_str(), sets,
              vary.c_str(), n_algos, rounds, kCalls);
  for (int a = 0; a < n_algos; ++a) {
    const auto& t = us[static_cast<std::size_t>(a)];
    std::vector<double> medians, within;
    for (const auto& set_us : t) {
      medians.push_back(percentile(set_us, 0.5));
      within.push_back(percentile(set_us, 0.9) / percentile(set_us, 0.1));
    }
    const double fastest_set = *std::min_element(medians.begin(), medians.end());
    std::vector<double> round_factor;
    for (int r = 0; r < rounds; ++r) {
      std::vector<double> f;
      for (int set = 0; set < sets; ++set)
        f.push_back(t[static_cast<std::size_t>(set)][static_cast<std::size_t>(r)] / medians[static_cast<std::size_t>(set)]);
      round_factor.push_back(percentile(f, 0.5));
    }
    std::printf("  %-40s fastest set median %8.2f us; between sets %.3f; within a set p90/p10 %.3f; rounds p90/p10 %.3f\n",
                algos_found[static_cast<std::size_t>(a)].id().c_str(), fastest_set,
                *std::max_element(medians.begin(), medians.end()) / fastest_set, percentile(within, 0.5),
                percentile(round_factor, 0.9) / percentile(round_factor, 0.1));
    std::printf("    set medians / fastest:");
    for (double m : medians) std::printf(" %.3f", m / fastest_set);
    std::printf("\n    round factors:");
    for (double f : round_factor) std::printf(" %.3f", f);
    std::printf("\n");
  }
}

int positive_arg(const char* text, const char* name) {
  const int v = std::atoi(text);
  if (v < 1) throw InputError(std::string(name) + " must be a positive integer, got '" + text + "'");
  return v;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  if (argc < 2 || argc > 6) {
    std::fprintf(stderr, "usage: address_speed_probe PROBLEM_KEY [SETS=8 [TOP_K=3 [ROUNDS=30 [VARY=all|a|b|y]]]]\n");
    return 2;
  }
  try {
    const int sets = argc > 2 ? gemmtune::positive_arg(argv[2], "SETS") : 8;
    const int top_k = argc > 3 ? gemmtune::positive_arg(argv[3], "TOP_K") : 3;
    const int rounds = argc > 4 ? gemmtune::positive_arg(argv[4], "ROUNDS") : 30;
    const std::string vary = argc > 5 ? argv[5] : "all";
    if (vary != "all" && vary != "a" && vary != "b" && vary != "y")
      throw gemmtune::InputError("VARY must be all, a, b or y, got '" + vary + "'");
    const gemmtune::CudaStream stream;
    gemmtune::probe(gemmtune::GemmProblem::parse_key(argv[1]), sets, top_k, rounds, vary, stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "address_speed_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "address_speed_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
