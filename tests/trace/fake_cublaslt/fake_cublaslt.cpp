// A stand-in for cuBLASLt with just what the --gemms shim touches: descriptors and layouts that keep the
// attributes set on them, and a cublasLtMatmul that counts its calls. It lets a CPU test run the real shim in
// front of a program, the way LD_PRELOAD puts it in front of PyTorch's cuBLASLt.
#include <cublasLt.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

namespace {

struct Attributes {
  std::map<int, std::vector<unsigned char>> values;
};

cublasStatus_t set(Attributes* a, int attr, const void* buf, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(buf);
  a->values[attr] = std::vector<unsigned char>(bytes, bytes + size);
  return CUBLAS_STATUS_SUCCESS;
}

// As cuBLASLt: with no buffer, says the size; an attribute never set reads as zero of its size (8 bytes here).
cublasStatus_t get(const Attributes* a, int attr, void* buf, size_t size, size_t* written) {
  const auto it = a->values.find(attr);
  const std::vector<unsigned char> zero(8, 0);
  const std::vector<unsigned char>& v = it == a->values.end() ? zero : it->second;
  if (written) *written = v.size();
  if (!buf) return size == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  if (size < v.size()) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, v.data(), v.size());
  return CUBLAS_STATUS_SUCCESS;
}

int matmul_calls = 0;

}  // namespace

extern "C" {

int fake_cublaslt_matmul_calls() { return matmul_calls; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute, cudaDataType_t scale) {
  auto* a = new Attributes;
  set(a, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof(compute));
  set(a, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof(scale));
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(a);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  return set(reinterpret_cast<Attributes*>(d), attr, buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  return get(reinterpret_cast<const Attributes*>(d), attr, buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  auto* a = new Attributes;
  const std::uint32_t t = static_cast<std::uint32_t>(type);
  set(a, CUBLASLT_MATRIX_LAYOUT_TYPE, &t, sizeof(t));
  set(a, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows));
  set(a, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof(cols));
  set(a, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof(ld));
  const std::int32_t one = 1;
  set(a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &one, sizeof(one));
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(a);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  return set(reinterpret_cast<Attributes*>(l), attr, buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                void* buf, size_t size, size_t* written) {
  return get(reinterpret_cast<const Attributes*>(l), attr, buf, size, written);
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t,
                              const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,
                              void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t) {
  ++matmul_calls;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
