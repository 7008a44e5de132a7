// GradEpilogue: the backward's one elementwise pass. gZ = gY ⊙ act'(Z) ⊙ keep/(1−p) (the forward's dropout mask,
// regenerated from its seed and offset, or from the offset in device memory the forward read), and gBias = Σ_rows gZ, in ONE kernel that reads gY and Z once.
//
// Every warp reads contiguous memory (16-byte accesses where the layout and pointers allow), several loads in flight
// per thread: the pass runs at DRAM bandwidth, reading gY and Z once and writing gZ once.
// The bias gradient is deterministic: no floating-point atomics. The grid is (column strips) × (row chunks);
// each block writes its strip's partial sums for its chunk, and the last block to finish a strip (an integer
// ticket per strip) adds that strip's partials in a fixed order. Same inputs, same bits, on every call and every graph
// replay; the last block resets its ticket, so the pass needs no memset between calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "problem/gemm_problem.hpp"

namespace gemmtune::runtime {

class GradEpilogue {
 public:
  // For forward problem p. Its scratch is the caller's, per stream, since two streams may run the pass at once.
  GradEpilogue(const GemmProblem& p, int sm_count);

  // False when gZ is gY itself (no activation, no dropout): the GEMMs then read gY and no gZ is written.
  bool writes_gz() const { return writes_gz_; }

  // Computes gZ into gz (when writes_gz()) and gBias into gbias (when non-null; the problem must have a bias).
  // z may be null when the activation is none. The dropout offset is *offset_ptr when that is non-null (read when the
  // kernel runs), else offset. A bias gradient needs partial_floats() floats and ticket_count() tickets, zero before
  // a stream's first pass (the last block of a strip resets its ticket). Enqueues nothing when there is nothing to do.
  void launch(const float* gy, const float* z, float* gz, float* gbias, std::uint64_t seed, std::uint64_t offset,
              const std::uint64_t* offset_ptr, float* partials, unsigned* tickets, cudaStream_t s) const;

  // The bias gradient's scratch: row chunks × n partial sums and one ticket per column strip (0 without a bias).
  std::size_t partial_floats() const { return partial_floats_; }
  std::size_t ticket_count() const { return ticket_count_; }

 private:
  GemmProblem problem_;
  bool writes_gz_ = false;
  bool vectorizable_ = false;  // the stored rows' length allows 16-byte accesses
  std::int64_t rows_per_chunk_ = 0;
  unsigned row_chunks_ = 0;
  std::size_t partial_floats_ = 0;
  std::size_t ticket_count_ = 0;
};

}  // namespace gemmtune::runtime
