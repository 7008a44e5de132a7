// A program that calls cublasLtMatmul as PyTorch's F.linear does (tf32, weight transposed, BIAS epilogue) twice,
// one bf16 product once and one fp32 GELU_AUX_BIAS forward once, against the fake cuBLASLt; prints how many calls
// reached it.
#include <cublasLt.h>

#include <cstdio>

extern "C" int fake_cublaslt_matmul_calls();

namespace {

cublasLtMatrixLayout_t layout(cudaDataType type, uint64_t rows, uint64_t cols) {
  cublasLtMatrixLayout_t l = nullptr;
  cublasLtMatrixLayoutCreate(&l, type, rows, cols, static_cast<int64_t>(rows));
  return l;
}

// One attribute of a matmul descriptor, at its value's size.
template <typename T>
void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  cublasLtMatmulDescSetAttribute(d, attribute, &value, sizeof(value));
}

void call(cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c) {
  const float alpha = 1.0f, beta = 0.0f;
  cublasLtMatmul(nullptr, d, &alpha, nullptr, a, nullptr, b, &beta, nullptr, c, nullptr, c, nullptr, nullptr, 0,
                 nullptr);
}

}  // namespace

int main() {
  cublasLtMatmulDesc_t linear = nullptr;
  cublasLtMatmulDescCreate(&linear, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
  const int32_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  const uint32_t bias_epilogue = CUBLASLT_EPILOGUE_BIAS;
  const int32_t unset_type = -1;
  const void* bias = &trans;  // any non-null address: the shim records that a bias was set, never reads it
  set(linear, CUBLASLT_MATMUL_DESC_TRANSA, trans);
  set(linear, CUBLASLT_MATMUL_DESC_TRANSB, no_trans);
  set(linear, CUBLASLT_MATMUL_DESC_EPILOGUE, bias_epilogue);
  set(linear, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  set(linear, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, unset_type);
  set(linear, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, unset_type);
  // x[64×128] · W[256×128]ᵀ: D (256×64) = op_T(W as 128×256) · (x as 128×64).
  call(linear, layout(CUDA_R_32F, 128, 256), layout(CUDA_R_32F, 128, 64), layout(CUDA_R_32F, 256, 64));
  call(linear, layout(CUDA_R_32F, 128, 256), layout(CUDA_R_32F, 128, 64), layout(CUDA_R_32F, 256, 64));

  cublasLtMatmulDesc_t bf16 = nullptr;
  cublasLtMatmulDescCreate(&bf16, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const uint32_t plain = CUBLASLT_EPILOGUE_DEFAULT;
  set(bf16, CUBLASLT_MATMUL_DESC_EPILOGUE, plain);
  set(bf16, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, unset_type);
  set(bf16, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, unset_type);
  call(bf16, layout(CUDA_R_16BF, 64, 64), layout(CUDA_R_16BF, 64, 64), layout(CUDA_R_16BF, 64, 64));

  // The forward of a GELU layer that keeps its pre-activation for the backward (GELU_AUX_BIAS, aux ld 256): the one
  // epilogue family whose aux attributes the shim reads.
  cublasLtMatmulDesc_t gelu_aux = nullptr;
  cublasLtMatmulDescCreate(&gelu_aux, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const uint32_t gelu_aux_bias = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  const int64_t aux_ld = 256;
  const int32_t fp32 = CUDA_R_32F;
  const void* aux = &aux_ld;  // any non-null address, as for the bias
  set(gelu_aux, CUBLASLT_MATMUL_DESC_TRANSA, trans);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_TRANSB, no_trans);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_EPILOGUE, gelu_aux_bias);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, unset_type);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld);
  set(gelu_aux, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, fp32);
  call(gelu_aux, layout(CUDA_R_32F, 128, 256), layout(CUDA_R_32F, 128, 64), layout(CUDA_R_32F, 256, 64));
  std::printf("fake cuBLASLt saw %d calls\n", fake_cublaslt_matmul_calls());
  return 0;
}
