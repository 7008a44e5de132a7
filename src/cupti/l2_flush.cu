#include "cupti/l2_flush.hpp"

namespace gemmtune {
namespace {

// The conditional store keeps the loads alive: the compiler cannot prove the sum never equals the sentinel.
__global__ void read_every_line(const int4* __restrict__ data, std::size_t count, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x5eed1e55) *sink = acc;
}

// `key` is zero at run time; the compiler cannot know that, so it keeps the store of the value just loaded.
__global__ void rewrite_every_line(int4* __restrict__ data, std::size_t count, int key) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    data[i] = make_int4(v.x ^ key, v.y ^ key, v.z ^ key, v.w ^ key);
  }
}

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

}  // namespace

L2Flush::L2Flush(std::size_t l2_bytes) : buffer_((2 * l2_bytes + sizeof(int4) - 1) / sizeof(int4)), sink_(1) {
  GT_CUDA_CALL(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
}

void read_to_evict_l2(const void* data, std::size_t bytes, int* sink, cudaStream_t s) {
  read_every_line<<<kBlocks, kThreads, 0, s>>>(static_cast<const int4*>(data), bytes / sizeof(int4), sink);
  GT_CUDA_CHECK_LAUNCH();
}

void rewrite_to_evict_l2(void* data, std::size_t bytes, cudaStream_t s) {
  rewrite_every_line<<<kBlocks, kThreads, 0, s>>>(static_cast<int4*>(data), bytes / sizeof(int4), 0);
  GT_CUDA_CHECK_LAUNCH();
}

void L2Flush::run(cudaStream_t s) const { read_to_evict_l2(buffer_.get(), buffer_.bytes(), sink_.get(), s); }

}  // namespace gemmtune
