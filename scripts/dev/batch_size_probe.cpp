// batch_size_probe: does the number of calls in a timed batch change which of two candidates is faster? (issue 48)
//
// The first-use trial times batches of about 100 us of calls (first_use_trial.cpp: kTrialBatchUs), so a call of 75 us
// is timed one at a time, queued behind a blocking kernel, while a program, the held-out benchmark and `gemmtune run`
// launch calls back to back. At 64x8192x8192 bias+gelu tf32 (H200) the trial timed the heuristic's 1 MiB algo with
// cuBLASLt's bias and our gelu at 79.3 us against heuristic-first's 76.8 in the same pair, and `gemmtune run` (200
// calls back to back) at 70.5 against 78.4; PyTorch eager, which runs that algo, ran 0.93x our heuristic-first.
//
//   batch_size_probe PROBLEM_KEY CANDIDATE_A CANDIDATE_B [ROUNDS=15]
//
// Per batch size (1, 2, 3, 5, 10, 20 calls), ROUNDS pairs of batches, the side that goes first alternating, each batch
// queued behind the blocking kernel with CUDA events around its calls, on one buffer set (warm). Printed per size:
// each side's median per-call time and the median over the rounds of B's time over A's in the same round.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "launch/blocked_batch.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_handles.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = std::size_t{64} << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void probe(const GemmProblem& p, const Candidate& a, const Candidate& b, int rounds, cudaStream_t s) {
  const LtHandle lt = make_lt_handle();
  DeviceBuffer<unsigned char> workspace(kWorkspace);
  const BorrowedWorkspace ws{workspace.get(), workspace.size()};
  const CandidateLauncher sides[2] = {CandidateLauncher(p, a, lt.get(), ws), CandidateLauncher(p, b, lt.get(), ws)};
  const ProblemBuffers buffers(p, 0, 21, s);
  const GemmOperands x = buffers.operands(0);
  BlockingKernel blocker;
  const CudaEvent start, stop;
  for (const CandidateLauncher& side : sides) {  // loads each kernel before anything waits behind the blocking kernel
    side.launch(x, s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  }
  const auto batch_us = [&](int side, int calls) {
    return blocked_batch_us(blocker, start, stop, s, calls, [&](int) { sides[side].launch(x, s); });
  };
  std::printf("%s: A %s, B %s, %d rounds per batch size\n", p.key().c_str(), a.id().c_str(), b.id().c_str(), rounds);
  for (const int calls : {1, 2, 3, 5, 10, 20}) {
    std::vector<double> us[2], ratio;
    for (int r = 0; r < rounds; ++r) {
      double t[2];
      for (int k = 0; k < 2; ++k) {
        const int side = (r + k) % 2;
        t[side] = batch_us(side, calls);
        us[side].push_back(t[side]);
      }
      ratio.push_back(t[1] / t[0]);
    }
    std::printf("  %2d calls a batch: A %8.2f us per call, B %8.2f, B/A %.3f (rounds %.3f-%.3f)\n", calls,
                median(us[0]), median(us[1]), median(ratio), *std::min_element(ratio.begin(), ratio.end()),
                *std::max_element(ratio.begin(), ratio.end()));
  }
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: batch_size_probe PROBLEM_KEY CANDIDATE_A CANDIDATE_B [ROUNDS=15]\n");
    return 2;
  }
  try {
    const int rounds = argc == 5 ? std::atoi(argv[4]) : 15;
    if (rounds < 1) throw gemmtune::InputError(std::string("ROUNDS must be a positive integer, got '") + argv[4] + "'");
    const gemmtune::CudaStream stream;
    gemmtune::probe(gemmtune::GemmProblem::parse_key(argv[1]), gemmtune::Candidate::parse_id(argv[2]),
                    gemmtune::Candidate::parse_id(argv[3]), rounds, stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "batch_size_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "batch_size_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
