// The GEMM shim's interceptor of cublasLtMatmul (libgemmtune_trace_gemms.so; gemm_shim/recorder.hpp).
//
// Each call's matmul descriptor and matrix layouts are read back (cublasLtMatmulDescGetAttribute,
// cublasLtMatrixLayoutGetAttribute) into a call description (trace/lt_call.hpp), written as a line when traced
// (identical descriptions share one signature number) and handed to the router under `gemmtune apply`, with the
// bias and aux pointers the descriptor holds. cuBLASLt's functions are found at run time (the next cublasLtMatmul in
// link order, the attribute getters in the library that defines it), never linked: a link would load the toolkit's
// cuBLASLt beside the program's own (PyTorch ships one).
#include <cublasLt.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "gemm_shim/recorder.hpp"
#include "gemm_shim/router.hpp"
#include "trace/lt_call.hpp"

namespace {

using gemmtune::gemm_shim::CallScope;
using gemmtune::gemm_shim::Correlation;

using MatmulFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                    cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                    const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);
using DescGetFn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*);
using LayoutGetFn = cublasStatus_t (*)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*, size_t,
                                       size_t*);

struct LtFunctions {
  MatmulFn matmul = nullptr;
  DescGetFn desc_get = nullptr;
  LayoutGetFn layout_get = nullptr;
};

const LtFunctions& lt() {
  static const LtFunctions f = [] {
    const auto find = [](const char* name) {
      return gemmtune::gemm_shim::real_symbol(name, {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
    };
    LtFunctions r;
    r.matmul = reinterpret_cast<MatmulFn>(find("cublasLtMatmul"));
    r.desc_get = reinterpret_cast<DescGetFn>(find("cublasLtMatmulDescGetAttribute"));
    r.layout_get = reinterpret_cast<LayoutGetFn>(find("cublasLtMatrixLayoutGetAttribute"));
    return r;
  }();
  return f;
}

// Attributes have different widths (int32, uint32, int64, pointers); each is read into the low bytes of a zeroed
// 64-bit value (little-endian), at the size cuBLASLt says it has. A size is the library's, not the object's, so it
// is asked once per attribute and each later read is one call: a call's ~40 reads are most of what the shim adds to
// it. false when cuBLASLt refuses.
template <typename Get, typename Object, typename Attribute, std::size_t N>
bool read_attribute(Get get, Object object, Attribute attribute, std::atomic<std::uint8_t> (&sizes)[N],
                    std::uint64_t* value) {
  *value = 0;
  const auto slot = static_cast<std::size_t>(attribute);
  std::size_t size = slot < N ? sizes[slot].load(std::memory_order_relaxed) : 0;
  if (size == 0) {
    if (get(object, attribute, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 || size > sizeof(*value))
      return false;
    if (slot < N) sizes[slot].store(static_cast<std::uint8_t>(size), std::memory_order_relaxed);
  }
  std::size_t written = 0;
  return get(object, attribute, value, size, &written) == CUBLAS_STATUS_SUCCESS;
}

std::atomic<std::uint8_t> desc_sizes[64];    // by cublasLtMatmulDescAttributes_t; 0: not asked yet
std::atomic<std::uint8_t> layout_sizes[16];  // by cublasLtMatrixLayoutAttribute_t

bool desc_attr(const LtFunctions& fn, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
               std::uint64_t* value) {
  return read_attribute(fn.desc_get, d, attr, desc_sizes, value);
}

bool layout_attr(const LtFunctions& fn, cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                 std::uint64_t* value) {
  return read_attribute(fn.layout_get, l, attr, layout_sizes, value);
}

// Sign-extends a 32-bit attribute (cudaDataType's "unset" is -1).
int as_int32(std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

std::optional<gemmtune::LtMatrix> read_layout(const LtFunctions& fn, cublasLtMatrixLayout_t l) {
  if (!l) return std::nullopt;
  std::uint64_t type = 0, order = 0, rows = 0, cols = 0, ld = 0, batch = 0, stride = 0;
  if (!layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type) ||
      !layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows) ||
      !layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_COLS, &cols) || !layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_LD, &ld))
    return std::nullopt;
  layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order);  // absent: column order, the default
  if (!layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch)) batch = 1;
  layout_attr(fn, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride);
  gemmtune::LtMatrix m;
  m.type = as_int32(type);
  m.order = as_int32(order);
  m.rows = rows;
  m.cols = cols;
  m.ld = static_cast<std::int64_t>(ld);
  m.batch = as_int32(batch);
  m.stride = static_cast<std::int64_t>(stride);
  return m;
}

