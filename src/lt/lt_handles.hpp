// RAII owners of the cuBLASLt handle and descriptors: each destroys what it created, exactly once.
#pragma once

#include <cstdint>
#include <utility>

#include "lt/lt_call.hpp"

namespace gemmtune {

// Owns a cuBLASLt object created by Create(&h, args...) and released by Destroy(h).
template <typename Handle, cublasStatus_t (*Destroy)(Handle)>
class LtObject {
 public:
  LtObject() = default;
  explicit LtObject(Handle h) : h_(h) {}
  ~LtObject() {
    if (h_) Destroy(h_);
  }
  LtObject(const LtObject&) = delete;
  LtObject& operator=(const LtObject&) = delete;
  LtObject(LtObject&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  LtObject& operator=(LtObject&& o) noexcept {
    if (this != &o) {
      if (h_) Destroy(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Handle get() const { return h_; }

 private:
  Handle h_ = nullptr;
};

using LtHandle = LtObject<cublasLtHandle_t, cublasLtDestroy>;
using LtMatmulDesc = LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtMatrixLayout = LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference = LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

inline LtHandle make_lt_handle() {
  cublasLtHandle_t h = nullptr;
  GT_LT_CALL(cublasLtCreate(&h));
  return LtHandle(h);
}

// A column-major rows×cols fp32 matrix with leading dimension ld.
inline LtMatrixLayout make_lt_layout(std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  GT_LT_CALL(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, ld));
  return LtMatrixLayout(l);
}

}  // namespace gemmtune
