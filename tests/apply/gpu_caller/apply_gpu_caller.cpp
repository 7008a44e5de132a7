// A cuBLAS program for the apply GPU tests (tests/apply/apply_gpu_test.cpp): C (m×n) = op(A)·op(B) through
// cublasSgemm_v2 on its own stream, `calls` times, on deterministic inputs, C written to a file; then the same product
// begun inside a CUDA graph capture, which must still compute C (the shim leaves a problem first seen in a capture to
// cuBLAS). Run once plain and once under `gemmtune apply`, the two files must agree.
//
//   apply_gpu_caller OUT.bin m n k transa transb tf32 calls [capture]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool ok(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

// Values in [-1, 1) from a fixed LCG: the same inputs in every run.
std::vector<float> values(std::size_t count, std::uint32_t seed) {
  std::vector<float> v(count);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

float* device_copy(const std::vector<float>& host) {
  float* d = nullptr;
  if (!ok(cudaMalloc(reinterpret_cast<void**>(&d), host.size() * sizeof(float)), "cudaMalloc")) return nullptr;
  const std::size_t bytes = host.size() * sizeof(float);
  if (!ok(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy")) return nullptr;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 9) {
    std::fprintf(stderr, "usage: %s OUT.bin m n k transa transb tf32 calls [capture]\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[2]), n = std::atoi(argv[3]), k = std::atoi(argv[4]);
  const auto ta = std::atoi(argv[5]) ? CUBLAS_OP_T : CUBLAS_OP_N, tb = std::atoi(argv[6]) ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool tf32 = std::atoi(argv[7]) != 0;
  const int calls = std::atoi(argv[8]);
  const bool capture = argc > 9 && std::atoi(argv[9]) != 0;
  const int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : n;
  float* a = device_copy(values(static_cast<std::size_t>(m) * k, 1));
  float* b = device_copy(values(static_cast<std::size_t>(k) * n, 2));
  float* c = device_copy(std::vector<float>(static_cast<std::size_t>(m) * n, 0.0f));
  cudaStream_t stream = nullptr;
  cublasHandle_t h = nullptr;
  if (!a || !b || !c || !ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") ||
      !ok(cublasCreate(&h), "cublasCreate") || !ok(cublasSetStream(h, stream), "cublasSetStream") ||
      !ok(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode"))
    return 1;
  const float one = 1.0f, zero = 0.0f;
  const auto gemm = [&](float* out) { return cublasSgemm(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, out, m); };
  if (capture) {
    // The first call of this problem is inside the capture: it must be captured as cuBLAS's, and the graph must work.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (!ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture") ||
        !ok(gemm(c), "captured cublasSgemm") || !ok(cudaStreamEndCapture(stream, &graph), "end capture") ||
        !ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate") || !ok(cudaGraphLaunch(exec, stream), "launch"))
      return 1;
  }
  for (int i = 0; i < calls; ++i)
    if (!ok(gemm(c), "cublasSgemm")) return 1;
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  if (!ok(cudaStreamSynchronize(stream), "synchronize") ||
      !ok(cudaMemcpy(out.data(), c, out.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy back"))
    return 1;
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) return 1;
  std::fclose(f);
  std::printf("apply_gpu_caller: %d calls of %dx%dx%d done\n", calls, m, n, k);
  return 0;
}
