// Stream-K (Osama, Merrill, Cecka, Garland, Owens, "Stream-K: Work-centric Parallel Decomposition for Dense
// Matrix-Matrix Multiplication on the GPU", PPoPP 2023) for the wgmma TMA kernel: a grid of as many blocks as run at
// once splits the problem's k tiles, not only its output tiles, among them, so a problem whose tiles quantize badly
// against the SMs (1515×2288×6340: 108 tiles of 256×128 for 132 SMs, a fifth of the GPU idle) keeps every SM busy.
//
// Not the paper's even split of all k tiles in a row: there block b starts ⌊S·b/G⌋ k tiles into the work, so at any
// moment the blocks read k slices spread over all of k, and where A and B exceed L2 every slice that 6-18 tiles share
// comes from DRAM again for each (H200, 1515×2288×6340 tf32, 256×128 tile: 245 µs against 189 for one tile a block;
// 4096³: 564 against 401). Here the blocks stay in step over k:
// - the first W = ⌊T/G⌋·G of T tiles go whole to the blocks in turns (tile b, b + G, …), all at the same k;
// - each of the r = T − W tiles left, j = 0 … r − 1, has its first `bulk` = ⌈r·K/G'⌉ k tiles computed by block j,
//   in step with the others (G' ≤ min(G, 4r) blocks take part: streamed_blocks_for);
// - the G' − r other blocks share the rest, [bulk, K) of each of the r tiles, evenly and in order (the paper's
//   scheme, over a window of (K − bulk)/K of A's and B's k: 18% at 1515×2288×6340, which L2 holds).
// Each block then computes ⌈T·K/G⌉ k tiles or fewer, and a tile's shares other than whole ones leave their partial
// accumulators in a slot of their own (tile j's bulk in slot j, tail block c's share of it in r + c + j) and draw a
// ticket on the tile; the block that draws the last adds the shares, bulk first and the tail blocks in order, and
// stores the tile. No block waits for another: one spinning on a peer's flag could deadlock against a kernel on
// another stream that holds the SMs the peer needs. And the sum's order does not depend on which block is last, so
// results are deterministic.
//
// Everything but gather_stream_k is __host__ __device__, so the CPU tests check the schedule itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/split_k.cuh"

namespace gemmtune::kernels {

// The most blocks a Stream-K launch runs: one per SM on every sm_90 part (132 on the H100 SXM and the H200). It sizes
// the scratch: fewer than 2G partial slots, and fewer than G tickets (one per tile left after the whole waves).
inline constexpr int kStreamKMaxBlocks = 132;
inline constexpr int kStreamKSlots = 2 * kStreamKMaxBlocks;
// Blocks that take part per tile left after the whole waves, at most: a tile then has about that many shares (one more
// where they do not line up with its tail), so the block that adds them never reads many partials.
inline constexpr int kStreamKBlocksPerTile = 4;
// What a share left in scratch costs its block, in k tiles' time: storing a partial tile, reading the others back for
// a tile's last share, and the tails' k window competing with the bulk for L2. Fitted to 18 tile × shape pairs on the
// H200 (tf32 bias+gelu; kernels/PERFORMANCE.md, "Stream-K"): with 12, twelve streamed and three of them lost 2-13%
// (2560²×4096 and 1536×4096×2048 in 256×128 tiles, 1515×2288×6340 in 128×128); 24 streams exactly the nine that won.
inline constexpr int kStreamKShareCost = 24;

// A block's share of one output tile: k tiles [k_begin, k_end) of tile `tile` (grouped_tile's numbering).
struct TileShare {
  std::int64_t tile;
  int k_begin, k_end;
};

class StreamKSchedule {
 public:
  // How many blocks share the r tiles left after the whole waves: the count G' (r < G' ≤ min(G, 4r)) whose busiest
  // block is done first, ⌈r·K/G'⌉ k tiles and kStreamKShareCost for each share a tail block leaves (at most
  // ⌈r/(G' − r)⌉ + 1); or r, each tile computed whole by its block as without Stream-K, where none beats K. Host code,
  // once per launch: the kernel takes the count (SplitK::streamed_blocks).
  static int streamed_blocks_for(std::int64_t tiles, int k_tiles, int blocks) {
    const int rest = static_cast<int>(tiles % blocks);
    std::int64_t best_cost = k_tiles;
    int best = rest;
    const int most = blocks < kStreamKBlocksPerTile * rest ? blocks : kStreamKBlocksPerTile * rest;
    for (int taking_part = rest + 1; taking_part <= most; ++taking_part) {
      const std::int64_t bulk = (std::int64_t{rest} * k_tiles + taking_part - 1) / taking_part;
      const std::int64_t shares = (taking_part - 1) / (taking_part - rest) + 1;
      if (const std::int64_t cost = bulk + kStreamKShareCost * shares; cost < best_cost) {
        best_cost = cost;
        best = taking_part;
      }
    }
    return best;
  }

  // streamed_blocks: what streamed_blocks_for(tiles, k_tiles, blocks) says.
  GT_HOST_DEVICE StreamKSchedule(std::int64_t tiles, int k_tiles, int blocks, int streamed_blocks)
      : k_tiles_(k_tiles),
        blocks_(blocks),
        whole_tiles_(tiles / blocks * blocks),
        rest_(static_cast<int>(tiles - whole_tiles_)),
        streamed_blocks_(streamed_blocks),
        bulk_(rest_ == 0 ? k_tiles
                         : static_cast<int>((std::int64_t{rest_} * k_tiles + streamed_blocks - 1) / streamed_blocks)),
        tail_(std::int64_t{rest_} * (k_tiles - bulk_)) {}

