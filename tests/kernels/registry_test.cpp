// The registry's contract with the tuner and the runtime: enough variants per mode, stable unique names, honest
// unsupported reasons, and launches that a CUDA graph can capture.
#include "kernels/registry.hpp"

#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/epilogue.cuh"
#include "kernels/kernel_test_support.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/launch_scratch.hpp"
#include "kernels/stream_k.cuh"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

GemmProblem problem_in(MathMode mode) {
  GemmProblem p;
  p.m = 300;
  p.n = 200;
  p.k = 100;
  p.mode = mode;
  p.epi.bias = true;
  p.epi.act = Activation::Gelu;
  return p;
}

// An NN tf32 problem of m × n × k with no epilogue: what staging_floats and alignment_twin are asked about.
GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.mode = MathMode::Tf32;
  return p;
}

// problem_in, with k = 101 for a staged variant: A's rows (ld 101) are what it stages, and n = 201 for a _staged_b
// one, whose B (rows of 201, read by class) it copies too; m = 30 for the skinny families;
// 1024×1024×8192 for a Stream-K variant, which streams its 32-64 tiles of 256 k tiles over 132 SMs.
GemmProblem problem_for(const KernelVariant& v) {
  GemmProblem p = problem_in(v.mode);
  if (v.staged) p.k = 101;
  if (v.stages_b) p.n = 201;
  if (is_skinny(v.family)) p.m = 30;
  if (v.stream_k) {
    p.m = p.n = 1024;
    p.k = 8192;
  }
  return p;
}

TEST(KernelRegistry, HasAtLeastEightVariantsPerModeWithUniqueStableNames) {
  std::set<std::string> names;
  int per_mode[3] = {0, 0, 0};  // unsplit variants: each a tile shape of its own
  const std::regex name_format(
      R"((fp32|tf32|3xtf32)_\d+x\d+x\d+_w\d+x\d+(_t\d+x\d+)?_s\d(_split\d|_c\d)?|)"
      R"(wgmma_(tf32|3xtf32)_\d+x\d+x\d+_s\d(_c\d)?(_split\d|_streamk)?(_staged|_staged_b)?|)"
      R"(skinny_(mma_|stream_)?(fp32|tf32)_\d+x\d+x\d+_s\d(_wholek|_c\d+)?|skinny_mma_3xtf32_\d+x\d+x\d+_s\d)");
  for (const KernelVariant& v : kernel_registry()) {
    EXPECT_TRUE(names.insert(v.name).second) << "duplicate " << v.name;
    EXPECT_TRUE(std::regex_match(v.name, name_format)) << v.name;
    EXPECT_EQ(find_kernel_variant(v.name), &v);
    if (v.slices == 1) ++per_mode[static_cast<int>(v.mode)];
  }
  for (int count : per_mode) EXPECT_GE(count, 8);
  EXPECT_EQ(find_kernel_variant("tf32_no_such_variant"), nullptr);
}

// A skinny tile that sums its slices in a cluster asks the GPU whether it holds the whole cluster at once (16 blocks
// is beyond the portable 8), so a GPU that cannot refuses it before a launch; a machine without one refuses it too.
TEST(KernelRegistry, SkinnyClusterTilesAskTheGpuWhetherTheirClusterFits) {
  int cluster_tiles = 0;
  int device_count = 0;
  const bool no_gpu = cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0;
  cudaGetLastError();  // clears it: asking is not a failure of later CUDA calls
  for (const KernelVariant& v : kernel_registry()) {
    if (!v.sums_slices_in_cluster()) continue;
    ++cluster_tiles;
    EXPECT_NE(v.fits_device, nullptr) << v.name;
    if (no_gpu) {
      EXPECT_NE(v.device_unsupported_reason(), "") << v.name;
    }
  }
  EXPECT_GE(cluster_tiles, 4) << "FFMA's 8x64x64 over clusters of 8 and of 16, for fp32 and for tf32 problems";
}

