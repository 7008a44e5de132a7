// Stream-K's schedule (kernels/stream_k.cuh) on the host, where it is plain arithmetic: every k tile of every output
// tile computed exactly once, each block's shares in order, every share that is not whole in a slot of its own, the
// slots a tile's last share adds being exactly its shares', bulk first, and no block given more than an even share;
// grids of 1 to 132 blocks and tile counts below, at and above one and two waves.
#include "kernels/stream_k.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace gemmtune::kernels {
namespace {

struct Case {
  std::int64_t tiles;
  int k_tiles, blocks;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const int blocks : {1, 2, 7, 132})
    for (const std::int64_t tiles : {std::int64_t{1}, std::int64_t{3}, std::int64_t{blocks} - 1, std::int64_t{blocks},
                                     std::int64_t{blocks} + 1, 2 * std::int64_t{blocks} - 1, 2 * std::int64_t{blocks},
                                     2 * std::int64_t{blocks} + 5, 7 * std::int64_t{blocks} + 3})
      for (const int k_tiles : {1, 2, 17, 199})
        if (tiles >= 1) all.push_back({tiles, k_tiles, blocks});
  all.push_back({108, 199, 132});  // 1515×2288×6340 in 256×128 tiles
  return all;
}

// The most blocks that may share the tiles left after the whole waves (r of them where none is left to share).
int most_taking_part(const Case& c) {
  const auto rest = static_cast<int>(c.tiles % c.blocks);
  return std::max(rest, std::min(c.blocks, kStreamKBlocksPerTile * rest));
}

StreamKSchedule schedule_of(const Case& c, int streamed_blocks) {
  return StreamKSchedule(c.tiles, c.k_tiles, c.blocks, streamed_blocks);
}

// Every k tile of every tile computed once, each block's shares in order, every share that is not whole in a slot of
// its own, and the slots a tile's last share adds being exactly its shares', bulk first.
void check_schedule(const Case& c, int taking_part) {
  SCOPED_TRACE(::testing::Message() << c.tiles << " tiles of " << c.k_tiles << " k tiles, " << c.blocks << " blocks, "
                                    << taking_part << " taking part");
  const StreamKSchedule schedule = schedule_of(c, taking_part);
  EXPECT_EQ(schedule.whole_tiles(), c.tiles / c.blocks * c.blocks);
  std::vector<int> computed(static_cast<std::size_t>(c.tiles * c.k_tiles), 0);
  std::map<std::int64_t, std::vector<TileShare>> held;  // tile: its shares that are not whole, in block order
  std::map<std::int64_t, std::vector<int>> slots_held;
  std::set<int> slots;
  for (int b = 0; b < c.blocks; ++b) {
    std::int64_t previous = -1;
    schedule.for_each_share(b, [&](const TileShare& share) {
      ASSERT_GE(share.tile, 0);
      ASSERT_LT(share.tile, c.tiles);
      ASSERT_GT(share.tile, previous);  // in order, each tile once per block
      previous = share.tile;
      ASSERT_GE(share.k_begin, 0);
      ASSERT_LT(share.k_begin, share.k_end);
      ASSERT_LE(share.k_end, c.k_tiles);
      for (int kt = share.k_begin; kt < share.k_end; ++kt)
        ++computed[static_cast<std::size_t>(share.tile * c.k_tiles + kt)];
      if (schedule.whole(share)) return;
      ASSERT_GE(share.tile, schedule.whole_tiles());
      const int slot = schedule.slot(b, share);
      EXPECT_TRUE(slots.insert(slot).second) << "block " << b << " slot " << slot;
      EXPECT_GE(slot, 0);
      EXPECT_LT(slot, 2 * c.blocks);
      EXPECT_GE(schedule.ticket(share.tile), 0);
      EXPECT_LT(schedule.ticket(share.tile), c.blocks);
      held[share.tile].push_back(share);
      slots_held[share.tile].push_back(slot);
    });
  }
  EXPECT_TRUE(std::all_of(computed.begin(), computed.end(), [](int n) { return n == 1; }));
  for (const auto& [tile, shares] : held) {
    ASSERT_GE(shares.size(), 2u) << "tile " << tile;  // a share that is not whole has company
    EXPECT_EQ(shares.front().k_begin, 0) << "tile " << tile;  // the sum starts from the bulk
    EXPECT_LE(shares.size(), static_cast<std::size_t>(kStreamKBlocksPerTile + 1)) << "tile " << tile;
    EXPECT_EQ(schedule.shares(tile), static_cast<int>(shares.size())) << "tile " << tile;
    std::vector<int> added;
    schedule.for_each_slot(tile, [&](int slot) { added.push_back(slot); });
    EXPECT_EQ(added, slots_held[tile]) << "tile " << tile;
  }
}

