// padded_copy_probe: how fast copy_rows_padded (kernels/padded_copy.hpp: the copy a staged variant makes of an
// operand whose rows are not 16-byte aligned, and the +pad cuBLASLt candidates' copies) moves an m x k matrix into
// rows padded to 4 floats, from a cold L2 and from a warm one (source and copy resident where they fit, as in the
// sweep's timing loop and a program whose A the layer before just wrote). Issue 49's both-unaligned shapes pay this
// copy on top of the aligned GEMM (results/nvidia-h200/staged_copy_cost.txt, padded_copy_funnel_ab.txt): the probe
// says how far it is from what the GPU moves.
//
//   padded_copy_probe MxK...        e.g. 2607x4950 5357x5303 954x738
//
// Per size: cold, one launch between CUDA events (its launch included) after evicting L2 (a read of 2x L2); warm,
// 20 launches back to back between two events, per launch; each the median of 20 after 5 untimed, and read + write
// bytes over it. The source is random, the copy NaN before the first launch; every row is checked against the source
// and its padding against zeros.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "cupti/l2_flush.hpp"
#include "kernels/padded_copy.hpp"
#include "launch/random_fill.hpp"

namespace gemmtune {
namespace {

void probe(std::int64_t m, std::int64_t k, const L2Flush& flush, cudaStream_t s) {
  const std::int64_t ld = (k + 3) / 4 * 4;
  DeviceBuffer<float> src(static_cast<std::size_t>(m * k)), dst(static_cast<std::size_t>(m * ld));
  fill_uniform(src.get(), src.size(), 20261130, -1.f, 1.f, s);
  fill_nan(dst.get(), dst.size(), s);
  const CudaEvent start, stop;
  const auto copy = [&] { kernels::copy_rows_padded({src.get(), k, dst.get(), ld, m, k}, s); };
  // Cold: one launch after L2 was evicted. Warm: a batch of launches back to back, so that neither the launch's
  // latency nor the host's gap between two launches falls inside the time.
  const auto time_us = [&](bool cold) {
    constexpr int kBatch = 20;
    std::vector<double> us;
    for (int call = 0; call < 25; ++call) {
      if (cold) flush.run(s);
      start.record(s);
      for (int i = 0; i < (cold ? 1 : kBatch); ++i) copy();
      stop.record(s);
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      if (call >= 5) us.push_back(1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / (cold ? 1 : kBatch));
    }
    std::sort(us.begin(), us.end());
    return us;
  };
  const std::vector<double> cold = time_us(true), warm = time_us(false);
  std::vector<float> want(static_cast<std::size_t>(m * k)), got(static_cast<std::size_t>(m * ld));
  GT_CUDA_CALL(cudaMemcpy(want.data(), src.get(), want.size() * sizeof(float), cudaMemcpyDeviceToHost));
  GT_CUDA_CALL(cudaMemcpy(got.data(), dst.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (std::int64_t r = 0; r < m && ok; ++r)
    ok = std::equal(want.begin() + r * k, want.begin() + (r + 1) * k, got.begin() + r * ld) &&
         std::all_of(got.begin() + r * ld + k, got.begin() + (r + 1) * ld, [](float v) { return v == 0.f; });
  const double bytes = 2.0 * static_cast<double>(m * k) * sizeof(float);
  const double cold_us = cold[cold.size() / 2], warm_us = warm[warm.size() / 2];
  std::printf("%lldx%lld  %6.1f MB  cold %8.2f us %5.2f TB/s  warm %8.2f us %5.2f TB/s (fastest %.2f)  every row %s\n",
              static_cast<long long>(m), static_cast<long long>(k), bytes / 2e6, cold_us, bytes / cold_us / 1e6,
              warm_us, bytes / warm_us / 1e6, warm.front(), ok ? "ok" : "WRONG");
  if (!ok) throw CheckError("the copy differs from the source");
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw gemmtune::InputError("usage: padded_copy_probe MxK...");
    std::vector<std::pair<long long, long long>> sizes;
    for (int i = 1; i < argc; ++i) {
      long long m = 0, k = 0;
      char tail = 0;
      if (std::sscanf(argv[i], "%lldx%lld%c", &m, &k, &tail) != 2 || m < 1 || k < 1)
        throw gemmtune::InputError(std::string("'") + argv[i] + "' is not MxK with positive M and K");
      sizes.emplace_back(m, k);
    }
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    const gemmtune::L2Flush flush(device.l2_bytes);
    const gemmtune::CudaStream stream;
    for (const auto& [m, k] : sizes) gemmtune::probe(m, k, flush, stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "padded_copy_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "padded_copy_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
