// cluster_twin_probe: does a clustered cuBLASLt algo's two-speed behaviour go away with the same algo in 1x1x1
// clusters? (issue 48)
//
// Clustered algos (cluster shape above 1x1x1) run at one of two speeds about 20% apart for tens of ms at a time
// (runtime/first_use_trial.hpp), which is why the trial holds a clustered default to a 12% bar and why two processes'
// timings of the same kernel disagree (held-out seed 9603: 4944x768x4096 tf32 bias+gelu ran 116.5 us per call queued
// in one process against eager's 98.0, on the same sm90 kernel). If the same algo fields with cluster shape 1x1x1
// (its "steady twin") run at the fast speed all the time, the twin is a challenger worth adding.
//
//   cluster_twin_probe PROBLEM_KEY [CANDIDATE_ID]   default candidate: the heuristic's first (64 MiB workspace)
//
// The candidate and its twin (cluster_shape 2) alternate in batches of 20 warm calls, each queued behind a blocking
// kernel (launch/blocking_kernel.hpp), CUDA events around the batch, for 400 rounds (about a second of GPU time at
// 100 us per call). Per side: the median, the 10th and 90th percentiles, and how many batches ran more than 10% above
// the side's own fastest (the slow speed's share).
#include <algorithm>
#include <cstdio>
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
constexpr int kCalls = 20, kRounds = 400;
constexpr int kClusterShape1x1x1 = 2;  // CUBLASLT_CLUSTER_SHAPE_1x1x1

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void probe(const GemmProblem& p, const std::string& candidate_id, cudaStream_t s) {
  const LtHandle lt = make_lt_handle();
  const GemmProblem g = pass_gemm(p);
  const LtGemm gemm(lt.get(), g);
  Candidate c;
  if (candidate_id.empty()) {
    const std::vector<Candidate> first = gemm.heuristic(1, kWorkspace);
    if (first.empty()) throw CheckError("cuBLASLt's heuristic has no algo for " + p.key());
    c = first.front();
  } else {
    c = Candidate::parse_id(candidate_id);
    if (c.backend != Backend::Lt || c.lt_epilogue_kernel || c.lt_padded)
      throw InputError(candidate_id + ": a cuBLASLt candidate with its own epilogue is needed");
  }
  Candidate twin = c;
  twin.lt.cluster_shape = kClusterShape1x1x1;
  const Candidate sides[2] = {c, twin};
  cublasLtMatmulAlgo_t algos[2];
  std::size_t needed[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    algos[i] = gemm.make_algo(sides[i].lt);
    if (const std::string why = gemm.check(algos[i], kWorkspace, &needed[i]); !why.empty()) {
      std::printf("%s %s: cuBLASLt refuses it: %s\n", p.key().c_str(), sides[i].id().c_str(), why.c_str());
      return;
    }
  }
  DeviceBuffer<unsigned char> workspace(kWorkspace);
  const ProblemBuffers buffers(p, 0, 5, s);
  const GemmOperands x = buffers.operands(0);
  BlockingKernel blocker;
  const CudaEvent start, stop;
  const auto batch_us = [&](int side) {
    return blocked_batch_us(blocker, start, stop, s, kCalls,
                            [&](int) { gemm.run(algos[side], x, workspace.get(), kWorkspace, s); });
  };
  for (int side = 0; side < 2; ++side) {  // loads each kernel before anything waits behind the blocking kernel
    gemm.run(algos[side], x, workspace.get(), kWorkspace, s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  }
  std::vector<double> us[2];
  for (int r = 0; r < kRounds; ++r)
    for (int k = 0; k < 2; ++k) {
      const int side = (r + k) % 2;  // the side that goes first alternates
      us[side].push_back(batch_us(side));
    }
  std::printf("%s: %d rounds of %d calls, alternating\n", p.key().c_str(), kRounds, kCalls);
  for (int side = 0; side < 2; ++side) {
    const double fastest = *std::min_element(us[side].begin(), us[side].end());
    const auto slow = std::count_if(us[side].begin(), us[side].end(), [&](double t) { return t > 1.10 * fastest; });
    std::printf("  %-44s median %8.2f us  p10 %8.2f  p90 %8.2f  fastest %8.2f  batches >10%% above it: %3.0f%%\n",
                sides[side].id().c_str(), percentile(us[side], 0.5), percentile(us[side], 0.1),
                percentile(us[side], 0.9), fastest, 100.0 * static_cast<double>(slow) / kRounds);
  }
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: cluster_twin_probe PROBLEM_KEY [CANDIDATE_ID]\n");
    return 2;
  }
  try {
    const gemmtune::CudaStream stream;
    gemmtune::probe(gemmtune::GemmProblem::parse_key(argv[1]), argc == 3 ? argv[2] : "", stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "cluster_twin_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cluster_twin_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
