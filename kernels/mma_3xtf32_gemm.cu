// 3xtf32 instantiations of the tensor-core family (kernels/mma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/mma_gemm.cuh"

namespace gemmtune::kernels {
namespace {

// 3xtf32 is mma-bound (three products per fragment), so deeper pipelines and 128×128 blocks pay off more than for
// tf32; the list held the shapes whose four layouts compiled without spills on sm_90 (128×64 spills in NT here).
// Since the promotion into FADD (kernels/mma_gemm.cuh) the 64×64 warp tiles spill 4–28 bytes: kept, pending their
// timing against cuBLASLt fp32 (scripts/dev/accuracy_check.sh).
//                           bm   bn   bk  wm  wn  tm tn stages
using Tf32x3Tiles = TileList<Tile<128, 128, 32, 64, 64, 0, 0, 3>,  // 128 threads, two blocks per SM
                             Tile<128, 128, 32, 64, 64, 0, 0, 4>,
                             Tile<128, 128, 32, 64, 64, 0, 0, 2>,
                             Tile<128, 128, 16, 64, 64, 0, 0, 4>,
                             Tile<128, 256, 32, 64, 64, 0, 0, 3>,  // 256 threads, for 2048-4096
                             Tile<256, 128, 32, 64, 64, 0, 0, 3>,
                             Tile<64, 128, 32, 32, 64, 0, 0, 3>,   // more blocks for 512-1024
                             Tile<64, 64, 32, 32, 32, 0, 0, 3>,    // 256-512: enough blocks to fill the SMs
                             Tile<32, 64, 32, 32, 32, 0, 0, 3>>;

}  // namespace

std::vector<CompiledVariant> mma_3xtf32_variants() { return compile_mma_variants</*kSplit3x=*/true>(Tf32x3Tiles{}); }

}  // namespace gemmtune::kernels
