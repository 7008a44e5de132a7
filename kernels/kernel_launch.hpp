// The launch configuration of a kernel whose blocks run in thread-block clusters (cudaLaunchKernelEx): the cluster's
// shape is a launch attribute, so one kernel serves any cluster size its launcher picks.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace gemmtune::kernels {

struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};

  ClusterLaunch(dim3 grid, dim3 cluster, int threads, std::size_t smem_bytes, cudaStream_t s) {
    config.gridDim = grid;
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = smem_bytes;
    config.stream = s;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster.x;
    attribute.val.clusterDim.y = cluster.y;
    attribute.val.clusterDim.z = cluster.z;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // config.attrs points into this object
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace gemmtune::kernels
