// Every fp32 variant (kernels/simt_gemm.cu) vs the fp64 reference: all layouts, activations, save_z, dropout,
// both output layouts, and shapes with 1, 7, 127, 255, 1000 and 4095 in every dimension; and last row tiles.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_test_support.hpp"
#include "kernels/registry.hpp"
#include "kernels/launch_scratch.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

TEST(SimtGemm, EveryVariantMatchesFp64ReferenceOnEdgeShapesLayoutsAndEpilogues) {
  GT_REQUIRE_GPU();
  test::check_family_against_reference(Family::SimtFp32);
}

// A last row tile that would run past row m reads the bm rows ending at row m instead (kernels/simt_gemm.cu,
// last_tile_overlap), so its first rows are the tile above's: it must store only its own. Overlaps of less than and
// more than one cluster block's share of the tile, K-major and MN-major A (with 16-byte loads at m = 196 and 200, by
// a multiple of 4 rows), with the epilogue's vector, per-element and dropout paths.
TEST(SimtGemm, LastRowTileReadFromRowsAboveMatchesFp64Reference) {
  GT_REQUIRE_GPU();
  std::vector<GemmProblem> problems;
  const std::int64_t rows[] = {129, 237, 196, 200};
  for (int i = 0; i < 8; ++i) {
    GemmProblem p;
    p.m = rows[i % 4];
    p.n = 192;
    p.k = 100;
    p.trans_a = i >= 4;
    p.epi.bias = true;
    p.epi.act = i % 2 ? Activation::Gelu : Activation::Relu;
    p.epi.save_z = i % 3 == 0;
    p.epi.dropout_p = i == 5 ? 0.25f : 0.f;
    p.out = i == 6 ? OutputLayout::Transposed : OutputLayout::RowMajor;
    problems.push_back(p);
  }
  test::check_family_against_reference(Family::SimtFp32, problems);
}

// Y and Z of one launch of v on fresh (seeded) inputs, with outputs poisoned first.
std::vector<std::vector<float>> outputs_of(const KernelVariant& v, const GemmProblem& p, std::uint32_t seed) {
  test::ProblemData d(p, seed);
  test::poison(d.Y);
  test::poison(d.Z);
  const LaunchScratchBuffer scratch(v, p);
  v.launch(p, d.operands(), scratch.view(), nullptr);
  GT_CUDA_CALL(cudaDeviceSynchronize());
  return {test::to_host(d.Y.get(), d.Y.size()), test::to_host(d.Z.get(), d.Z.size())};
}

// A clustered variant splits k over the blocks of a cluster and adds the slices in distributed shared memory; its
// `_split` twin adds the same slices, in the same order, through global memory. Their outputs must agree bit for bit,
// on edge tiles, with every part of the epilogue (dropout and the transposed store take the per-element path).
TEST(SimtGemm, ClusterSplitEqualsItsGlobalSplitTwinBitForBit) {
  GT_REQUIRE_GPU();
  std::vector<GemmProblem> problems(2);
  problems[0].m = 1000;
  problems[0].n = 1000;
  problems[0].k = 777;
  problems[0].epi.bias = true;
  problems[0].epi.act = Activation::Gelu;
  problems[0].epi.save_z = true;
  problems[1].m = 255;
  problems[1].n = 1001;
  problems[1].k = 4095;
  problems[1].trans_a = true;
  problems[1].out = OutputLayout::Transposed;
  problems[1].epi.act = Activation::Sigmoid;
  problems[1].epi.save_z = true;
  problems[1].epi.dropout_p = 0.25f;
  int compared = 0;
  for (const KernelVariant& v : kernel_registry()) {
    if (v.family != Family::SimtFp32 || v.tile.cluster == 1) continue;
    if (const std::string why = v.device_unsupported_reason(); !why.empty()) GT_SKIP_GPU_TEST() << why;
    const std::string twin_name = v.name.substr(0, v.name.rfind("_c")) + "_split" + std::to_string(v.tile.cluster);
    const KernelVariant* twin = find_kernel_variant(twin_name);
    ASSERT_NE(twin, nullptr) << twin_name;
    for (GemmProblem p : problems) {
      p.mode = MathMode::Fp32;
      const auto clustered = outputs_of(v, p, 91), global = outputs_of(*twin, p, 91);
      for (std::size_t i = 0; i < clustered.size(); ++i)
        EXPECT_EQ(std::memcmp(clustered[i].data(), global[i].data(), clustered[i].size() * sizeof(float)), 0)
            << v.name << " vs " << twin->name << " on " << p.key() << (i == 0 ? ": Y" : ": Z");
    }
    ++compared;
  }
  EXPECT_GE(compared, 1) << "no clustered SIMT variant is registered";
}

}  // namespace
}  // namespace gemmtune::kernels
