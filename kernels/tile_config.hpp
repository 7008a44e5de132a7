// A kernel variant's compile-time shape: block tile, warp tile, thread tile (SIMT), BK and pipeline stages.
#pragma once

namespace gemmtune::kernels {

// The runtime view of a tile shape, as the registry and the db describe a variant. tm/tn are 0 where a family has no
// thread tile (tensor cores: a warp's fragments are fixed by the mma shape). cluster: the blocks of a thread-block
// cluster (sm_90), 1 for none: wgmma pairs them along n to share (multicast) their A tile, SIMT splits k over them and
// reduces in distributed shared memory.
struct TileConfig {
  int bm, bn, bk, wm, wn, tm, tn, stages, threads;
  int cluster = 1;
  bool whole_k = false;  // skinny tiles: one block streams a tile's whole k, never split ("_wholek")
};

// The compile-time view: kernels are templates over one of these.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int CLUSTER = 1>
struct Tile {
  static constexpr int bm = BM, bn = BN, bk = BK, wm = WM, wn = WN, tm = TM, tn = TN, stages = STAGES;
  static constexpr int cluster = CLUSTER;
  static constexpr int warps_m = BM / WM, warps_n = BN / WN;
  static constexpr int threads = warps_m * warps_n * 32;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");

  static constexpr TileConfig config() { return {BM, BN, BK, WM, WN, TM, TN, STAGES, threads, CLUSTER}; }
  // The same tile for a kernel that runs without clusters.
  using Unclustered = Tile<BM, BN, BK, WM, WN, TM, TN, STAGES>;
};

template <class... Tiles>
struct TileList {};

}  // namespace gemmtune::kernels
