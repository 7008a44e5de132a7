#include "lt/no_entry_candidates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gemmtune {
namespace {

// Row-major NN with k and n multiples of 4 (every stored row 16-byte aligned: nothing to pad), unless `n` says else.
GemmProblem problem(const char* epilogue, std::int64_t n = 3332) {
  GemmProblem p;
  p.m = 2723;
  p.n = n;
  p.k = 1536;
  p.mode = MathMode::Fp32;
  p.epi = Epilogue::parse(epilogue);
  return p;
}

Candidate lt_algo(int id, bool epilogue_kernel) {
  Candidate c;
  c.lt.algo_id = id;
  c.heuristic_rank = 0;
  c.lt_epilogue_kernel = epilogue_kernel;
  return c;
}

Candidate padded_algo(int id) {
  Candidate c = lt_algo(id, true);
  c.lt_padded = true;
  return c;
}

// The cuBLASLt challengers: the set less cuBLAS's own choice, which every fp32 and tf32 set ends with.
std::vector<Candidate> lt_challengers(const NoEntryCandidates& set) {
  std::vector<Candidate> out;
  for (const Candidate& c : set.challengers)
    if (c.backend == Backend::Lt) out.push_back(c);
  return out;
}

constexpr std::size_t kWorkspace = std::size_t{64} << 20;  // the runtime's and the sweep's

// A heuristic that answers `fused` for PreferFused, `unfused` for Unfused, `bias_in_gemm` for BiasInGemm and `padded`
// for Padded at kWorkspace, and `small_fused` / `small_unfused` at any smaller workspace; it counts what it was asked.
struct FakeHeuristic {
  FakeHeuristic(std::optional<Candidate> fused_, std::optional<Candidate> unfused_)
      : fused(fused_), unfused(unfused_), small_fused(fused_), small_unfused(unfused_) {}
  std::optional<Candidate> fused, unfused;
  std::optional<Candidate> small_fused, small_unfused;
  std::optional<Candidate> padded = padded_algo(31);
  std::optional<Candidate> bias_in_gemm;  // none unless a test sets one
  std::vector<LtEpilogueMode> asked;
  std::vector<std::size_t> workspaces;
  HeuristicFirstOf first_of() {
    return [this](LtEpilogueMode mode, std::size_t workspace) {
      asked.push_back(mode);
      workspaces.push_back(workspace);
      const bool small = workspace < kWorkspace;
      if (mode == LtEpilogueMode::PreferFused) return small ? small_fused : fused;
      if (mode == LtEpilogueMode::Unfused) return small ? small_unfused : unfused;
      if (mode == LtEpilogueMode::BiasInGemm) return bias_in_gemm;
      return padded;
    };
  }
  // What was asked at the full workspace.
  std::vector<LtEpilogueMode> asked_at_full() const {
    std::vector<LtEpilogueMode> out;
    for (std::size_t i = 0; i < asked.size(); ++i)
      if (workspaces[i] == kWorkspace) out.push_back(asked[i]);
    return out;
  }
};

TEST(NoEntryCandidates, AFusedEpilogueDefaultIsChallengedByThePlainGemmThenOurEpilogueKernel) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  EXPECT_EQ(set->heuristic_first.id(), lt_algo(21, false).id());
  ASSERT_EQ(lt_challengers(*set).size(), 1u);
  EXPECT_EQ(lt_challengers(*set)[0].id(), lt_algo(24, true).id());
  EXPECT_TRUE(lt_challengers(*set)[0].lt_epilogue_kernel);
}

TEST(NoEntryCandidates, AProblemWithoutAnEpilogueHasNoChallengerAndTheUnfusedHeuristicIsNotAsked) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("none"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  EXPECT_TRUE(lt_challengers(*set).empty());
  EXPECT_EQ(h.asked_at_full(), std::vector<LtEpilogueMode>{LtEpilogueMode::PreferFused});
  EXPECT_EQ(std::count(h.asked.begin(), h.asked.end(), LtEpilogueMode::Unfused), 0);
}

TEST(NoEntryCandidates, ADefaultThatAlreadyRunsOurEpilogueKernelHasNothingToTakeApart) {
  // leaky_relu: cuBLASLt has no epilogue for it, so its default is already the plain GEMM + our kernel.
  FakeHeuristic h{lt_algo(21, true), lt_algo(21, true)};
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+leaky_relu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  EXPECT_TRUE(lt_challengers(*set).empty());
}

TEST(NoEntryCandidates, NoChallengerWhereTheUnfusedHeuristicHasNoAlgo) {
  FakeHeuristic h{lt_algo(21, false), std::nullopt};
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+relu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  EXPECT_TRUE(lt_challengers(*set).empty());
}

