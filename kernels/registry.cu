#include "kernels/registry.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "kernels/operand_staging.hpp"
#include "kernels/staged_b.hpp"
#include "kernels/stream_k.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {
namespace {

const char* name_prefix(Family f) {
  switch (f) {
    case Family::SimtFp32: return "fp32";
    case Family::MmaTf32: return "tf32";
    case Family::Mma3xTf32: return "3xtf32";
    case Family::WgmmaTf32: return "wgmma_tf32";
    case Family::Wgmma3xTf32: return "wgmma_3xtf32";
    case Family::Skinny: return "skinny";
    case Family::SkinnyMma: return "skinny_mma";
    case Family::SkinnyStream: return "skinny_stream";
  }
  return "?";
}

// "tf32_128x128x32_w64x64_s3"; SIMT variants add their thread tile: "fp32_128x128x8_w32x64_t8x8_s2". wgmma variants
// leave out the warp tile, which the instruction fixes (16 columns of Y × the block's rows):
// "wgmma_tf32_256x128x32_s4", and name their cluster where blocks run in clusters: "wgmma_tf32_256x128x32_s4_c2".
// Skinny variants name the problems' mode they serve, since one FFMA kernel serves two: "skinny_tf32_16x128x64_s4",
// "skinny_mma_tf32_16x128x32_s4", "skinny_stream_fp32_8x128x64_s2" (its stages: the 4-row groups a warp loads ahead),
// and "_wholek" where the tile never splits k: "skinny_tf32_8x32x128_s4_wholek".
std::string variant_name(Family f, MathMode mode, const TileConfig& t) {
  std::string prefix = name_prefix(f);
  if (is_skinny(f)) prefix += std::string("_") + gemmtune::to_string(mode);
  std::string name = prefix + "_" + std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk);
  const bool warp_tile_named = f == Family::SimtFp32 || f == Family::MmaTf32 || f == Family::Mma3xTf32;
  if (warp_tile_named) name += "_w" + std::to_string(t.wm) + "x" + std::to_string(t.wn);
  if (t.tm > 0) name += "_t" + std::to_string(t.tm) + "x" + std::to_string(t.tn);
  name += "_s" + std::to_string(t.stages);
  if (t.whole_k) name += "_wholek";
  return t.cluster > 1 ? name + "_c" + std::to_string(t.cluster) : name;
}

// Slice counts of the split-k variants, for the tiles whose family compiled a split kernel (kernels/split_k.cuh). The
// count is a launch argument, not a template one, so more counts cost sweep time only: wgmma's split tiles take 3 and
// 5 too, which fill 132 SMs where n has 40-44 or 24-26 tiles (3 × 44, 5 × 26 blocks).
const std::vector<int> kSplitSlices = {2, 4, 8};
const std::vector<int> kWgmmaSplitSlices = {2, 3, 4, 5, 8};

// A staged variant copies at most 256 MiB per call (at ~3 TB/s, ~170 us of copy), a bound on its scratch too.
constexpr std::size_t kMaxStagingFloats = std::size_t{64} << 20;

// What names a staged twin: "<its unstaged twin's name>_staged" (or "_staged_b", which copies B too), and a Stream-K
// variant: "<its tile's name>_streamk".
const std::string kStagedSuffix = "_staged";
const std::string kStagedBSuffix = "_staged_b";
const std::string kStreamKSuffix = "_streamk";

// Output tiles of a tile shape over p's Y: the tiles a Stream-K launch shares out (split-k's tickets count the
// launcher's blocks instead, tickets_at).
std::int64_t output_tiles(const GemmProblem& p, const TileConfig& tile) {
  return ((p.m + tile.bm - 1) / tile.bm) * ((p.n + tile.bn - 1) / tile.bn);
}

// Whether the TMA kernel reads p's B by class of rows (kernels/row_classes.hpp), by p's leading dimensions alone: null
// pointers count as aligned, as everything the registry decides before a launch has its operands.
bool b_by_class(const GemmProblem& p) { return b_read_by_class(operand_b(p, GemmOperands{})); }

// Clustered variants of a family that runs anywhere else (SIMT's k split over a cluster) need thread-block clusters.
std::string cluster_device_limits() {
  int device = 0, clusters = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device) != cudaSuccess) {
    const cudaError_t error = cudaGetLastError();  // clears it: asking is not a failure of later CUDA calls
    return std::string("thread-block clusters need a compute capability 9.0 GPU and none is usable: ") +
           cudaGetErrorString(error);
  }
  return clusters ? "" : "thread-block clusters need compute capability 9.0 or newer, which this GPU is not";
}

