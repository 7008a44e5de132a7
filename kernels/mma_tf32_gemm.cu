// tf32 instantiations of the tensor-core family (kernels/mma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/mma_gemm.cuh"

namespace gemmtune::kernels {
namespace {

// Shapes whose four layout instantiations compile without local-memory spills on sm_90 (ptxas' allocation near 255
// registers is not monotonic in bk or stages: 128×128×16 and 128×128×32 s2/s4 spill here, so they are left out).
//                         bm   bn   bk  wm  wn  tm tn stages
using Tf32Tiles = TileList<Tile<128, 128, 32, 64, 64, 0, 0, 3>,  // 128 threads, two blocks per SM
                           Tile<128, 256, 32, 64, 64, 0, 0, 3>,  // 256 threads, for 2048-4096
                           Tile<256, 128, 32, 64, 64, 0, 0, 3>,
                           Tile<128, 64, 32, 64, 32, 0, 0, 3>,   // more blocks for 512-1024
                           Tile<128, 64, 32, 64, 32, 0, 0, 4>,
                           Tile<64, 128, 32, 32, 64, 0, 0, 3>,
                           Tile<64, 128, 16, 32, 64, 0, 0, 4>,
                           Tile<64, 64, 32, 32, 32, 0, 0, 3>,    // 256-512: enough blocks to fill the SMs
                           Tile<32, 64, 32, 32, 32, 0, 0, 3>>;

}  // namespace

std::vector<CompiledVariant> mma_tf32_variants() { return compile_mma_variants</*kSplit3x=*/false>(Tf32Tiles{}); }

}  // namespace gemmtune::kernels
