// A program that loads its cuBLAS-calling module RTLD_LOCAL (as Python loads an extension) and makes the GEMM calls
// its arguments specify (fake_blas_module.cpp); prints how many reached the fake cuBLAS changed.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  void* module = ::dlopen(GEMMTUNE_FAKE_BLAS_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    std::fprintf(stderr, "cannot load the module: %s\n", ::dlerror());
    return 1;
  }
  using RunFn = int (*)(int, char**);
  const auto run = reinterpret_cast<RunFn>(::dlsym(module, "run_blas_calls"));
  if (!run) return 1;
  const int changed = run(argc - 1, argv + 1);
  if (changed < 0) return 2;
  std::printf("fake cuBLAS got %d calls, %d of them changed\n", argc - 1, changed);
  return 0;
}
