// Every variant of both wgmma families (kernels/wgmma_gemm.cuh, sm_90a: tf32 and 3xtf32) vs the fp64 reference on the
// layouts they run (nn, nt): every activation, save_z, dropout, both output layouts, and shapes with 1, 7, 127, 255,
// 1000 and 4095 in every dimension; both pipelines (TMA when lda and ldb are multiples of 4, cp.async otherwise) on
// edge tiles, split-k variants included (k = 4 leaves all but one slice empty); the persistent path; no systematic
// gain from tf32 rounding; and the layouts they refuse, with their reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <string>

#include "kernels/kernel_test_support.hpp"
#include "kernels/launch_scratch.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/registry.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

struct Shape {
  std::int64_t m, n, k;
};

struct WgmmaFamily {
  Family family;
  MathMode mode;
};

class WgmmaGemm : public ::testing::TestWithParam<WgmmaFamily> {
 protected:
  std::vector<const KernelVariant*> variants() const {
    std::vector<const KernelVariant*> found;
    for (const KernelVariant& v : kernel_registry())
      if (v.family == GetParam().family) found.push_back(&v);
    return found;
  }
  GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_b) const {
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.trans_b = trans_b;
    p.mode = GetParam().mode;
    return p;
  }
  // Y = gelu(A·B + bias) with Z saved: the epilogue that writes the most.
  GemmProblem bias_gelu_z(const Shape& s, bool trans_b) const {
    GemmProblem p = problem(s.m, s.n, s.k, trans_b);
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    p.epi.save_z = true;
    return p;
  }
};

#define GT_REQUIRE_WGMMA_FAMILY()                                                                             \
  do {                                                                                                        \
    GT_REQUIRE_GPU();                                                                                         \
    const std::vector<const KernelVariant*> found = variants();                                               \
    if (found.empty()) GT_SKIP_GPU_TEST() << "this build has no sm_90a code, so no wgmma variants";           \
    if (const std::string why = found.front()->device_unsupported_reason(); !why.empty())                    \
      GT_SKIP_GPU_TEST() << why;                                                                              \
  } while (0)

TEST_P(WgmmaGemm, IsRegisteredExactlyWhenBuiltWithSm90aCode) {
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_GE(variants().size(), 8u);
#else
  EXPECT_TRUE(variants().empty());
#endif
}

// Split-k (blockIdx.z slices k) is compiled for the tf32 tiles wgmma_tf32_gemm.cu lists, for skinny m against large n
// and k: four unclustered and the 128×128 pair that shares A; each gets the registry's slice counts, each with its
// staged twins. 3xtf32 has none.
TEST_P(WgmmaGemm, SplitsKOnlyForTheTf32TilesItLists) {
  std::set<std::string> split;
  for (const KernelVariant* v : variants()) {
    if (v->slices == 1) continue;
    split.insert(v->name);
    EXPECT_EQ(v->tile.cluster, v->name.find("_c2_") == std::string::npos ? 1 : 2) << v->name;
  }
#if defined(GEMMTUNE_HAVE_WGMMA)
  if (GetParam().mode == MathMode::Tf32) {
    std::set<std::string> expected;
    for (const char* tile : {"128x128x32_s4", "64x128x32_s6", "128x64x32_s4", "192x128x32_s4", "128x128x32_s4_c2"})
      for (const char* slices : {"2", "3", "4", "5", "8"})
        for (const char* staged : {"", "_staged", "_staged_b"})
          expected.insert(std::string("wgmma_tf32_") + tile + "_split" + slices + staged);
    EXPECT_EQ(split, expected);
    return;
  }
#endif
  EXPECT_TRUE(split.empty());
}

// TN and TT: tf32 wgmma cannot read A stored k×m, so only a staged variant, which copies A into m rows of k first,
// takes them; its refusal, if any, is the device's. A _staged_b one where B is read by class: n and k of 257.
TEST_P(WgmmaGemm, RefusesTransposedAOnAnyMachineUnlessStaged) {
  for (const KernelVariant* v : variants()) {
    for (const bool trans_b : {false, true}) {
      const std::int64_t nk = v->stages_b ? 257 : 256;
      GemmProblem p = problem(256, nk, nk, trans_b);
      p.trans_a = true;
      if (v->staged)
        EXPECT_EQ(v->unsupported_reason(p), v->device_unsupported_reason()) << v->name << " " << p.key();
      else
        EXPECT_NE(v->unsupported_reason(p).find("K-major"), std::string::npos) << v->name << " " << p.key();
    }
  }
}