TEST(KernelRegistry, VariantsSayWhyTheyCannotRunAProblem) {
  for (const KernelVariant& v : kernel_registry()) {
    GemmProblem p = problem_for(v);
    // A family bound to a GPU generation (wgmma: compute capability 9.0) refuses every problem elsewhere.
    if (v.device_unsupported_reason().empty())
      EXPECT_EQ(v.unsupported_reason(p), "") << v.name;
    else
      EXPECT_EQ(v.unsupported_reason(p), v.device_unsupported_reason()) << v.name;
    p.mode = v.mode == MathMode::Fp32 ? MathMode::Tf32 : MathMode::Fp32;
    EXPECT_NE(v.unsupported_reason(p), "") << v.name;
    p = problem_in(v.mode);
    p.pass = Pass::GradA;
    EXPECT_NE(v.unsupported_reason(p), "") << v.name;
    p = problem_in(v.mode);
    p.k = 0;
    EXPECT_NE(v.unsupported_reason(p), "") << v.name;
  }
}

TEST(KernelRegistry, LaunchRejectsAMissingOperandInsteadOfCrashing) {
  const KernelVariant& v = kernel_registry().front();
  GemmProblem p = problem_in(v.mode);
  p.epi.save_z = true;
  GemmOperands x;
  EXPECT_THROW(v.launch(p, x, {}, nullptr), InputError);
}

TEST(KernelRegistry, SplitVariantsShareTheirTwinsKernelAndNeedScratchPerTileAndSlice) {
  int split_variants = 0;
  for (const KernelVariant& v : kernel_registry()) {
    // 300×300: 3 tiles of 128 columns, which a pair that shares A (wgmma's _c2) covers in 2 pairs, the last one's
    // second block past n; every block takes a ticket.
    GemmProblem p = problem_in(v.mode);
    p.n = 300;
    const std::int64_t cluster_cols = std::int64_t{v.tile.cluster} * v.tile.bn;
    const std::size_t tiles = static_cast<std::size_t>((p.m + v.tile.bm - 1) / v.tile.bm) *
                              static_cast<std::size_t>((p.n + cluster_cols - 1) / cluster_cols * v.tile.cluster);
    if (v.slices == KernelVariant::kSlicesPerProblem) continue;  // tests/kernels/skinny_gemm_test.cpp
    if (v.stream_k) continue;  // KernelRegistry.StreamKVariants…
    if (v.slices == 1) {
      EXPECT_EQ(v.split_k_tickets(p), 0u) << v.name;
      EXPECT_EQ(v.split_k_partial_floats(p), 0u) << v.name;
      continue;
    }
    ++split_variants;
    const std::string staging = v.stages_b ? "_staged_b" : v.staged ? "_staged" : "";
    const std::string suffix = "_split" + std::to_string(v.slices) + staging;
    ASSERT_GT(v.name.size(), suffix.size());
    const KernelVariant* twin = find_kernel_variant(v.name.substr(0, v.name.size() - suffix.size()) + staging);
    ASSERT_NE(twin, nullptr) << v.name;
    EXPECT_EQ(twin->launch_fn, v.launch_fn) << v.name;
    EXPECT_EQ(twin->slices, 1) << v.name;
    EXPECT_EQ(twin->staged, v.staged) << v.name;
    EXPECT_EQ(twin->stages_b, v.stages_b) << v.name;
    EXPECT_EQ(v.split_k_tickets(p), tiles) << v.name;
    EXPECT_EQ(v.split_k_partial_floats(p), tiles * static_cast<std::size_t>(v.slices * v.tile.bm * v.tile.bn))
        << v.name;
  }
  EXPECT_GE(split_variants, 6);
}

TEST(KernelRegistry, SplitVariantLaunchRefusesScratchSmallerThanItNeeds) {
  for (const KernelVariant& v : kernel_registry()) {
    GemmProblem p = problem_for(v);
    if (v.slices == KernelVariant::kSlicesPerProblem) p.k = 11008;  // 30×200: 2 or 4 tiles, so k is split
    if ((v.slices_for(p) == 1 && !v.stream_k) || v.sums_slices_in_cluster()) continue;  // the latter need none
    const GemmOperands x{reinterpret_cast<const float*>(16), reinterpret_cast<const float*>(16),
                         reinterpret_cast<const float*>(16), reinterpret_cast<float*>(16)};
    LaunchScratch scratch{reinterpret_cast<float*>(16), v.split_k_partial_floats(p) - 1,
                          reinterpret_cast<unsigned*>(16), v.split_k_tickets(p), reinterpret_cast<float*>(16),
                          v.staging_floats(p)};
    EXPECT_THROW(v.launch(p, x, scratch, nullptr), InputError) << v.name;
    EXPECT_THROW(v.launch(p, x, {}, nullptr), InputError) << v.name;
  }
}