TEST(NoEntryCandidates, NoSetWhereTheHeuristicHasNoAlgo) {
  FakeHeuristic h{std::nullopt, lt_algo(24, true)};
  EXPECT_FALSE(no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace));
}

TEST(NoEntryCandidates, UnalignedRowsAddThePaddedGemmAsAChallengerWithOrWithoutAnEpilogue) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+gelu", 3333), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  ASSERT_EQ(lt_challengers(*set).size(), 2u);
  EXPECT_EQ(lt_challengers(*set)[0].id(), lt_algo(24, true).id());
  EXPECT_EQ(lt_challengers(*set)[1].id(), padded_algo(31).id());
  EXPECT_EQ(lt_challengers(*set)[1].id().substr(lt_challengers(*set)[1].id().size() - 4), "+pad");
  FakeHeuristic plain{lt_algo(21, false), lt_algo(24, true)};
  const std::optional<NoEntryCandidates> none = no_entry_candidates(problem("none", 3333), plain.first_of(), kWorkspace);
  ASSERT_TRUE(none);
  ASSERT_EQ(lt_challengers(*none).size(), 1u);
  EXPECT_TRUE(lt_challengers(*none)[0].lt_padded);
  EXPECT_EQ(plain.asked_at_full(), (std::vector<LtEpilogueMode>{LtEpilogueMode::PreferFused, LtEpilogueMode::Padded}));
}

TEST(NoEntryCandidates, AlignedRowsNeverAskForThePaddedGemm) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  ASSERT_TRUE(no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace));
  EXPECT_EQ(std::count(h.asked.begin(), h.asked.end(), LtEpilogueMode::Padded), 0);
}

TEST(NoEntryCandidates, AnOwnVariantDefaultHasNoCuBLASLtChallenger) {
  // 3xtf32: cuBLASLt cannot run it, the runtime's default is our best-guess variant.
  Candidate own;
  own.backend = Backend::Own;
  own.own_variant = "tf32x3_128x128x32_s3";
  FakeHeuristic h{std::nullopt, lt_algo(24, true)};
  EXPECT_TRUE(no_entry_challengers(problem("bias+gelu"), own, h.first_of(), kWorkspace).empty());
  EXPECT_TRUE(h.asked.empty());
}

TEST(NoEntryCandidates, WhatTheHeuristicAnswersAtAFrameworksSmallerWorkspaceIsAChallengerOnce) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  h.small_fused = lt_algo(40, false);    // e.g. no split-k once its partials do not fit
  h.small_unfused = lt_algo(24, true);   // the same as at the full workspace: nothing new
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  ASSERT_EQ(lt_challengers(*set).size(), 2u);
  EXPECT_EQ(lt_challengers(*set)[0].id(), lt_algo(24, true).id());
  EXPECT_EQ(lt_challengers(*set)[1].id(), lt_algo(40, false).id());
  EXPECT_EQ(no_entry_challenger_kind(lt_challengers(*set)[1]), "the heuristic's first algo at a framework's smaller workspace");
}

TEST(NoEntryCandidates, EveryFrameworkWorkspaceBelowTheCallersIsAskedAndNoneAtOrAboveIt) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  ASSERT_TRUE(no_entry_candidates(problem("bias+gelu"), h.first_of(), std::size_t{4} << 20));
  std::vector<std::size_t> smaller;
  for (const std::size_t w : h.workspaces)
    if (w != (std::size_t{4} << 20)) smaller.push_back(w);
  // Fused, unfused and bias-in-GEMM at 0 and 1 MiB; 4 and 32 MiB are not below the caller's 4 MiB.
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  EXPECT_EQ(smaller, (std::vector<std::size_t>{0, 0, 0, kMiB, kMiB, kMiB}));
}

Candidate bias_in_gemm_algo(int id) {
  Candidate c = lt_algo(id, true);
  c.lt_bias_in_gemm = true;
  return c;
}

TEST(NoEntryCandidates, ABiasWithMoreAfterItAddsCuBLASLtsBiasThenOurKernelAsAChallengerAsPyTorchsAddmmRunsIt) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  h.bias_in_gemm = bias_in_gemm_algo(55);
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  ASSERT_EQ(lt_challengers(*set).size(), 2u);
  EXPECT_EQ(lt_challengers(*set)[1].id(), bias_in_gemm_algo(55).id());
  EXPECT_EQ(no_entry_challenger_kind(lt_challengers(*set)[1]),
            "the GEMM with cuBLASLt's bias, then our kernel for the rest, as PyTorch's addmm + activation");
  // Asked at the full workspace and at every framework's smaller one (one answer, so one challenger).
  EXPECT_EQ(std::count(h.asked.begin(), h.asked.end(), LtEpilogueMode::BiasInGemm), 5);
}

