#include "trace/raw_records.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.hpp"
#include "support/scratch_dir.hpp"
#include "trace/raw_format.hpp"
#include "trace/trace_fixture.hpp"

namespace gemmtune {
namespace {

const TraceRange* find_range(const Trace& t, const std::string& name) {
  for (const TraceRange& r : t.ranges)
    if (r.name == name) return &r;
  return nullptr;
}

TEST(RawRecords, KernelsCopiesAndRangesOfAProcessAreRead) {
  const Trace t = test::mlp_step_trace();
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].pid, 4242);
  EXPECT_TRUE(t.processes[0].complete);
  EXPECT_EQ(t.kernels.size(), 7u);
  ASSERT_EQ(t.copies.size(), 2u);
  EXPECT_EQ(t.copies[0].kind, CopyKind::Memcpy);
  EXPECT_EQ(t.copies[0].direction, "HtoD");
  EXPECT_EQ(t.copies[0].bytes, 4096u);
  EXPECT_EQ(t.copies[1].kind, CopyKind::Memset);
  // Five start/end pairs become ranges; the instantaneous mark does not.
  EXPECT_EQ(t.ranges.size(), 5u);
  EXPECT_EQ(t.gemms_called.size(), 3u);
}

TEST(RawRecords, NestedRangesGetTheirDepth) {
  const Trace t = test::mlp_step_trace();
  for (const char* top : {"forward", "loss", "backward", "optimizer"}) {
    const TraceRange* r = find_range(t, top);
    ASSERT_NE(r, nullptr) << top;
    EXPECT_EQ(r->depth, 0) << top;
  }
  const TraceRange* inner = find_range(t, "inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->depth, 1);
  EXPECT_EQ(inner->start, 1010000u);
  EXPECT_EQ(inner->end, 1050000u);
}

TEST(RawRecords, KernelsCarryTheirLaunchAndTheirCublasLtCall) {
  const Trace t = test::mlp_step_trace();
  int with_launch = 0, with_gemm = 0;
  for (const TraceKernel& k : t.kernels) {
    with_launch += k.launch_tid.has_value();
    if (k.gemm) {
      ++with_gemm;
      // The external id's high half named the signature; its low half the call.
      EXPECT_EQ(k.gemm_call, static_cast<std::uint32_t>(*k.gemm + 1));
    }
    if (k.name == "_Z14k_transpose_MNPKfPfii") {
      EXPECT_FALSE(k.launch_tid.has_value());
    }
    if (k.name == "nvjet_hsh_64x64_64x5_bz_TNT") {
      ASSERT_TRUE(k.launch_tid.has_value());
      EXPECT_EQ(*k.launch_tid, 2u);
      EXPECT_EQ(k.launch_ns, 1170000u);
    }
  }
  EXPECT_EQ(with_launch, 6);
  EXPECT_EQ(with_gemm, 3);
}

TEST(RawRecords, CublasAndCublasLtCallsShareOneSignatureSequence) {
  const Trace t = test::torch_step_trace();
  ASSERT_EQ(t.gemms_called.size(), 5u);
  EXPECT_EQ(t.gemms_called[0].api(), "cublasLtMatmul");
  EXPECT_EQ(t.gemms_called[1].api(), "cublasSgemm_v2");
  EXPECT_EQ(t.gemms_called[3].api(), "cublasSgemmStridedBatched");
  std::map<std::string, std::size_t> gemm_of;
  for (const TraceKernel& k : t.kernels)
    if (k.gemm) gemm_of[k.name] = *k.gemm;
  EXPECT_EQ(gemm_of.size(), 5u);  // the gemv and the elementwise kernel ran for no recorded call
  EXPECT_EQ(gemm_of["sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_cublas"], 0u);
  EXPECT_EQ(gemm_of["sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_cublas"], 2u);
  EXPECT_EQ(gemm_of["splitKreduce_kernel"], 2u);  // the second kernel of the same call
  EXPECT_EQ(gemm_of["cutlass_80_simt_sgemm_128x64_8x5_nn_align1"], 3u);
}

TEST(RawRecords, ADirectoryOfProcessFilesBecomesOneTrace) {
  const test::ScratchDir dir;
  std::filesystem::copy_file(test::trace_fixture_path("mlp_step.cupti.jsonl"), dir.path("4242.cupti.jsonl"));
  std::filesystem::copy_file(test::trace_fixture_path("mlp_step.gemms.jsonl"), dir.path("4242.gemms.jsonl"));
  {
    // A second process that was killed: no end line, and its last line cut short.
    std::ofstream f(dir.path("77.cupti.jsonl"));
    f << "{\"t\":\"process\",\"pid\":77,\"format\":1}\n"
      << "{\"t\":\"k\",\"dev\":0,\"str\":1,\"s\":5,\"e\":9,\"c\":1,\"g\":[1,1,1],\"b\":[1,1,1],\"n\":\"_Z1kv\"}\n"
      << "{\"t\":\"k\",\"dev\":0,\"str\":1,\"s\":";
  }
  const Trace t = read_raw_records(std::filesystem::path(dir.path("x")).parent_path().string());
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.kernels.size(), 8u);
  int incomplete = 0;
  for (const TraceProcess& p : t.processes) incomplete += !p.complete;
  EXPECT_EQ(incomplete, 1);
  // Sorted by start: the killed process's kernel came first.
  EXPECT_EQ(t.kernels.front().pid, 77);
}

TEST(RawRecords, AFileOfAnotherFormatIsAnInputError) {
  Trace t;
  EXPECT_THROW(add_raw_process(t, "{\"t\":\"process\",\"pid\":1,\"format\":99}\n", "", "x"), InputError);
  EXPECT_THROW(add_raw_process(t, "{\"t\":\"k\"}\n", "", "x"), InputError);
  EXPECT_THROW(add_raw_process(t, "not json\n{\"t\":\"end\",\"dropped\":0}\n", "", "x"), InputError);
  EXPECT_THROW(add_raw_process(t,
                               "{\"t\":\"process\",\"pid\":1,\"format\":1}\n"
                               "{\"t\":\"k\",\"dev\":0,\"str\":1,\"s\":5,\"e\":9,\"c\":1,\"g\":[1,1],\"b\":[1,1,1],"
                               "\"n\":\"k\"}\n",
                               "", "x"),
               InputError);
}

TEST(RawRecords, ExternalIdsPackSignatureAndCall) {
  const std::uint64_t id = trace_raw::gemm_external_id(3, 17);
  EXPECT_EQ(trace_raw::gemm_signature_of(id), 3u);
  EXPECT_EQ(id & 0xffffffffu, 17u);
}

}  // namespace
}  // namespace gemmtune
