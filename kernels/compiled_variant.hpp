// What a kernel family hands the registry: each compiled tile shape and its launcher.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/tile_config.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

// Scratch a launch borrows. Split-k (kernels/split_k.cuh): every slice's partial tile, and one ticket per output tile
// that counts the slices done; tickets must be zero before the first launch, and each launch leaves them zero again.
// Staging (kernels/operand_staging.hpp): where a staged variant copies an operand the copy engine cannot address.
// And whether the GEMM kernel may start behind the kernel before it on the stream.
struct LaunchScratch {
  float* partials = nullptr;
  std::size_t partial_floats = 0;
  unsigned* tickets = nullptr;
  std::size_t ticket_count = 0;
  float* staging = nullptr;
  std::size_t staging_floats = 0;
  // A programmatic dependent launch behind whatever kernel precedes it, where the family's kernels wait for that
  // kernel themselves (the wgmma TMA kernels after their barrier setup, a staged variant's operand copy before it
  // reads): the first one's blocks start as that kernel's retire, 0.8-1.4 us a call sooner back to back on the H200
  // (results/nvidia-h200/programmatic_launch.txt). Off where CUPTI times a call alone (the sweep): the call's first
  // kernel would start inside the one before, and its time with it.
  bool behind_previous_kernel = false;
};

// slices: how many blocks share each output tile's k (1: a block computes its tile's whole k; scratch is unused).
using LaunchFn = void (*)(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                          cudaStream_t s);

// A family that picks each problem's slice count itself (the skinny family: as many as fill the GPU).
using SlicesFn = int (*)(const GemmProblem& p);

// Whether the current CUDA device can run something: empty, or why not.
using DeviceCheck = std::string (*)();

struct CompiledVariant {
  TileConfig tile;
  LaunchFn launch;
  bool split_k;  // the registry lists a `_split<slices>` variant per count (kernels/split_k.cuh has_split_k)
  SlicesFn slices_for = nullptr;  // non-null: one variant, split as this says for each problem
  // Non-null: the registry lists a `_streamk` variant of the tile too, which this launches (kernels/stream_k.cuh).
  LaunchFn stream_k_launch = nullptr;
  // Non-null: whether this GPU can run the tile's own kernels, beyond its family's device limits (a cluster tile:
  // whether the GPU holds its cluster's blocks at once).
  DeviceCheck fits_device = nullptr;
};

// What a family cannot run beyond the checks every variant makes (mode, pass, shape): each says why not, or is empty.
// A null check means no such limit.
struct FamilyLimits {
  std::string (*problem)(const GemmProblem& p) = nullptr;  // layouts, alignment
  DeviceCheck device = nullptr;                            // the current CUDA device
};

// One list per family and mode, each defined in its family's .cu (so the families compile in parallel).
std::vector<CompiledVariant> simt_fp32_variants();
std::vector<CompiledVariant> mma_tf32_variants();
std::vector<CompiledVariant> mma_3xtf32_variants();
// Defined only when the build has sm_90a code (GEMMTUNE_HAVE_WGMMA, kernels/CMakeLists.txt).
std::vector<CompiledVariant> wgmma_tf32_variants();
std::vector<CompiledVariant> wgmma_3xtf32_variants();
FamilyLimits wgmma_limits();  // both wgmma families'
std::vector<CompiledVariant> skinny_variants();      // FFMA: one list, registered for fp32 and for tf32 problems
std::vector<CompiledVariant> skinny_mma_variants();  // tf32 mma.sync, for tf32 problems
std::vector<CompiledVariant> skinny_mma_3xtf32_variants();  // 3xtf32 mma.sync, for 3xtf32 problems
std::vector<CompiledVariant> skinny_stream_variants();  // FFMA on B streamed into registers: fp32 and tf32 problems
FamilyLimits skinny_limits();                        // every skinny family's

}  // namespace gemmtune::kernels
