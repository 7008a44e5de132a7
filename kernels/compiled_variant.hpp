// What a kernel family hands the registry: each compiled tile shape and its launcher.
#pragma once

#include <string>
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

// What a family cannot run beyond the checks every variant makes (mode, pass, shape): each says why not, or is empty.
// A null check means no such limit.
struct FamilyLimits {
  std::string (*problem)(const GemmProblem& p) = nullptr;  // layouts, alignment
  std::string (*device)() = nullptr;                       // the current CUDA device
};

// One list per family and mode, each defined in its family's .cu (so the families compile in parallel).
std::vector<CompiledVariant> simt_fp32_variants();
std::vector<CompiledVariant> mma_tf32_variants();
std::vector<CompiledVariant> mma_3xtf32_variants();
// Defined only when the build has sm_90a code (GEMMTUNE_HAVE_WGMMA, kernels/CMakeLists.txt).
std::vector<CompiledVariant> wgmma_tf32_variants();
FamilyLimits wgmma_tf32_limits();

}  // namespace gemmtune::kernels
