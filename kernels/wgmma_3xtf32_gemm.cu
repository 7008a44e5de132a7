// 3xtf32 instantiations of the wgmma families (kernels/wgmma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/wgmma_gemm.cuh"

namespace gemmtune::kernels {
namespace {

// Two consumer warpgroups only: each holds its running sum, the k tile's fresh accumulator, the split register operand
// and the next tile's raw one (64 + 64 + 32 + 16 registers for m64n128), which only the 232 registers of a
// two-warpgroup block fit; m64n256 would not. 3xtf32 does three times the tensor work per byte loaded, so bm = 128
// already keeps the tensor cores busy: 2.1-2.3x cuBLASLt fp32 at 2048-4096 (kernels/PERFORMANCE.md).
//                                bm   bn   bk   wm  wn tm tn stages cluster
using Wgmma3xTf32Tiles = TileList<Tile<128, 128, 32, 128, 16, 0, 0, 4>,     // 2048-4096
                                  Tile<128, 128, 32, 128, 16, 0, 0, 4, 2>,  // pairs share A
                                  Tile<128, 128, 32, 128, 16, 0, 0, 3>,
                                  Tile<128, 128, 32, 128, 16, 0, 0, 3, 2>,
                                  Tile<64, 128, 32, 64, 16, 0, 0, 6>,       // twice the blocks for 1024-2048
                                  Tile<64, 128, 32, 64, 16, 0, 0, 4>,
                                  Tile<64, 128, 32, 64, 16, 0, 0, 4, 2>,
                                  Tile<64, 128, 32, 64, 16, 0, 0, 3>>;

}  // namespace

std::vector<CompiledVariant> wgmma_3xtf32_variants() {
  // No split kernels and no Stream-K.
  return compile_wgmma_variants</*kSplit3x=*/true>(Wgmma3xTf32Tiles{}, TileList<>{}, TileList<>{});
}

}  // namespace gemmtune::kernels
