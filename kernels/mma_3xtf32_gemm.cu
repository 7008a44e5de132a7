// 3xtf32 instantiations of the tensor-core family (kernels/mma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/mma_gemm.cuh"

namespace gemmtune::kernels {

std::vector<CompiledVariant> mma_3xtf32_variants() { return compile_mma_variants</*kSplit3x=*/true>(MmaTiles{}); }

}  // namespace gemmtune::kernels
