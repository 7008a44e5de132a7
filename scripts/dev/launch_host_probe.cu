// launch_host_probe: where a candidate's host time goes. Under `gemmtune apply` a `+pad` cuBLASLt call cost 15-19 us
// more host time than cuBLAS's own call (results/nvidia-h200/apply_overhead.json, 1500x1079x799 tf32) while our staged
// kernels (also a copy, then the GEMM) cost 1-4 us more; this times each piece of such a call alone, and the whole
// call replayed as one CUDA graph; and what each costs the GPU, where calls queue back to back.
//
//   launch_host_probe [--behind-previous] PROBLEM_KEY CANDIDATE_ID...
//
// --behind-previous: our kernels launched as the runtime launches them, behind the kernel before them on the stream
// (CandidateLauncher::set_behind_previous_kernel); without it, as the sweep does.
//
// Per candidate: the whole launch, and for a `+pad` one its padding copy, the cuBLASLt call on the padded problem
// (the same algo without +pad) and the epilogue kernel, each enqueued --calls times behind a spin kernel (so nothing
// waits on the GPU), host clock around the batch, median per call over the rounds. The GPU rows time the same batch
// between two CUDA events recorded behind the spin: what a replay costs the GPU beside a launch (asked because tiny
// kernels read 2-3% slower replayed in heldout_bench; within 0.13 us here, and the cause was that benchmark's
// warm-up: results/nvidia-h200/launch_host_probe.txt, bench/heldout_bench.cu).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "kernels/epilogue_kernel.hpp"
#include "kernels/padded_copy.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/device_footprint.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_handles.hpp"
#include "lt/lt_padding.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

constexpr int kCalls = 50, kRounds = 41, kRotating = 8;
constexpr std::size_t kWorkspace = std::size_t{64} << 20;

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

long long spin_cycles() {
  int device = 0, khz = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(khz) * 8;  // 8 ms: longer than any batch takes to enqueue
}

double host_us_per_call(cudaStream_t s, const std::function<void()>& call) {
  call();
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int r = 0; r < kRounds; ++r) {
    spin<<<1, 1, 0, s>>>(spin_cycles());
    GT_CUDA_CHECK_LAUNCH();
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < kCalls; ++c) call();
    const auto t1 = std::chrono::steady_clock::now();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