  // Calls f(TileShare) for each of block b's shares, in the order the block computes them.
  template <class F>
  GT_HOST_DEVICE void for_each_share(int b, F&& f) const {
    for (std::int64_t tile = b; tile < whole_tiles_; tile += blocks_) f(TileShare{tile, 0, k_tiles_});
    if (b < rest_) {
      f(TileShare{whole_tiles_ + b, 0, bulk_});
      return;
    }
    if (b >= streamed_blocks_) return;
    const int length = k_tiles_ - bulk_;  // of each tile's tail
    const std::int64_t end = tail_begin(b - rest_ + 1);
    for (std::int64_t i = tail_begin(b - rest_); i < end;) {
      const std::int64_t j = i / length;
      const int k_begin = bulk_ + static_cast<int>(i - j * length);
      const int k_end = end - i < k_tiles_ - k_begin ? k_begin + static_cast<int>(end - i) : k_tiles_;
      f(TileShare{whole_tiles_ + j, k_begin, k_end});
      i += k_end - k_begin;
    }
  }

  GT_HOST_DEVICE bool whole(const TileShare& s) const { return s.k_begin == 0 && s.k_end == k_tiles_; }
  // Where block b leaves its share s of a tile that is not whole: below kStreamKSlots.
  GT_HOST_DEVICE int slot(int b, const TileShare& s) const {
    const int j = static_cast<int>(s.tile - whole_tiles_);
    return b < rest_ ? j : b + j;
  }
  // The ticket of a tile that is not computed whole, below kStreamKMaxBlocks.
  GT_HOST_DEVICE int ticket(std::int64_t tile) const { return static_cast<int>(tile - whole_tiles_); }
  // How many blocks share tile `tile` (one not computed whole): the tickets drawn on it.
  GT_HOST_DEVICE int shares(std::int64_t tile) const {
    int count = 0;
    for_each_slot(tile, [&](int) { ++count; });
    return count;
  }
  // Calls f(slot) for each share of tile `tile` (one not computed whole), in the order they are added up.
  template <class F>
  GT_HOST_DEVICE void for_each_slot(std::int64_t tile, F&& f) const {
    const int j = static_cast<int>(tile - whole_tiles_);
    f(j);
    const std::int64_t length = k_tiles_ - bulk_;
    for (int c = tail_block_of(j * length), last = tail_block_of((j + 1) * length - 1); c <= last; ++c)
      if (tail_begin(c) < tail_begin(c + 1)) f(rest_ + c + j);
  }
  GT_HOST_DEVICE std::int64_t whole_tiles() const { return whole_tiles_; }

 private:
  // Tail block c's (block rest_ + c's) first iteration of the tails, [bulk, K) of tile 0, then of tile 1, …
  GT_HOST_DEVICE std::int64_t tail_begin(int c) const { return tail_ * c / (streamed_blocks_ - rest_); }
  // The tail block whose iterations include i: the largest c with tail_begin(c) ≤ i.
  GT_HOST_DEVICE int tail_block_of(std::int64_t i) const {
    const int blocks = streamed_blocks_ - rest_;
    return static_cast<int>(((i + 1) * blocks + tail_ - 1) / tail_ - 1);
  }

  int k_tiles_, blocks_;
  std::int64_t whole_tiles_;
  int rest_, streamed_blocks_, bulk_;
  std::int64_t tail_;  // iterations of all tails
};

#if defined(__CUDACC__)
// Call with a share that is not whole and the block's accumulators for it in `acc` (each thread's kAccs, laid out
// alike in every block); threads 0 … kThreads − 1 call it and `barrier` synchronizes exactly them. Returns true when
// `acc` holds the tile's whole sum, for this block to store; false when another block's share finishes the tile.
// Partials are stored as the threads hold them (slot[i·kThreads + tid]): coalesced, and no shared memory.
template <int kThreads, int kAccs, class Barrier>
__device__ __forceinline__ bool gather_stream_k(float (&acc)[kAccs], const StreamKSchedule& schedule,
                                                const TileShare& share, const SplitK& scratch, int tid,
                                                Barrier barrier) {
  constexpr std::size_t kSlotFloats = std::size_t{kThreads} * kAccs;
  float* const mine = scratch.partials + schedule.slot(static_cast<int>(blockIdx.x), share) * kSlotFloats + tid;
#pragma unroll
  for (int i = 0; i < kAccs; ++i) __stcg(mine + i * kThreads, acc[i]);
  __threadfence();  // release: the partial is visible device-wide before the ticket is
  barrier();
  __shared__ unsigned ticket;
  unsigned* const tile_ticket = scratch.tickets + schedule.ticket(share.tile);
  if (tid == 0) ticket = atomicAdd(tile_ticket, 1u);
  barrier();
  if (ticket + 1 != static_cast<unsigned>(schedule.shares(share.tile))) return false;
  __threadfence();  // acquire: the other shares' partials, published before their tickets
  // In the schedule's order, this block's own partial read back too, so the sum is the same whichever block is last.
  bool first = true;
  schedule.for_each_slot(share.tile, [&](int slot) {
    const float* const part = scratch.partials + slot * kSlotFloats + tid;
#pragma unroll
    for (int i = 0; i < kAccs; ++i) {
      const float v = __ldcg(part + i * kThreads);
      acc[i] = first ? v : acc[i] + v;
    }
    first = false;
  });
  // Every share has drawn its ticket: the next launch starts from zero. (The next call's first barrier keeps tid 0
  // from overwriting `ticket` before every thread has read it.)
  if (tid == 0) *tile_ticket = 0;
  return true;
}
#endif

}  // namespace gemmtune::kernels