TEST_P(WgmmaGemm, EveryVariantMatchesFp64ReferenceOnEdgeShapesBothLayoutsAndEpilogues) {
  GT_REQUIRE_WGMMA_FAMILY();
  // The coverage problems with A stored m×k: TN becomes NN and TT becomes NT, so each of the two layouts still meets
  // every activation and shape.
  std::vector<GemmProblem> problems = test::coverage_problems(GetParam().mode);
  for (GemmProblem& p : problems) p.trans_a = false;
  // Stream-K variants run row-major Y without dropout where k and n are multiples of 4 and their tiles are streamed,
  // which no coverage problem is: two such shapes, edge tiles in m and n, with and without an epilogue.
  for (const bool trans_b : {false, true}) {
    GemmProblem p = problem(600, 1000, 6000, trans_b);
    p.epi.bias = true;
    p.epi.act = Activation::GeluErf;
    p.epi.save_z = true;
    problems.push_back(p);
    problems.push_back(problem(1550, 324, 6876, trans_b));
  }
  test::check_family_against_reference(GetParam().family, problems);
}

// A staged variant runs TN and TT on its K-major copy of A (kernels/operand_staging.hpp): the coverage problems'
// transposed-A half (every activation, edge shapes, transposed outputs, dropout, save_z); A's k unaligned (1001, the
// copy's rows padded) and aligned (1004) beside B's n unaligned and aligned; and 2310×2308 with save_z, the persistent
// path on the copy.
TEST_P(WgmmaGemm, StagedVariantsMatchFp64ReferenceWithAStoredKByM) {
  GT_REQUIRE_WGMMA_FAMILY();
  std::vector<GemmProblem> problems;
  for (const GemmProblem& p : test::coverage_problems(GetParam().mode))
    if (p.trans_a) problems.push_back(p);
  for (const bool trans_b : {false, true}) {
    for (const Shape& s : {Shape{300, 261, 1001}, Shape{300, 264, 1004}, Shape{2310, 2308, 101}}) {
      GemmProblem p = problem(s.m, s.n, s.k, trans_b);
      p.trans_a = true;
      p.epi.bias = true;
      p.epi.act = Activation::Gelu;
      p.epi.save_z = s.m > 1000;
      problems.push_back(p);
    }
  }
  std::uint32_t seed = 7300;
  for (const KernelVariant* v : variants()) {
    if (!v->staged) continue;
    double worst = 0.0;
    int checked = 0;
    for (const GemmProblem& p : problems) {
      if (v->stages_b && test::left_to_its_twin(*v, p)) continue;  // B not read by class: its _staged twin's copies
      ++checked;
      ASSERT_GT(v->staging_floats(p), 0u) << v->name << " " << p.key();
      ASSERT_EQ(v->unsupported_reason(p), "") << v->name << " " << p.key();
      const test::VariantErrors e = test::run_against_reference(*v, p, seed++);
      ASSERT_LE(e.y, test::gemm_tolerance(p)) << v->name << " Y of " << p.key();
      ASSERT_LE(e.z, test::gemm_tolerance(p)) << v->name << " Z of " << p.key();
      worst = std::max({worst, e.y, e.z});
    }
    ASSERT_GT(checked, 0) << v->name;
    std::cout << "[ checked  ] " << v->name << ": " << checked << " problems with A stored k×m, max relative error "
              << worst << "\n";
  }
}

