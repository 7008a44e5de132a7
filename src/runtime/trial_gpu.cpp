#include "runtime/trial_gpu.hpp"

#include <algorithm>
#include <cstdint>
#include <random>

#include "cupti/l2_flush.hpp"
#include "launch/device_footprint.hpp"
#include "launch/random_fill.hpp"

namespace gemmtune::runtime {
namespace {

// Every operand starts on a 256-byte boundary, as from cudaMalloc: the launchers' alignment checks (and cuBLASLt's
// kernel choice) see what a program's own buffers would give them.
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t floats(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float);
}

// Grows `buffer` to at least `bytes` (in 2 MiB steps); true where it was reallocated.
bool grow(DeviceBuffer<unsigned char>& buffer, std::size_t bytes) {
  if (buffer.size() >= bytes) return false;
  buffer = DeviceBuffer<unsigned char>();  // free first: the old and the new need not fit side by side
  constexpr std::size_t kStep = std::size_t{2} << 20;
  buffer = DeviceBuffer<unsigned char>((bytes + kStep - 1) / kStep * kStep);
  return true;
}

}  // namespace

TrialScratch::TrialScratch(std::size_t l2_bytes, std::size_t workspace_bytes)
    : l2_bytes_(l2_bytes), workspace_(workspace_bytes), dropout_offset_(1) {
  GT_CUDA_CALL(cudaMemsetAsync(dropout_offset_.get(), 0, sizeof(std::uint64_t), stream_.get()));
}

std::vector<GemmOperands> TrialScratch::operands_for(const GemmProblem& gemm) {
  const std::size_t a = aligned(floats(gemm.m, gemm.k)), b = aligned(floats(gemm.k, gemm.n));
  const std::size_t bias = gemm.epi.bias ? aligned(floats(1, gemm.n)) : 0;
  const std::size_t y = aligned(floats(gemm.m, gemm.n));
  const std::size_t set_bytes = a + b + bias;
  const int sets = input_set_count(gemm, l2_bytes_);
  if (grow(inputs_, std::max(set_bytes * static_cast<std::size_t>(sets), 2 * l2_bytes_)))
    fill_uniform(reinterpret_cast<float*>(inputs_.get()), inputs_.size() / sizeof(float),
                 (std::uint64_t{std::random_device{}()} << 32) | 1u, -1.f, 1.f, stream_.get());
  grow(outputs_, gemm.epi.save_z ? 2 * y : y);
  std::vector<GemmOperands> out;
  for (int i = 0; i < sets; ++i) {
    unsigned char* base = inputs_.get() + static_cast<std::size_t>(i) * set_bytes;
    GemmOperands x;
    x.A = reinterpret_cast<const float*>(base);
    x.B = reinterpret_cast<const float*>(base + a);
    x.bias = gemm.epi.bias ? reinterpret_cast<const float*>(base + a + b) : nullptr;
    x.Y = reinterpret_cast<float*>(outputs_.get());
    x.Z = gemm.epi.save_z ? reinterpret_cast<float*>(outputs_.get() + y) : nullptr;
    x.seed = 0x5eed;
    x.offset_ptr = gemm.epi.dropout() ? dropout_offset_.get() : nullptr;
    out.push_back(x);
  }
  return out;
}

void TrialScratch::wait_for(cudaStream_t producer) {
  inputs_written_.record(producer);
  GT_CUDA_CALL(cudaStreamWaitEvent(stream_.get(), inputs_written_.get(), 0));
}

std::optional<CallerInputs> caller_inputs(const GemmOperands& x, bool bias, cudaStream_t s) {
  const auto on_256 = [](const void* p) { return p && reinterpret_cast<std::uintptr_t>(p) % 256 == 0; };
  if (!on_256(x.A) || !on_256(x.B) || (bias && !on_256(x.bias))) return std::nullopt;
  return CallerInputs{x.A, x.B, bias ? x.bias : nullptr, s};
}

// The last 2× L2 of the inputs' memory: enough to evict the sets before it, at a bounded cost however large they are.
void TrialScratch::evict_l2() {
  const std::size_t bytes = std::min(inputs_.size(), 2 * l2_bytes_) / sizeof(int4) * sizeof(int4);
  rewrite_to_evict_l2(inputs_.get() + (inputs_.size() - bytes), bytes, stream_.get());
}

void TrialScratch::trim() {
  if (inputs_.size() + outputs_.size() <= kept_bytes()) return;
  inputs_ = DeviceBuffer<unsigned char>();
  outputs_ = DeviceBuffer<unsigned char>();
}

CudaTrialGpu::CudaTrialGpu(TrialScratch& scratch, std::vector<const CandidateLauncher*> sides,
                           const std::optional<CallerInputs>& caller)
    : scratch_(scratch), sides_(std::move(sides)), graphs_{std::vector<std::optional<CudaGraphExec>>(sides_.size()),
                                                          std::vector<std::optional<CudaGraphExec>>(sides_.size())} {
  if (!sides_.empty()) {
    sets_ = scratch_.operands_for(sides_.front()->gemm());
    if (caller) {
      sets_.front().A = caller->A;
      sets_.front().B = caller->B;
      sets_.front().bias = caller->bias;
      scratch_.wait_for(caller->stream);
    }
  }
  began_ = std::chrono::steady_clock::now();
}

void CudaTrialGpu::launch(int side, int set) {
  sides_[static_cast<std::size_t>(side)]->launch(sets_[static_cast<std::size_t>(set) % sets_.size()],
                                                 scratch_.stream());
}

void CudaTrialGpu::wait() { GT_CUDA_CALL(cudaStreamSynchronize(scratch_.stream())); }

void CudaTrialGpu::capture_graph(int side, int calls, bool cold) {
  std::optional<CudaGraphExec>& g = graphs_[cold ? 1 : 0][static_cast<std::size_t>(side)];
  g.emplace(CudaGraphExec::capture(scratch_.stream(), [&] {
    for (int i = 0; i < calls; ++i) launch(side, cold ? 1 + i : 0);
  }));
  g->upload(scratch_.stream());
}

void CudaTrialGpu::replay_graph(int side, bool cold) {
  graphs_[cold ? 1 : 0][static_cast<std::size_t>(side)]->launch(scratch_.stream());
}

void CudaTrialGpu::evict_l2() { scratch_.evict_l2(); }

void CudaTrialGpu::block() { scratch_.blocker().block(scratch_.stream()); }

void CudaTrialGpu::start_timer() { scratch_.start().record(scratch_.stream()); }

void CudaTrialGpu::stop_timer() { scratch_.stop().record(scratch_.stream()); }

bool CudaTrialGpu::release_and_wait() {
  scratch_.blocker().release();
  wait();
  return !scratch_.blocker().timed_out();
}

double CudaTrialGpu::timed_us() const {
  return 1e3 * static_cast<double>(scratch_.stop().elapsed_ms_since(scratch_.start()));
}

double CudaTrialGpu::elapsed_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began_).count();
}

}  // namespace gemmtune::runtime