// Stream-K (kernels/stream_k.cuh) is compiled for three unclustered two-warpgroup tf32 tiles, each a "_streamk" variant
// of its tile with a launcher of its own and no staged twin. Its scratch does not depend on the problem: two partial
// tiles per block and a ticket per streamed tile, for up to kStreamKMaxBlocks blocks. It runs what the copy engine
// reads and stores (k and n multiples of 4, a row-major Y, no dropout) where its tiles are streamed, says why not of the
// rest, and hands those to its tile's own variant.
TEST(KernelRegistry, StreamKVariantsOfThreeTf32TilesNeedSlotsPerBlockAndRefuseWhatTheCopyEngineCannotAddress) {
  const std::string suffix = "_streamk";
  std::set<std::string> found;
  for (const KernelVariant& v : kernel_registry()) {
    if (!v.stream_k) continue;
    found.insert(v.name);
    EXPECT_EQ(v.family, Family::WgmmaTf32) << v.name;
    EXPECT_EQ(v.slices, 1) << v.name;
    EXPECT_FALSE(v.staged) << v.name;
    EXPECT_FALSE(v.stages_b) << v.name;
    EXPECT_EQ(v.tile.cluster, 1) << v.name;
    ASSERT_GT(v.name.size(), suffix.size());
    ASSERT_EQ(v.name.substr(v.name.size() - suffix.size()), suffix);
    const KernelVariant* tile = find_kernel_variant(v.name.substr(0, v.name.size() - suffix.size()));
    ASSERT_NE(tile, nullptr) << v.name;
    EXPECT_FALSE(tile->stream_k) << v.name;
    EXPECT_NE(tile->launch_fn, v.launch_fn) << v.name;
    const GemmProblem p = problem_for(v);
    GemmProblem large = p;
    large.m = large.n = large.k = 8192;
    for (const GemmProblem& q : {p, large}) {
      EXPECT_EQ(v.split_k_tickets(q), static_cast<std::size_t>(kStreamKSlots)) << v.name;
      EXPECT_EQ(v.split_k_partial_floats(q), static_cast<std::size_t>(kStreamKSlots * v.tile.bm * v.tile.bn))
          << v.name;
    }
    EXPECT_EQ(v.unsupported_reason(p), v.device_unsupported_reason()) << v.name;
    GemmProblem refused[4] = {p, p, p, p};
    refused[0].k = 8191;
    refused[1].n = 1025;
    refused[2].out = OutputLayout::Transposed;
    refused[3].epi.dropout_p = 0.1f;
    for (const GemmProblem& q : refused)
      EXPECT_NE(v.unsupported_reason(q).find("copy engine"), std::string::npos) << v.name << " " << q.key();
    // 512³ has 8-16 tiles of 16 k tiles: streaming them would not finish sooner.
    GemmProblem unstreamed = p;
    unstreamed.m = unstreamed.n = unstreamed.k = 512;
    EXPECT_NE(v.unsupported_reason(unstreamed).find("would not stream"), std::string::npos) << v.name;
    // Chosen where it streams and carried to a shape where it does not: the tile's own variant, staged where A is.
    EXPECT_EQ(&alignment_twin(v, p), &v);
    EXPECT_EQ(&alignment_twin(v, unstreamed), tile) << v.name;
    EXPECT_EQ(&alignment_twin(v, refused[1]), tile) << v.name;  // B by class, no copy
    EXPECT_EQ(alignment_twin(v, refused[0]).name, tile->name + "_staged");
  }
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_EQ(found, (std::set<std::string>{"wgmma_tf32_256x128x32_s4_streamk", "wgmma_tf32_192x128x32_s4_streamk",
                                          "wgmma_tf32_128x128x32_s4_streamk"}));
#else
  EXPECT_TRUE(found.empty());
  GTEST_SKIP() << "this build has no sm_90a code, so no Stream-K variants";
#endif
}

