// gemmtune::Runtime: runs each GEMM of a program the fastest verified way the tuner found on this GPU.
//
//   gemmtune::Runtime rt("gemmtune.db");            // this GPU's algo cache, read once
//   rt.forward(problem, A, B, bias, Y, Z, stream);   // Y = act(op(A)·op(B) + bias), Z kept for the backward
//   rt.backward(problem, A, B, Z, gY, gA, gB, gBias, stream);
//   std::cout << rt.explain(problem);                // which candidate, and why
//
// Selection, once per distinct problem (its first call, or prepare()): the exact problem's cache entry; else a
// nearby tuned shape of the same kind (same pass, layout, output layout, epilogue and mode; in log-space of m, n, k,
// within RuntimeOptions::max_nearest_distance) where the evidence says its choice transfers (runtime/selection.hpp:
// our kernel variants only, a stored margin over heuristic-first of min_transfer_margin in every measured
// condition, and no tuned shape in range disagreeing); else cuBLASLt's heuristic default, exactly the algo and
// fused epilogue a direct cuBLASLt caller gets (our best-guess kernel variant for 3xtf32, which cuBLASLt lacks). Whatever the cache names is re-checked first (cublasLtMatmulAlgoCheck
// for a cuBLASLt algo, the variant's own constraints for ours): an entry this build or this cuBLASLt cannot run is
// skipped, and explain() says so.
//
// Hot path: after its first call a problem's call is two hash lookups and the launches. It never touches SQLite and
// never synchronizes; it allocates only at a stream's first call (that stream's scratch, below). So a forward+backward
// step can be captured in a CUDA graph and replayed once every problem in it has been called (or prepared) outside the
// capture. The first call of a problem during a capture is refused with an InputError that says so, since resolving
// it times candidates.
//
// Tune what the program uses: every problem without a usable exact entry is remembered (in memory) and written to
// the db's misses table by flush() or the destructor; `gemmtune sweep --from-misses --db FILE` then tunes exactly
// those, and the next Runtime finds them.
//
// Streams and threads: one Runtime is correct on any stream and from any host thread, with nothing asked of the
// caller. Each stream it is called on gets scratch of its own (the cuBLASLt workspace, where split-k partials and
// staged operand copies go too, split-k tickets, a backward's gZ and bias-gradient partials, the small backward's side
// stream and workspace), made at that stream's first call and kept until the Runtime goes: calls on two streams may
// run at once without sharing a byte of scratch, and calls on one stream run in order. A graph capture gets scratch of
// its own as well, made during the capture, so graphs replay at the same time as each other and as eager calls; only
// two overlapping replays of the same graph share scratch (replay one graph on one stream, as graphs usually are).
// Per stream that is workspace_bytes (64 MiB), another workspace_bytes once a small backward (m·n·k ≤ 512³) runs its
// two GEMMs side by side there, and per backward problem run there m·n floats of gZ (with an activation or dropout)
// plus the bias gradient's partial sums; per capture, each call's workspace at the size its algo needs (often none)
// instead of workspace_bytes. stream_scratch() says how much is held. Host threads take turns inside the Runtime (one
// lock around each call's enqueue, microseconds); their GPU work still overlaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