// Staged twins (KernelVariant::staged, stages_b) only where the TMA pipeline is what an unaligned operand misses:
// wgmma.
enum class Staging { None, Staged, StagedB };

void add_family(std::vector<KernelVariant>& registry, Family family, MathMode mode,
                const std::vector<CompiledVariant>& compiled, FamilyLimits limits = {}) {
  const bool wgmma = family == Family::WgmmaTf32 || family == Family::Wgmma3xTf32;
  for (const Staging staging : {Staging::None, Staging::Staged, Staging::StagedB}) {
    if (staging != Staging::None && !wgmma) break;
    const bool staged = staging != Staging::None;
    const std::string suffix = staging == Staging::StagedB ? kStagedBSuffix : staged ? kStagedSuffix : "";
    for (const CompiledVariant& c : compiled) {
      const auto add = [&](KernelVariant v) {
        v.stages_b = staging == Staging::StagedB;
        v.fits_device = c.fits_device;
        registry.push_back(std::move(v));
      };
      const std::string name = variant_name(family, mode, c.tile);
      FamilyLimits variant_limits = limits;
      if (c.tile.cluster > 1 && !variant_limits.device) variant_limits.device = &cluster_device_limits;
      const int slices = c.slices_for ? KernelVariant::kSlicesPerProblem : 1;
      add(KernelVariant{name + suffix, family, c.tile, mode, 1, slices, staged, c.launch, variant_limits,
                        c.slices_for});
      // No staged twin: what Stream-K needs aligned, a copy would not make so (Y).
      if (c.stream_k_launch && !staged)
        add(KernelVariant{name + kStreamKSuffix, family, c.tile, mode, 1, 1, false, c.stream_k_launch,
                          variant_limits, nullptr, true});
      if (!c.split_k) continue;
      for (int slices : wgmma ? kWgmmaSplitSlices : kSplitSlices)
        add(KernelVariant{name + "_split" + std::to_string(slices) + suffix, family, c.tile, mode, 1, slices, staged,
                          c.launch, limits});
    }
  }
}

std::vector<KernelVariant> build_registry() {
  std::vector<KernelVariant> registry;
  add_family(registry, Family::SimtFp32, MathMode::Fp32, simt_fp32_variants());
  add_family(registry, Family::MmaTf32, MathMode::Tf32, mma_tf32_variants());
  add_family(registry, Family::Mma3xTf32, MathMode::Tf32x3, mma_3xtf32_variants());
  // FFMA is exact fp32 arithmetic, which a tf32 problem allows (tf32 permits rounding the operands, it does not ask
  // for it); where m is a decode batch the B stream, not the math, sets the time.
  add_family(registry, Family::Skinny, MathMode::Fp32, skinny_variants(), skinny_limits());
  add_family(registry, Family::Skinny, MathMode::Tf32, skinny_variants(), skinny_limits());
  add_family(registry, Family::SkinnyMma, MathMode::Tf32, skinny_mma_variants(), skinny_limits());
  add_family(registry, Family::SkinnyMma, MathMode::Tf32x3, skinny_mma_3xtf32_variants(), skinny_limits());
  add_family(registry, Family::SkinnyStream, MathMode::Fp32, skinny_stream_variants(), skinny_limits());
  add_family(registry, Family::SkinnyStream, MathMode::Tf32, skinny_stream_variants(), skinny_limits());
#if defined(GEMMTUNE_HAVE_WGMMA)
  add_family(registry, Family::WgmmaTf32, MathMode::Tf32, wgmma_tf32_variants(), wgmma_limits());
  add_family(registry, Family::Wgmma3xTf32, MathMode::Tf32x3, wgmma_3xtf32_variants(), wgmma_limits());
#endif
  return registry;
}

}  // namespace

