// apply_call_overhead: the host time of one cublasSgemm_v2 call, as a program sees it, for
// scripts/bench_apply_overhead.py, which runs it plain and under `gemmtune apply` and takes the difference. A plain
// cuBLAS program (it links no gemmtune library): under apply, the shim decides whether each call is routed.
//
// Per spec (mode:MxNxK, column-major C = A·B as cuBLAS sees it) two calls: `gemm` (alpha 1, beta 0: what apply can
// route) and `gemm_beta1` (beta 1: a call apply's rule always leaves to cuBLAS). Per round: a spin kernel holds the
// GPU, so the calls queue behind it and no call waits for the GPU or for a full launch queue; then --calls calls back
// to back, the host clock around them (host_us = their time / calls) and CUDA events around their GPU work (gpu_us);
// then a synchronize. host_us is the median over --rounds rounds, with p10 and p90.
//
//   apply_call_overhead --json OUT [--calls 50] [--rounds 100] SPEC...     SPEC: fp32|tf32:MxNxK
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

#define CALL(x) check((x), #x)

// Holds the GPU for `cycles` clocks, so the timed calls only enqueue.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

struct Spec {
  std::string text;
  bool tf32 = false;
  int m = 0, n = 0, k = 0;
};

Spec parse_spec(const std::string& text) {
  Spec s;
  s.text = text;
  const std::size_t colon = text.find(':');
  const std::string mode = text.substr(0, colon);
  if (colon == std::string::npos || (mode != "fp32" && mode != "tf32") ||
      std::sscanf(text.c_str() + colon + 1, "%dx%dx%d", &s.m, &s.n, &s.k) != 3 || s.m < 1 || s.n < 1 || s.k < 1)
    throw std::invalid_argument("bad spec '" + text + "': expected fp32|tf32:MxNxK with sizes >= 1");
  s.tf32 = mode == "tf32";
  return s;
}

// Values in [-1, 1) from a fixed LCG: inputs that are not zeros, the same in every process.
std::vector<float> values(std::size_t count, std::uint32_t seed) {
  std::vector<float> v(count);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

struct DeviceBuffer {
  float* p = nullptr;
  explicit DeviceBuffer(const std::vector<float>& host) {
    CALL(cudaMalloc(reinterpret_cast<void**>(&p), host.size() * sizeof(float)));
    CALL(cudaMemcpy(p, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Handle {
  cublasHandle_t h = nullptr;
  Handle(cudaStream_t stream, bool tf32) {
    CALL(cublasCreate(&h));
    CALL(cublasSetStream(h, stream));
    CALL(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  }
  ~Handle() { cublasDestroy(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { CALL(cudaEventCreate(&e)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

// The spin's length in clocks: 2 ms at the GPU's clock, longer than any batch takes to enqueue.
long long spin_cycles() {
  int device = 0, khz = 0;
  CALL(cudaGetDevice(&device));
  CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(khz) * 2;
}

nlohmann::json measure(const Spec& s, float beta, int calls, int rounds, cudaStream_t stream) {
  const DeviceBuffer a(values(static_cast<std::size_t>(s.m) * s.k, 1));
  const DeviceBuffer b(values(static_cast<std::size_t>(s.k) * s.n, 2));
  const DeviceBuffer c(values(static_cast<std::size_t>(s.m) * s.n, 3));
  const Handle handle(stream, s.tf32);
  const Event start, end;
  const float one = 1.0f;
  const auto gemm = [&] {
    CALL(cublasSgemm(handle.h, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &one, a.p, s.m, b.p, s.k, &beta, c.p, s.m));
  };
  for (int i = 0; i < 10; ++i) gemm();  // the first call decides a problem (and, under apply, loads gemmtune)
  CALL(cudaStreamSynchronize(stream));
  const long long cycles = spin_cycles();
  std::vector<double> host_us, gpu_us;
  for (int r = 0; r < rounds; ++r) {
    spin<<<1, 1, 0, stream>>>(cycles);
    CALL(cudaGetLastError());
    CALL(cudaEventRecord(start.e, stream));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) gemm();
    const auto t1 = std::chrono::steady_clock::now();
    CALL(cudaEventRecord(end.e, stream));
    CALL(cudaStreamSynchronize(stream));
    float ms = 0;
    CALL(cudaEventElapsedTime(&ms, start.e, end.e));
    host_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    // The events bracket the calls' GPU work; the spin ran before the first.
    gpu_us.push_back(static_cast<double>(ms) * 1e3 / calls);
  }
  return {{"spec", s.text}, {"mode", s.tf32 ? "tf32" : "fp32"}, {"m", s.m}, {"n", s.n}, {"k", s.k},
          {"call", beta == 0.0f ? "gemm" : "gemm_beta1"}, {"host_us", percentile(host_us, 0.5)},
          {"host_us_p10", percentile(host_us, 0.1)}, {"host_us_p90", percentile(host_us, 0.9)},
          {"gpu_us", percentile(gpu_us, 0.5)}};
}

int run(int argc, char** argv) {
  std::string json_path;
  int calls = 50, rounds = 100;
  std::vector<Spec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json" && has_value) {
      json_path = argv[++i];
    } else if (arg == "--calls" && has_value) {
      calls = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && has_value) {
      rounds = std::atoi(argv[++i]);
    } else {
      specs.push_back(parse_spec(arg));
    }
  }
  if (json_path.empty() || specs.empty() || calls < 1 || rounds < 1)
    throw std::invalid_argument("usage: apply_call_overhead --json OUT [--calls N>0] [--rounds N>0] SPEC...");
  cudaStream_t stream = nullptr;
  CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaDeviceProp prop{};
  CALL(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json records = nlohmann::json::array();
  for (const Spec& s : specs) {
    for (const float beta : {0.0f, 1.0f}) {
      records.push_back(measure(s, beta, calls, rounds, stream));
      const auto& r = records.back();
      std::printf("%-22s %-10s host %7.2f us (p10 %.2f, p90 %.2f)  gpu %8.2f us\n", s.text.c_str(),
                  r["call"].get<std::string>().c_str(), r["host_us"].get<double>(), r["host_us_p10"].get<double>(),
                  r["host_us_p90"].get<double>(), r["gpu_us"].get<double>());
    }
  }
  CALL(cudaStreamDestroy(stream));
  std::ofstream out(json_path);
  out << nlohmann::json{{"gpu", prop.name}, {"calls", calls}, {"rounds", rounds}, {"records", records}}.dump(1)
      << "\n";
  if (!out) throw std::runtime_error("cannot write " + json_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apply_call_overhead: %s\n", e.what());
    return 1;
  }
}