// The launcher picks the TMA pipeline when A's leading dimension is a multiple of 4 floats (with cudaMalloc'd
// operands) and B's is too or B, stored k×n (NN), is read by class of rows (kernels/row_classes.hpp); else the
// cp.async one; a staged variant the TMA one on its copies. Edge tiles in every dimension for each: the aligned shapes
// keep lda and ldb aligned (k = 4 is a single partial k tile); the others have an odd k (lda unaligned, and NT's
// ldb), n not a multiple of 4 with k aligned (NN: B by class; 12 rows of k: classes of 2 and 1 rows), or 3 and 7 rows
// of k (too few for NN's eight classes).
TEST_P(WgmmaGemm, BothPipelinesMatchFp64ReferenceOnEdgeTiles) {
  GT_REQUIRE_WGMMA_FAMILY();
  const Shape aligned_shapes[] = {{5, 132, 4}, {300, 68, 1028}, {77, 260, 36}};
  const Shape unaligned_shapes[] = {{300, 68, 1029}, {77, 261, 37}, {300, 70, 1030}, {260, 262, 134},
                                     {260, 262, 132}, {77, 261, 3},   {77, 261, 7},   {77, 261, 12}};
  std::vector<GemmProblem> problems;
  for (const bool trans_b : {false, true}) {
    const auto add = [&](const Shape& s, bool epilogue) {
      GemmProblem p = problem(s.m, s.n, s.k, trans_b);
      p.epi.bias = epilogue;
      p.epi.act = epilogue ? Activation::Relu : Activation::None;
      problems.push_back(p);
    };
    for (const Shape& s : aligned_shapes) add(s, true);
    for (const Shape& s : unaligned_shapes) add(s, false);
  }
  test::check_family_against_reference(GetParam().family, problems);
}

// Operands that start 1-3 floats past a 16-byte boundary (a view into a larger array): the cp.async pipeline reads
// their rows in aligned units from below the base (kernels/unit_loader.cuh), and the TMA one NN's B by class from maps
// based below it (kernels/row_classes.hpp), where A is aligned: every variant, odd and aligned leading dimensions,
// edge tiles, both layouts.
TEST_P(WgmmaGemm, EveryVariantReadsOperandsWhoseBasesAreOffA16ByteBoundary) {
  GT_REQUIRE_WGMMA_FAMILY();
  const Shape shapes[] = {{150, 133, 77}, {150, 132, 76}};
  std::uint32_t seed = 7000;
  for (const KernelVariant* v : variants()) {
    double worst = 0.0;
    for (const Shape& s : shapes)
      for (const bool trans_b : {false, true})
        for (const int skew : {1, 2, 3}) {
          GemmProblem p = problem(s.m, s.n, s.k, trans_b);
          p.epi.bias = true;
          p.epi.act = Activation::Gelu;
          if (test::left_to_its_twin(*v, p)) continue;
          const test::VariantErrors e = test::run_against_reference(*v, p, seed++, skew);
          ASSERT_LE(e.y, test::gemm_tolerance(p)) << v->name << " " << p.key() << " skew " << skew;
          worst = std::max(worst, e.y);
        }
    std::cout << "[ checked  ] " << v->name << ": bases 1-3 floats off, max relative error " << worst << "\n";
  }
}

// Y rows that do not start on 16-byte boundaries (n % 4 != 0, or Y and Z views 1-3 floats past one) take the output
// tile's shifted walk, or with save_z its scalar walk (kernels/output_tile.cuh): full and edge tiles in m and n, four
// activations, both layouts, and not a float written outside Y or Z.
TEST_P(WgmmaGemm, EveryVariantWritesOutputRowsThatAreNotSixteenByteAligned) {
  GT_REQUIRE_WGMMA_FAMILY();
  struct Case {
    std::int64_t m, n, k;
    int y_skew;
    Activation act;
  };
  const Case cases[] = {{600, 517, 96, 0, Activation::Gelu},
                        {600, 518, 97, 0, Activation::Sigmoid},
                        {300, 260, 64, 1, Activation::Relu},
                        {300, 263, 64, 3, Activation::Tanh}};
  std::uint32_t seed = 7400;
  for (const KernelVariant* v : variants()) {
    double worst = 0.0;
    for (const bool trans_b : {false, true})
      for (const Case& c : cases) {
        GemmProblem p = problem(c.m, c.n, c.k, trans_b);
        p.epi.bias = true;
        p.epi.act = c.act;
        p.epi.save_z = c.act == Activation::Gelu || c.act == Activation::Relu;
        if (test::left_to_its_twin(*v, p)) continue;
        const test::VariantErrors e = test::run_against_reference(*v, p, seed++, 0, c.y_skew);
        ASSERT_LE(e.y, test::gemm_tolerance(p)) << v->name << " Y of " << p.key() << " y_skew " << c.y_skew;
        ASSERT_LE(e.z, test::gemm_tolerance(p)) << v->name << " Z of " << p.key() << " y_skew " << c.y_skew;
        ASSERT_EQ(e.stray_writes, 0) << v->name << " " << p.key() << " y_skew " << c.y_skew;
        worst = std::max({worst, e.y, e.z});
      }
    std::cout << "[ checked  ] " << v->name << ": unaligned output rows, max relative error " << worst << "\n";
  }
}

