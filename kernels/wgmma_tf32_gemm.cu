// tf32 instantiations of the wgmma families (kernels/wgmma_gemm.cuh), and the limits both families share.
#include "kernels/wgmma_gemm.cuh"

namespace gemmtune::kernels {
namespace {

// bm is the wgmma's n (64, 128, 192 or 256), bn is 64 per warpgroup. wm = bm, wn = 16: each warp owns 16 columns of Y.
// 128×256 (4 warpgroups) is left out: capped at 128 registers for 512 threads, its NN instantiation spills.
//                          bm   bn   bk   wm  wn tm tn stages
using WgmmaTiles = TileList<Tile<256, 128, 32, 256, 16, 0, 0, 4>,  // 2 warpgroups of m64n256: the 2048-4096 shapes
                            Tile<256, 128, 32, 256, 16, 0, 0, 4, 2>,  // pairs share A: a third less L2 traffic
                            // m of 129-192 in one tile of rows: B crosses L2 once, not twice (4 stages: NT's 5 do
                            // not fit 227 KB)
                            Tile<192, 128, 32, 192, 16, 0, 0, 4>, Tile<192, 128, 32, 192, 16, 0, 0, 4, 2>,
                            Tile<128, 128, 32, 128, 16, 0, 0, 4, 2>,
                            Tile<256, 128, 32, 256, 16, 0, 0, 3>,
                            Tile<128, 128, 32, 128, 16, 0, 0, 4>,
                            Tile<128, 128, 32, 128, 16, 0, 0, 3>,  // 102 KB: 2 blocks per SM (NN fits 128 registers)
                            Tile<256, 64, 32, 256, 16, 0, 0, 4>,   // 1 warpgroup: more blocks for 1024-2048
                            Tile<128, 64, 32, 128, 16, 0, 0, 4>,
                            Tile<64, 128, 32, 64, 16, 0, 0, 4>,
                            Tile<64, 128, 32, 64, 16, 0, 0, 6>,
                            Tile<64, 64, 32, 64, 16, 0, 0, 4>>;    // 256-512: enough blocks to fill the SMs

// Split over k (wgmma_gemm.cuh: InTileList) for m of about 64–400: 128 rows in two warpgroups, 64 rows (where m is
// just over a multiple of 64), and one warpgroup's 128×64 (two blocks per SM, twice the tiles along n). The 128×128
// pair shares A along n: for a few hundred rows against a long k, where split blocks wait on L2.
using WgmmaSplitTiles = TileList<Tile<128, 128, 32, 128, 16, 0, 0, 4>, Tile<64, 128, 32, 64, 16, 0, 0, 6>,
                                 Tile<128, 64, 32, 128, 16, 0, 0, 4>, Tile<192, 128, 32, 192, 16, 0, 0, 4>,
                                 Tile<128, 128, 32, 128, 16, 0, 0, 4, 2>>;

// Stream-K (kernels/stream_k.cuh) for the unclustered two-warpgroup tiles, whose tile counts quantize badly against
// 132 SMs on mid-size problems (1515×2288: 108 tiles of 256×128, 144 of 192×128).
using WgmmaStreamKTiles = TileList<Tile<256, 128, 32, 256, 16, 0, 0, 4>, Tile<192, 128, 32, 192, 16, 0, 0, 4>,
                                   Tile<128, 128, 32, 128, 16, 0, 0, 4>>;

std::string wgmma_problem_limits(const GemmProblem& p) {
  if (p.trans_a)
    return "tf32 wgmma reads Aᵀ from shared memory K-major only, so A must be stored m×k (layouts nn, nt), not " +
           p.layout() + " (the _staged twin copies A so)";
  return "";
}

std::string wgmma_device_limits() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                                                      device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    const cudaError_t error = cudaGetLastError();  // clears it: asking is not a failure of later CUDA calls
    return std::string("wgmma needs a compute capability 9.0 GPU and none is usable: ") + cudaGetErrorString(error);
  }
  if (major != 9 || minor != 0)
    return "wgmma is sm_90a code, which runs on compute capability 9.0 only; this GPU is " + std::to_string(major) +
           "." + std::to_string(minor);
  return "";
}

}  // namespace

std::vector<CompiledVariant> wgmma_tf32_variants() {
  return compile_wgmma_variants</*kSplit3x=*/false>(WgmmaTiles{}, WgmmaSplitTiles{}, WgmmaStreamKTiles{});
}

FamilyLimits wgmma_limits() { return {&wgmma_problem_limits, &wgmma_device_limits}; }

}  // namespace gemmtune::kernels