// The copy engine needs rows of a multiple of 4 floats (A's k, B's n or k) and has no place for a dropout mask.
std::string stream_k_unsupported_reason(const KernelVariant& v, const GemmProblem& p) {
  if (p.k % 4 != 0 || p.n % 4 != 0 || p.out != OutputLayout::RowMajor || p.epi.dropout())
    return "Stream-K stores Y and reads A and B through the copy engine: it needs k and n multiples of 4, a row-major "
           "Y and no dropout (the tile's other variants run the rest)";
  const std::int64_t tiles = output_tiles(p, v.tile);
  const auto k_tiles = static_cast<int>((p.k + v.tile.bk - 1) / v.tile.bk);
  if (StreamKSchedule::streamed_blocks_for(tiles, k_tiles, kStreamKMaxBlocks) <= tiles % kStreamKMaxBlocks)
    return "Stream-K would not stream " + std::to_string(tiles) + " tiles of " + std::to_string(k_tiles) +
           " k tiles on " + std::to_string(kStreamKMaxBlocks) + " SMs (no block count finishes sooner than whole "
           "tiles): the tile's own variant runs the same kernel";
  return "";
}

const char* to_string(Family f) {
  switch (f) {
    case Family::SimtFp32: return "simt_fp32";
    case Family::MmaTf32: return "mma_tf32";
    case Family::Mma3xTf32: return "mma_3xtf32";
    case Family::WgmmaTf32: return "wgmma_tf32";
    case Family::Wgmma3xTf32: return "wgmma_3xtf32";
    case Family::Skinny: return "skinny";
    case Family::SkinnyMma: return "skinny_mma";
    case Family::SkinnyStream: return "skinny_stream";
  }
  return "?";
}

bool is_skinny(Family f) { return f == Family::Skinny || f == Family::SkinnyMma || f == Family::SkinnyStream; }

std::string KernelVariant::unsupported_reason(const GemmProblem& p) const {
  if (p.mode != mode)
    return std::string("variant computes in ") + gemmtune::to_string(mode) + ", the problem asks for " +
           gemmtune::to_string(p.mode);
  if (p.pass != Pass::Forward)
    return std::string("runs forward GEMMs only; a ") + gemmtune::to_string(p.pass) +
           " pass runs as its own forward GEMM (pass_gemm)";
  try {
    p.validate();
  } catch (const InputError& e) {
    return e.what();
  }
  // A staged variant's kernel reads its copies: A K-major whatever the layout (kernels/operand_staging.hpp).
  GemmProblem as_read = p;
  if (staged) as_read.trans_a = false;
  if (limits.problem)
    if (std::string why = limits.problem(as_read); !why.empty()) return why;
  if (stream_k)
    if (std::string why = stream_k_unsupported_reason(*this, p); !why.empty()) return why;
  if (const std::size_t staging = staging_floats(p); staged && staging == 0)
    return "nothing to copy: A's leading dimension is a multiple of 4 floats and A is stored m×k already, and B's is "
           "too or B is read in place by class of rows: the unstaged twin runs the same kernel without the copy";
  else if (stages_b && !b_by_class(p))
    return "B is not read by class of rows here (its leading dimension is a multiple of 4 floats, or it has too few "
           "rows): the _staged twin makes the same copies";
  else if (staging > kMaxStagingFloats)
    return "staging would copy " + std::to_string(staging * sizeof(float) >> 20) + " MiB, more than " +
           std::to_string(kMaxStagingFloats * sizeof(float) >> 20);
  return device_unsupported_reason();
}

std::string KernelVariant::device_unsupported_reason() const {
  if (limits.device)
    if (std::string why = limits.device(); !why.empty()) return why;
  return fits_device ? fits_device() : "";
}

std::size_t KernelVariant::tickets_at(const GemmProblem& p, int split) const {
  if (stream_k) return kStreamKSlots;
  if (split == 1 || sums_slices_in_cluster()) return 0;
  // A ticket per block the launcher starts: whole clusters along n (wgmma's pairs share A), so where the tiles along n
  // do not divide into them the last cluster's blocks past n take tickets too.
  const unsigned clusters = grouped_grid_size(tile.bm, tile.cluster * tile.bn, p.m, p.n);
  return std::size_t{clusters} * static_cast<std::size_t>(tile.cluster);
}

std::size_t KernelVariant::partial_floats_at(const GemmProblem& p, int split) const {
  if (stream_k) return std::size_t{kStreamKSlots} * static_cast<std::size_t>(tile.bm * tile.bn);
  return tickets_at(p, split) * static_cast<std::size_t>(split) * static_cast<std::size_t>(tile.bm * tile.bn);
}

