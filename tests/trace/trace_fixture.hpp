// The recorded-activity fixture of the trace tests (tests/trace/fixtures/mlp_step.*.jsonl): one process of a
// training step with NVTX ranges forward (with a nested range), loss, backward (launched from a second thread, as
// PyTorch's autograd does), optimizer; seven kernels (three from cublasLtMatmul calls, one launch unrecorded), a
// memcpy and a memset that overlaps a kernel. The numbers the tests expect are worked out in the fixture's comments
// in trace_fixture.cpp. The torch_step fixture (tests/trace/fixtures/torch_step.*.jsonl) is a step whose GEMMs come
// through cuBLAS as well as cuBLASLt, with a GEMM kernel no recorded call launched: for the GEMM table's coverage.
#pragma once

#include <string>

#include "trace/category_rules.hpp"
#include "trace/trace.hpp"

namespace gemmtune::test {

std::string trace_fixture_path(const std::string& name);
Trace mlp_step_trace();  // the fixture read through read_raw_records' per-process path
Trace torch_step_trace();
CategoryRules default_category_rules();

}  // namespace gemmtune::test