// Two-warpgroup tiles run persistent, with bulk tensor stores of Y and Z, where a problem has more tiles than resident
// blocks (2304² is 162 tiles of 256×128 and 324 of 128×128 for 132 SMs) and a row-major, aligned, n % 4 == 0 output
// without dropout: the coverage shapes are too small to get there (k = 101: a staged variant's too). save_z on each,
// and edge tiles in m, n and k. The clustered variants' pairs of tiles along n: 2308 columns end in a pair whose
// second tile lies wholly past n.
TEST_P(WgmmaGemm, PersistentPathMatchesFp64ReferenceWithSaveZAndEdgeTiles) {
  GT_REQUIRE_WGMMA_FAMILY();
  std::vector<GemmProblem> problems;
  for (const bool trans_b : {false, true}) {
    GemmProblem p = problem(2304, 2304, 264, trans_b);
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    p.epi.save_z = true;
    problems.push_back(p);
    p = problem(2310, 2308, 100, trans_b);
    p.epi.act = Activation::Sigmoid;
    p.epi.save_z = true;
    problems.push_back(p);
    p.k = 101;  // A's rows unaligned: the cp.async pipeline, or a staged variant's copy and then the persistent path
    problems.push_back(p);
  }
  test::check_family_against_reference(GetParam().family, problems);
}

// v on p (fresh inputs from seed) against the fp64 reference, Y and Z, then again on the same inputs with Y poisoned
// in between: the second Y equals the first bit for bit.
void check_and_repeat(const KernelVariant& v, const GemmProblem& p, std::uint32_t seed) {
  test::ProblemData d(p, seed);
  const std::size_t count = static_cast<std::size_t>(p.m * p.n);
  DeviceBuffer<double> y_ref(count), z_ref(count);
  reference_gemm(p, d.operands(), y_ref.get(), z_ref.get(), nullptr);
  const LaunchScratchBuffer scratch(v, p);
  v.launch(p, d.operands(), scratch.view(), nullptr);
  GT_CUDA_CALL(cudaGetLastError());
  const auto count64 = static_cast<std::int64_t>(count);
  const double y_error = relative_frobenius_error(d.Y.get(), y_ref.get(), count64, nullptr);
  const double z_error = relative_frobenius_error(d.Z.get(), z_ref.get(), count64, nullptr);
  ASSERT_LE(y_error, test::gemm_tolerance(p)) << v.name << " Y of " << p.key();
  ASSERT_LE(z_error, test::gemm_tolerance(p)) << v.name << " Z of " << p.key();
  const std::vector<float> first = test::to_host(d.Y.get(), count);
  test::poison(d.Y);
  v.launch(p, d.operands(), scratch.view(), nullptr);
  GT_CUDA_CALL(cudaGetLastError());
  ASSERT_EQ(test::to_host(d.Y.get(), count), first) << v.name << " " << p.key() << ": a second launch";
  std::cout << "[ checked  ] " << v.name << " " << p.key() << ": relative error " << y_error << "\n";
}

// Stream-K (kernels/stream_k.cuh) where it streams: one partial wave (1028×1028×8196, 1550×324×6876: edge tiles in m,
// n and k) and whole waves before the streamed tiles (3000³ in 256×128 and 128×128 tiles; 192×128 would not stream it
// and refuses it); bias+gelu with save_z, both layouts. Each runs twice on the same inputs: the two Y are equal bit for
// bit (the shares add in a fixed order whichever block finishes a tile, and the tickets are back at zero).
TEST_P(WgmmaGemm, StreamKMatchesFp64ReferenceAndRepeatsBitForBit) {
  GT_REQUIRE_WGMMA_FAMILY();
  const Shape shapes[] = {{1028, 1028, 8196}, {1550, 324, 6876}, {3000, 3000, 3000}};
  std::uint32_t seed = 7600;
  int variants_checked = 0;
  for (const KernelVariant* v : variants()) {
    if (!v->stream_k) continue;
    int checked = 0;
    for (const bool trans_b : {false, true})
      for (const Shape& shape : shapes) {
        const GemmProblem p = bias_gelu_z(shape, trans_b);
        if (const std::string why = v->unsupported_reason(p); !why.empty()) {
          ASSERT_NE(why.find("would not stream"), std::string::npos) << v->name << " " << p.key() << ": " << why;
          continue;
        }
        ASSERT_NO_FATAL_FAILURE(check_and_repeat(*v, p, seed++));
        ++checked;
      }
    EXPECT_GE(checked, 4) << v->name;
    ++variants_checked;
  }
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_EQ(variants_checked, GetParam().mode == MathMode::Tf32 ? 3 : 0);
#endif
}