TEST(StreamKSchedule, ComputesEveryKTileOnceAndEachTilesLastShareAddsExactlyItsSharesBulkFirst) {
  for (const Case& c : cases()) {
    const auto rest = static_cast<int>(c.tiles % c.blocks);
    // The chooser's count, none streamed, and from one block more than the tiles left to the most.
    const int chosen = StreamKSchedule::streamed_blocks_for(c.tiles, c.k_tiles, c.blocks);
    for (const int taking_part : std::set<int>{chosen, rest, std::min(rest + 1, most_taking_part(c)),
                                               (rest + most_taking_part(c)) / 2, most_taking_part(c)})
      check_schedule(c, taking_part);
  }
}

// The point of it: where it streams, no block computes more k tiles than its whole tiles' and an even share, rounded
// up, of the other tiles' among the blocks taking part; where it does not, each of those tiles is its block's whole.
TEST(StreamKSchedule, NoBlockComputesMoreThanAnEvenShareOfTheTilesLeftRoundedUp) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(::testing::Message() << c.tiles << " tiles of " << c.k_tiles << " k tiles, " << c.blocks << " blocks");
    const auto rest = static_cast<int>(c.tiles % c.blocks);
    // Every count the chooser may answer, not only its answer.
    for (int taking_part = static_cast<int>(rest); taking_part <= most_taking_part(c); ++taking_part) {
      const StreamKSchedule schedule = schedule_of(c, taking_part);
      std::int64_t most = 0;
      for (int b = 0; b < c.blocks; ++b) {
        std::int64_t k_tiles = 0;
        schedule.for_each_share(b, [&](const TileShare& share) { k_tiles += share.k_end - share.k_begin; });
        most = std::max(most, k_tiles);
      }
      const std::int64_t even =
          c.tiles / c.blocks * c.k_tiles + (rest == 0 ? 0 : (rest * c.k_tiles + taking_part - 1) / taking_part);
      EXPECT_EQ(most, even) << taking_part << " blocks taking part";
    }
  }
}

// It streams where that was measured faster, and only there (H200, tf32 bias+gelu, 132 blocks; tiles and k tiles of
// 32 per shape and tile; kernels/PERFORMANCE.md, "Stream-K"): the nine pairs that won by 1-2.2×, and none of the
// three that lost 2-13% when streamed, nor where it made no difference.
TEST(StreamKSchedule, StreamsTheTileAndShapePairsMeasuredFasterStreamedAndNoOthers) {
  struct Pair {
    std::int64_t tiles;
    int k_tiles;
    bool faster_streamed;
  };
  const Pair measured[] = {
      {144, 199, true},   // 1515×2288×6340, 192×128: 271 µs one tile a block, 220 streamed
      {32, 256, true},    // 1024×1024×8192, 256×128: 154 against 69-79
      {48, 256, true},    // 1024×1024×8192, 192×128: 121 against 96
      {64, 256, true},    // 1024×1024×8192, 128×128: 102 against 80
      {704, 128, true},   // 4096³, 192×128: 487 against 455-465
      {288, 94, true},    // 3000³, 256×128: 210-213 against 194-200
      {576, 94, true},    // 3000³, 128×128: 233-235 against 230-232
      {280, 128, true},   // 2560×2560×4096, 192×128: 215 against 199
      {400, 128, true},   // 2560×2560×4096, 128×128: 236 against 216
      {200, 128, false},  // 2560×2560×4096, 256×128: 172 against 188-193
      {192, 64, false},   // 1536×4096×2048, 256×128: 94 against 106
      {216, 199, false},  // 1515×2288×6340, 128×128: 237 against 233-250
      {512, 128, false},  // 4096³, 256×128: 512 tiles of which 116 left over
      {108, 199, false},  // 1515×2288×6340, 256×128: 108 tiles, one wave of 132 blocks
  };
  for (const Pair& p : measured) {
    const int streamed_blocks = StreamKSchedule::streamed_blocks_for(p.tiles, p.k_tiles, 132);
    EXPECT_EQ(streamed_blocks > p.tiles % 132, p.faster_streamed) << p.tiles << " tiles of " << p.k_tiles;
  }
  EXPECT_EQ(StreamKSchedule::streamed_blocks_for(264, 64, 132), 0);  // whole waves only
}

}  // namespace
}  // namespace gemmtune::kernels
