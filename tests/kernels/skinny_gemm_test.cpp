// The skinny families (kernels/skinny_gemm.cu, skinny_stream_gemm.cu): every variant, FFMA in fp32 and in tf32 (B
// through shared memory or streamed into registers) and mma in tf32, vs the fp64 reference on NN problems with 1 to
// 64 rows (edge tiles in every dimension, n and k not multiples of 4, every activation, save_z, dropout, both output
// layouts), split and unsplit (odd slice counts too), and with B's rows off 16-byte boundaries; split launches repeat
// bit for bit; and what they refuse, and why.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/kernel_test_support.hpp"
#include "kernels/launch_scratch.hpp"
#include "kernels/registry.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

std::vector<const KernelVariant*> skinny_variants() {
  std::vector<const KernelVariant*> found;
  for (const KernelVariant& v : kernel_registry())
    if (is_skinny(v.family)) found.push_back(&v);
  return found;
}

// A "_c8" or "_c16" tile's twin that sums its slices through tickets: its name without the suffix.
const KernelVariant* ticket_twin(const KernelVariant& v) {
  const std::string suffix = "_c" + std::to_string(v.tile.cluster);
  if (v.name.size() <= suffix.size() || v.name.substr(v.name.size() - suffix.size()) != suffix) return nullptr;
  return find_kernel_variant(v.name.substr(0, v.name.size() - suffix.size()));
}

GemmProblem nn(std::int64_t m, std::int64_t n, std::int64_t k, MathMode mode = MathMode::Tf32) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.mode = mode;
  return p;
}

TEST(SkinnyGemm, FfmaServesFp32AndTf32ProblemsWithOneVariantPerTileAndMode) {
  int fp32 = 0, tf32 = 0;
  for (const KernelVariant* v : skinny_variants()) {
    EXPECT_EQ(v->slices, KernelVariant::kSlicesPerProblem) << v->name;
    EXPECT_NE(v->slices_fn, nullptr) << v->name;
    if (v->family != Family::Skinny && v->family != Family::SkinnyStream) continue;
    const bool serves_fp32 = v->mode == MathMode::Fp32;
    std::string twin_name = v->name;
    twin_name.replace(twin_name.find(serves_fp32 ? "_fp32_" : "_tf32_"), 6, serves_fp32 ? "_tf32_" : "_fp32_");
    const KernelVariant* twin = find_kernel_variant(twin_name);
    ASSERT_NE(twin, nullptr) << v->name;
    EXPECT_EQ(twin->launch_fn, v->launch_fn) << v->name;
    fp32 += v->mode == MathMode::Fp32;
    tf32 += v->mode == MathMode::Tf32;
  }
  EXPECT_GE(fp32, 4);
  EXPECT_EQ(fp32, tf32);
}

// tf32's tensor cores round the operands, which an fp32 problem does not allow; 3xtf32 serves fp32 problems only
// through the fp32-equivalent policy (problem/fp32_equivalent.hpp), which the sweep applies, not the variant.
TEST(SkinnyGemm, MmaServesTf32And3xTf32ProblemsOnlyEachUnderItsModesName) {
  int tf32 = 0, tf32x3 = 0;
  for (const KernelVariant* v : skinny_variants()) {
    if (v->family != Family::SkinnyMma) continue;
    ASSERT_TRUE(v->mode == MathMode::Tf32 || v->mode == MathMode::Tf32x3) << v->name;
    const bool x3 = v->mode == MathMode::Tf32x3;
    tf32 += !x3;
    tf32x3 += x3;
    EXPECT_EQ(v->name.rfind(x3 ? "skinny_mma_3xtf32_" : "skinny_mma_tf32_", 0), 0u) << v->name;
    EXPECT_NE(v->unsupported_reason(nn(8, 100, 100, MathMode::Fp32)), "") << v->name;
    EXPECT_NE(v->unsupported_reason(nn(8, 100, 100, x3 ? MathMode::Tf32 : MathMode::Tf32x3)), "") << v->name;
    // "": the clustered tiles need an sm_90 GPU, and say so on a machine without one.
    EXPECT_EQ(v->unsupported_reason(nn(8, 100, 100, v->mode)), v->device_unsupported_reason()) << v->name;
  }
  EXPECT_GE(tf32, 3);
  EXPECT_GE(tf32x3, 2);
}

