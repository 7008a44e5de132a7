// The first-use trial (RuntimeOptions::confirm_standins): before a challenger runs an untuned problem for good, time
// it against the default (cuBLASLt's heuristic-first) on that very problem and keep the faster. The challengers are
// the own variants a nearby tuned shape's evidence suggests (selection.hpp) and, where the default is a fused cuBLASLt
// epilogue, the same heuristic's plain GEMM followed by our epilogue kernel (lt/no_entry_candidates.hpp).
//
// On scratch inputs and a stream of its own (trial_gpu.hpp), with batches of back-to-back calls queued behind a
// blocking kernel and each challenger's batches paired with heuristic-first's, the side that goes first alternating,
// as the tuner's finalist stage does, in the four conditions it times, and the challenger must win each:
//   stream warm (the same inputs every call) and stream cold (inputs rotating past 2× L2): a cold-only trial kept an
//     fp32 split-k variant at 92×3072×359 bias+gelu that was 1.05-1.10× cold and 0.85-0.91× warm, where
//     heuristic-first gains more from resident inputs (H200);
//   graph warm (the warm batch captured as one CUDA graph and replayed): a graph closes the gaps between a cuBLASLt
//     call's kernels, so a multi-kernel heuristic-first gains more there than one kernel does; a stream-only trial
//     kept own/fp32_64x64x16_w32x32_t8x4_s2_split4 at 79×2048×520 bias+gelu fp32, 1.06× in a stream and 0.96×
//     from a graph (H200);
//   graph cold (a graph of calls rotating over input sets, replayed after L2 is evicted by reading past 2× L2): a
//     trial without it kept a stand-in at 106×1376×277 fp32 (held-out seed 9637) that won the other three and ran
//     0.970× heuristic-first from a cold graph in the benchmark (H200).
//
// What a first use costs (issue 37): one trial per problem, not one per challenger. Every side is launched once, and
// waited for, before anything is queued behind the blocking kernel, so no first launch (which loads a module under
// CUDA's lazy loading, and may wait for the GPU) and no allocation ever waits for it; a batch whose blocking kernel
// timed out anyway is discarded, counted and timed again. Stream cold runs first for every challenger (one pair of
// batches each), and a challenger stops as soon as one of its batches is no faster than heuristic-first's fastest so
// far: it can no longer win (beats() below), so stopping changes no decision (one judged by its median stops where
// its medians so far are kByMedianStop slower than its pairs'). The batches of one problem stop at
// kTrialBudgetUs of GPU time, counting the untimed call that reloads a warm batch's inputs, or where the trial's
// host time would pass kTrialHostBudgetUs (the first pairs keep back what one challenger needs to finish, and after
// them the challenger fastest in its first pair goes first); a challenger not timed in full by then does not win.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "problem/candidate.hpp"

