// A cublasLtMatmul call as the --gemms shim read it (matmul descriptor and matrix layouts, raw cuBLASLt values),
// and the gemmtune problem it is, where it is one.
//
// cuBLASLt is column-major: D (rows × cols) = op(A)·op(B). gemmtune's problems are row-major, and a row-major
// program (PyTorch, our own lt candidates) runs Y = A·B as Yᵀ = Bᵀ·Aᵀ (README, "Row-major on cuBLASLt"). So a call
// with a column-order D is read back as the row-major Y = Dᵀ: m = D's cols, n = D's rows, gemmtune's A is op(B)ᵀ
// and its B is op(A)ᵀ, and cuBLASLt's per-row bias is gemmtune's per-column bias. A row-order D is Y itself; with a
// bias (per row of D) it is read as the transposed store of Dᵀ instead, the only way gemmtune has a per-row bias.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "trace/call_problem.hpp"

namespace gemmtune {

// cuBLASLt's enum values, kept as plain integers so a trace file stays readable without cuBLASLt's headers.
struct LtMatrix {
  int type = 0;     // cudaDataType (CUDA_R_32F = 0)
  int order = 0;    // cublasLtOrder_t (COL = 0, ROW = 1)
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  int batch = 1;
  std::int64_t stride = 0;
};

struct LtCallDesc {
  int compute = 0;        // cublasComputeType_t
  int scale = 0;          // cudaDataType of alpha/beta
  int pointer_mode = 0;   // cublasLtPointerMode_t
  int transa = 0, transb = 0;  // cublasOperation_t
  std::uint32_t epilogue = 1;  // cublasLtEpilogue_t (DEFAULT = 1)
  bool bias = false;      // a bias pointer was set
  int bias_type = -1;     // -1: unset (D's type)
  bool aux = false;       // an epilogue aux pointer was set
  std::int64_t aux_ld = 0;
  int aux_type = -1;
  std::optional<double> alpha, beta;  // host values; absent where they live on the device
  std::optional<LtMatrix> a, b, c, d;  // absent where the shim could not read the layout

  bool operator==(const LtCallDesc& o) const;
};

// The gemmtune problem of one call: a pure function, tested for every layout and epilogue.
GemmCallProblem lt_call_problem(const LtCallDesc& call);

// Readable names of cuBLAS's and cuBLASLt's values, for reasons and tables.
std::string lt_data_type_name(int type);
std::string lt_epilogue_name(std::uint32_t epilogue);
std::string compute_type_name(int compute);  // cublasComputeType_t: "32F_FAST_TF32"

void to_json(nlohmann::json& j, const LtCallDesc& d);
// Throws InputError naming the field when j is not a call description.
void from_json(const nlohmann::json& j, LtCallDesc& d);

}  // namespace gemmtune
