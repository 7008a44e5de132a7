// tf32 instantiations of the tensor-core family (kernels/mma_gemm.cuh); a .cu of its own so it compiles in parallel.
#include "kernels/mma_gemm.cuh"

namespace gemmtune::kernels {

std::vector<CompiledVariant> mma_tf32_variants() { return compile_mma_variants</*kSplit3x=*/false>(MmaTiles{}); }

}  // namespace gemmtune::kernels