// A launcher works out the slice count once per problem and passes it to every launch; a count the kernel cannot run
// is refused before anything is launched, whatever scratch comes with it.
TEST(KernelRegistry, LaunchRefusesASliceCountTheVariantCannotRun) {
  const GemmOperands x{reinterpret_cast<const float*>(16), reinterpret_cast<const float*>(16),
                       reinterpret_cast<const float*>(16), reinterpret_cast<float*>(16)};
  for (const KernelVariant& v : kernel_registry()) {
    const GemmProblem p = problem_for(v);
    const int k_tiles = static_cast<int>((p.k + v.tile.bk - 1) / v.tile.bk);
    const std::vector<int> refused = v.slices == KernelVariant::kSlicesPerProblem
                                         ? std::vector<int>{0, -1, k_tiles + 1}
                                         : std::vector<int>{0, v.slices + 1};
    for (int slices : refused) {
      try {
        v.launch(p, x, slices, {}, nullptr);
        ADD_FAILURE() << v.name << " launched " << slices << " slices";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot split"), std::string::npos) << v.name << ": " << e.what();
      }
    }
  }
}

// Staging exists for the TMA pipeline alone: every wgmma variant (split and clustered ones too, not Stream-K's) has a
// "_staged" twin and a "_staged_b" twin that launch the same kernel, and no other family has any.
TEST(KernelRegistry, EveryWgmmaVariantAndNoOtherHasStagedTwinsOfTheSameKernel) {
  int staged = 0, stages_b = 0;
  const auto ends_with = [](const std::string& name, const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const KernelVariant& v : kernel_registry()) {
    const bool wgmma = v.family == Family::WgmmaTf32 || v.family == Family::Wgmma3xTf32;
    const bool named_b = ends_with(v.name, "_staged_b");
    EXPECT_EQ(v.staged, named_b || ends_with(v.name, "_staged")) << v.name;
    EXPECT_EQ(v.stages_b, named_b) << v.name;
    if (v.stream_k) {  // what it needs aligned (Y), no copy makes so
      EXPECT_EQ(find_kernel_variant(v.name + "_staged"), nullptr) << v.name;
      EXPECT_EQ(find_kernel_variant(v.name + "_staged_b"), nullptr) << v.name;
      continue;
    }
    if (!wgmma) {
      EXPECT_FALSE(v.staged) << v.name;
      continue;
    }
    const std::string plain_name = v.name.substr(0, v.name.size() - (named_b ? 9 : v.staged ? 7 : 0));
    for (const std::string& suffix : {std::string(), std::string("_staged"), std::string("_staged_b")}) {
      const KernelVariant* twin = find_kernel_variant(plain_name + suffix);
      ASSERT_NE(twin, nullptr) << v.name << " has no twin " << plain_name + suffix;
      EXPECT_EQ(twin->launch_fn, v.launch_fn) << v.name;
      EXPECT_EQ(twin->slices, v.slices) << v.name;
    }
    staged += v.staged && !v.stages_b;
    stages_b += v.stages_b;
  }
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_GE(staged, 16);
  EXPECT_EQ(stages_b, staged);
#else
  EXPECT_EQ(staged + stages_b, 0);
  GTEST_SKIP() << "this build has no sm_90a code, so no wgmma variants to stage";
#endif
}