// The split pairs that share A (_c2_split<slices>, tf32): a pair's two blocks take a ticket each, where the last pair
// of 2308 columns has its second block wholly past n, and k of 1000 and 4100 ends in a partial k tile. Each runs
// bias+gelu with save_z twice on the same inputs: the two Y are equal bit for bit (the slices add in slice order
// whichever block finishes, and the tickets are back at zero).
TEST_P(WgmmaGemm, SplitPairsMatchFp64ReferenceAndRepeatBitForBit) {
  GT_REQUIRE_WGMMA_FAMILY();
  const Shape shapes[] = {{300, 2308, 1000}, {390, 640, 4100}};
  std::uint32_t seed = 7700;
  int variants_checked = 0;
  for (const KernelVariant* v : variants()) {
    if (v->tile.cluster == 1 || v->slices == 1 || v->staged) continue;
    for (const bool trans_b : {false, true})
      for (const Shape& shape : shapes) {
        const GemmProblem p = bias_gelu_z(shape, trans_b);
        ASSERT_EQ(v->unsupported_reason(p), "") << v->name << " " << p.key();
        ASSERT_NO_FATAL_FAILURE(check_and_repeat(*v, p, seed++));
      }
    ++variants_checked;
  }
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_EQ(variants_checked, GetParam().mode == MathMode::Tf32 ? 5 : 0);
#endif
}

// The tensor core truncates the shared-memory operand; were the register operand rounded to nearest, every product
// would err by −½ ulp on average and every output share a gain of about −3.5e-4, which a training step accumulates
// (cuBLASLt's tf32 has none). The gain Σ y·ref / Σ ref·ref − 1 over a problem's outputs averages the random part of
// the error away (each output errs by ~3e-4 at random), so what is left is the systematic part.
TEST_P(WgmmaGemm, EveryVariantsOutputsCarryNoSystematicGainAgainstFp64) {
  GT_REQUIRE_WGMMA_FAMILY();
  constexpr double kMaxGain = 5e-5;
  for (const bool trans_b : {false, true}) {
    const GemmProblem p = problem(512, 384, 1024, trans_b);
    std::uint32_t seed = 7100 + (trans_b ? 100 : 0);
    for (const KernelVariant* v : variants()) {
      if (test::left_to_its_twin(*v, p)) continue;
      ASSERT_EQ(v->unsupported_reason(p), "") << v->name << " " << p.key();
      test::ProblemData d(p, seed++);
      const std::size_t count = static_cast<std::size_t>(p.m * p.n);
      DeviceBuffer<double> ref(count);
      reference_gemm(p, d.operands(), ref.get(), nullptr, nullptr);
      const LaunchScratchBuffer scratch(*v, p);
      v->launch(p, d.operands(), scratch.view(), nullptr);
      GT_CUDA_CALL(cudaGetLastError());
      const std::vector<float> y = test::to_host(d.Y.get(), count);
      const std::vector<double> r = test::to_host(ref.get(), count);
      double yr = 0.0, rr = 0.0;
      for (std::size_t i = 0; i < count; ++i) {
        yr += y[i] * r[i];
        rr += r[i] * r[i];
      }
      const double gain = yr / rr - 1.0;
      ASSERT_TRUE(std::isfinite(gain)) << v->name << " " << p.key();
      EXPECT_LE(std::abs(gain), kMaxGain) << v->name << " " << p.key();
      std::cout << "[ gain     ] " << v->name << " " << p.key() << ": " << gain << "\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, WgmmaGemm,
                         ::testing::Values(WgmmaFamily{Family::WgmmaTf32, MathMode::Tf32},
                                           WgmmaFamily{Family::Wgmma3xTf32, MathMode::Tf32x3}),
                         [](const ::testing::TestParamInfo<WgmmaFamily>& family) {
                           return family.param.mode == MathMode::Tf32 ? std::string("Tf32") : std::string("ThreeXTf32");
                         });

}  // namespace
}  // namespace gemmtune::kernels
