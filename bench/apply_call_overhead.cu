// apply_call_overhead: the host time of one cublasSgemm_v2 call, as a program sees it, for
// scripts/bench_apply_overhead.py, which runs it plain and under `gemmtune apply` and takes the difference. A plain
// cuBLAS program (it links no gemmtune library): under apply, the shim decides whether each call is routed.
//
// Per spec (mode:MxNxK, column-major C = A·B as cuBLAS sees it) three calls: `gemm` (cublasSgemm_v2, alpha 1, beta 0:
// what apply can route), `gemm_beta1` (beta 1: a call apply's rule always leaves to cuBLAS) and `lt_bias`
// (cublasLtMatmul with the BIAS epilogue, what PyTorch's addmm calls). Each is timed two ways in the same
// round: through the name the program links (the shim, under apply) and through the library's own symbol (never the
// shim), so their difference, extra_us, is what apply adds, free of the drift between processes. Per round: a spin
// kernel holds the GPU, so the calls queue behind it and none waits for the GPU or for a full launch queue; then
// --calls calls back to back each way, the host clock around each batch (per call: its time / calls) and CUDA events
// around the linked batch's GPU work (gpu_us); then a synchronize. Medians over --rounds rounds, with p10 and p90.
//
//   apply_call_overhead --json OUT [--calls 50] [--rounds 100] SPEC...     SPEC: fp32|tf32:MxNxK
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
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

// Values in [-1, 1), the same in every process: inputs that are not zeros.
std::vector<float> values(std::size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(gen);
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

// The spin's length in clocks: 4 ms at the GPU's clock, longer than both batches take to enqueue.
long long spin_cycles() {
  int device = 0, khz = 0;
  CALL(cudaGetDevice(&device));
  CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(khz) * 4;
}

using SgemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                                   const float*, int, const float*, int, const float*, float*, int);

// libcublas's own cublasSgemm_v2, found in the library itself: under `gemmtune apply` the name the program links
// against resolves to the shim first, this one never does.
SgemmFn real_sgemm() {
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      if (void* f = dlsym(lib, "cublasSgemm_v2")) return reinterpret_cast<SgemmFn>(f);
    }
  }
  throw std::runtime_error("cannot find libcublas's own cublasSgemm_v2");
}

// Times `batch` through the linked name and through the library's own symbol in alternating order behind one spin
// per round (see the header), and returns the record.
template <typename Fn, typename Batch>
nlohmann::json paired(const Spec& s, const char* call, const Batch& batch, Fn linked, Fn real, int rounds, int calls,
                      cudaStream_t stream) {
  // The first call decides a problem (and, under apply, loads gemmtune). Each warm-up batch starts on a drained stream,
  // where the runtime captures a call it has seen before (src/runtime/call_graphs.hpp): the timed calls run as a
  // program's repeated calls do once one of them has met an idle GPU, replayed. Queued back to back without a
  // synchronize, a `+pad` entry's calls were never captured and cost 14-20 us more host time than cuBLAS's (H200).
  for (int i = 0; i < 10; ++i) {
    batch(linked);
    CALL(cudaStreamSynchronize(stream));
  }
  batch(real);
  CALL(cudaStreamSynchronize(stream));
  const long long cycles = spin_cycles();
  const Event e0, e1, e2;
  std::vector<double> linked_us, real_us, extra_us, linked_gpu_us;
  for (int r = 0; r < rounds; ++r) {
    spin<<<1, 1, 0, stream>>>(cycles);
    CALL(cudaGetLastError());
    // Both batches queue behind the same spin, in an order that alternates, so drift and order cancel in the pairs.
    const bool linked_first = r % 2 == 0;
    CALL(cudaEventRecord(e0.e, stream));
    const double first = batch(linked_first ? linked : real);
    CALL(cudaEventRecord(e1.e, stream));
    const double second = batch(linked_first ? real : linked);
    CALL(cudaEventRecord(e2.e, stream));
    CALL(cudaStreamSynchronize(stream));
    float ms = 0;
    CALL(cudaEventElapsedTime(&ms, linked_first ? e0.e : e1.e, linked_first ? e1.e : e2.e));
    linked_us.push_back(linked_first ? first : second);
    real_us.push_back(linked_first ? second : first);
    extra_us.push_back(linked_us.back() - real_us.back());
    linked_gpu_us.push_back(static_cast<double>(ms) * 1e3 / calls);
  }
  return {{"spec", s.text}, {"mode", s.tf32 ? "tf32" : "fp32"}, {"m", s.m}, {"n", s.n}, {"k", s.k},
          {"call", call}, {"host_us", percentile(linked_us, 0.5)},
          {"host_us_p10", percentile(linked_us, 0.1)}, {"host_us_p90", percentile(linked_us, 0.9)},
          {"real_host_us", percentile(real_us, 0.5)}, {"extra_us", percentile(extra_us, 0.5)},
          {"extra_us_p10", percentile(extra_us, 0.1)}, {"extra_us_p90", percentile(extra_us, 0.9)},
          {"gpu_us", percentile(linked_gpu_us, 0.5)}};
}

// cublasSgemm_v2, C (m×n) = A·B (+ C where beta is 1), column-major NN.
nlohmann::json measure_sgemm(const Spec& s, float beta, int calls, int rounds, cudaStream_t stream) {
  const DeviceBuffer a(values(static_cast<std::size_t>(s.m) * s.k, 1));
  const DeviceBuffer b(values(static_cast<std::size_t>(s.k) * s.n, 2));
  const DeviceBuffer c(values(static_cast<std::size_t>(s.m) * s.n, 3));
  const Handle handle(stream, s.tf32);
  const float one = 1.0f;
  const SgemmFn linked = &cublasSgemm_v2, real = real_sgemm();
  const auto batch = [&](SgemmFn gemm) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      CALL(gemm(handle.h, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &one, a.p, s.m, b.p, s.k, &beta, c.p, s.m));
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  };
  return paired(s, beta == 0.0f ? "gemm" : "gemm_beta1", batch, linked, real, rounds, calls, stream);
}

using LtMatmulFn = decltype(&cublasLtMatmul);

// libcublasLt's own cublasLtMatmul, as real_sgemm finds cuBLAS's.
LtMatmulFn real_lt_matmul() {
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      if (void* f = dlsym(lib, "cublasLtMatmul")) return reinterpret_cast<LtMatmulFn>(f);
    }
  }
  throw std::runtime_error("cannot find libcublasLt's own cublasLtMatmul");
}

template <typename T, cublasStatus_t (*Destroy)(T)>
struct LtObject {
  T p = nullptr;
  LtObject() = default;
  ~LtObject() {
    if (p) Destroy(p);
  }
  LtObject(const LtObject&) = delete;
  LtObject& operator=(const LtObject&) = delete;
};

// The call PyTorch's addmm makes: cublasLtMatmul, C (m×n) = A·B + bias with the BIAS epilogue, column-major,
// heuristic-first with a 32 MiB workspace. Descriptors are made once: what the shim adds does not depend on them.
nlohmann::json measure_lt(const Spec& s, int calls, int rounds, cudaStream_t stream) {
  const DeviceBuffer a(values(static_cast<std::size_t>(s.m) * s.k, 1));
  const DeviceBuffer b(values(static_cast<std::size_t>(s.k) * s.n, 2));
  const DeviceBuffer c(values(static_cast<std::size_t>(s.m) * s.n, 3));
  const DeviceBuffer bias(values(static_cast<std::size_t>(s.m), 4));
  const DeviceBuffer workspace(std::vector<float>(8u << 20));
  const std::size_t workspace_bytes = (8u << 20) * sizeof(float);
  LtObject<cublasLtHandle_t, cublasLtDestroy> lt;
  LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc;
  LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> la, lb, lc;
  LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  CALL(cublasLtCreate(&lt.p));
  CALL(cublasLtMatmulDescCreate(&desc.p, s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const float* bias_p = bias.p;
  CALL(cublasLtMatmulDescSetAttribute(desc.p, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  CALL(cublasLtMatmulDescSetAttribute(desc.p, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_p, sizeof(bias_p)));
  CALL(cublasLtMatrixLayoutCreate(&la.p, CUDA_R_32F, s.m, s.k, s.m));
  CALL(cublasLtMatrixLayoutCreate(&lb.p, CUDA_R_32F, s.k, s.n, s.k));
  CALL(cublasLtMatrixLayoutCreate(&lc.p, CUDA_R_32F, s.m, s.n, s.m));
  CALL(cublasLtMatmulPreferenceCreate(&pref.p));
  CALL(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                            sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t first{};
  int found = 0;
  CALL(cublasLtMatmulAlgoGetHeuristic(lt.p, desc.p, la.p, lb.p, lc.p, lc.p, pref.p, 1, &first, &found));
  if (found == 0) throw std::runtime_error(s.text + ": cuBLASLt has no algo for the bias GEMM");
  const float one = 1.0f, zero = 0.0f;
  const LtMatmulFn linked = &cublasLtMatmul, real = real_lt_matmul();
  const auto batch = [&](LtMatmulFn matmul) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      CALL(matmul(lt.p, desc.p, &one, a.p, la.p, b.p, lb.p, &zero, c.p, lc.p, c.p, lc.p, &first.algo, workspace.p,
                  workspace_bytes, stream));
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  };
  return paired(s, "lt_bias", batch, linked, real, rounds, calls, stream);
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
    for (int kind = 0; kind < 3; ++kind) {
      records.push_back(kind == 2 ? measure_lt(s, calls, rounds, stream)
                                  : measure_sgemm(s, kind == 0 ? 0.0f : 1.0f, calls, rounds, stream));
      const auto& r = records.back();
      std::printf("%-22s %-10s host %7.2f us, libcublas's own %7.2f us, extra %6.2f us (p10 %.2f, p90 %.2f)  "
                  "gpu %8.2f us\n",
                  s.text.c_str(), r["call"].get<std::string>().c_str(), r["host_us"].get<double>(),
                  r["real_host_us"].get<double>(), r["extra_us"].get<double>(), r["extra_us_p10"].get<double>(),
                  r["extra_us_p90"].get<double>(), r["gpu_us"].get<double>());
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
