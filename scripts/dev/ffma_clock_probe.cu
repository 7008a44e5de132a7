// ffma_clock_probe: how close fp32 GEMM (cublasSgemm with TF32 off, the call torch.mm makes in fp32) runs to the
// SMs' FFMA limit at the clock they keep while running it. Issue 48 asks the runtime for 1.05x PyTorch eager in fp32
// with no epilogue; where eager's sgemm already issues FFMA near the SMs' rate at that clock, no fp32 kernel can.
//
// An SM issues at most 128 FFMA a clock (4 schedulers x 32 lanes, one warp instruction a clock each), so a GEMM of
// m x n x k needs m*n*k / (128 * SMs) clocks at the least:
//   FFMA share = m*n*k / (t * f_SM * 128 * SMs),   f_SM the clock the SMs ran at during t.
// f_SM is not what nvidia-smi reports (results/nvidia-h200/tensor_clock_under_load.txt: 150-200 MHz above what the SMs
// count) and falls under load, so it is read on the SMs: right after a batch of calls a one-warp-per-SM kernel counts
// clock64 cycles against %globaltimer nanoseconds over 20 us. The clock moves over milliseconds; the read is the
// batch's.
//
//   ffma_clock_probe [--sustain-ms MS] [MxNxK...]
//
// 1. The FFMA pipe: one 1024-thread block per SM, 8 independent FFMA chains a thread on random operands, per launch
//    cycles (clock64) and nanoseconds (%globaltimer) on every SM: FFMA per SM clock (of 128) and the clock. In a burst
//    (20 launches behind 10 ms of idle, as heldout_bench and compare_torch.py queue a batch) and sustained (MS of
//    launches back to back).
// 2. Per shape (default: held-out seed 9727's fp32 shapes and larger ones): cublasSgemm on random inputs in [-1, 1),
//    the same buffers each call (warm L2), 11 rounds of 20 calls behind 10 ms of idle, CUDA events around the 20;
//    the median per-call time, the clock after the batch, TFLOP/s and the FFMA share at that clock. Then the first
//    shape sustained for MS.
#include <cublas_v2.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "globaltimer_spin.cuh"
#include "lt/blas_handle.hpp"

namespace gemmtune {
namespace {

constexpr int kFfmaThreads = 1024, kChains = 8, kBatch = 20, kRounds = 11;
constexpr std::int64_t kIdleNs = 10'000'000, kClockWindowNs = 20'000;

struct ClockSample {
  long long cycles;
  long long ns;
};

__device__ float hash_unit(std::uint32_t i) {  // a float in [-1, 1) from an index
  i ^= i >> 16;
  i *= 0x7feb352du;
  i ^= i >> 15;
  i *= 0x846ca68bu;
  i ^= i >> 16;
  return static_cast<float>(i >> 8) * (2.f / 16777216.f) - 1.f;
}

__global__ void fill_random(float* x, std::size_t n, std::uint32_t salt) {
  const std::size_t step = gridDim.x * std::size_t{blockDim.x};
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += step)
    x[i] = hash_unit(static_cast<std::uint32_t>(i) * 2654435761u + salt);
}

// One warp per SM counts its SM's cycles against wall-clock nanoseconds.
__global__ void clock_read(std::int64_t ns, ClockSample* out) {
  if (threadIdx.x != 0) return;
  const long long c0 = clock64();
  const std::uint64_t t0 = global_ns();
  std::uint64_t t = t0;
  while ((t = global_ns()) - t0 < static_cast<std::uint64_t>(ns)) {
  }
  out[blockIdx.x] = {clock64() - c0, static_cast<long long>(t - t0)};
}

// a = a*b + c per chain: |b| < 1/2 keeps |a| below 2, and random operands toggle the datapath as a GEMM's do. b and c
// are the thread's, the same in every chain: an FFMA reading three registers of the two banks waits a clock on the
// conflict unless the operand reuse cache serves two of them, as it does for operands repeated in their slot by the
// instruction before (a GEMM's inner loop repeats one of A's values down a row of FFMAs). With a b and c per chain this
// loop issued 78 FFMA a clock (61%) on the H200.
__global__ void __launch_bounds__(kFfmaThreads) ffma_chains(int iters, std::uint32_t salt, float* sink,
                                                            ClockSample* out) {
  const std::uint32_t t = (blockIdx.x * kFfmaThreads + threadIdx.x) * (kChains + 2) + salt;
  float a[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) a[j] = hash_unit(t + j);
  const float b = 0.5f * hash_unit(t + kChains), c = hash_unit(t + kChains + 1);
  __syncthreads();
  const long long c0 = clock64();
  const std::uint64_t t0 = global_ns();
#pragma unroll 16
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) a[j] = fmaf(a[j], b, c);
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = {clock64() - c0, static_cast<long long>(global_ns() - t0)};
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += a[j];
  if (sum == 1234.5f) *sink = sum;  // keeps the chains; (almost) never true
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median of a sustained run's last quarter (at least its last value): the clock the board settled at.
double median_of_last_quarter(const std::vector<double>& v) {
  return median(std::vector<double>(v.end() - static_cast<std::ptrdiff_t>(v.size() / 4) - 1, v.end()));
}

// The share of the SMs' 128 FFMA a clock that `ffma` multiply-adds in `us` microseconds use at `mhz`.
double ffma_share(double ffma, double us, double mhz, int sms) { return ffma / (us * mhz * 128.0 * sms); }

struct Probe {
  int sms;
  cudaStream_t s;
  DeviceBuffer<ClockSample> samples;
  DeviceBuffer<float> sink{1};
  DeviceBuffer<int> spin_sink{1};

  Probe(int sm_count, cudaStream_t stream) : sms(sm_count), s(stream), samples(sm_count) {}

  std::vector<ClockSample> read_samples() const {
    std::vector<ClockSample> h(sms);
    GT_CUDA_CALL(cudaMemcpyAsync(h.data(), samples.get(), sms * sizeof(ClockSample), cudaMemcpyDeviceToHost, s));
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    return h;
  }
  // The median SM's clock in MHz over the samples' windows.
  double mhz(const std::vector<ClockSample>& h) const {
    std::vector<double> f;
    for (const ClockSample& x : h) f.push_back(1e3 * static_cast<double>(x.cycles) / static_cast<double>(x.ns));
    return median(f);
  }
  void idle() const {
    spin_kernel<<<1, 1, 0, s>>>(kIdleNs, spin_sink.get());
    GT_CUDA_CALL(cudaGetLastError());
  }
  double read_clock() const {
    clock_read<<<sms, 32, 0, s>>>(kClockWindowNs, samples.get());
    GT_CUDA_CALL(cudaGetLastError());
    return mhz(read_samples());
  }
  // One launch of the FFMA chains: (FFMA per SM clock, MHz), medians over the SMs.
  std::pair<double, double> ffma_launch(int iters, std::uint32_t salt) const {
    ffma_chains<<<sms, kFfmaThreads, 0, s>>>(iters, salt, sink.get(), samples.get());
    GT_CUDA_CALL(cudaGetLastError());
    const std::vector<ClockSample> h = read_samples();
    std::vector<double> rate;
    for (const ClockSample& x : h)
      rate.push_back(static_cast<double>(kFfmaThreads) * iters * kChains / static_cast<double>(x.cycles));
    return {median(rate), mhz(h)};
  }
};

void ffma_pipe(const Probe& p, double sustain_ms) {
  constexpr int kIters = 1 << 14;  // 100+ us a launch at any clock
  std::printf("FFMA pipe: %d SMs x 1 block of %d threads, %d chains, %d iterations a launch, random operands\n",
              p.sms, kFfmaThreads, kChains, kIters);
  p.ffma_launch(kIters, 0);  // loads the module
  for (int burst = 0; burst < 3; ++burst) {
    p.idle();
    std::vector<double> rate, mhz;
    for (int i = 0; i < kBatch; ++i) {
      const auto [r, f] = p.ffma_launch(kIters, 977u * (burst * kBatch + i + 1));
      rate.push_back(r);
      mhz.push_back(f);
    }
    std::printf("  burst %d (20 launches behind 10 ms idle): %.1f FFMA/SM clock (%.1f%% of 128) at %.0f MHz "
                "(first launch %.0f, last %.0f)\n",
                burst, median(rate), median(rate) / 1.28, median(mhz), mhz.front(), mhz.back());
  }
  std::vector<double> rate, mhz;
  CudaEvent start, stop;
  start.record(p.s);
  for (int i = 0;; ++i) {
    const auto [r, f] = p.ffma_launch(kIters, 7919u * (i + 1));
    rate.push_back(r);
    mhz.push_back(f);
    stop.record(p.s);
    GT_CUDA_CALL(cudaEventSynchronize(stop.get()));
    if (stop.elapsed_ms_since(start) >= sustain_ms) break;
  }
  std::printf("  sustained %.0f ms (%zu launches): last quarter %.1f FFMA/SM clock at %.0f MHz; "
              "first launch %.0f MHz\n",
              sustain_ms, rate.size(), median_of_last_quarter(rate), median_of_last_quarter(mhz), mhz.front());
}

struct Shape {
  long m, n, k;
};

struct Sgemm {
  const BlasHandle& h;
  Shape sh;
  DeviceBuffer<float> a, b, c;
  Sgemm(const BlasHandle& handle, Shape shape, cudaStream_t s)
      : h(handle), sh(shape), a(shape.m * shape.k), b(shape.k * shape.n), c(shape.m * shape.n) {
    fill_random<<<1024, 256, 0, s>>>(a.get(), a.size(), 1u);
    fill_random<<<1024, 256, 0, s>>>(b.get(), b.size(), 2u);
    GT_CUDA_CALL(cudaGetLastError());
  }
  // Row-major C = A*B as column-major C^T = B^T * A^T, as PyTorch calls it.
  void run() const {
    const float one = 1.f, zero = 0.f;
    const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
    GT_BLAS_CALL(cublasSgemm_v2(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.get(), n, a.get(), k, &zero,
                                c.get(), n));
  }
};

void sgemm_shape(const Probe& p, const BlasHandle& h, Shape sh, double sustain_ms) {
  const Sgemm g(h, sh, p.s);
  for (int i = 0; i < 3; ++i) g.run();  // cuBLAS's heuristic and module load
  std::vector<double> us, mhz;
  CudaEvent start, stop;
  for (int r = 0; r < kRounds; ++r) {
    p.idle();
    start.record(p.s);
    for (int i = 0; i < kBatch; ++i) g.run();
    stop.record(p.s);
    mhz.push_back(p.read_clock());  // synchronizes
    us.push_back(1e3 * stop.elapsed_ms_since(start) / kBatch);
  }
  const double t = median(us), f = median(mhz), ffma = static_cast<double>(sh.m) * sh.n * sh.k;
  const double share = ffma_share(ffma, t, f, p.sms);
  std::printf("  %5ldx%5ldx%5ld  %9.2f us  %6.2f TFLOP/s  clock %5.0f MHz  FFMA share at that clock %5.1f%%  "
              "(at 1980 MHz %5.1f%%)\n",
              sh.m, sh.n, sh.k, t, 2 * ffma / (t * 1e6), f, 100 * share, 100 * share * f / 1980.0);
  if (sustain_ms <= 0) return;
  std::vector<double> tail_us, tail_mhz;
  CudaEvent first;
  first.record(p.s);
  for (;;) {
    start.record(p.s);
    for (int i = 0; i < kBatch; ++i) g.run();
    stop.record(p.s);
    tail_mhz.push_back(p.read_clock());
    tail_us.push_back(1e3 * stop.elapsed_ms_since(start) / kBatch);
    if (stop.elapsed_ms_since(first) >= sustain_ms) break;
  }
  const double ts = median_of_last_quarter(tail_us), fs = median_of_last_quarter(tail_mhz);
  std::printf("  sustained %.0f ms, last quarter: %9.2f us  clock %5.0f MHz  FFMA share at that clock %5.1f%%\n",
              sustain_ms, ts, fs, 100 * ffma_share(ffma, ts, fs, p.sms));
}

Shape parse_shape(const std::string& s) {
  Shape sh{};
  char x1 = 0, x2 = 0;
  int used = 0;
  if (std::sscanf(s.c_str(), "%ld%c%ld%c%ld%n", &sh.m, &x1, &sh.n, &x2, &sh.k, &used) != 5 || x1 != 'x' ||
      x2 != 'x' || used != static_cast<int>(s.size()) || sh.m <= 0 || sh.n <= 0 || sh.k <= 0 || sh.m > 16384 ||
      sh.n > 16384 || sh.k > 65536)
    throw InputError("not a shape MxNxK (each 1-16384, k to 65536): " + s +
                     " (usage: ffma_clock_probe [--sustain-ms MS] [MxNxK...])");
  return sh;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    double sustain_ms = 2000;
    std::vector<gemmtune::Shape> shapes;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--sustain-ms" && i + 1 < argc) {
        sustain_ms = std::atof(argv[++i]);
        if (!(sustain_ms >= 0 && sustain_ms <= 60000))
          throw gemmtune::InputError("--sustain-ms takes 0-60000, not " + std::string(argv[i]));
        continue;
      }
      shapes.push_back(gemmtune::parse_shape(arg));
    }
    if (shapes.empty())
      shapes = {{846, 4096, 3072}, {4096, 4096, 4096}, {2048, 2048, 2048}, {688, 4096, 3072}, {464, 11008, 2048},
                {152, 6024, 13824}, {176, 3072, 2048}, {69, 5120, 1592}, {47, 2671, 14336}, {159, 112, 3072},
                {136, 96, 14336}};
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    const int sms = device.identity.sm_count;
    std::printf("%s: %d SMs\n", device.identity.gpu_name.c_str(), sms);
    const gemmtune::CudaStream stream;
    const gemmtune::Probe probe(sms, stream.get());
    std::printf("idle clock (after 10 ms of idle): ");
    probe.idle();
    std::printf("%.0f MHz\n", probe.read_clock());
    gemmtune::ffma_pipe(probe, sustain_ms);
    const gemmtune::BlasHandle blas = gemmtune::make_blas_handle();
    GT_BLAS_CALL(cublasSetStream_v2(blas.get(), stream.get()));
    GT_BLAS_CALL(cublasSetMathMode(blas.get(), CUBLAS_DEFAULT_MATH));  // fp32: PyTorch's allow_tf32 off
    std::printf("cublasSgemm, warm, %d rounds of %d calls behind 10 ms idle (medians):\n", gemmtune::kRounds,
                gemmtune::kBatch);
    for (std::size_t i = 0; i < shapes.size(); ++i)
      gemmtune::sgemm_shape(probe, blas, shapes[i], i == 0 ? sustain_ms : 0);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "ffma_clock_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ffma_clock_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