namespace gemmtune::runtime {

struct TrialResult {
  double challenger_us = 0;  // median per-call time of the challenger
  double default_us = 0;     // of heuristic-first
  double challenger_slowest_us = 0;  // the challenger's slowest batch, per call
  double default_fastest_us = 0;     // heuristic-first's fastest batch, per call
  double noise_floor = 1.01;         // challenger_rule(heuristic-first, this challenger).noise_floor
  int batches = 1;                   // pairs of batches timed; 0: this condition was not reached
  // The challenger is kept only where its slowest batch beats heuristic-first's fastest by the noise floor: a
  // millisecond of medians that caught a two-speed default at its slow speed kept a stand-in that ran 0.90-0.98x in
  // the held-out benchmark (270x14120x1064 bias+gelu tf32 on the H200).
  bool beats(double default_fastest) const {
    return batches > 0 && challenger_slowest_us * noise_floor < default_fastest;
  }
};

// How much faster than heuristic-first's fastest batch a challenger's slowest must be: 1%.
inline constexpr double kTrialNoiseFloor = 1.01;

// A challenger judged by its median (ChallengerRule::by_median) stops once the product of its medians over
// heuristic-first's, in its pairs over the conditions it has reached, is this much or more: after the first, three
// other conditions 1.7% faster each would be needed to win. The product, not one condition's batch: at 1x3438x121
// fp32 (held-out seed 9817, H100) the framework workspace's algo ran 10% faster than heuristic-first cold, then one
// warm batch 5% slower stopped it, and the entry it would have beaten ran 0.90-0.95x the runtime with no db.
inline constexpr double kByMedianStop = 1.05;

// How one challenger is judged.
struct ChallengerRule {
  double noise_floor = kTrialNoiseFloor;
  // Against heuristic-first's batches in the challenger's own pairs, not its fastest over every pair of the problem.
  bool own_pairs = false;
  // As heuristic-first's equal: kept where its medians beat heuristic-first's in its own pairs over the four
  // conditions (ProgramTrial::by_median), no floor. For what the runtime would run in heuristic-first's place without
  // an entry (the no-entry set's challengers): the floor exists to keep a challenger that won by noise from running
  // slower than the default, but between two calls that cuBLAS and cuBLASLt themselves offer it kept
  // heuristic-first where the call PyTorch eager makes was faster by less than the floor, and the program then ran
  // 0.97-0.99x eager: at 1x1024x16384 tf32 (held-out seed 9648, H200) cublasSgemm ran 20.73 us against
  // heuristic-first's 20.64 in the trial's first cold pair and stopped, and eager ran 20.33 us warm where the runtime
  // ran heuristic-first's 20.59; at 72x3072x5120 tf32 (seed 9644) cublasSgemm's median beat heuristic-first's, 32.82 us
  // against 33.22, and its slowest batch did not beat the fastest by 1% (0.981x eager in one process). The padded
  // call too: at 624x205x8192 bias+gelu tf32 (seed 9654) it ran 2% faster than heuristic-first in stream cold and 10%
  // from a graph, and a runtime whose screening pair missed the floor by 0.01 us ran 0.90-0.97x one whose pair did not.
  bool by_median = false;
  // Timed in every condition whatever its batches show, and first after the first pairs: PyTorch eager's own call,
  // which hold_to_eager_call measures every winner against (a by-median challenger otherwise stops at a batch
  // kByMedianStop slower than its pair, and eager's call at 3009x136x755 bias+gelu fp32 is 20-30% slower than
  // heuristic-first's split-k from a cold stream, the first condition, and 3.5% faster warm).
  bool full = false;
};

// Against which of heuristic-first's batches a challenger is judged.
//
// Its own pairs, where the challenger runs heuristic-first's own algo (its `+epi` or `+bias` form: the same GEMM,
// another epilogue after it): each batch runs at whatever speed the default's paired batch runs at, so only the
// epilogue differs between them. Pooled over every challenger's pairs, cuBLASLt's own epilogue kernel was kept at
// 103x4096x4096 bias+gelu tf32, 3.3 us after the GEMM where ours takes 1.9 and PyTorch eager's gelu 1.6; and at
// 69x11008x3072 the default's fastest cold batch over 21 challengers' pairs was 55.3 us, 4.5% under the 57.9 that the
// same algo with our epilogue (55.0) was paired with (H200).
//
// Its own pairs too where heuristic-first or the challenger is a clustered cuBLASLt algo (cluster shape above 1x1x1).
// Those were seen at one of two speeds about 20% apart (144x3072x13824 tf32: 94.8 and 112.9 us), which a floor of
// 12% over the pooled batches held off; it also held off PyTorch eager's own algo where that was 5-10% faster and the
// program then ran 0.85-0.93x eager (held-out seeds 9614-9638). The two speeds came from two causes, measured on the
// H200 (results/nvidia-h200/address_speed_probe.txt), neither of them the cluster's:
// - the clock: under the 700 W cap, 4754x3072x1024 tf32 pulled the SM clock to 1500-1800 MHz, and in one round the
//   batches of three algos on 24 buffer sets all ran 1.20x their medians. Batches of one pair run a few ms apart, at
//   one clock; the pooled fastest batch may come from another;
// - the operands' placement: with A and Y fixed and B read from 16 allocations in turn, three algos of 144x2704x8192
//   bias+gelu tf32 ran 4-12% slower from the same 11 of them than from the other 5; heuristic-first's warm calls took
//   60.9-65.1 us there, its cold batches in the trial's scratch 58.2-58.8 (held-out seed 9638). So the trial's warm
//   set is the call's own inputs (trial_gpu.hpp: CallerInputs), as are its cold ones where a set exceeds 2x L2.
// By median in its own pairs, where the challenger is one of the no-entry set's (`no_entry`: what cuBLAS and
// cuBLASLt offer in the runtime's place, lt/no_entry_candidates.hpp).
// Any other challenger: against heuristic-first's fastest batch over every challenger's pairs.
ChallengerRule challenger_rule(const Candidate& heuristic_first, const Candidate& challenger, bool no_entry);

// Heuristic-first's fastest batch per call in each condition over some trials of one problem.
struct DefaultFastest {
  double warm_us = 0, cold_us = 0, graph_us = 0, graph_cold_us = 0;
};

// One challenger's trial in its four conditions.
struct ProgramTrial {
  TrialResult warm, cold, graph, graph_cold;  // stream warm, stream cold, graph warm, graph cold
  bool own_pairs = false;                     // its ChallengerRule's
  bool by_median = false;                     // its ChallengerRule's
  // Against heuristic-first's fastest batches over every challenger of the problem (fastest_default), or in its own
  // pairs (own_pairs); a condition the challenger did not reach is a loss. By median: the geometric mean over the
  // four conditions of its median over heuristic-first's in the same pairs is below 1.
  bool challenger_wins(const DefaultFastest& d) const {
    if (by_median) return median_ratio() < 1;
    const auto against = [&](const TrialResult& r, double fastest) {
      return own_pairs ? r.default_fastest_us : fastest;
    };
    return warm.beats(against(warm, d.warm_us)) && cold.beats(against(cold, d.cold_us)) &&
           graph.beats(against(graph, d.graph_us)) && graph_cold.beats(against(graph_cold, d.graph_cold_us));
  }
  // The geometric mean over the four conditions of the challenger's median over heuristic-first's in its pairs; 2
  // where a condition was not reached (a loss).
  double median_ratio() const;
  // What ranks winners against each other: the challenger's per-call time over the four.
  double challenger_us() const {
    return warm.challenger_us + cold.challenger_us + graph.challenger_us + graph_cold.challenger_us;
  }
};

// What a call inside a CUDA graph capture runs in place of a trial's winner: graph_us holds each option's graph warm +
// graph cold per-call time (heuristic-first's in the winner's own pairs, then the winners by candidate id, as the trial
// settles ties), `runs` the index of the winner with the least time over all four conditions. -1 where `runs`'s graph
// time lies within kChoiceTieBand of the least (it runs there too), else the first within that band of the least. A
// graph closes the gaps between a call's kernels and a stream does not, so candidates can trade one for the other, and
// a trial keeps one for all four conditions (ProgramTrial::challenger_us). On the H200: at 208x2048x1024 bias+gelu tf32
// (held-out seed 9737) our wgmma split-k tile won by its stream times (12.74 us warm against 14.34 for cuBLASLt's bias
// + our gelu) and lost graph cold (15.39 against 14.55), and the program's graph ran 0.966x PyTorch eager's; at
// 896x768x272 fp32 (seed 9740) cuBLASLt's heuristic at a framework's workspace, no split-k, won by the geometric mean
// of its medians (17.72 against 18.34 us stream warm) and lost from a graph (17.02 + 17.84 against heuristic-first's
// 16.54 + 17.34, whose split-k graph replays well), and the program's graph ran 0.974x eager's.
int faster_in_graph(const std::vector<double>& graph_us, int runs);

// How much slower than PyTorch eager's own call (lt/no_entry_candidates.hpp: eager_call) the trial's choice may run in
// any one condition: 2.5%. The trial ranks its winners by their time summed over the four conditions, where a cold
// call is the longest, so a winner 20-40% faster cold than eager's call ran 3-4% slower warm: at 3009x136x755 and
// 237x2048x768 bias+gelu fp32, cuBLASLt's split-k 2 with its BIAS epilogue ran 0.961-0.970x eager from a warm stream
// and 1.16-1.37x cold (H100 and H200, results/*/trade_records_tuned.txt). A program that is never more than 2.5%
// slower than eager in any condition is what issue 48 asks for, and eager's call is one of the trial's candidates; a
// limit at 2.5% rather than at the 1% noise floor leaves alone the near-ties whose medians trade by noise.
inline constexpr double kEagerCallLimit = 0.025;

// Per condition, a challenger's median over heuristic-first's in its own pairs: stream warm, stream cold, graph warm,
// graph cold; all 1 for heuristic-first itself. Nullopt where a condition was not reached.
using ConditionRatios = std::array<double, 4>;
std::optional<ConditionRatios> ratios_over_heuristic_first(const ProgramTrial& t);
inline constexpr ConditionRatios kHeuristicFirstRatios = {1, 1, 1, 1};
inline constexpr const char* kConditionNames[] = {"stream warm", "stream cold", "graph warm", "graph cold"};

// Where x runs slowest against eager's call: the condition (an index into ConditionRatios) and x's time over eager's
// there. `conditions`: which to look at (the graph ones alone for what runs inside a capture).
struct EagerDeficit {
  int condition = 0;
  double ratio = 0;
  bool within_limit() const { return ratio <= 1 + kEagerCallLimit; }
};
EagerDeficit deficit_against_eager(const ConditionRatios& x, const ConditionRatios& eager,
                                   const std::array<bool, 4>& conditions = {true, true, true, true});

// One candidate the trial could run: its ratios (ratios_over_heuristic_first) and its per-call time summed over the
// four conditions (ProgramTrial::challenger_us; for heuristic-first, its medians in eager's call's pairs).
struct TrialOption {
  ConditionRatios ratios;
  double total_us = 0;
};
// What runs once the trial's choice is held to kEagerCallLimit against eager's call: options[0] is heuristic-first,
// then the winners in id order, `chosen` the index of the trial's choice. `chosen` where it is within the limit in
// every condition; else, of the winners within it, the first within kChoiceTieBand of the least total time (the
// trial's own rule among fewer winners); else heuristic-first where within it; else -1: eager's call itself, which is
// within it by definition whether it beat heuristic-first or not.
int hold_to_eager_call(const std::vector<TrialOption>& options, int chosen, const ConditionRatios& eager);

// The default's fastest batch in each condition over `trials` (every challenger of one problem), from the conditions
// each reached; zeros where none did, which no challenger beats.
DefaultFastest fastest_default(const std::vector<ProgramTrial>& trials);

// What the trial asks of the GPU, one step each. The CUDA implementation (trial_gpu.hpp) does each with a call or two;
// the CPU tests record them, which is how the order below is proven (tests/runtime/first_use_trial_order_test.cpp).
// Side 0 is heuristic-first, sides 1.. the challengers in order.
class TrialGpu {
 public:
  virtual ~TrialGpu() = default;
  virtual int sides() const = 0;
  // Queues one call of `side` on input set `set` (0: the warm set; others rotate past 2× L2). Launches only: no
  // allocation, no synchronization. The first launch of a kernel may load its module, which can wait for the GPU.
  virtual void launch(int side, int set) = 0;
  // Waits until everything queued has run.
  virtual void wait() = 0;
  // Captures `calls` calls of `side` as a graph and instantiates and uploads it: allocates. On the warm set, or
  // (cold) on sets 1, 2, … in turn; a side has one graph of each kind.
  virtual void capture_graph(int side, int calls, bool cold) = 0;
  virtual void replay_graph(int side, bool cold) = 0;
  // Queues what evicts L2 before a cold batch and leaves it full of dirty lines (rewrites of 2× L2 of the inputs'
  // memory, values unchanged): a cold graph's inputs are the same sets at every replay, the other side's batch just
  // read them, and a program's L2 holds what the kernels before its call wrote.
  virtual void evict_l2() = 0;
  // Queues the blocking kernel, which holds the stream until release_and_wait().
  virtual void block() = 0;
  virtual void start_timer() = 0;
  virtual void stop_timer() = 0;
  // Releases the blocking kernel and waits for the stream; false where the blocking kernel had timed out first (what
  // was queued behind it waited for the GPU): the batch's time is wrong.
  virtual bool release_and_wait() = 0;
  // Microseconds from start_timer() to stop_timer(), once both have run.
  virtual double timed_us() const = 0;
  // Host microseconds since the trial began (its first step's), what kTrialHostBudgetUs bounds.
  virtual double elapsed_us() const = 0;
};

// A batch's per-call target and the GPU time one problem's timed batches may take.
inline constexpr double kTrialBatchUs = 100;
// And at least this many calls where they take no more than 4× kTrialBatchUs, as the sweep's finalist stage times at
// least 4 (tuner/program_timing.hpp): a call queued alone shows its launch and tail, which back-to-back calls hide. At
// 64x8192x8192 bias+gelu tf32 (H200) the heuristic's 1 MiB algo with cuBLASLt's bias and our gelu ran 0.955x
// heuristic-first's time one call a batch and 0.891x twenty calls a batch (0.903x at five); at 88x5120x16384 1.012x and
// 0.969x, so a trial of single calls kept heuristic-first where PyTorch eager, running that algo, was 3-10% faster
// (results/nvidia-h200/batch_size_probe.txt).
inline constexpr int kTrialMinCalls = 4;
inline constexpr double kTrialBudgetUs = 50'000;
// And the host time the trial may take (TrialGpu::elapsed_us): a pair is queued only where the time so far, its GPU
// time and each batch's host time beyond its GPU time (the most any batch took so far) fit, the first pairs keeping
// back what one challenger needs to finish. Issue 37 holds a first call to 100 ms; a tuned entry's first call at
// 1189x768x13824 bias+gelu fp32 took 108 ms, 50 of them the batches' GPU time (H200). The setup before the trial
// (the trial's scratch grown for a larger problem, cuBLASLt's heuristic asked for the no-entry set, the launchers)
// is not counted: 27 ms at that problem, and 81 ms at a process's first problem (cuBLAS's handle and the kernels'
// modules loaded), where counting it left no time to try anything. Nor is the trial's warm-up, every side launched
// once, where a kernel the process has not run loads its module: 60 ms at a first decode problem of 16 sides.
inline constexpr double kTrialHostBudgetUs = 60'000;
// A blocking kernel that times out this often on one problem fails the trial (an Error; the default then runs): one
// timeout is discarded and its batch timed again, a second says the cause was no one-off first load.
inline constexpr int kMaxDiscardedBatches = 2;

struct ChallengerTrial {
  ProgramTrial times;
  std::string stopped;  // "" where every batch ran; else why it stopped early ("slower than heuristic-first's ...")
  bool out_of_budget = false;  // stopped by a budget before it lost: the trial says nothing of it
};

struct FirstUseTrial {
  std::vector<ChallengerTrial> challengers;  // sides 1.. in order
  int discarded_batches = 0;  // batches whose blocking kernel timed out, discarded and timed again
  double gpu_us = 0;          // GPU time of the timed batches that were kept
};

// The trial of sides 1.. against side 0. rules[c]: challenger_rule(heuristic-first, side c + 1's candidate), one per
// challenger (else CheckError). Throws CheckError after kMaxDiscardedBatches timed-out batches.
FirstUseTrial run_first_use_trial(TrialGpu& gpu, const std::vector<ChallengerRule>& rules);

}  // namespace gemmtune::runtime