struct RuntimeOptions {
  // The cuBLASLt workspace of each stream, shared by every plan; an algo that needs more is not used.
  // 64 MiB is what the tuner's profiles allow, so every cached algo fits.
  std::size_t workspace_bytes = std::size_t{64} << 20;
  // The caller's device memory (workspace_bytes of it) to use as the workspace of the first stream the Runtime is
  // called on instead of allocating one, as cublasSetWorkspace does: a program that already keeps a cuBLASLt workspace
  // shares it (other streams get their own). It must outlive the Runtime and be used by nothing else while the
  // runtime's work is queued. Where a workspace lies matters to some cuBLASLt
  // algos (split-k partials, clustered kernels' flags: up to 6% on the H200 for the same algo in two buffers), so a
  // side-by-side comparison with raw cuBLASLt hands both sides the same buffer. Null: the runtime allocates its own.
  void* workspace = nullptr;
  // How far (Euclidean, in ln m, ln n, ln k) a tuned shape may be from the asked one to stand in for it.
  // ln 4: one dimension 4× off, or all three about 2.2× off. Beyond that, the heuristic knows more than a
  // tuning result of a very different shape.
  double max_nearest_distance = 1.3862943611198906;
  // What a tuned shape's stored margin over cuBLASLt's heuristic-first (as a program pays it: stream and graph,
  // warm and cold) must reach in every condition for its choice to stand in for an untuned shape. The margin was
  // measured at the tuned shape, not this one: 10% leaves room for the shapes to differ.
  double min_transfer_margin = 1.10;
  // How many tuned shapes within max_nearest_distance must have chosen the same own variant, each by
  // min_transfer_margin, before it stands in (and none in range may have chosen anything else). On the H200's
  // held-out shapes (scripts/bench_heldout.sh), 5 of 8 stand-ins vouched for by one shape, or by two that disagreed,
  // ran 7-27% slower than heuristic-first.
  int min_agreeing_neighbours = 2;
  // Confirm each stand-in on first use: time it against cuBLASLt's heuristic-first on the real problem (on a stream, a
  // workspace and scratch operands of the trial's own, kept for the next untuned problem, its warm inputs the call's
  // own where they start on 256 bytes; at prepare() or the problem's first call, outside any capture) and keep it
  // only where it is faster by more than 1% in a stream with warm inputs, in a stream with cold ones, and replayed
  // from CUDA graphs with warm and with cold inputs (runtime/first_use_trial.hpp); explain() gives the times and what
  // the first use cost (docs/runtime-first-use.md).
  // With the trial as the guard, up to max_trial_candidates distinct own variants are tried: those the sweeps measured
  // fastest over heuristic-first at the kind's tuned shapes, weighted toward the nearest (runtime/variant_ranking.hpp),
  // then those tuned shapes chose (no x1.10, no agreement of the neighbours needed); and where the default is
  // cuBLASLt's fused epilogue (bias, relu, gelu), also the same heuristic's plain GEMM followed by our epilogue
  // kernel: the fused epilogue is often the slower way (runtime/default_candidate.hpp). The fastest winner runs. On
  // by default, as the held-out benchmark asks (scripts/bench_heldout.sh CONFIRM=both, H200, seeds 1-4): without it
  // the runtime ran heuristic-first at every untuned shape; with it tf32 rose by 0.05-0.07 and fp32 by 0.02-0.04 in
  // geomean in every condition. One trial per problem: a challenger stops at its first batch that is no faster than
  // heuristic-first's fastest, and the batches stop at 50 ms of GPU time; it holds a second 64 MiB workspace and
  // from 2x L2 up to 2x L2 + 128 MiB of scratch operands between first uses. Its choice may differ between runs where two
  // candidates are within noise. An exact entry that is one of the no-entry set (heuristic-first, its +epi or +bias
  // form, the heuristic at a framework's workspace, cuBLAS's own choice) is put to the same trial: the sweep's pick
  // among those held on its operands, not necessarily on the program's (docs/runtime-first-use.md). Off: the
  // evidence rules alone decide (no timing at first use), and the db's measurements of every own variant are not read.
  bool confirm_standins = true;
  // How many distinct own variants a first-use trial may time. The variant that wins an untuned shape is often one no
  // tuned shape chose, and often not among the 8 ranked first: on the H200's held-out seeds 9-12, where 12 was picked,
  // 12 instead of 8 lifted the untuned tf32 half from 1.09-1.13x to 1.14-1.17x heuristic-first in a stream with cold
  // inputs (168x4096x8192: 1.43x from the variant ranked 11th); on seeds 1, 2 and 5-8, from 1.112x to 1.127x. No
  // record fell below 0.98x. Fewer: a shorter first call (each challenger costs at least one pair of batches).
  // Of this count, a decode-sized problem (m ≤ 64) gives up to half to the skinny variants that run it where the db
  // measured none of them at the kind's shapes (runtime/selection.hpp), without a db as well.
  int max_trial_candidates = 12;
  // Run a small backward's two GEMMs (gA, gB; m·n·k up to 512³) side by side: gB on a stream of the runtime's,
  // forked from and joined back into the caller's stream (captured into a graph as two edges), with a second
  // workspace. Larger GEMMs each fill the GPU and run one after the other.
  bool concurrent_backward = true;
  // How many streams, and how many graph captures, may have scratch of their own (above): a call on one more throws
  // InputError instead of taking more memory. PyTorch's streams come from a pool of 32 per priority; a capture holds
  // only what its calls need, and a program may capture hundreds of graphs (one per batch size, say).
  int max_stream_scratch = 64;
  int max_capture_scratch = 4096;
  // The device memory all that scratch may hold together, in bytes (0: no cap; a lent workspace is not counted). A
  // call that would need more throws MemoryBudgetError (an InputError) before it allocates or enqueues anything, and
  // later calls that need no new scratch still run. `gemmtune apply --memory-budget` sets it.
  std::size_t max_scratch_bytes = 0;
  // Use cache entries that `sweep --fp32-equivalent` admitted: our 3xtf32 kernels for fp32 problems, each measured on
  // its problem to be within the fp32 bound and 2x cuBLASLt fp32's error. Off: such entries are passed over (the
  // nearest other entry or the default runs, as if they were absent) and explain() says why.
  bool fp32_equivalent = false;
  // Replay a forward call that repeats exactly (the same pointers, dropout state and stream) as a CUDA graph captured
  // at its second sight, instead of launching its kernels again (runtime/call_graphs.hpp): the H200 machine's host
  // spends 1.2-2.1 us on a replay where a cuBLASLt call's launch takes 6.1-6.4 us and a `+pad` candidate's three
  // launches 19-25 us. The GPU runs the same kernels. Calls inside the caller's own graph capture launch as before.
  bool replay_repeated_calls = true;
  // Where the one-line warnings go (cache entries of other devices, misses that could not be written);
  // null: std::cerr.
  std::ostream* warnings = nullptr;
};