// Few tiles: k is split over enough blocks to occupy at least half of 132 SMs, a quarter for the largest partial tiles
// (the slices' partials cost the last block time too, so the rule may stop short of all of them), and scratch holds
// every slice's partial tile. Many tiles (16×16384 is 128 tiles of 16×128): no split, no scratch, unless the tile
// counts 3 blocks per SM (it streams B through L1). The slice count never exceeds k's chunks.
TEST(SkinnyGemm, SplitsKWhereTilesAreFewAndSizesScratchForEverySlice) {
  for (const KernelVariant* v : skinny_variants()) {
    const GemmProblem few = nn(2, 824, 11008, v->mode);
    if (v->tile.whole_k) {  // "_wholek": never split, whatever the problem
      EXPECT_EQ(v->slices_for(few), 1) << v->name;
      EXPECT_EQ(v->scratch_floats(few), 0u) << v->name;
      EXPECT_NE(v->name.find("_wholek"), std::string::npos) << v->name;
      continue;
    }
    const std::size_t tiles = static_cast<std::size_t>((824 + v->tile.bn - 1) / v->tile.bn);
    const int slices = v->slices_for(few);
    if (v->sums_slices_in_cluster()) {  // "_c8", "_c16": a cluster's blocks, summed in distributed shared memory
      const KernelVariant* twin = ticket_twin(*v);
      ASSERT_NE(twin, nullptr) << v->name << ": named <its ticket twin>_c" << v->tile.cluster;
      EXPECT_EQ(slices, std::min(v->tile.cluster, twin->slices_for(few))) << v->name;
      EXPECT_EQ(v->scratch_floats(few), 0u) << v->name;
      EXPECT_EQ(v->split_k_tickets(few), 0u) << v->name;
      continue;
    }
    if (v->tile.bm * v->tile.bn <= 16 * 256)
      EXPECT_GE(tiles * static_cast<std::size_t>(slices), 66u) << v->name;
    else  // a 32×256 partial per slice: the gather's reads stop the split sooner
      EXPECT_GE(tiles * static_cast<std::size_t>(slices), 33u) << v->name;
    EXPECT_EQ(v->split_k_tickets(few), tiles) << v->name;
    EXPECT_EQ(v->split_k_partial_floats(few),
              tiles * static_cast<std::size_t>(slices) * static_cast<std::size_t>(v->tile.bm * v->tile.bn))
        << v->name;
    if (v->tile.bm == 16 && v->tile.bn == 128) {
      const GemmProblem many = nn(16, 16384, 1024, v->mode);
      if (v->tile.stages == 4) {
        EXPECT_EQ(v->slices_for(many), 1) << v->name;
        EXPECT_EQ(v->scratch_floats(many), 0u) << v->name;
      } else {  // the 3-stage tile streams B through L1 from 3 blocks per SM, and splits 128 tiles to fill them
        EXPECT_GT(v->slices_for(many), 1) << v->name;
        EXPECT_LE(128 * v->slices_for(many), 2 * 3 * 132) << v->name;
      }
    }
    const GemmProblem short_k = nn(1, 64, 2 * v->tile.bk, v->mode);
    EXPECT_LE(v->slices_for(short_k), 2) << v->name;
  }
}

// Where a problem's tiles already fill several waves, splitting k saves at most a fraction of the last wave and costs
// every block a partial written and read again. At 16×250002×1024 (a vocabulary head) the 3xtf32 16×256 tile through
// L1 (two blocks per SM, 977 tiles) had split k four ways and streamed 75% of DRAM, where whole it streams 81% (H200);
// no tile splits it more than twice now.
TEST(SkinnyGemm, SplitsKLittleWhereTilesFillSeveralWavesSinceEverySlicesPartialCostsAWrite) {
  const GemmProblem head = nn(16, 250002, 1024, MathMode::Tf32x3);
  int whole_3x = 0;
  for (const KernelVariant* v : skinny_variants()) {
    GemmProblem p = head;
    p.mode = v->mode;
    EXPECT_LE(v->slices_for(p), 2) << v->name;
    if (v->mode == MathMode::Tf32x3 && v->tile.bm == 16 && v->tile.bn == 256) {
      EXPECT_EQ(v->slices_for(p), 1) << v->name;
      ++whole_3x;
    }
  }
  EXPECT_EQ(whole_3x, 1);
}

// FFMA's 8-row tiles through L1 multiply only a problem's rows: 1 row runs from three blocks per SM, up to 4 or 8 from
// two (their registers), and k is split for the blocks that run, so where tiles are few m = 1 takes more slices.
TEST(SkinnyGemm, FfmaTilesThroughL1SplitForTheBlocksPerSmThatTheProblemsRowsRunFrom) {
  int checked = 0;
  for (const KernelVariant* v : skinny_variants()) {
    if (v->family != Family::Skinny || v->tile.bm != 8 || v->tile.stages != 3) continue;
    ++checked;
    const std::size_t tiles = static_cast<std::size_t>(16384 / v->tile.bn);
    const int one = v->slices_for(nn(1, 16384, 8192, v->mode));
    const int four = v->slices_for(nn(4, 16384, 8192, v->mode));
    const int eight = v->slices_for(nn(8, 16384, 8192, v->mode));
    EXPECT_GT(one, four) << v->name;
    EXPECT_EQ(four, eight) << v->name;
    EXPECT_LE(tiles * static_cast<std::size_t>(one), 3u * 132) << v->name;
    EXPECT_GT(tiles * static_cast<std::size_t>(one), 2u * 132) << v->name;
    EXPECT_LE(tiles * static_cast<std::size_t>(four), 2u * 132) << v->name;
  }
  EXPECT_EQ(checked, 4);  // 8×128×32 and 8×256×16, for fp32 and for tf32 problems
}

