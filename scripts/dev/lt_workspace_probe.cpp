// lt_workspace_probe: does the same cuBLASLt call (one handle's heuristic-first algo, same descriptors, same buffers)
// run at the same speed from another workspace allocation, another handle, or another instance of its graph?
// The held-out benchmark's records below 0.98x all run the same algo on both sides (the runtime's handle and
// workspace against the benchmark's own); this separates those causes from the runtime.
//
//   lt_workspace_probe [PROBLEM_KEY ...]   default: the held-out benchmark's tf32 shapes whose same-algo records
//                                          fell below 0.98x on the H200
//
// Per problem and launch (stream, graph), 21 rounds; each round times the reference (handle 1, workspace 0, graph 0)
// and each other side in adjacent batches of 20 warm calls, order alternating. Prints each side's median per call and
// the median and range over rounds of reference / side: 1.000 means the side runs exactly as fast.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = std::size_t{64} << 20;  // what the runtime and the benchmark give cuBLASLt
constexpr int kCalls = 20, kRounds = 21;

struct Side {
  std::string name;
  int handle;     // 0 or 1
  int workspace;  // index into the workspaces
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void probe(const GemmProblem& p, cudaStream_t s) {
  const LtHandle handles[2] = {make_lt_handle(), make_lt_handle()};
  const GemmProblem g = pass_gemm(p);
  const LtGemm gemms[2] = {LtGemm(handles[0].get(), g), LtGemm(handles[1].get(), g)};
  const std::vector<Candidate> first = gemms[0].heuristic(1, kWorkspace);
  if (first.empty()) throw CheckError("cuBLASLt's heuristic has no algo for " + p.key());
  const cublasLtMatmulAlgo_t algos[2] = {gemms[0].make_algo(first[0].lt), gemms[1].make_algo(first[0].lt)};
  std::vector<DeviceBuffer<unsigned char>> workspaces;
  for (int i = 0; i < 4; ++i) workspaces.emplace_back(kWorkspace);
  const ProblemBuffers buffers(p, 0, 7, s);
  const GemmOperands x = buffers.operands(0);
  const std::vector<Side> sides = {{"reference", 0, 0}, {"same, 2nd graph", 0, 0}, {"workspace 1", 0, 1},
                                   {"workspace 2", 0, 2}, {"workspace 3", 0, 3}, {"handle 2", 1, 0}};
  const auto enqueue = [&](const Side& side) {
    for (int c = 0; c < kCalls; ++c)
      gemms[side.handle].run(algos[side.handle], x, workspaces[side.workspace].get(), kWorkspace, s);
  };
  std::vector<CudaGraphExec> graphs;
  for (const Side& side : sides) graphs.push_back(CudaGraphExec::capture(s, [&] { enqueue(side); }));
  const CudaEvent start, stop;
  for (const bool graph : {false, true}) {
    const auto batch_us = [&](std::size_t i) {
      start.record(s);
      if (graph)
        graphs[i].launch(s);
      else
        enqueue(sides[i]);
      stop.record(s);
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / kCalls;
    };
    for (std::size_t i = 0; i < sides.size(); ++i) batch_us(i);  // loads kernels, uploads graphs
    std::vector<std::vector<double>> us(sides.size()), ratio(sides.size());
    for (int r = 0; r < kRounds; ++r)
      for (std::size_t i = 1; i < sides.size(); ++i) {
        const bool reference_first = (r + static_cast<int>(i)) % 2 == 0;
        double ref = 0, side = 0;
        if (reference_first) {
          ref = batch_us(0);
          side = batch_us(i);
        } else {
          side = batch_us(i);
          ref = batch_us(0);
        }
        us[0].push_back(ref);
        us[i].push_back(side);
        ratio[i].push_back(ref / side);
      }
    std::printf("%s %s, %s: reference %.2f us\n", p.key().c_str(), first[0].id().c_str(), graph ? "graph" : "stream",
                median(us[0]));
    for (std::size_t i = 1; i < sides.size(); ++i)
      std::printf("  %-16s %8.2f us  reference/side %.3f (rounds %.3f..%.3f)\n", sides[i].name.c_str(),
                  median(us[i]), median(ratio[i]), *std::min_element(ratio[i].begin(), ratio[i].end()),
                  *std::max_element(ratio[i].begin(), ratio[i].end()));
  }
}

int run(int argc, char** argv) {
  std::vector<std::string> keys(argv + 1, argv + argc);
  if (keys.empty())
    keys = {"fwd:144x3072x13824:nn:row:none:tf32", "fwd:305x8192x3072:nn:row:none:tf32",
            "fwd:139x4096x4096:nn:row:none:tf32", "fwd:88x2036x4096:nn:row:none:tf32",
            "fwd:270x14120x1064:nn:row:none:tf32"};
  const CudaStream stream;
  for (const std::string& key : keys) probe(GemmProblem::parse_key(key), stream.get());
  return 0;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    return gemmtune::run(argc, argv);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "lt_workspace_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lt_workspace_probe: %s\n", e.what());
    return 1;
  }
}
