// The finalist stage's clock: what a program pays per call, end to end over back-to-back calls.
//
// The ranking stage times each call's own kernels (CUPTI: first kernel start to last kernel end), which is right for
// ranking dozens of candidates but is not what a program pays: a cuBLASLt call of two or three kernels leaves 1-2 us
// gaps between them in a stream (inside its span) and almost none from a CUDA graph, and warm or cold inputs reorder
// near-ties. Here each finalist runs batches of N back-to-back calls queued behind the blocking kernel, timed with
// CUDA events around the whole batch and divided by N, launched as the runtime launches them (our kernels behind the
// kernel before them, CandidateLauncher::set_behind_previous_kernel, which CUPTI's spans cannot credit), in each
// condition the profile asks for:
//   stream  the N calls launched into the stream;   graph  one captured graph of those N calls, replayed;
//   warm    every call of a batch on the same       cold   L2 evicted (read) before the batch, the N calls rotate
//           buffers, one input set a repeat                over input sets larger than 2× L2 together.
// A warm batch reads one input set, a different one each repeat (up to kWarmPlacements of them): where an allocation
// lies moves a kernel by up to 13% and each allocation keeps its speed (results/nvidia-h200/address_speed_probe.txt),
// so a choice timed on one set alone held for that allocation and not for the program's.
// One condition after the other, its warm-up round first (a warm condition's inputs then stay in L2 as in a program's
// loop; a warm repeat on another set than the last starts with one untimed batch on it); within it the finalists take
// turns each repeat (the order rotating), so a clock drift hits them all alike.
#pragma once

#include <string>
#include <vector>

#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "problem/candidate_choice.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/measurement_loop.hpp"

namespace gemmtune {

struct ProgramCondition {
  bool graph = false;
  bool cold = false;
  std::string name() const { return std::string(graph ? "graph" : "stream") + (cold ? "/cold" : "/warm"); }
};

// The conditions a profile's timing asks for, stream before graph, warm before cold.
std::vector<ProgramCondition> program_conditions(const TimingSettings& t);

// How many input sets a warm condition's repeats take turns on, and which one repeat r reads.
inline constexpr int kWarmPlacements = 3;
int warm_placements(int input_sets);
int warm_input_set(int repeat, int input_sets);

// Batch size and repeats for calls of about `typical_call_us`: 20 calls per batch (down to 4 for calls near a
// millisecond) and 3 to 9 repeats, so the stage takes about 150 ms of GPU time per problem.
struct ProgramBatching {
  int calls = 20;
  int repeats = 9;
};
ProgramBatching program_batching(double typical_call_us, std::size_t conditions, std::size_t finalists);

// Per launcher (in order), its per-condition times (in program_conditions order). `flush` runs before each cold batch
// (null where the settings time no cold condition). All launchers must be of one problem, whose operands `buffers`
// holds.
std::vector<std::vector<ConditionTime>> time_as_program(const std::vector<const CandidateLauncher*>& launchers,
                                                        const ProblemBuffers& buffers, const TimingSettings& settings,
                                                        double typical_call_us, const L2Flush* flush,
                                                        MeasureContext& ctx);

}  // namespace gemmtune
