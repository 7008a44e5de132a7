#include "trace/trace_fixture.hpp"

#include <fstream>
#include <sstream>

#include "trace/raw_records.hpp"

namespace gemmtune::test {

// Kernels (GPU ns):  sm90_xmma_gemm… 10000 (forward, lt call 1) + 8000 (backward, lt call 2)
//                    gelu_forward_kernel 4000 (forward)   reduce_loss 2000 (loss)
//                    nvjet_hsh… 8000 (backward, lt call 3: bf16)   adamw_fused_fp32 3000 (optimizer)
//                    k_transpose_MN 1000 (launch not recorded)
// Kernel time 36000; GEMM 26000 (72.2 %). Copies: memcpy 10000 (HtoD 4096 B), memset 2000 overlapping gelu by 1000.
// Busy: [1990000, 2015000] [2020000, 2022000] [2030000, 2046000] [2050000, 2053000] [2060000, 2061000] = 47000 ns;
// span 71000; 4 gaps, 24000 idle, longest 8000.
std::string trace_fixture_path(const std::string& name) {
  return std::string(GEMMTUNE_SOURCE_DIR) + "/tests/trace/fixtures/" + name;
}

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

Trace mlp_step_trace() {
  Trace t;
  add_raw_process(t, read(trace_fixture_path("mlp_step.cupti.jsonl")),
                  read(trace_fixture_path("mlp_step.gemms.jsonl")), "mlp_step.cupti.jsonl");
  set_range_depths(t);
  t.command = {"python3", "mlp.py"};
  t.wall_ms = 0.5;
  t.gemms = true;
  return t;
}

// Kernels (GPU ns): xmma nt 6000 (cublasLtMatmul, sig 1: fwd:64x256x128:nt:row:bias:tf32)
//                   xmma nn 5000 (cublasSgemm_v2, sig 2: fwd:64x128x256:nn:row:none:tf32, which sig 5, a cublasGemmEx
//                                 call of no kernel, is too)
//                   xmma tn 4000 + splitKreduce 1000 (cublasSgemm_v2, sig 3: fwd:256x128x64:tn:row:none:tf32)
//                   cutlass simt sgemm 2000 (cublasSgemmStridedBatched, sig 4: batch 4, not tunable)
//                   gemv2T 2000 (GEMM category, launched outside any recorded call)   elementwise 3000
// GEMM kernel time 20000, of it 18000 from recorded calls (90%) and 16000 from tunable ones (80%).
Trace torch_step_trace() {
  Trace t;
  add_raw_process(t, read(trace_fixture_path("torch_step.cupti.jsonl")),
                  read(trace_fixture_path("torch_step.gemms.jsonl")), "torch_step.cupti.jsonl");
  t.command = {"python3", "step.py"};
  t.wall_ms = 0.2;
  t.gemms = true;
  return t;
}

CategoryRules default_category_rules() {
  return CategoryRules::load(std::string(GEMMTUNE_SOURCE_DIR) + "/profiles/trace_categories.json");
}

}  // namespace gemmtune::test