TEST(SkinnyGemm, RefusesOtherLayoutsAndMoreThan64RowsSayingWhy) {
  for (const KernelVariant* v : skinny_variants()) {
    EXPECT_EQ(v->unsupported_reason(nn(64, 100, 100, v->mode)), v->device_unsupported_reason()) << v->name;
    EXPECT_NE(v->unsupported_reason(nn(65, 100, 100, v->mode)).find("m up to 64"), std::string::npos) << v->name;
    GemmProblem p = nn(8, 100, 100, v->mode);
    p.trans_b = true;
    EXPECT_NE(v->unsupported_reason(p).find("layout nn only, this problem is nt"), std::string::npos) << v->name;
    p = nn(8, 100, 100, v->mode);
    p.trans_a = true;
    EXPECT_NE(v->unsupported_reason(p).find("layout nn only"), std::string::npos) << v->name;
    const MathMode other = v->mode == MathMode::Tf32x3 ? MathMode::Tf32 : MathMode::Tf32x3;
    EXPECT_NE(v->unsupported_reason(nn(8, 100, 100, other)), "") << v->name;
  }
}

TEST(SkinnyGemm, EveryVariantMatchesFp64ReferenceSplitAndUnsplitOnEdgeTilesAndEpilogues) {
  GT_REQUIRE_GPU();
  struct Shape {
    std::int64_t m, n, k;
  };
  // Split (few tiles, long k) and unsplit (many tiles); n and k that are not multiples of 4 (4-byte copies); k shorter
  // than one chunk; m of 1, an edge tile of 8 and 16 rows, and 64.
  const Shape shapes[] = {{1, 127, 4095}, {2, 249, 11008}, {7, 1000, 1}, {16, 4100, 1000},
                          {17, 255, 7},   {64, 130, 777},  {5, 8192, 96}, {33, 64, 2048}};
  constexpr Activation kActivations[] = {Activation::None, Activation::Gelu, Activation::Relu, Activation::Sigmoid,
                                         Activation::GeluErf, Activation::Tanh, Activation::LeakyRelu,
                                         Activation::None};
  std::vector<GemmProblem> problems;
  for (int i = 0; i < 8; ++i) {
    GemmProblem p = nn(shapes[i].m, shapes[i].n, shapes[i].k);
    p.epi.bias = i % 3 != 2;
    p.epi.act = kActivations[i];
    p.epi.leaky_slope = 0.05f;
    p.epi.save_z = i % 2 == 0;
    p.epi.dropout_p = i % 4 == 1 ? 0.2f : 0.f;
    p.out = i % 3 == 1 ? OutputLayout::Transposed : OutputLayout::RowMajor;
    problems.push_back(p);
  }
  test::check_family_against_reference(Family::Skinny, problems);
  test::check_family_against_reference(Family::SkinnyMma, problems);
  test::check_family_against_reference(Family::SkinnyStream, problems);
}

// Where B's rows do not start on 16-byte boundaries, the panel is copied in aligned units from below each row's start
// and read at the row's shift (kernels/unit_loader.cuh): odd n (shifts that differ row to row), n % 4 == 2, and
// aligned n from bases 1-3 floats past a boundary (a view into a larger array), split and unsplit, edge tiles.
TEST(SkinnyGemm, EveryVariantReadsBRowsThatStartOffA16ByteBoundary) {
  GT_REQUIRE_GPU();
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{3, 133, 777}, {16, 258, 4100}, {9, 132, 96}};
  std::uint32_t seed = 9100;
  for (const KernelVariant* v : skinny_variants()) {
    double worst = 0.0;
    for (const Shape& s : shapes)
      for (const int skew : {0, 1, 3}) {
        GemmProblem p = nn(s.m, s.n, s.k, v->mode);
        p.epi.bias = true;
        p.epi.act = Activation::Gelu;
        const test::VariantErrors e = test::run_against_reference(*v, p, seed++, skew);
        ASSERT_LE(e.y, test::gemm_tolerance(p)) << v->name << " " << p.key() << " skew " << skew;
        worst = std::max(worst, e.y);
      }
    std::cout << "[ checked  ] " << v->name << ": unaligned B rows, max relative error " << worst << "\n";
  }
}

// Where a thread sums 4 elements the last block loads 4 slices' partials at once (gather_skinny_split_k) and adds
// them in slice order: an odd slice count leaves a short last group, which must add nothing extra.
TEST(SkinnyGemm, OddSliceCountsLeaveTheGathersLastGroupShortAndStillMatchFp64Reference) {
  GT_REQUIRE_GPU();
  std::uint32_t seed = 9300;
  for (const KernelVariant* v : skinny_variants()) {
    if (v->tile.whole_k) continue;  // never split
    GemmProblem p = nn(3, 700, 64, v->mode);
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    while (p.k < 40000 && (v->slices_for(p) <= 4 || v->slices_for(p) % 2 == 0)) p.k += 97;
    ASSERT_LT(p.k, 40000) << v->name << ": no k found that splits into an odd 5 or more slices";
    const test::VariantErrors e = test::run_against_reference(*v, p, seed++);
    EXPECT_LE(e.y, test::gemm_tolerance(p)) << v->name << " " << p.key() << ", " << v->slices_for(p) << " slices";
  }
}

// The last slice's block adds the partials in slice order whichever block finishes last.
TEST(SkinnyGemm, SplitLaunchesRepeatBitForBit) {
  GT_REQUIRE_GPU();
  for (const KernelVariant* v : skinny_variants()) {
    if (v->mode != MathMode::Tf32 || v->tile.whole_k) continue;  // whole-k tiles never split
    GemmProblem p = nn(3, 700, 9000);
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    ASSERT_GT(v->slices_for(p), 1) << v->name;
    test::ProblemData d(p, 4242);
    const LaunchScratchBuffer scratch(*v, p);
    std::vector<float> first;
    for (int run = 0; run < 3; ++run) {
      test::poison(d.Y);
      v->launch(p, d.operands(), scratch.view(), nullptr);
      GT_CUDA_CALL(cudaDeviceSynchronize());
      const std::vector<float> y = test::to_host(d.Y.get(), d.Y.size());
      if (run == 0)
        first = y;
      else
        EXPECT_EQ(y, first) << v->name << " run " << run;
    }
  }
}

// A "_c8" or "_c16" tile's slices add up in its cluster's distributed shared memory in slice order, as its twin's
// tickets have the last block add them: at every slice count the two give the same bits. Each tile the GPU says holds
// its cluster launches at its largest; one it says does not names the cluster in its reason (the H200 holds both).
TEST(SkinnyGemm, ClusterTilesGiveTheirTicketTwinsBitsAtEverySliceCount) {
  GT_REQUIRE_GPU();
  int checked = 0, refused = 0;
  for (const KernelVariant* v : skinny_variants()) {
    if (!v->sums_slices_in_cluster()) continue;
    if (const std::string why = v->device_unsupported_reason(); !why.empty()) {
      if (why.find("thread-block clusters need") != std::string::npos) GT_SKIP_GPU_TEST() << why;
      EXPECT_NE(why.find("cluster of " + std::to_string(v->tile.cluster) + " blocks"), std::string::npos) << why;
      ++refused;
      continue;
    }
    const KernelVariant* twin = ticket_twin(*v);
    ASSERT_NE(twin, nullptr) << v->name;
    GemmProblem p = nn(3, 200, 9000, v->mode);  // 2-4 column tiles: k split many ways
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    const int most = v->tile.cluster;
    ASSERT_GE(twin->slices_for(p), most) << twin->name << ": scratch for " << most << " slices";
    test::ProblemData d(p, 4343);
    const LaunchScratchBuffer twin_scratch(*twin, p);
    for (const int slices : {1, 2, 5, most - 1, most}) {
      test::poison(d.Y);
      twin->launch(p, d.operands(), slices, twin_scratch.view(), nullptr);
      GT_CUDA_CALL(cudaDeviceSynchronize());
      const std::vector<float> tickets = test::to_host(d.Y.get(), d.Y.size());
      test::poison(d.Y);
      v->launch(p, d.operands(), slices, LaunchScratch{}, nullptr);
      GT_CUDA_CALL(cudaDeviceSynchronize());
      EXPECT_EQ(test::to_host(d.Y.get(), d.Y.size()), tickets) << v->name << ", " << slices << " slices";
    }
    EXPECT_THROW(v->launch(p, d.operands(), most + 1, LaunchScratch{}, nullptr), InputError) << v->name;
    ++checked;
  }
  EXPECT_EQ(checked + refused, 4) << "FFMA's 8x64x64 over clusters of 8 and of 16, for fp32 and for tf32 problems";
  EXPECT_GE(checked, 2) << "clusters of 8 blocks are a size every GPU with clusters holds";
}

}  // namespace
}  // namespace gemmtune::kernels
