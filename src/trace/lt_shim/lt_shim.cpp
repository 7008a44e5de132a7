// libgemmtune_trace_lt.so: the LD_PRELOAD shim `gemmtune trace --gemms` puts in front of cublasLtMatmul.
//
// Each call's matmul descriptor and matrix layouts are read back (cublasLtMatmulDescGetAttribute,
// cublasLtMatrixLayoutGetAttribute) into a signature line; identical signatures share one number. Around the real
// call an external correlation id (signature, call number) is pushed through the hooks the injection library
// hands over, so every kernel the call launches is tagged with it in CUPTI's records. At exit the distinct
// signatures and their call counts go to <GEMMTUNE_TRACE_DIR>/<pid>.lt.jsonl; gemmtune maps them to problem keys.
//
// cuBLASLt's functions are found at run time (the next cublasLtMatmul in link order, the attribute getters in the
// global scope), never linked: a link would load the toolkit's cuBLASLt beside the program's own (PyTorch ships
// one). Nothing here throws or ends the program; a call the shim cannot describe still runs.
#include <cublasLt.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/raw_format.hpp"

namespace {

namespace raw = gemmtune::trace_raw;

using MatmulFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                    cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                    const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);
using DescGetFn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*);
using LayoutGetFn = cublasStatus_t (*)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*, size_t,
                                       size_t*);

struct Signature {
  std::string json;  // the descriptor fields, as written to the file
  std::uint64_t calls = 0;
};

struct State {
  std::mutex mu;
  MatmulFn real = nullptr;
  DescGetFn desc_get = nullptr;
  LayoutGetFn layout_get = nullptr;
  bool resolved = false;
  bool recording = false;
  std::string path;
  std::unordered_map<std::string, std::uint32_t> index_of;  // signature json -> 1-based index
  std::vector<Signature> signatures;
  std::uint32_t next_call = 0;
};

State& state() {
  static State* s = new State;  // never destroyed: a matmul may run during static destruction
  return *s;
}

std::atomic<raw::PushCorrelationFn> push_hook{nullptr};
std::atomic<raw::PopCorrelationFn> pop_hook{nullptr};

// Attributes have different widths (int32, uint32, int64, pointers); each is read into the low bytes of a zeroed
// 64-bit value (little-endian), at the size cuBLASLt says it has. false when cuBLASLt refuses.
bool desc_attr(const State& s, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, std::uint64_t* value) {
  std::size_t size = 0;
  *value = 0;
  if (s.desc_get(d, attr, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 || size > sizeof(*value))
    return false;
  return s.desc_get(d, attr, value, size, &size) == CUBLAS_STATUS_SUCCESS;
}

bool layout_attr(const State& s, cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                 std::uint64_t* value) {
  std::size_t size = 0;
  *value = 0;
  if (s.layout_get(l, attr, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 || size > sizeof(*value))
    return false;
  return s.layout_get(l, attr, value, size, &size) == CUBLAS_STATUS_SUCCESS;
}

// Sign-extends a 32-bit attribute (cudaDataType's "unset" is -1).
long long as_int32(std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

std::string describe_layout(const State& s, cublasLtMatrixLayout_t l) {
  if (!l) return "null";
  std::uint64_t type = 0, order = 0, rows = 0, cols = 0, ld = 0, batch = 0, stride = 0;
  if (!layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type) || !layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows) ||
      !layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_COLS, &cols) || !layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_LD, &ld))
    return "null";
  layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order);  // absent: column order, the default
  if (!layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch)) batch = 1;
  layout_attr(s, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride);
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"type\":%lld,\"order\":%lld,\"rows\":%" PRIu64 ",\"cols\":%" PRIu64 ",\"ld\":%" PRId64
                ",\"batch\":%lld,\"stride\":%" PRId64 "}",
                as_int32(type), as_int32(order), rows, cols, static_cast<std::int64_t>(ld), as_int32(batch),
                static_cast<std::int64_t>(stride));
  return text;
}

// alpha and beta are read only where they live on the host and their type is known; elsewhere they stay null.
std::string describe_scalar(const void* p, long long scale_type, long long pointer_mode) {
  if (!p || pointer_mode != CUBLASLT_POINTER_MODE_HOST) return "null";
  char text[64];
  if (scale_type == CUDA_R_32F) {
    float v;
    std::memcpy(&v, p, sizeof(v));
    std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(v));
  } else if (scale_type == CUDA_R_64F) {
    double v;
    std::memcpy(&v, p, sizeof(v));
    std::snprintf(text, sizeof(text), "%.17g", v);
  } else {
    return "null";
  }
  return text;
}

std::string describe_call(const State& s, cublasLtMatmulDesc_t d, const void* alpha, const void* beta,
                          cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                          cublasLtMatrixLayout_t dl) {
  std::uint64_t compute = 0, scale = 0, mode = 0, ta = 0, tb = 0, epi = 0, bias = 0, bias_type = 0, aux = 0,
                aux_ld = 0, aux_type = 0;
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute);
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale);
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode);
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_TRANSA, &ta);
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_TRANSB, &tb);
  if (!desc_attr(s, d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi)) epi = CUBLASLT_EPILOGUE_DEFAULT;
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias);
  if (!desc_attr(s, d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type)) bias_type = 0xffffffffu;
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux);
  desc_attr(s, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld);
  if (!desc_attr(s, d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type)) aux_type = 0xffffffffu;
  const long long pointer_mode = as_int32(mode);
  char head[512];
  std::snprintf(head, sizeof(head),
                "\"compute\":%lld,\"scale\":%lld,\"pointer_mode\":%lld,\"transa\":%lld,\"transb\":%lld,"
                "\"epilogue\":%" PRIu64 ",\"bias\":%s,\"bias_type\":%lld,\"aux\":%s,\"aux_ld\":%" PRId64
                ",\"aux_type\":%lld",
                as_int32(compute), as_int32(scale), pointer_mode, as_int32(ta), as_int32(tb), epi,
                bias ? "true" : "false", as_int32(bias_type), aux ? "true" : "false",
                static_cast<std::int64_t>(aux_ld), as_int32(aux_type));
  return std::string("{") + head + ",\"alpha\":" + describe_scalar(alpha, as_int32(scale), pointer_mode) +
         ",\"beta\":" + describe_scalar(beta, as_int32(scale), pointer_mode) + ",\"a\":" + describe_layout(s, a) +
         ",\"b\":" + describe_layout(s, b) + ",\"c\":" + describe_layout(s, c) + ",\"d\":" + describe_layout(s, dl) +
         "}";
}

void write_signatures() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.recording || s.signatures.empty()) return;
  std::FILE* f = std::fopen(s.path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "gemmtune trace: cannot write %s: %s\n", s.path.c_str(), std::strerror(errno));
    return;
  }
  for (std::size_t i = 0; i < s.signatures.size(); ++i)
    std::fprintf(f, "{\"t\":\"lt\",\"sig\":%zu,\"calls\":%" PRIu64 ",\"desc\":%s}\n", i + 1, s.signatures[i].calls,
                 s.signatures[i].json.c_str());
  std::fclose(f);
}

// The real cuBLASLt function. RTLD_NEXT sees only libraries of the global scope; Python loads extension modules
// RTLD_LOCAL, so PyTorch's libcublasLt (a dependency of one) is found by its soname instead: it is loaded already,
// since its caller is calling it.
void* real_symbol(const char* name) {
  if (void* f = ::dlsym(RTLD_NEXT, name)) return f;
  for (const char* soname : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    if (void* lib = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      if (void* f = ::dlsym(lib, name)) return f;
    }
  }
  return nullptr;
}

// Called with State::mu held, on the first intercepted call.
void resolve(State& s) {
  s.resolved = true;
  s.real = reinterpret_cast<MatmulFn>(real_symbol("cublasLtMatmul"));
  s.desc_get = reinterpret_cast<DescGetFn>(real_symbol("cublasLtMatmulDescGetAttribute"));
  s.layout_get = reinterpret_cast<LayoutGetFn>(real_symbol("cublasLtMatrixLayoutGetAttribute"));
  const char* dir = std::getenv(raw::kDirEnv);
  if (!dir || !*dir || !s.desc_get || !s.layout_get) return;
  s.path = std::string(dir) + "/" + std::to_string(::getpid()) + raw::kLtSuffix;
  s.recording = true;
  std::atexit(write_signatures);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void gemmtune_trace_set_correlation_hooks(
    raw::PushCorrelationFn push, raw::PopCorrelationFn pop) {
  pop_hook = pop;
  push_hook = push;
}

extern "C" __attribute__((visibility("default"))) cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A, cublasLtMatrixLayout_t a,
    const void* B, cublasLtMatrixLayout_t b, const void* beta, const void* C, cublasLtMatrixLayout_t c, void* D,
    cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
    cudaStream_t stream) {
  State& s = state();
  std::uint64_t external_id = 0;
  MatmulFn real = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.resolved) resolve(s);
    real = s.real;
    if (real && s.recording) {
      const std::string sig = describe_call(s, desc, alpha, beta, a, b, c, d);
      auto it = s.index_of.find(sig);
      if (it == s.index_of.end()) {
        s.signatures.push_back({sig, 0});
        it = s.index_of.emplace(sig, static_cast<std::uint32_t>(s.signatures.size())).first;
      }
      ++s.signatures[it->second - 1].calls;
      external_id = raw::lt_external_id(it->second, ++s.next_call);
    }
  }
  if (!real) return CUBLAS_STATUS_NOT_INITIALIZED;  // no cuBLASLt behind us: the caller could not have linked one
  const raw::PushCorrelationFn push = push_hook.load();
  const raw::PopCorrelationFn pop = pop_hook.load();
  const bool pushed = external_id != 0 && push && pop && push(external_id) == 0;
  const cublasStatus_t status =
      real(handle, desc, alpha, A, a, B, b, beta, C, c, D, d, algo, workspace, workspace_bytes, stream);
  if (pushed) pop();
  return status;
}