// A staged variant copies exactly the operands whose leading dimension is not a multiple of 4 floats (NN: A's is k,
// B's is n), each with its row stride rounded up to 4, and an A stored k×m (TN, TT) into m rows of k, B after A at a
// 64-float boundary; after a split variant's partials in the launch's scratch. Where both are aligned and A is stored
// m×k it refuses the problem: its twin runs the same kernel.
TEST(KernelRegistry, AStagedVariantCopiesOnlyUnalignedOrTransposedOperandsAndRefusesTheRest) {
  const KernelVariant* plain = nullptr;
  const KernelVariant* split = nullptr;
  for (const KernelVariant& v : kernel_registry()) {
    if (!v.staged || v.stages_b || v.mode != MathMode::Tf32) continue;
    if (!plain && v.slices == 1) plain = &v;
    if (!split && v.slices > 1) split = &v;
  }
  if (!plain || !split) GTEST_SKIP() << "this build has no sm_90a code, so no staged wgmma variants";
  EXPECT_EQ(plain->staging_floats(shape(1477, 3072, 690)), 1477u * 692u);               // A: m rows of k
  // B is read by class of rows (kernels/row_classes.hpp) wherever it has a stored row per class, 8 rows of k (NN) or
  // 4 of n (NT): never copied then.
  EXPECT_EQ(plain->staging_floats(shape(664, 1115, 1024)), 0u);
  EXPECT_EQ(plain->staging_floats(shape(968, 81, 9677)), 968u * 9680u);  // A alone
  EXPECT_EQ(plain->staging_floats(shape(968, 81, 3)), (968u * 4u + 63) / 64 * 64 + 3u * 84u);  // 3 rows of k: both
  EXPECT_EQ(plain->staging_floats(shape(968, 81, 7)), 968u * 8u + 7u * 84u);  // 7 rows of k: both (968·8 % 64 == 0)
  EXPECT_EQ(plain->staging_floats(shape(968, 81, 9)), 968u * 12u);            // 9 rows of k: A alone
  GemmProblem nt = shape(50, 30, 70);
  nt.trans_b = true;  // B stored n×k: 30 rows of k, read by class
  EXPECT_EQ(plain->staging_floats(nt), 50u * 72u);
  nt.n = 3;  // 3 rows of B: copied too
  EXPECT_EQ(plain->staging_floats(nt), (50u * 72u + 63) / 64 * 64 + 3u * 72u);
  GemmProblem tn = shape(1477, 3072, 692);
  tn.trans_a = true;  // A stored k×m: copied into m rows of k, aligned or not
  EXPECT_EQ(plain->staging_floats(tn), 1477u * 692u);
  EXPECT_EQ(plain->unsupported_reason(tn).find("already"), std::string::npos);
  tn.k = 690;
  EXPECT_EQ(plain->staging_floats(tn), 1477u * 692u);
  GemmProblem tt = shape(50, 30, 70);
  tt.trans_a = tt.trans_b = true;  // A transposed into 50 rows of 72; B read by class
  EXPECT_EQ(plain->staging_floats(tt), 50u * 72u);
  const GemmProblem aligned = shape(1477, 3072, 692);
  EXPECT_EQ(plain->staging_floats(aligned), 0u);
  EXPECT_NE(plain->unsupported_reason(aligned).find("A is stored m×k already"), std::string::npos);
  EXPECT_NE(plain->unsupported_reason(shape(664, 1115, 1024)).find("A is stored m×k already"), std::string::npos);
  EXPECT_EQ(plain->unsupported_reason(shape(1477, 3072, 690)).find("already"), std::string::npos);
  const GemmProblem skinny = shape(87, 4096, 6159);
  EXPECT_EQ(split->scratch_floats(skinny),
            KernelVariant::staging_offset(split->split_k_partial_floats(skinny)) + 87u * 6160u);
  EXPECT_EQ(KernelVariant::staging_offset(65), 128u);
}

