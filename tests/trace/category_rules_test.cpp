#include "trace/category_rules.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "trace/trace_fixture.hpp"

namespace gemmtune {
namespace {

TEST(CategoryRules, TheSeedsKernelsLandInTheSeedsCategories) {
  // The kernels of the original author's nsys table (seed 000), as that report named them.
  const CategoryRules rules = test::default_category_rules();
  const std::pair<const char*, const char*> cases[] = {
      {"gemm_bias_act_f32_smoke_ex", "GEMM"},
      {"ampere_sgemm_128x32_nt", "GEMM"},
      {"gemmSN_TN_kernel", "GEMM"},
      {"adamw_fused_fp32", "optimizer"},
      {"bwd_epilogue_kernel", "epilogue/elementwise"},
      {"k_transpose_MN", "transpose"},
      {"k_add_transpose_into", "transpose"},
      {"k_apply_act_rows_local", "epilogue/elementwise"},
      {"generate_seed_pseudo", "RNG"},
      {"cupy_copy_float32_float32", "copy"},
      {"cupy_power_float32_int32_float", "epilogue/elementwise"},
  };
  for (const auto& [name, category] : cases) EXPECT_EQ(rules.classify(name), category) << name;
}

// PyTorch's kernels carry "lambda" in their demangled names; the optimizer's LAMB must not claim them (seen on the H200:
// a mean reduction and gelu's backward were filed under optimizer).
TEST(CategoryRules, PytorchKernelsWithLambdasInTheirNamesAreNotTheLambOptimizer) {
  const CategoryRules rules = test::default_category_rules();
  EXPECT_EQ(rules.classify("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
                           "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<...>::{lambda()#1})"),
            "reduction");
  EXPECT_EQ(rules.classify("void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl("
                           "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const>"),
            "epilogue/elementwise");
  EXPECT_EQ(rules.classify("lamb_update_kernel"), "optimizer");
}

TEST(CategoryRules, LibraryAndOwnKernelsAreGemmsButOurEpilogueIsNot) {
  const CategoryRules rules = test::default_category_rules();
  EXPECT_EQ(rules.classify("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_cublas"), "GEMM");
  EXPECT_EQ(rules.classify("nvjet_tst_128x64_64x7_2x1_v_bz_TNT"), "GEMM");
  EXPECT_EQ(rules.classify("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(Params)"), "GEMM");
  EXPECT_EQ(rules.classify("void splitKreduce_kernel<32, 16, int, float, float>(cublasSplitKParams<float>)"), "GEMM");
  EXPECT_EQ(rules.classify("void gemmtune::kernels::(anonymous namespace)::mma_gemm_kernel<TileConfig<128>>("
                           "gemmtune::kernels::OperandView)"),
            "GEMM");
  EXPECT_EQ(rules.classify("void gemmtune::kernels::(anonymous namespace)::wgmma_tf32_kernel<Cfg>(OperandView)"), "GEMM");
  // The warp-specialized wgmma kernels (tf32 and 3xtf32) too: the TMA pipeline's name has "tma_" in it.
  EXPECT_EQ(rules.classify("void gemmtune::kernels::wgmma_tf32_tma_kernel<gemmtune::kernels::Tile<128, 128, 32, 128, "
                           "16, 0, 0, 4, 1>, false, true>(CUtensorMap_st, long, gemmtune::kernels::EpilogueParams)"),
            "GEMM");
  // "gemmtune" in a namespace is not "gemm".
  EXPECT_EQ(rules.classify("void gemmtune::kernels::(anonymous namespace)::epilogue_rows_kernel<4>("
                           "gemmtune::kernels::EpilogueParams, float const*)"),
            "epilogue/elementwise");
  EXPECT_EQ(rules.classify("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                           "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>>>>()"),
            "reduction");
  EXPECT_EQ(rules.classify("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>()"),
            "epilogue/elementwise");
  EXPECT_EQ(rules.classify("mystery_kernel"), "other");
}

TEST(CategoryRules, AUsersRulesComeFirst) {
  CategoryRules rules = test::default_category_rules();
  const nlohmann::json mine = {{"schema", "gemmtune.trace_categories"},
                               {"schema_version", 1},
                               {"rules", {{{"category", "attention"}, {"pattern", "flash|fmha"}},
                                          {{"category", "copy"}, {"pattern", "^ampere_sgemm"}}}}};
  rules.prepend(CategoryRules::parse(mine, "mine.json"));
  EXPECT_EQ(rules.classify("flash_fwd_kernel"), "attention");
  EXPECT_EQ(rules.classify("ampere_sgemm_128x32_nt"), "copy");
  EXPECT_EQ(rules.classify("gemmSN_TN_kernel"), "GEMM");
}

TEST(CategoryRules, ABadRuleFileNamesTheProblem) {
  const auto message = [](const nlohmann::json& j) {
    try {
      CategoryRules::parse(j, "rules.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"schema", "other"}, {"schema_version", 1}, {"rules", nlohmann::json::array()}}).find("not a trace category file"),
            std::string::npos);
  EXPECT_NE(message({{"schema", "gemmtune.trace_categories"}, {"schema_version", 2}, {"rules", nlohmann::json::array()}})
                .find("schema_version 2"),
            std::string::npos);
  EXPECT_NE(message({{"schema", "gemmtune.trace_categories"},
                     {"schema_version", 1},
                     {"rules", {{{"category", "x"}, {"pattern", "(unclosed"}}}}})
                .find("rules[0].pattern: not a valid regex"),
            std::string::npos);
  EXPECT_NE(message({{"schema", "gemmtune.trace_categories"}, {"schema_version", 1}, {"rules", {{{"pattern", "x"}}}}})
                .find("rules[0].category: missing"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmtune
