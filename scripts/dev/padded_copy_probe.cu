// padded_copy_probe: how fast copy_rows_padded (kernels/padded_copy.hpp: the copy a staged variant makes of an
// operand whose rows are not 16-byte aligned, and the +pad cuBLASLt candidates' copies) moves an m x k matrix into
// rows padded to 4 floats, from a cold L2. Issue 49's both-unaligned shapes pay this copy on top of the aligned GEMM
// (results/nvidia-h200/staged_copy_cost.txt): the probe says how far it is from what the GPU moves.
//
//   padded_copy_probe MxK...        e.g. 2607x4950 5357x5303 954x738
//
// Per size: L2 evicted (a read of 2x L2), then one launch between CUDA events (its launch included); the median of 20
// after 5 untimed, and read + write bytes over it. The source is random, the copy NaN before the first launch; its last
// row is checked against the source and its padding against zeros.
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
  std::vector<double> us;
  for (int call = 0; call < 25; ++call) {
    flush.run(s);
    start.record(s);
    kernels::copy_rows_padded({src.get(), k, dst.get(), ld, m, k}, s);
    stop.record(s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    if (call >= 5) us.push_back(1e3 * static_cast<double>(stop.elapsed_ms_since(start)));
  }
  std::sort(us.begin(), us.end());
  std::vector<float> want(static_cast<std::size_t>(k)), got(static_cast<std::size_t>(ld));
  GT_CUDA_CALL(cudaMemcpy(want.data(), src.get() + (m - 1) * k, want.size() * sizeof(float), cudaMemcpyDeviceToHost));
  GT_CUDA_CALL(cudaMemcpy(got.data(), dst.get() + (m - 1) * ld, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const bool ok = std::equal(want.begin(), want.end(), got.begin()) &&
                  std::all_of(got.begin() + k, got.end(), [](float v) { return v == 0.f; });
  const double median = us[us.size() / 2], bytes = 2.0 * static_cast<double>(m * k) * sizeof(float);
  std::printf("%lldx%lld  median %8.2f us  fastest %8.2f us  %.2f TB/s read+write  last row %s\n",
              static_cast<long long>(m), static_cast<long long>(k), median, us.front(), bytes / median / 1e6,
              ok ? "ok" : "WRONG");
  if (!ok) throw CheckError("the copy's last row differs from the source");
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