std::size_t KernelVariant::split_k_tickets(const GemmProblem& p) const { return tickets_at(p, slices_for(p)); }

std::size_t KernelVariant::split_k_partial_floats(const GemmProblem& p) const {
  return partial_floats_at(p, slices_for(p));
}

std::size_t KernelVariant::staging_floats(const GemmProblem& p) const {
  if (!staged) return 0;
  // Null pointers count as aligned: what the problem's leading dimensions alone require.
  const GemmOperands none;
  const OperandView a = operand_a(p, none), b = operand_b(p, none);
  return stages_b ? staged_b_copies_floats(a, b) : staged_copies_floats(a, b);
}

std::size_t KernelVariant::staging_offset(std::size_t partial_floats) { return staging_boundary(partial_floats); }

std::size_t KernelVariant::scratch_floats(const GemmProblem& p) const {
  const std::size_t staging = staging_floats(p), partials = split_k_partial_floats(p);
  return staging > 0 ? staging_offset(partials) + staging : partials;
}

void KernelVariant::launch(const GemmProblem& p, const GemmOperands& x, const LaunchScratch& scratch,
                           cudaStream_t s) const {
  launch(p, x, slices_for(p), scratch, s);
}

void KernelVariant::launch(const GemmProblem& p, const GemmOperands& x, int split, const LaunchScratch& scratch,
                           cudaStream_t s) const {
  if (!x.A || !x.B || !x.Y || (p.epi.bias && !x.bias) || (p.epi.save_z && !x.Z))
    throw InputError("kernel " + name + ": missing operand pointer for " + p.key());
  const std::int64_t k_tiles = (p.k + tile.bk - 1) / tile.bk;
  const std::int64_t most = sums_slices_in_cluster() ? std::min<std::int64_t>(k_tiles, tile.cluster) : k_tiles;
  if (slices_fn ? split < 1 || split > most : split != slices)
    throw InputError("kernel " + name + " cannot split " + p.key() + " into " + std::to_string(split) + " slices");
  if (((split > 1 && !sums_slices_in_cluster()) || stream_k) &&
      (!scratch.partials || !scratch.tickets || scratch.partial_floats < partial_floats_at(p, split) ||
       scratch.ticket_count < tickets_at(p, split)))
    throw InputError("kernel " + name + ": split-k scratch too small for " + p.key() + " (needs " +
                     std::to_string(partial_floats_at(p, split)) + " floats and " +
                     std::to_string(tickets_at(p, split)) + " tickets)");
  if (staged && (!scratch.staging || scratch.staging_floats < staging_floats(p)))
    throw InputError("kernel " + name + ": staging scratch too small for " + p.key() + " (needs " +
                     std::to_string(staging_floats(p)) + " floats)");
  launch_fn(p, x, split, scratch, s);
}

const std::vector<KernelVariant>& kernel_registry() {
  static const std::vector<KernelVariant> registry = build_registry();
  return registry;
}

const KernelVariant& alignment_twin(const KernelVariant& v, const GemmProblem& p) {
  if (v.stream_k) {  // where it does not stream p, the tile's own variant (staged as p asks)
    if (stream_k_unsupported_reason(v, p).empty()) return v;
    const KernelVariant* tile = find_kernel_variant(v.name.substr(0, v.name.size() - kStreamKSuffix.size()));
    return tile ? alignment_twin(*tile, p) : v;
  }
  // A _staged_b variant stays itself where B is read by class, the copy it was chosen for; elsewhere it is what its
  // _staged twin is.
  if (v.stages_b && b_by_class(p)) return v;
  const std::size_t suffix = v.stages_b ? kStagedBSuffix.size() : v.staged ? kStagedSuffix.size() : 0;
  const std::string unstaged = v.name.substr(0, v.name.size() - suffix);
  const KernelVariant* staged = find_kernel_variant(unstaged + kStagedSuffix);
  if (!staged) return v;  // a family without staging
  const KernelVariant* plain = find_kernel_variant(unstaged);
  return staged->staging_floats(p) > 0 ? *staged : *plain;
}

const KernelVariant* find_kernel_variant(const std::string& name) {
  const auto& registry = kernel_registry();
  const auto it =
      std::find_if(registry.begin(), registry.end(), [&](const KernelVariant& v) { return v.name == name; });
  return it == registry.end() ? nullptr : &*it;
}

}  // namespace gemmtune::kernels