// A _staged_b variant copies what its _staged twin copies and B as well where B is read by class of rows (NN: n not a
// multiple of 4, 8 or more rows of k; NT: k not, 4 or more rows of n), B after A at a 64-float boundary; it refuses
// every other problem, and carried to one stands for its _staged twin there, or the unstaged one.
TEST(KernelRegistry, AStagedBVariantAlsoCopiesTheBThatItsTwinReadsByClassAndRefusesTheRest) {
  const KernelVariant* staged_b = nullptr;
  for (const KernelVariant& v : kernel_registry())
    if (v.stages_b && v.mode == MathMode::Tf32 && v.slices == 1 && v.tile.cluster == 1) {
      staged_b = &v;
      break;
    }
  if (!staged_b) GTEST_SKIP() << "this build has no sm_90a code, so no staged wgmma variants";
  const std::string plain_name = staged_b->name.substr(0, staged_b->name.size() - 9);
  const KernelVariant* staged = find_kernel_variant(plain_name + "_staged");
  const KernelVariant* plain = find_kernel_variant(plain_name);
  ASSERT_NE(staged, nullptr);
  ASSERT_NE(plain, nullptr);
  const GemmProblem both = shape(353, 263, 1598);  // A: 353 rows of 1600; B: 1598 rows of 264 after it
  EXPECT_EQ(staged->staging_floats(both), 353u * 1600u);
  EXPECT_EQ(staged_b->staging_floats(both), (353u * 1600u + 63) / 64 * 64 + 1598u * 264u);
  EXPECT_EQ(staged_b->unsupported_reason(both), staged_b->device_unsupported_reason());
  const GemmProblem b_only = shape(664, 1115, 1024);  // A aligned: B alone, which the _staged twin does not copy
  EXPECT_EQ(staged->staging_floats(b_only), 0u);
  EXPECT_EQ(staged_b->staging_floats(b_only), 1024u * 1116u);
  EXPECT_EQ(staged_b->unsupported_reason(b_only), staged_b->device_unsupported_reason());
  GemmProblem nt = shape(50, 30, 70);
  nt.trans_b = true;  // B stored n×k: 30 rows of 72 after A's 50
  EXPECT_EQ(staged_b->staging_floats(nt), (50u * 72u + 63) / 64 * 64 + 30u * 72u);
  const GemmProblem a_only = shape(1477, 3072, 690);  // B aligned: nothing more to copy than the _staged twin does
  EXPECT_NE(staged_b->unsupported_reason(a_only).find("the _staged twin makes the same copies"), std::string::npos);
  const GemmProblem few_rows = shape(968, 81, 7);  // 7 rows of k: B is copied by the _staged twin already
  EXPECT_NE(staged_b->unsupported_reason(few_rows).find("the _staged twin makes the same copies"), std::string::npos);
  const GemmProblem aligned = shape(1477, 3072, 692);
  EXPECT_NE(staged_b->unsupported_reason(aligned), "");
  EXPECT_EQ(&alignment_twin(*staged_b, both), staged_b);
  EXPECT_EQ(&alignment_twin(*staged_b, b_only), staged_b);
  EXPECT_EQ(&alignment_twin(*staged_b, a_only), staged);
  EXPECT_EQ(&alignment_twin(*staged_b, aligned), plain);
  EXPECT_EQ(&alignment_twin(*plain, both), staged) << "a variant chosen without the B copy keeps it off";
}