// alpha and beta are read only where they live on the host and their type is known; elsewhere they stay unknown.
std::optional<double> read_scalar(const void* p, int scale_type, int pointer_mode) {
  if (!p || pointer_mode != CUBLASLT_POINTER_MODE_HOST) return std::nullopt;
  if (scale_type == CUDA_R_32F) {
    float v;
    std::memcpy(&v, p, sizeof(v));
    return static_cast<double>(v);
  }
  if (scale_type == CUDA_R_64F) {
    double v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  return std::nullopt;
}

// One call's descriptor and layouts as values, and the bias and aux pointers the descriptor holds.
struct LtCall {
  gemmtune::LtCallDesc desc;
  const void* bias = nullptr;
  void* aux = nullptr;
};

LtCall read_call(const LtFunctions& fn, cublasLtMatmulDesc_t d, const void* alpha, const void* beta,
                 cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                 cublasLtMatrixLayout_t dl) {
  std::uint64_t compute = 0, scale = 0, mode = 0, ta = 0, tb = 0, epi = 0, bias = 0, bias_type = 0, aux = 0,
                aux_ld = 0, aux_type = 0;
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute);
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale);
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode);
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_TRANSA, &ta);
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_TRANSB, &tb);
  if (!desc_attr(fn, d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi)) epi = CUBLASLT_EPILOGUE_DEFAULT;
  desc_attr(fn, d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias);
  if (!desc_attr(fn, d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type)) bias_type = 0xffffffffu;
  // Only the epilogues with the AUX bit (128: RELU_AUX, GELU_AUX, DRELU, DGELU and their forms) read or write aux;
  // elsewhere cuBLASLt ignores it, so it is not read: the common call saves three reads.
  aux_type = 0xffffffffu;
  if (epi & 128u) {
    desc_attr(fn, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux);
    desc_attr(fn, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld);
    if (!desc_attr(fn, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type)) aux_type = 0xffffffffu;
  }
  LtCall call;
  gemmtune::LtCallDesc& r = call.desc;
  r.compute = as_int32(compute);
  r.scale = as_int32(scale);
  r.pointer_mode = as_int32(mode);
  r.transa = as_int32(ta);
  r.transb = as_int32(tb);
  r.epilogue = static_cast<std::uint32_t>(epi);
  r.bias = bias != 0;
  r.bias_type = as_int32(bias_type);
  r.aux = aux != 0;
  r.aux_ld = static_cast<std::int64_t>(aux_ld);
  r.aux_type = as_int32(aux_type);
  r.alpha = read_scalar(alpha, r.scale, r.pointer_mode);
  r.beta = read_scalar(beta, r.scale, r.pointer_mode);
  r.a = read_layout(fn, a);
  r.b = read_layout(fn, b);
  r.d = read_layout(fn, dl);
  r.c = c == dl ? r.d : read_layout(fn, c);  // PyTorch passes one layout for C and D
  call.bias = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(bias));
  call.aux = reinterpret_cast<void*>(static_cast<std::uintptr_t>(aux));
  return call;
}

std::string layout_json(const std::optional<gemmtune::LtMatrix>& m) {
  if (!m) return "null";
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"type\":%d,\"order\":%d,\"rows\":%" PRIu64 ",\"cols\":%" PRIu64 ",\"ld\":%" PRId64
                ",\"batch\":%d,\"stride\":%" PRId64 "}",
                m->type, m->order, m->rows, m->cols, m->ld, m->batch, m->stride);
  return text;
}

// A float scale prints with a float's 9 digits, a double with 17: each exactly.
std::string scalar_json(const std::optional<double>& v, int scale_type) {
  if (!v) return "null";
  char text[64];
  if (scale_type == CUDA_R_32F)
    std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(static_cast<float>(*v)));
  else
    std::snprintf(text, sizeof(text), "%.17g", *v);
  return text;
}

// The description line of trace/lt_call.hpp's from_json, written here without a JSON library.
std::string describe_call(const gemmtune::LtCallDesc& c) {
  char head[512];
  std::snprintf(head, sizeof(head),
                "\"compute\":%d,\"scale\":%d,\"pointer_mode\":%d,\"transa\":%d,\"transb\":%d,"
                "\"epilogue\":%" PRIu32 ",\"bias\":%s,\"bias_type\":%d,\"aux\":%s,\"aux_ld\":%" PRId64
                ",\"aux_type\":%d",
                c.compute, c.scale, c.pointer_mode, c.transa, c.transb, c.epilogue, c.bias ? "true" : "false",
                c.bias_type, c.aux ? "true" : "false", c.aux_ld, c.aux_type);
  return std::string("{") + head + ",\"alpha\":" + scalar_json(c.alpha, c.scale) +
         ",\"beta\":" + scalar_json(c.beta, c.scale) + ",\"a\":" + layout_json(c.a) + ",\"b\":" + layout_json(c.b) +
         ",\"c\":" + layout_json(c.c) + ",\"d\":" + layout_json(c.d) + "}";
}

}  // namespace

extern "C" __attribute__((visibility("default"))) cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A, cublasLtMatrixLayout_t a,
    const void* B, cublasLtMatrixLayout_t b, const void* beta, const void* C, cublasLtMatrixLayout_t c, void* D,
    cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
    cudaStream_t stream) {
  const LtFunctions& f = lt();
  if (!f.matmul) return CUBLAS_STATUS_NOT_INITIALIZED;  // no cuBLASLt behind us: the caller could not have linked one
  const auto real = [&] {
    return f.matmul(handle, desc, alpha, A, a, B, b, beta, C, c, D, d, algo, workspace, workspace_bytes, stream);
  };
  namespace shim = gemmtune::gemm_shim;
  const CallScope scope;
  if (!scope.outermost() || !(shim::recording() || shim::applying()) || !f.desc_get || !f.layout_get) return real();
  const LtCall call = read_call(f, desc, alpha, beta, a, b, c, d);
  const Correlation correlation(shim::recording() ? shim::record_lt_call(describe_call(call.desc)) : 0);
  if (shim::applying() && shim::route_lt_call(call.desc, {A, B, D, call.bias, call.aux}, stream))
    return CUBLAS_STATUS_SUCCESS;
  return real();
}
