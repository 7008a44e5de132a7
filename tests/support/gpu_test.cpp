#include "support/gpu_test.hpp"

#include <cuda_runtime_api.h>

namespace gemmtune::test {

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return std::string("no usable CUDA GPU (") + cudaGetErrorString(err) + ")";
  if (count == 0) return "no CUDA GPU found";
  return "";
}

}  // namespace gemmtune::test
