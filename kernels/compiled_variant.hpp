// What a kernel family hands the registry: each compiled tile shape and its launcher.
#pragma once

#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/tile_config.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

using LaunchFn = void (*)(const GemmProblem& p, const GemmOperands& x, cudaStream_t s);

struct CompiledVariant {
  TileConfig tile;
  LaunchFn launch;
};

// One list per family and mode, each defined in its family's .cu (so the families compile in parallel).
std::vector<CompiledVariant> simt_fp32_variants();
std::vector<CompiledVariant> mma_tf32_variants();
std::vector<CompiledVariant> mma_3xtf32_variants();

}  // namespace gemmtune::kernels