// The backward's device pointers. Shapes and layouts come from the forward problem: gY and Z in Y's layout, gA in
// A's stored layout, gB in B's. A null gA, gB or gBias is not computed.
struct BackwardOperands {
  const float* A = nullptr;
  const float* B = nullptr;
  const float* Z = nullptr;   // the forward's pre-activation (problem.epi.save_z); required unless act is none
  const float* gY = nullptr;
  float* gA = nullptr;
  float* gB = nullptr;
  float* gBias = nullptr;     // length n; only with problem.epi.bias
  std::uint64_t seed = 0;     // the forward's dropout key and counter base, so the same mask is regenerated
  std::uint64_t offset = 0;
  // The forward's device-side counter base (GemmOperands::offset_ptr), read when the pass runs; null: `offset`.
  // Pass the pointer the forward got, and advance it only after the backward, so both see the same value.
  const std::uint64_t* offset_ptr = nullptr;
};

// The per-stream scratch a Runtime holds (Runtime::stream_scratch).
struct StreamScratchUse {
  std::size_t streams = 0;       // streams the Runtime has been called on
  std::size_t captures = 0;      // graph captures it has been called in
  std::size_t device_bytes = 0;  // their scratch's device memory, a lent workspace not counted
};

// The forward calls a Runtime replayed as CUDA graphs (RuntimeOptions::replay_repeated_calls; Runtime::call_graphs).
struct CallGraphUse {
  std::size_t graphs = 0;   // exact calls captured, over every problem
  std::size_t replays = 0;  // calls that ran as a replay
  // Calls with a graph held that were launched instead: another one- or two-kernel graph than the last, queued behind
  // work while the GPU was ahead, where a launch is free to the host and a replay is not to the GPU.
  std::size_t launches_ahead = 0;
};

// The db a Runtime, the CLI and Python use where none is named: $GEMMTUNE_DB where it is set, else
// $XDG_CACHE_HOME/gemmtune/gemmtune.db, else ~/.cache/gemmtune/gemmtune.db, the same from any working directory.
// Throws InputError where none of those variables is set.
std::string default_db_path();

class Runtime {
 public:
  // Loads the algo cache of GPU `device` from db_path. A missing file is not an error: every problem then runs
  // the heuristic default (explain() says so). A file that is not a gemmtune db, or a damaged one, throws
  // InputError; no usable GPU throws NoGpuError.
  explicit Runtime(const std::string& db_path, int device = 0, const RuntimeOptions& options = {});
  // The same on the default db, shared with the CLI and Python (default_db_path()): flush() makes its directories, or
  // throws InputError naming the path and the variable that placed it.
  explicit Runtime(int device = 0, const RuntimeOptions& options = {});
  // Writes pending misses (see flush()); never throws: a failure is one warning line.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;

  // Y = epilogue(op(A)·op(B)) for a Pass::Forward problem, asynchronous on s.
  void forward(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s);
  void forward(const GemmProblem& problem, const float* A, const float* B, const float* bias, float* Y, float* Z,
               cudaStream_t s, std::uint64_t seed = 0, std::uint64_t offset = 0);

  // The backward of forward `problem`: one pass computes gZ = gY ⊙ act'(Z) ⊙ mask/(1−p) and reduces gBias
  // (deterministically: the same inputs give the same bits), then gA = gZ·op(B)ᵀ and gB = op(A)ᵀ·gZ run as the
  // tuned problems backward_problem(problem, GradA / GradB). Asynchronous on s.
  void backward(const GemmProblem& problem, const BackwardOperands& x, cudaStream_t s);
  void backward(const GemmProblem& problem, const float* A, const float* B, const float* Z, const float* gY,
                float* gA, float* gB, float* gBias, cudaStream_t s, std::uint64_t seed = 0,
                std::uint64_t offset = 0);

