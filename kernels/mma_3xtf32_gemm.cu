// 3xtf32 instantiations of the tensor-core family (kernels/mma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/mma_gemm.cuh"

namespace gemmtune::kernels {
namespace {

// 3xtf32 is mma-bound (three products per fragment) and pays an ALU split per element and a FADD per promotion, so
// its tiles are not tf32's: 64×32 and 32×64 warp tiles (64 accumulators) leave the registers for the fragments, where
// 64×64 ones spilled. Measured on the H200 against cuBLASLt fp32, side by side, NN.
//                                     bm   bn   bk  wm  wn  tm tn stages
using Tf32x3Tiles = TileList<Tile<128, 64, 64, 64, 32, 0, 0, 2>,  // 2048-4096
                             Tile<64, 128, 64, 32, 64, 0, 0, 2>,
                             Tile<128, 64, 32, 64, 32, 0, 0, 4>,
                             Tile<64, 128, 32, 32, 64, 0, 0, 4>,
                             Tile<128, 128, 32, 64, 32, 0, 0, 3>,  // 256 threads
                             Tile<64, 64, 64, 32, 32, 0, 0, 3>,    // small blocks, several per SM
                             Tile<64, 64, 32, 32, 32, 0, 0, 3>,    // 256-512: enough blocks to fill the SMs
                             Tile<32, 64, 32, 32, 32, 0, 0, 3>>;

}  // namespace

std::vector<CompiledVariant> mma_3xtf32_variants() { return compile_mma_variants</*kSplit3x=*/true>(Tf32x3Tiles{}); }

}  // namespace gemmtune::kernels
