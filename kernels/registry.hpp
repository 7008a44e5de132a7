// The one list of our kernel variants that the tuner enumerates, the plan prints and the runtime picks from.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/compiled_variant.hpp"
#include "kernels/tile_config.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

enum class Family { SimtFp32, MmaTf32, Mma3xTf32, WgmmaTf32, Wgmma3xTf32, Skinny, SkinnyMma, SkinnyStream };

const char* to_string(Family f);
// The decode-sized families (m ≤ 64, NN): their variants name the mode they serve and split k per problem.
bool is_skinny(Family f);

struct KernelVariant {
  std::string name;  // stable, e.g. "tf32_128x128x32_w64x64_s3" or "wgmma_tf32_256x128x32_s4"; the db stores it
  Family family;
  TileConfig tile;
  MathMode mode;
  // Every variant takes any alignment: 16-byte loads where an operand's leading dimension and base allow them,
  // narrower loads elsewhere; so this is 1 for all of them today.
  int alignment_floats;
  // Blocks that share each output tile's k (kernels/split_k.cuh); 1 for an unsplit variant. A split variant has its
  // unsplit twin's tile and launcher (which runs the tile's split instantiation), and a "_split<slices>" suffix.
  // kSlicesPerProblem: the family picks the count for each problem (slices_fn; see slices_for).
  int slices;
  // A "_staged" twin of a wgmma variant (kernels/operand_staging.hpp): where an operand's leading dimension is not a
  // multiple of 4 floats, the TMA copy engine cannot address it and the unstaged variant falls back to its cp.async
  // pipeline (on the H200, 1477x3072x690 tf32 ran 77 us against 37 at k = 692), so the staged one first copies that
  // operand into scratch with a 16-byte row stride and runs the TMA pipeline. It also copies an A stored k×m (TN, TT)
  // into m rows of k, which only then can wgmma read. It runs only such problems: elsewhere its unstaged twin is the
  // same kernel without the copy.
  bool staged;
  LaunchFn launch_fn;
  FamilyLimits limits;
  SlicesFn slices_fn = nullptr;  // set exactly when slices == kSlicesPerProblem
  // A "_streamk" variant (kernels/stream_k.cuh): one block per SM; the tiles left after the whole waves are split by k
  // (each one's bulk on a block of its own, the tails shared by the other blocks), and the shares of a tile added up
  // in scratch (fewer than 2 × kStreamKMaxBlocks partial slots, a ticket per tile left). For problems whose tiles
  // quantize badly against the SMs; it runs only those it streams, with rows the copy engine can read and store
  // (stream_k_unsupported_reason).
  bool stream_k = false;
  // A "_staged_b" twin of a staged variant (kernels/staged_b.hpp): it copies B too where the copy engine would read B
  // by class of rows, and runs only such problems (elsewhere its "_staged" twin makes the same copies). staged is set
  // as well: it copies what a staged variant copies.
  bool stages_b = false;
  // The tile's own device check (CompiledVariant::fits_device), asked after the family's limits.
  DeviceCheck fits_device = nullptr;

  static constexpr int kSlicesPerProblem = 0;
  // How many blocks share each output tile's k when this variant runs p.
  int slices_for(const GemmProblem& p) const { return slices_fn ? slices_fn(p) : slices; }
  // Whether a tile's slices are the blocks of one cluster (at most tile.cluster of them), which add up in distributed
  // shared memory with no scratch (the skinny "_c8" and "_c16" tiles, kernels/cluster_split_k.cuh ClusterLeaderSum).
  bool sums_slices_in_cluster() const { return slices_fn && tile.cluster > 1; }

  // Empty when it can run p on the current device; otherwise why not (mode mismatch, pass != Forward, invalid shape,
  // the family's layout or device limits).
  std::string unsupported_reason(const GemmProblem& p) const;
  // Empty when the current device can run this variant at all; otherwise why not. Families that need no particular
  // GPU answer empty even on a machine without one.
  std::string device_unsupported_reason() const;
  // Split-k (or Stream-K) scratch a launch of p needs (LaunchScratch); both 0 where p runs unsplit. Reserved for a
  // wgmma split that sums in its cluster too (kernels/cluster_split_k.cuh, no scratch): an operand base that is not
  // 16-byte aligned, known only at launch, sends it to the cp.async pipeline, which sums through these.
  std::size_t split_k_partial_floats(const GemmProblem& p) const;
  std::size_t split_k_tickets(const GemmProblem& p) const;
  // The staged copies of p's operands (0 unless staged; B's as well for stages_b), and where they start in a launch's
  // scratch: after the partials, 256-byte aligned as the copy engine wants its bases.
  std::size_t staging_floats(const GemmProblem& p) const;
  static std::size_t staging_offset(std::size_t partial_floats);
  // All the scratch a launch of p needs, partials and copies: what a lent workspace must hold (LaunchScratchBuffer).
  std::size_t scratch_floats(const GemmProblem& p) const;
  // Asynchronous on s; no synchronization and no allocation (graph-capturable). p must be supported; a split or
  // staged variant needs scratch of the sizes above (kernels/launch_scratch.hpp owns one), used by one launch at a
  // time.
  void launch(const GemmProblem& p, const GemmOperands& x, const LaunchScratch& scratch, cudaStream_t s) const;
  // The same at a slice count the caller worked out once, slices_for(p), as a launcher does per problem: a family's
  // per-problem rule is a loop over counts, host time that a runtime call should not pay every time. A count this
  // variant cannot run (not its fixed one; beyond 1 … p's k tiles for a per-problem one) is an InputError.
  void launch(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
              cudaStream_t s) const;

 private:
  // The split-k scratch of p at a given slice count.
  std::size_t tickets_at(const GemmProblem& p, int split) const;
  std::size_t partial_floats_at(const GemmProblem& p, int split) const;
};

// Why Stream-K variant v does not run p, or empty: the copy engine cannot read or store p (k or n not a multiple of 4,
// a transposed Y, dropout), or p's leftover tiles would not be streamed on kStreamKMaxBlocks SMs
// (StreamKSchedule::streamed_blocks_for), where v would launch its tile's own kernel, which that tile's variant times.
std::string stream_k_unsupported_reason(const KernelVariant& v, const GemmProblem& p);

const std::vector<KernelVariant>& kernel_registry();
const KernelVariant* find_kernel_variant(const std::string& name);  // nullptr if unknown
// v, or its staged or unstaged twin: the one of the pair that p's alignment and layout ask for (staged exactly where an
// operand needs the copy); for a Stream-K variant that would not stream p, its tile's own variant (or that one's
// staged twin). What carries a variant chosen at one shape over to another, whose alignment may differ.
const KernelVariant& alignment_twin(const KernelVariant& v, const GemmProblem& p);

}  // namespace gemmtune::kernels
