// A program that makes cuBLAS calls from several threads at once, against the fake cuBLAS (tests/trace/fake_cublas),
// for the router's thread test (tests/gemm_shim/router_test.cpp): each thread, on its own handle, alternates a call
// the fake backend routes with one it refuses, `calls` times each.
//
//   threaded_blas_caller THREADS CALLS
#include <cublas_api.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s THREADS CALLS\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]), calls = std::atoi(argv[2]);
  const float one = 1.0f, zero = 0.0f;
  const auto* a = reinterpret_cast<const float*>(0x1000);
  const auto* b = reinterpret_cast<const float*>(0x2000);
  auto* c = reinterpret_cast<float*>(0x3000);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      cublasHandle_t h = nullptr;
      cublasCreate_v2(&h);
      for (int i = 0; i < calls; ++i) {
        cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);  // fwd:64x128x256:nn:row:none:fp32, routed
        cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 256, &one, a, 128, b, 256, &zero, c, 128);
        cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);  // fwd:64x64x64:nn:row:none:tf32, refused
        cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64, b, 64, &zero, c, 64);
      }
    });
  for (std::thread& w : workers) w.join();
  std::printf("threaded_blas_caller: %d threads x %d calls done\n", threads, 2 * calls);
  return 0;
}