double gpu_us_per_call(cudaStream_t s, const std::function<void()>& call) {
  call();
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  const CudaEvent start, stop;
  std::vector<double> us;
  for (int r = 0; r < kRounds; ++r) {
    spin<<<1, 1, 0, s>>>(spin_cycles());
    GT_CUDA_CHECK_LAUNCH();
    start.record(s);
    for (int c = 0; c < kCalls; ++c) call();
    stop.record(s);
    GT_CUDA_CALL(cudaEventSynchronize(stop.get()));
    us.push_back(1000.0 * stop.elapsed_ms_since(start) / kCalls);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

std::string node_name(cudaGraphNode_t n) {
  cudaGraphNodeType type{};
  GT_CUDA_CALL(cudaGraphNodeGetType(n, &type));
  if (type != cudaGraphNodeTypeKernel) return "node type " + std::to_string(static_cast<int>(type));
  cudaKernelNodeParams params{};
  if (cudaGraphKernelNodeGetParams(n, &params) != cudaSuccess) {  // a kernel launched through the driver API
    (void)cudaGetLastError();
    return "a driver-API kernel (cuBLASLt's)";
  }
  const char* name = nullptr;
  if (cudaFuncGetName(&name, params.func) != cudaSuccess || !name) return "kernel ?";
  return std::string(name).substr(0, 60);
}

// How many edges what enqueue() launches has, captured, and each: its two nodes (a kernel's name), type and ports.
void print_edges(const char* label, cudaStream_t s, const std::function<void()>& enqueue) {
  const std::vector<CapturedGraph::Edge> edges = CapturedGraph::capture(s, enqueue).edges();
  std::printf("  %-25s %7zu\n", label, edges.size());
  for (const CapturedGraph::Edge& e : edges)
    std::printf("    %s -> %s: type %d, ports %d -> %d\n", node_name(e.from).c_str(), node_name(e.to).c_str(),
                static_cast<int>(e.data.type), static_cast<int>(e.data.from_port), static_cast<int>(e.data.to_port));
}

void probe(const GemmProblem& p, const std::string& id, bool behind_previous, cudaStream_t s) {
  const LtHandle lt = make_lt_handle();
  const Candidate c = Candidate::parse_id(id);
  const ProblemBuffers buffers(p, 0, 11, s);
  const GemmOperands x = buffers.operands(0);
  CandidateLauncher whole(p, c, lt.get(), kWorkspace);
  whole.set_behind_previous_kernel(behind_previous);
  DeviceBuffer<float> padding(std::max<std::size_t>(whole.padding_floats(), 1));
  GT_CUDA_CALL(cudaMemset(padding.get(), 0, padding.size() * sizeof(float)));
  DeviceBuffer<unsigned char> workspace(kWorkspace);
  const BorrowedWorkspace ws{workspace.get(), kWorkspace};
  std::printf("%s %s\n", p.key().c_str(), id.c_str());
  std::printf("  whole launch              %7.2f us\n", host_us_per_call(s, [&] {
                whole.launch(x, s, ws, nullptr, padding.get());
              }));
  // The same launch replayed as one CUDA graph: what its host time would be were a call's launches one graph; and
  // what capturing and instantiating it costs, the price of a call whose pointers the graph does not hold.
  const CudaGraphExec graph = CudaGraphExec::capture(s, [&] { whole.launch(x, s, ws, nullptr, padding.get()); });
  std::printf("  as one graph: replay      %7.2f us\n", host_us_per_call(s, [&] { graph.launch(s); }));
  std::printf("  as one graph: capture     %7.2f us\n", host_us_per_call(s, [&] {
                CudaGraphExec::capture(s, [&] { whole.launch(x, s, ws, nullptr, padding.get()); });
              }));
  std::printf("  GPU: whole launch         %7.2f us\n", gpu_us_per_call(s, [&] {
                whole.launch(x, s, ws, nullptr, padding.get());
              }));
  std::printf("  GPU: as one graph         %7.2f us\n", gpu_us_per_call(s, [&] { graph.launch(s); }));
  // The batch as a program's captured step holds it: all its calls in one graph, replayed once per batch.
  const CudaGraphExec batch = CudaGraphExec::capture(s, [&] {
    for (int c = 0; c < kCalls; ++c) whole.launch(x, s, ws, nullptr, padding.get());
  });
  int call_in_batch = 0;
  std::printf("  GPU: the batch as a graph %7.2f us\n", gpu_us_per_call(s, [&] {
                if (call_in_batch++ % kCalls == 0) batch.launch(s);
              }));
  // Calls on rotating buffers (a model's layers, each its own weights) are graphs of their own: the same rows with
  // each call on the next of kRotating input sets, launched, and replayed from a graph per set.
  const auto set_bytes = static_cast<std::size_t>(verify_and_time_bytes(p, 2, 0) - verify_and_time_bytes(p, 1, 0));
  const ProblemBuffers rotating(p, set_bytes * (kRotating - 1) / 2, 13, s);  // input_set_count: kRotating sets
  const int sets = std::min(rotating.sets(), kRotating);
  std::vector<CudaGraphExec> per_set;
  for (int i = 0; i < sets; ++i) {
    const GemmOperands xi = rotating.operands(i);
    per_set.push_back(CudaGraphExec::capture(s, [&] { whole.launch(xi, s, ws, nullptr, padding.get()); }));
    per_set.back().upload(s);
  }
  int next = 0;
  std::printf("  GPU: launch, %d sets       %7.2f us\n", sets, gpu_us_per_call(s, [&] {
                whole.launch(rotating.operands(next++ % sets), s, ws, nullptr, padding.get());
              }));
  std::printf("  GPU: a graph per set      %7.2f us\n",
              gpu_us_per_call(s, [&] { per_set[static_cast<std::size_t>(next++ % sets)].launch(s); }));
  std::printf("  cudaStreamQuery, busy     %7.2f us\n", host_us_per_call(s, [&] {
                if (cudaStreamQuery(s) == cudaErrorNotReady) (void)cudaGetLastError();
              }));
  // What a runtime would pay to watch how far the GPU has got through its own calls: an event after each.
  cudaEvent_t mark = nullptr;
  GT_CUDA_CALL(cudaEventCreateWithFlags(&mark, cudaEventDisableTiming));
  std::printf("  cudaEventRecord           %7.2f us\n",
              host_us_per_call(s, [&] { GT_CUDA_CALL(cudaEventRecord(mark, s)); }));
  std::printf("  cudaEventQuery, busy      %7.2f us\n", host_us_per_call(s, [&] {
                if (cudaEventQuery(mark) == cudaErrorNotReady) (void)cudaGetLastError();
              }));
  std::printf("  GPU: launch, event after  %7.2f us\n", gpu_us_per_call(s, [&] {
                whole.launch(x, s, ws, nullptr, padding.get());
                GT_CUDA_CALL(cudaEventRecord(mark, s));
              }));
  GT_CUDA_CALL(cudaEventDestroy(mark));
  std::printf("  graph nodes               %7zu\n", graph.nodes());
  // A kernel launched as a programmatic dependent launch leaves an edge of type 1 (programmatic) to the node before it
  // in a capture: it starts as that node retires. One between the two calls would be an overlap that a replay of a
  // one-call graph after the last cannot have (cuBLASLt's m = 1 split-k algos lose 1-2.6% replayed:
  // results/nvidia-h200/replay_overlap_ab.txt).
  print_edges("one call: edges", s, [&] { whole.launch(x, s, ws, nullptr, padding.get()); });
  print_edges("two calls: edges", s, [&] {
    whole.launch(x, s, ws, nullptr, padding.get());
    whole.launch(x, s, ws, nullptr, padding.get());
  });
  const std::optional<LtPadding> pad = lt_padding(pass_gemm(p));
  if (!c.lt_padded || !pad) return;

  const PaddedCall call = padded_call(*pad, x, padding.get());
  if (call.n_copies > 0)
    std::printf("  padding copy (%d operands) %7.2f us\n", call.n_copies,
                host_us_per_call(s, [&] { kernels::copy_rows_padded(call.copies[0], s, call.copies[1]); }));

  Candidate unpadded = c;
  unpadded.lt_padded = false;
  const CandidateLauncher lt_only(pad->padded, unpadded, lt.get(), kWorkspace);
  const ProblemBuffers padded_buffers(pad->padded, 0, 12, s);
  const GemmOperands px = padded_buffers.operands(0);
  std::printf("  cuBLASLt on padded        %7.2f us  (%s)\n",
              host_us_per_call(s, [&] { lt_only.launch(px, s, ws, nullptr, nullptr); }), pad->padded.key().c_str());
  if (!call.d) {  // Y's stored shape did not change: cuBLASLt wrote it, and the epilogue (if any) runs in place
    std::printf("  epilogue kernel           in place on Y\n");
    return;
  }
  std::printf("  epilogue kernel           %7.2f us\n", host_us_per_call(s, [&] {
                kernels::launch_epilogue(p, call.d, x, s, pad->y.padded_cols);
              }));
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  const bool behind_previous = argc > 1 && std::string(argv[1]) == "--behind-previous";
  const int first = behind_previous ? 2 : 1;
  if (argc < first + 2) {
    std::fprintf(stderr, "usage: launch_host_probe [--behind-previous] PROBLEM_KEY CANDIDATE_ID...\n");
    return 2;
  }
  try {
    const gemmtune::CudaStream stream;
    const gemmtune::GemmProblem p = gemmtune::GemmProblem::parse_key(argv[first]);
    for (int i = first + 1; i < argc; ++i) gemmtune::probe(p, argv[i], behind_previous, stream.get());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_host_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