// The runtime replays our kernels inside CUDA graphs: capture must succeed (no sync, no allocation in launch) and the
// replay must compute what a direct launch computes.
TEST(KernelRegistry, EveryVariantLaunchIsCapturableInACudaGraph) {
  GT_REQUIRE_GPU();
  int captured = 0;
  for (const KernelVariant& v : kernel_registry()) {
    if (!v.device_unsupported_reason().empty()) continue;
    const GemmProblem p = problem_for(v);
    test::ProblemData d(p, 77);
    const LaunchScratchBuffer scratch(v, p);
    v.launch(p, d.operands(), scratch.view(), nullptr);  // first use sets the kernel attributes outside the capture
    GT_CUDA_CALL(cudaDeviceSynchronize());
    const std::vector<float> direct = test::to_host(d.Y.get(), d.Y.size());
    test::poison(d.Y);

    cudaStream_t stream = nullptr;
    GT_CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    GT_CUDA_CALL(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    v.launch(p, d.operands(), scratch.view(), stream);
    GT_CUDA_CALL(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
    GT_CUDA_CALL(cudaGraphLaunch(exec, stream));
    GT_CUDA_CALL(cudaStreamSynchronize(stream));
    GT_CUDA_CALL(cudaGraphExecDestroy(exec));
    GT_CUDA_CALL(cudaGraphDestroy(graph));
    GT_CUDA_CALL(cudaStreamDestroy(stream));
    EXPECT_EQ(test::to_host(d.Y.get(), d.Y.size()), direct) << v.name;
    ++captured;
  }
  EXPECT_GT(captured, 0) << "no variant runs on this GPU, so none was captured";
}

// Elements of Y whose mask disagrees with that of `offset`: a dropped element that is not 0, or a kept one that is (Y
// is 0 exactly where an element was dropped; a kept one is 0 only if its acc + bias cancels exactly, ~1e-8 a time).
struct MaskErrors {
  int dropped_not_zero = 0, kept_zero = 0;
};

MaskErrors mask_errors(const GemmProblem& p, const std::vector<float>& y, std::uint64_t seed, std::uint64_t offset) {
  MaskErrors e;
  for (std::int64_t row = 0; row < p.m; ++row)
    for (std::int64_t col = 0; col < p.n; ++col) {
      const auto element = static_cast<std::uint64_t>(row * p.n + col);
      const bool keep = dropout_keep(seed, offset, element, p.epi.dropout_p);
      const float value = y[static_cast<std::size_t>(element)];
      e.dropped_not_zero += !keep && value != 0.f;
      e.kept_zero += keep && value == 0.f;
    }
  return e;
}

// Every variant (every family, split-k, clusters) draws its dropout mask from the offset in device memory when given
// GemmOperands::offset_ptr, read when the kernel runs: a launch matches the fp64 reference of the pointed offset (the
// value field holds another offset, so a kernel that ignored the pointer would fail), and after the device value
// changes, the same launch arguments draw the new offset's mask.
TEST(KernelRegistry, EveryVariantReadsTheDropoutOffsetFromDeviceMemoryWhenItRuns) {
  GT_REQUIRE_GPU();
  const std::uint64_t first = 0x0123456789abcdefull, second = first + 1;
  const DeviceBuffer<std::uint64_t> counter(1);
  int checked = 0;
  for (const KernelVariant& v : kernel_registry()) {
    if (!v.device_unsupported_reason().empty()) continue;
    GemmProblem p = problem_for(v);
    p.epi.act = Activation::None;  // Y is 0 exactly where an element was dropped: the mask can be read off Y
    p.epi.dropout_p = 0.3f;
    if (v.stream_k) {  // the copy engine stores its Y, which leaves no place for the mask
      EXPECT_NE(v.unsupported_reason(p).find("no dropout"), std::string::npos) << v.name;
      continue;
    }
    ASSERT_EQ(v.unsupported_reason(p), "") << v.name;
    test::ProblemData d(p, 500 + static_cast<std::uint32_t>(checked));
    GemmOperands by_value = d.operands();
    by_value.offset = first;
    GemmOperands by_pointer = by_value;
    by_pointer.offset = 7;
    by_pointer.offset_ptr = counter.get();
    GT_CUDA_CALL(cudaMemcpy(counter.get(), &first, sizeof(first), cudaMemcpyHostToDevice));
    GT_CUDA_CALL(cudaDeviceSynchronize());

    const auto count = static_cast<std::int64_t>(d.Y.size());
    DeviceBuffer<double> y_ref(d.Y.size());
    reference_gemm(p, by_value, y_ref.get(), nullptr, nullptr);
    const LaunchScratchBuffer scratch(v, p);
    v.launch(p, by_pointer, scratch.view(), nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());
    EXPECT_LE(relative_frobenius_error(d.Y.get(), y_ref.get(), count, nullptr), test::gemm_tolerance(p)) << v.name;
    const std::vector<float> y = test::to_host(d.Y.get(), d.Y.size());
    const MaskErrors at_first = mask_errors(p, y, by_value.seed, first);
    EXPECT_EQ(at_first.dropped_not_zero, 0) << v.name;
    EXPECT_LE(at_first.kept_zero, 2) << v.name;

    GT_CUDA_CALL(cudaMemcpy(counter.get(), &second, sizeof(second), cudaMemcpyHostToDevice));
    GT_CUDA_CALL(cudaDeviceSynchronize());
    test::poison(d.Y);
    v.launch(p, by_pointer, scratch.view(), nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());
    const std::vector<float> y_second = test::to_host(d.Y.get(), d.Y.size());
    const MaskErrors at_second = mask_errors(p, y_second, by_value.seed, second);
    EXPECT_EQ(at_second.dropped_not_zero, 0) << v.name;
    EXPECT_LE(at_second.kept_zero, 2) << v.name;
    int changed = 0;
    for (std::size_t i = 0; i < y.size(); ++i) changed += (y_second[i] == 0.f) != (y[i] == 0.f);
    EXPECT_GT(changed, count / 5) << v.name;  // independent masks of p = 0.3 differ on 42% of the elements
    ++checked;
  }
  std::cout << "[ checked  ] " << checked << " variants read the dropout offset from device memory\n";
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace gemmtune::kernels