  // Adds `increment` to the dropout counter at offset_ptr (device memory), as one single-thread kernel on s: no
  // allocation, no synchronization, so it is captured with the step. Capture it at the end of a training step whose
  // forward and backward take offset_ptr (GemmOperands::offset_ptr, BackwardOperands::offset_ptr): replay i then
  // applies the mask of offset offset₀ + (i − 1)·increment, the same bits as an eager step given that offset by value.
  // The offset is a counter word of its own (not added to the element index), so an increment of 1 gives a new,
  // independent mask; layers that share one counter should differ in seed.
  //
  //   std::uint64_t* step_offset;  cudaMalloc(&step_offset, 8);  cudaMemset(step_offset, 0, 8);
  //   GemmOperands x{...};       x.seed = layer_seed;  x.offset_ptr = step_offset;
  //   BackwardOperands g{...};   g.seed = layer_seed;  g.offset_ptr = step_offset;
  //   rt.forward(p, x, s);  rt.backward(p, g, s);                   // once eagerly (resolves), or prepare()
  //   cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  //   rt.forward(p, x, s);  ...;  rt.backward(p, g, s);  Runtime::advance_offset(step_offset, 1, s);
  //   cudaStreamEndCapture(s, &graph);  ...;  for (;;) cudaGraphLaunch(exec, s);   // a new mask every step
  static void advance_offset(std::uint64_t* offset_ptr, std::uint64_t increment, cudaStream_t s);

  // One GEMM of any pass, as the tuner measured it: for GradA/GradB problems x holds that pass's GEMM operands
  // (problem/pass_gemm.hpp). What `gemmtune run --pass` times.
  void gemm(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s);

  // Resolve ahead of time (allocation, algo build), e.g. before capturing a graph.
  void prepare(const GemmProblem& problem);           // a GEMM of any pass
  void prepare_backward(const GemmProblem& forward);  // both backward GEMMs and the gZ/gBias pass
  // Whether this GEMM is resolved, so its calls are capturable: exactly the lookup every call makes.
  bool prepared(const GemmProblem& problem) const;

  // Use this candidate for this problem ("own/<variant>" or "lt/a..."), re-checked; throws InputError if it cannot
  // run the problem or the problem was already resolved. What `gemmtune run --candidate` does. in_graph_id, where
  // given: the candidate calls inside a CUDA graph capture run instead.
  void pin(const GemmProblem& problem, const std::string& candidate_id, const std::string& in_graph_id = "");

  // Which candidate this problem runs and why; resolves it if it was not yet.
  std::string explain(const GemmProblem& problem);
  // The same for the backward of a forward problem: its elementwise pass and both GEMMs, one line each.
  std::string explain_backward(const GemmProblem& forward);
  // The candidate id this problem runs ("own/..." or "lt/..."); resolves it if it was not yet. in_graph: the one its
  // calls inside a CUDA graph capture run, which a first-use trial may have timed faster there than the other.
  std::string candidate_id(const GemmProblem& problem, bool in_graph = false);
  // Whether this problem runs its exact cache entry (not a nearby shape's, the default, a pin or what a first-use
  // trial put in place of an entry of the no-entry set); resolves it if it was not yet. What `gemmtune apply` asks
  // before taking a call over from cuBLAS: anything less tuned than an exact entry is no reason to leave the library
  // the program chose.
  bool runs_exact_entry(const GemmProblem& problem);
  // The GPU time per call by which this problem's exact cache entry beat cuBLASLt's heuristic-first where its sweep
  // measured it: the entry's median × (its smallest margin over heuristic-first − 1). nullopt where the problem runs
  // no exact entry or the entry has no margin recorded. `gemmtune apply` weighs it against the host time an entry of
  // several launches adds to a call.
  std::optional<double> exact_entry_saving_us(const GemmProblem& problem);

  // Writes the misses recorded since the last flush to the db (creating the file if it was missing).
  // Throws InputError if the db cannot be written.
  void flush();

  // This GPU's device key: only cache entries with this key are used.
  const std::string& device_key() const;
  // How many cache entries of this device were loaded.
  std::size_t cache_size() const;
  // The scratch held for the streams and captures this Runtime has been called on.
  StreamScratchUse stream_scratch() const;
  // The calls replayed as CUDA graphs so far.
  CallGraphUse call_graphs() const;
  // Whether forward(problem, x, s), asked where s has drained, would replay a CUDA graph instead of launching
  // (RuntimeOptions::replay_repeated_calls): it repeats an exact call seen before on a problem already resolved. Such
  // a call costs the host 1-2 us whatever its candidate launches. A call not seen before is remembered as seen, as
  // forward's first sight would be. `gemmtune apply` asks before handing a call of several launches to the library.
  bool replays(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune
