// lt_ld_padding_probe: where rows are not 16-byte aligned, how should a padded cuBLASLt call pad? (issue 49/50)
//
// The `+pad` candidate (src/lt/lt_padding.hpp) rounds m, n and k up to 4, copies A and B zero-padded, runs the
// plain GEMM into an aligned scratch D, and then our epilogue kernel reads D and writes Y: three launches and a pass
// over m×n. This probe times, per shape (row-major Y = gelu_tanh(A·B + bias), tf32, NN), the GEMM alone and the whole
// sequence for:
//   dims   the padded dimensions, as `+pad` (copies of A and B, D in scratch, then an epilogue pass);
//   ld     the logical m, n, k, only the leading dimensions of the copies rounded up, D in scratch (aligned ld);
//   ld+Y   the same copies, but cuBLASLt writes Y itself (its ld as the caller's) with its own GELU_BIAS epilogue;
//   kpad   k padded (zero columns of A's copy meet B's copy's zero rows), n as given (B's copy and D with ld n');
//   kpad+Y the same, cuBLASLt writing Y (ld n, rows not 16-byte aligned) with its own GELU_BIAS epilogue;
//   raw    cuBLASLt on the unaligned operands as given, GELU_BIAS (what PyTorch eager and the heuristic run).
// Every variant is the best of the heuristic's top 8 at a 64 MiB workspace (first and best reported), CUDA events
// around 20 back-to-back calls, median of 9 rounds, warm. Each result is checked against `raw`'s output.
//   usage: lt_ld_padding_probe [MxNxK ...]
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    auto s_ = (x);                                                                         \
    if (static_cast<int>(s_) != 0) {                                                       \
      std::fprintf(stderr, "%s failed (%d) at %s:%d\n", #x, static_cast<int>(s_), __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

long r4(long x) { return (x + 3) / 4 * 4; }

__global__ void copy_rows(const float* src, long lds, float* dst, long ldd, long rows, long cols, long pcols) {
  const long c = blockIdx.x * long(blockDim.x) + threadIdx.x, r = blockIdx.y;
  if (c < pcols && r < rows) dst[r * ldd + c] = c < cols ? src[r * lds + c] : 0.f;
}

__device__ float gelu_tanh(float x) {
  return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void epilogue(const float* d, long ldd, const float* bias, float* y, long ldy, long m, long n) {
  const long c = blockIdx.x * long(blockDim.x) + threadIdx.x, r = blockIdx.y;
  if (c < n && r < m) y[r * ldy + c] = gelu_tanh(d[r * ldd + c] + bias[c]);
}

void copy(const float* src, long lds, float* dst, long ldd, long rows, long cols, long pcols, cudaStream_t s) {
  copy_rows<<<dim3(unsigned((pcols + 255) / 256), unsigned(rows)), 256, 0, s>>>(src, lds, dst, ldd, rows, cols, pcols);
}

struct LtCall {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, d{};
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
};

// Row-major Y(m×n, ldy) = A(m×k, lda)·B(k×n, ldb) is column-major Yᵀ = Bᵀ·Aᵀ: cuBLASLt's A is our B.
LtCall make_call(cublasLtHandle_t lt, long m, long n, long k, long lda, long ldb, long ldy, bool gelu_bias,
                 const float* bias, size_t ws) {
  LtCall c;
  CK(cublasLtMatmulDescCreate(&c.op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  if (gelu_bias) {
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_GELU_BIAS;
    CK(cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
    CK(cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  CK(cublasLtMatrixLayoutCreate(&c.a, CUDA_R_32F, n, k, ldb));
  CK(cublasLtMatrixLayoutCreate(&c.b, CUDA_R_32F, k, m, lda));
  CK(cublasLtMatrixLayoutCreate(&c.d, CUDA_R_32F, n, m, ldy));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  c.algos.resize(8);
  int got = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, c.op, c.a, c.b, c.d, c.d, pref, 8, c.algos.data(), &got));
  c.algos.resize(static_cast<size_t>(got));
  cublasLtMatmulPreferenceDestroy(pref);
  return c;
}

void run_lt(cublasLtHandle_t lt, const LtCall& c, int algo, const float* a, const float* b, float* d, void* ws,
            size_t wss, cudaStream_t s) {
  const float one = 1, zero = 0;
  CK(cublasLtMatmul(lt, c.op, &one, b, c.a, a, c.b, &zero, d, c.d, d, c.d, &c.algos[size_t(algo)].algo, ws, wss, s));
}

double time_us(const std::function<void()>& call, cudaStream_t s) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) call();
  std::vector<double> rounds;
  for (int r = 0; r < 9; ++r) {
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < 20; ++i) call();
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    rounds.push_back(1000.0 * ms / 20);
  }
  CK(cudaGetLastError());
  std::sort(rounds.begin(), rounds.end());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return rounds[rounds.size() / 2];
}

double max_rel(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0, scale = 0;
  for (float w : want) scale = std::max(scale, double(std::fabs(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / scale);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes(argv + 1, argv + argc);
  if (shapes.empty())
    shapes = {"692x5577x7561", "2759x7137x677", "1398x3251x6173", "2326x1855x4252", "1500x1079x799",
              "3282x1131x4835", "912x1818x1024", "1024x4096x1023"};
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t wss = size_t{64} << 20;
  void* ws;
  CK(cudaMalloc(&ws, wss));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; us per call, median of 9 rounds of 20 warm calls; TF = TFLOP/s of 2mnk\n", prop.name);
  std::printf("%-16s %-6s %9s %9s %7s %6s %9s  %s\n", "shape", "route", "gemm_us", "total_us", "TF", "best@",
              "err_vs_raw", "first algo us");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const std::string& shape : shapes) {
    long m, n, k;
    if (std::sscanf(shape.c_str(), "%ldx%ldx%ld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
      std::fprintf(stderr, "bad shape %s (want MxNxK)\n", shape.c_str());
      return 2;
    }
    const long mp = m, np = r4(n), kp = r4(k);
    std::vector<float> ha(size_t(m * k)), hb(size_t(k * n)), hbias(static_cast<size_t>(n));
    for (float& x : ha) x = u(rng);
    for (float& x : hb) x = u(rng);
    for (float& x : hbias) x = u(rng);
    float *a, *b, *bias, *y, *pa, *pb, *pd;
    CK(cudaMalloc(&a, ha.size() * 4));
    CK(cudaMalloc(&b, hb.size() * 4));
    CK(cudaMalloc(&bias, size_t(np) * 4));
    CK(cudaMalloc(&y, size_t(m * n) * 4));
    CK(cudaMalloc(&pa, size_t(mp * kp) * 4));
    CK(cudaMalloc(&pb, size_t(kp * np) * 4));
    CK(cudaMalloc(&pd, size_t(mp * np) * 4));
    CK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, hbias.data(), hbias.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(pa, 0, size_t(mp * kp) * 4));
    CK(cudaMemset(pb, 0, size_t(kp * np) * 4));
    std::vector<float> want(size_t(m * n)), got(size_t(m * n));
    const auto fetch = [&](std::vector<float>& into) {
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(into.data(), y, into.size() * 4, cudaMemcpyDeviceToHost));
    };
    const auto poison = [&] { CK(cudaMemsetAsync(y, 0xff, size_t(m * n) * 4, s)); };
    const double flop = 2.0 * m * n * k;

    struct Route {
      const char* name;
      LtCall call;
      std::function<void(int)> gemm;   // the cuBLASLt call alone, with algo i
      std::function<void(int)> whole;  // copies + call + epilogue
    };
    std::vector<Route> routes;
    // dims: today's +pad.
    routes.push_back({"dims", make_call(lt, mp, np, kp, kp, np, np, false, nullptr, wss), {}, {}});
    // ld: logical dims, padded leading dimensions, D in scratch.
    routes.push_back({"ld", make_call(lt, m, n, k, kp, np, np, false, nullptr, wss), {}, {}});
    // ld+Y: the same copies, cuBLASLt writes Y with its GELU_BIAS.
    routes.push_back({"ld+Y", make_call(lt, m, n, k, kp, np, n, true, bias, wss), {}, {}});
    // kpad: k padded (A's copy k' long rows, B's copy k' rows of ld n'), n as given, D in scratch.
    routes.push_back({"kpad", make_call(lt, m, n, kp, kp, np, np, false, nullptr, wss), {}, {}});
    // kpad+Y: the same copies, cuBLASLt writes Y (ld n, unaligned rows) with its GELU_BIAS.
    routes.push_back({"kpad+Y", make_call(lt, m, n, kp, kp, np, n, true, bias, wss), {}, {}});
    // raw: as given.
    routes.push_back({"raw", make_call(lt, m, n, k, k, n, n, true, bias, wss), {}, {}});
    for (Route& r : routes) {
      const LtCall* c = &r.call;
      const std::string name = r.name;
      const bool copies = name != "raw", into_y = name == "ld+Y" || name == "kpad+Y" || name == "raw";
      const bool pad_k = name == "dims" || name == "kpad" || name == "kpad+Y";
      const float* ga = copies ? pa : a;
      const float* gb = copies ? pb : b;
      float* gd = into_y ? y : pd;
      r.gemm = [=](int i) { run_lt(lt, *c, i, ga, gb, gd, ws, wss, s); };
      r.whole = [=](int i) {
        if (copies) {
          copy(a, k, pa, kp, m, k, pad_k ? kp : k, s);
          copy(b, n, pb, np, k, n, name == "dims" ? np : n, s);
        }
        run_lt(lt, *c, i, ga, gb, gd, ws, wss, s);
        if (!into_y)
          epilogue<<<dim3(unsigned((n + 255) / 256), unsigned(m)), 256, 0, s>>>(pd, np, bias, y, n, m, n);
      };
    }
    // raw's heuristic-first output is the reference the others are held to (tf32 on both sides).
    Route& raw = routes.back();
    if (raw.call.algos.empty()) {
      std::printf("%-16s raw: no algo\n", shape.c_str());
      continue;
    }
    poison();
    raw.whole(0);
    fetch(want);
    for (Route& r : routes) {
      if (r.call.algos.empty()) {
        std::printf("%-16s %-6s no algo from the heuristic\n", shape.c_str(), r.name);
        continue;
      }
      double best = 1e30, first = 0;
      int at = 0;
      for (int i = 0; i < int(r.call.algos.size()); ++i) {
        const double t = time_us([&] { r.gemm(i); }, s);
        if (i == 0) first = t;
        if (t < best) best = t, at = i;
      }
      const double whole = time_us([&] { r.whole(at); }, s);
      poison();
      r.whole(at);
      fetch(got);
      std::printf("%-16s %-6s %9.1f %9.1f %7.1f %6d %9.2e  %.1f\n", shape.c_str(), r.name, best, whole,
                  flop / whole / 1e6, at, max_rel(got, want), first);
      std::fflush(stdout);
    }
    for (float* p : {a, b, bias, y, pa, pb, pd}) CK(cudaFree(p));
  }
  return 0;
}
