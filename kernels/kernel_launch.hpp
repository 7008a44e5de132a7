// The launch configuration of a kernel launched with cudaLaunchKernelEx, for what a <<<>>> launch cannot ask:
//  - blocks in thread-block clusters: the cluster's shape is a launch attribute, so one kernel serves any cluster size
//    its launcher picks;
//  - a programmatic dependent launch behind the kernel before it in the stream (a staged variant's operand copy, or
//    the last call's kernel: LaunchScratch::behind_previous_kernel): the GPU starts the kernel's blocks as that
//    kernel's retire, and the kernel waits for its writes (ptx::wait_for_previous_grid) before it touches global
//    memory, so its launch and barrier setup overlap that kernel's tail.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace gemmtune::kernels {

struct KernelLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attributes[2]{};

  KernelLaunch(dim3 grid, dim3 cluster, int threads, std::size_t smem_bytes, cudaStream_t s,
               bool behind_previous = false) {
    config.gridDim = grid;
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = smem_bytes;
    config.stream = s;
    config.attrs = attributes;
    if (cluster.x * cluster.y * cluster.z > 1) {
      cudaLaunchAttribute& a = attributes[config.numAttrs++];
      a.id = cudaLaunchAttributeClusterDimension;
      a.val.clusterDim.x = cluster.x;
      a.val.clusterDim.y = cluster.y;
      a.val.clusterDim.z = cluster.z;
    }
    if (behind_previous) {
      cudaLaunchAttribute& a = attributes[config.numAttrs++];
      a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      a.val.programmaticStreamSerializationAllowed = 1;
    }
  }
  KernelLaunch(const KernelLaunch&) = delete;  // config.attrs points into this object
  KernelLaunch& operator=(const KernelLaunch&) = delete;
};

}  // namespace gemmtune::kernels
