// epilogue_probe: what our epilogue pass (kernels/epilogue_kernel.hpp) costs by itself, to hold it against PyTorch's
// elementwise kernels (issue 48). On the H200, where cuBLASLt's heuristic-first runs its GEMM and then its own
// epilogue kernel, PyTorch eager runs the same GEMM kernel and its gelu (torch.profiler, scripts/dev/eager_kernels.py):
// at 1206x176 fp32 bias+gelu cuBLASLt's epilogue took 2.20 us and PyTorch's gelu 1.45, at 40x14336 4.20 and 1.87. A
// `+epi` or `+bias` candidate replaces that epilogue with this pass, so this pass's time decides whether those
// candidates match eager.
//
//   epilogue_probe [EPILOGUE:MxN ...]     EPILOGUE as in a problem key (bias+gelu, gelu, bias+relu+z, ...)
//       default: the held-out benchmark's bias+gelu cases where eager won (seeds 9611-9612)
//
// Per case, the pass on warm buffers (acc, bias, Y; Z where saved), 50 calls after 3 that load the module, each timed
// alone by CUPTI (cupti/cupti_kernel_timer.hpp): the median and minimum, and the bytes it moves per microsecond.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"
#include "kernels/epilogue_kernel.hpp"

namespace gemmtune {
namespace {

constexpr int kCalls = 50, kWarmup = 3;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  Epilogue epi;
  std::int64_t m = 0, n = 0;
};

Case parse_case(const std::string& text) {
  const auto colon = text.rfind(':');
  long long m = 0, n = 0;
  char tail = 0;
  if (colon == std::string::npos ||
      std::sscanf(text.c_str() + colon + 1, "%lldx%lld%c", &m, &n, &tail) != 2)
    throw InputError("bad case '" + text + "' (expected EPILOGUE:MxN, e.g. bias+gelu:1206x176)");
  const Case c{Epilogue::parse(text.substr(0, colon)), m, n};
  if (c.m < 1 || c.n < 1) throw InputError("bad case '" + text + "': sizes must be positive");
  return c;
}

void probe(const Case& c, CuptiKernelTimer& timer, cudaStream_t s) {
  GemmProblem p;
  p.m = c.m;
  p.n = c.n;
  p.k = 1;
  p.epi = c.epi;
  p.validate();
  const std::size_t elements = static_cast<std::size_t>(c.m * c.n);
  const DeviceBuffer<float> acc(elements), bias(static_cast<std::size_t>(c.n)), y(elements),
      z(p.epi.save_z ? elements : 1);
  GT_CUDA_CALL(cudaMemsetAsync(acc.get(), 0x3c, elements * sizeof(float), s));  // 0.0115f: finite
  GT_CUDA_CALL(cudaMemsetAsync(bias.get(), 0x3c, static_cast<std::size_t>(c.n) * sizeof(float), s));
  GemmOperands x;
  x.bias = p.epi.bias ? bias.get() : nullptr;
  x.Y = y.get();
  x.Z = p.epi.save_z ? z.get() : nullptr;
  for (int call = 0; call < kCalls + kWarmup; ++call) {
    timer.begin_call();
    kernels::launch_epilogue(p, acc.get(), x, s);
    timer.end_call();
  }
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  std::vector<double> us = timer.collect();
  us.erase(us.begin(), us.begin() + kWarmup);
  const double t = median(us);
  const double bytes = static_cast<double>(elements) * sizeof(float) * (p.epi.save_z ? 3 : 2);
  std::printf("%-16s %6lldx%-6lld  median %7.2f us  min %7.2f us  %6.2f TB/s (acc read, Y%s written)\n",
              c.epi.key().c_str(), static_cast<long long>(c.m), static_cast<long long>(c.n), t,
              *std::min_element(us.begin(), us.end()), bytes / (t * 1e-6) / 1e12, p.epi.save_z ? " and Z" : "");
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    std::vector<gemmtune::Case> cases;
    for (int i = 1; i < argc; ++i) cases.push_back(gemmtune::parse_case(argv[i]));
    if (cases.empty())
      for (const char* c : {"bias+gelu:1206x176", "bias+gelu:40x14336", "bias+gelu:1x3072", "bias+gelu:632x5120",
                            "bias+gelu:103x4096", "bias+gelu:472x1024", "bias+gelu:584x10686"})
        cases.push_back(gemmtune::parse_case(c));
    const gemmtune::CudaStream stream;
    gemmtune::CuptiKernelTimer timer;
    for (const gemmtune::Case& c : cases) gemmtune::probe(c, timer, stream.get());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "epilogue_probe: %s\n", e.what());
    return 1;
  }
}
