// Functions that host code (tests, launchers) and kernels share: __host__ __device__ under nvcc, plain inline in C++.
#pragma once

#if defined(__CUDACC__)
#define GT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GT_HOST_DEVICE inline
#endif