TEST(NoEntryCandidates, NoBiasInGemmChallengerWithoutABiasOrWithNothingAfterItOrATransposedOutput) {
  for (const char* epilogue : {"none", "gelu", "bias"}) {
    FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
    h.bias_in_gemm = bias_in_gemm_algo(55);
    ASSERT_TRUE(no_entry_candidates(problem(epilogue), h.first_of(), kWorkspace)) << epilogue;
    EXPECT_EQ(std::count(h.asked.begin(), h.asked.end(), LtEpilogueMode::BiasInGemm), 0) << epilogue;
  }
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  h.bias_in_gemm = bias_in_gemm_algo(55);
  GemmProblem transposed = problem("bias+gelu");
  transposed.out = OutputLayout::Transposed;
  ASSERT_TRUE(no_entry_candidates(transposed, h.first_of(), kWorkspace));
  EXPECT_EQ(std::count(h.asked.begin(), h.asked.end(), LtEpilogueMode::BiasInGemm), 0);
}

TEST(NoEntryCandidates, AnAnswerEqualToHeuristicFirstIsNoChallenger) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(21, false)};
  h.small_fused = lt_algo(21, false);
  const std::optional<NoEntryCandidates> set = no_entry_candidates(problem("bias+gelu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(set);
  EXPECT_TRUE(lt_challengers(*set).empty());
}

TEST(NoEntryCandidates, CuBLASsOwnChoiceIsTheLastChallengerOfEveryFp32AndTf32Set) {
  for (const MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
    FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
    GemmProblem p = problem("none");
    p.mode = mode;
    const std::optional<NoEntryCandidates> set = no_entry_candidates(p, h.first_of(), kWorkspace);
    ASSERT_TRUE(set);
    ASSERT_FALSE(set->challengers.empty());
    EXPECT_EQ(set->challengers.back().id(), "cublas/sgemm");
    EXPECT_EQ(lt_challengers(*set).size() + 1, set->challengers.size());
  }
}

TEST(NoEntryCandidates, EagersCallWithABiasIsCuBLASLtsBiasAtPyTorchsWorkspaceAndWithoutOneCuBLASsOwnChoice) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  h.bias_in_gemm = bias_in_gemm_algo(55);
  const std::optional<Candidate> addmm_gelu = eager_call(problem("bias+gelu"), h.first_of(), kWorkspace);
  ASSERT_TRUE(addmm_gelu);
  EXPECT_EQ(addmm_gelu->id(), bias_in_gemm_algo(55).id());
  EXPECT_EQ(h.asked.back(), LtEpilogueMode::BiasInGemm);
  EXPECT_EQ(h.workspaces.back(), kTorchLtWorkspace);
  const std::optional<Candidate> addmm = eager_call(problem("bias"), h.first_of(), kWorkspace);
  ASSERT_TRUE(addmm);
  EXPECT_EQ(h.asked.back(), LtEpilogueMode::PreferFused) << "a bias alone is cuBLASLt's fused BIAS epilogue";
  EXPECT_EQ(addmm->id(), lt_algo(21, false).id());
  for (const char* epilogue : {"none", "gelu"}) {
    const std::optional<Candidate> mm = eager_call(problem(epilogue), h.first_of(), kWorkspace);
    ASSERT_TRUE(mm) << epilogue;
    EXPECT_EQ(mm->id(), "cublas/sgemm") << epilogue;
  }
}

TEST(NoEntryCandidates, EagersAddmmOnOneRowIsCuBLASsOwnChoiceAndAWorkspaceSmallerThanPyTorchsIsAskedAsIs) {
  FakeHeuristic h{lt_algo(21, false), lt_algo(24, true)};
  h.bias_in_gemm = bias_in_gemm_algo(55);
  GemmProblem one_row = problem("bias+gelu");
  one_row.m = 1;
  const std::size_t asked_before = h.asked.size();
  EXPECT_EQ(eager_call(one_row, h.first_of(), kWorkspace)->id(), "cublas/sgemm");
  EXPECT_EQ(h.asked.size(), asked_before);
  ASSERT_TRUE(eager_call(problem("bias+gelu"), h.first_of(), 0));
  EXPECT_EQ(h.workspaces.back(), 0u) << "a runtime given no workspace";
}

}  // namespace
}  // namespace gemmtune
