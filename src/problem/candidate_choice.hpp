// Which of one problem's measured candidates the cache keeps (and the sweep's table calls "best"), and which entry
// stays where the cache already holds one (CacheContender below).
//
// Ranking: the fastest verified candidate by per-call kernel time (CUPTI), unless cuBLASLt's own first choice is
// within kChoiceTieBand of it. Medians that close are the same speed as far as a sweep can tell: its stopping rule
// bounds each median's standard error near 1%, and two runs of the same algo differ by more than that.
//
// The keep rule: the per-call span is not what a program pays. A cuBLASLt call may launch two or three kernels, and
// the gaps between them (1-2 us in a stream, near 0 from a CUDA graph) fall inside its span or not depending on how
// the program launches; a warm L2 (the same buffers every call) or a cold one reorders near-ties too. So the fastest
// few candidates and heuristic-first are re-timed as a program pays: back-to-back batches, end to end, launched into
// a stream and as a graph, warm and cold (tuner/program_timing.hpp). A candidate replaces heuristic-first only where
// it beats it beyond noise in EVERY measured condition; otherwise the cache keeps heuristic-first, which is what the
// program would have run anyway. The margins are stored with the entry: they are the evidence the runtime's fallback
// asks for before letting a tuned shape stand in for an untuned one (runtime/selection.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem/measurement.hpp"

namespace gemmtune {

inline constexpr double kChoiceTieBand = 0.01;
// The smallest noise bound a margin must clear. Two runs of the same kernel differ by about 1%; the runtime
// benchmark measures in another process at another time, so a kept win must survive that twice: 2%.
inline constexpr double kMinProgramNoise = 0.02;
// The bound where either side is a cuBLASLt algo that keeps split-k partials in its workspace or runs in clusters:
// where its workspace lies moves its time by up to 6%, and the sweep's workspace is not the program's (H200: one algo,
// bit for bit, 3.0-5.3% slower from a 64 MiB allocation than from small ones at 305x8192x3072 tf32, clustered;
// split-k 8 at 88x2036x4096 6% slower from a second buffer; scripts/dev/lt_workspace_probe). The held-out benchmark
// ran two kept wins with 2-6% margins against such heuristic-firsts at 0.976x and 0.980x (334x416x4096 against
// split-k 11, 6954x76x2208 against a clustered algo).
inline constexpr double kWorkspacePlacementNoise = 0.06;
// kWorkspacePlacementNoise for such a cuBLASLt algo, kMinProgramNoise for any other candidate.
double placement_noise(const Candidate& c);

// cuBLASLt's first choice among the records: the first verified rank-0 cuBLASLt record. The sweep enumerates the
// fused heuristic's answers before the unfused baseline's, so that is its fused algo where it has one. Null if none.
const MeasurementRecord* heuristic_first(const std::vector<MeasurementRecord>& records);

// The record the ranking stage prefers, by the rule above; null when no record was verified and timed.
const MeasurementRecord* chosen_candidate(const std::vector<MeasurementRecord>& records);

// Which entry the cache keeps where it already holds one for the device key and problem; the db stores what these
// say. One side of that choice: the entry cached, or the one a run or an import offers.
struct CacheContender {
  std::int64_t run_id = 0;  // the run of this db that measured it; a larger id is a later run
  bool imported = false;    // it came from an export or another db (its origin is set), not from a run of this db
  double median_us = 0;
};
// A run storing its chosen record replaces an entry that came from an earlier run or from another db, or that is
// slower. So the newest sweep of a device key wins even where it measured a little slower: its candidates were all
// measured on the same build and in the same conditions, while an old median may be a lucky sample or the time of a
// kernel this build no longer has.
bool run_replaces_cached(const CacheContender& cached, const CacheContender& measured);
// Import and merge: the faster entry (by median) stays; on a tie the cached one does.
bool merge_replaces_cached(const CacheContender& cached, const CacheContender& offered);

// The candidates worth re-timing as a program pays: heuristic-first (first in the list) and up to max_challengers
// other verified candidates, fastest first, whose kernel-time median is within `within` (relative) of the fastest.
// Empty when there is no heuristic-first to compare against.
std::vector<const MeasurementRecord*> finalists(const std::vector<MeasurementRecord>& records, int max_challengers,
                                                double within);

// One way a program runs a GEMM: "stream/warm", "stream/cold", "graph/warm", "graph/cold".
struct ConditionTime {
  std::string condition;
  double median_us = 0;   // per call, over the repeats
  double rel_spread = 0;  // (p90 − p10) / median over the repeats
};

// A candidate's margin over heuristic-first in one condition.
struct ConditionMargin {
  std::string condition;
  double margin = 0;  // heuristic-first's per-call time / the candidate's: > 1 means the candidate is faster
  double noise = 0;   // the relative noise bound it had to clear: max(kMinProgramNoise, both sides' spread)
  bool beyond_noise() const { return margin >= 1 + noise; }
  bool operator==(const ConditionMargin& o) const;
};

// What a cache entry knows about its margin over heuristic-first. Empty: no margin known (an entry measured by a
// gemmtune before schema 3, imported from an older export, or of a kind cuBLASLt cannot run).
struct MarginEvidence {
  std::vector<ConditionMargin> conditions;

  bool known() const { return !conditions.empty(); }
  // The smallest margin over the conditions; 0 when unknown.
  double min_margin() const;
  // The smallest margin minus its noise bound, over the conditions: how far beyond noise the worst condition won.
  double min_excess() const;
  // "stream/warm,graph/cold"; "" when unknown.
  std::string condition_names() const;
  // Database and export text: "stream/warm=1.1234~0.0100;graph/cold=..." ("" when unknown); decode throws
  // InputError naming what is wrong.
  std::string encode() const;
  static MarginEvidence decode(const std::string& text);
  // "x1.134 min over stream/warm x1.150, graph/cold x1.134 (noise 1.0%)", or "no margin over heuristic-first known".
  std::string describe() const;
  bool operator==(const MarginEvidence& o) const { return conditions == o.conditions; }
};

// The keep rule for one candidate: its margins over heuristic-first per condition (matched by name), and whether
// every one of them clears its noise bound. A condition heuristic-first was not measured in is a failure.
struct KeepVerdict {
  bool keep = false;
  MarginEvidence evidence;
};
// min_noise: the smallest bound, max(placement_noise) of the two sides.
KeepVerdict keep_over_heuristic(const std::vector<ConditionTime>& candidate,
                                const std::vector<ConditionTime>& heuristic, double min_noise = kMinProgramNoise);

// Of several winners' per-call times summed over the conditions, given in a fixed order (by candidate id), the index
// of the one to keep: the first whose sum lies within kChoiceTieBand of the least. Near-ties that trade conditions,
// warm against cold, sum to within a fraction of a percent of each other, so the least sum is noise: at 2x4096x768
// fp32 (held-out seed 9725, H200) three skinny tiles summed to 35.55, 35.58 and 35.88 us over the four conditions
// while each led one of them by 2-3%, and the sweep and a no-db runtime's trial kept different ones (the entry ran
// 0.950-0.976x no entry where they differed). In a fixed order the sweep and every runtime's trial that measured
// the same near-ties keep the same one. -1 for none.
int first_within_tie_band(const std::vector<double>& total_us);

// The program-paid decision over the finalists: index into `challengers` of the one to keep (of those the keep rule
// keeps, the least per-call time summed over the conditions, as choose_over_no_entry below), or -1 for heuristic-
// first; and the kept one's evidence (for heuristic-first: margin 1 in every measured condition, exactly, since it is
// what the program would run anyway).
struct ProgramChoice {
  int challenger = -1;
  MarginEvidence evidence;
};
// min_noise: per challenger, its keep_over_heuristic bound (empty: kMinProgramNoise for each).
// choose_over_no_entry with heuristic-first as the whole no-entry set.
ProgramChoice choose_as_program_pays(const std::vector<ConditionTime>& heuristic,
                                     const std::vector<std::vector<ConditionTime>>& challengers,
                                     const std::vector<double>& min_noise = {});

// The keep rule against the no-entry set (lt/no_entry_candidates.hpp): without an entry the runtime runs heuristic-
// first or one of its first-use challengers (the plain GEMM + our epilogue kernel of a fused default), whichever its
// trial picks, so an entry must beat every one of them, not heuristic-first alone: a sweep that timed only
// heuristic-first kept cuBLASLt's fused GELU_BIAS at 2723x3333x1536 fp32, 0.96x of the runtime with no db at all.
//  - A challenger is kept only where keep_over_heuristic holds against each member (min_noise: per challenger, the
//    bound against any member); among those, the one with the least per-call time summed over the conditions, the
//    rule by which the runtime's first-use trial ranks its winners (runtime/first_use_trial.hpp: ProgramTrial::
//    challenger_us), so that an entry is what the runtime without one would pick among the same candidates; of
//    sums within kChoiceTieBand, the first in the order `challengers` are given in (first_within_tie_band; the sweep
//    gives them by candidate id, as the runtime's trial orders its winners). Where two
//    winners trade conditions, the largest worst-case margin (the rule before) and the trial part ways: at 2x4096x768
//    fp32 on the H200 the sweep kept own/skinny_stream_fp32_8x128x128_s4 (x1.057 warm, x1.64-1.71 cold) over
//    own/skinny_fp32_8x128x32_s4 (x1.03-1.06 warm, x1.75-1.87 cold), the trial picked the second, and the entry ran
//    0.925-0.948x of no entry with cold inputs and 1.02-1.06x warm (held-out seed 9725). And where the worst-case
//    margins lie within noise of each other, noise picks: five sweeps of 2x4096x768 bias+gelu fp32 that day kept
//    three different skinny variants.
//  - Else the one whose worst condition against the others is best, heuristic-first on a tie, among heuristic-first,
//    the members at least as fast as it in every condition (the trial runs a challenger only where it wins
//    everywhere), and the challengers that beat heuristic-first beyond noise in every condition but not every member
//    (the trial, had it tried one, would keep it over heuristic-first; at m <= 64 it tries the skinny variants,
//    runtime/selection.hpp) and that no member of it beats beyond noise in any condition. Which of those the
//    runtime's trial would pick is not known here (its batches, not these medians, decide), so the entry is the one
//    that loses least to whichever it picks. With members alone, at 2x4096x768 fp32 (held-out seed 9725, H200) a
//    sweep kept heuristic-first itself, which ran 0.54-0.57x of no entry with cold inputs, where the trial ran a
//    skinny variant: the skinny variants win there by x1.03-1.04 warm (x1.75-1.87 cold), within 1-2% of the noise
//    floor, so a member a little faster than heuristic-first warm keeps them out. A challenger stands there only
//    where its worst case leads the best member's beyond its noise bound: within it, the member (what the runtime
//    without an entry runs); at 211x4096x103 fp32 bias+gelu (held-out seed 9772, H200) a SIMT tile kept on 0.960
//    against a member's 0.954 ran 0.950x of no entry from a warm graph. And one that a member beats beyond noise in
//    a condition trades that condition with what the runtime without an entry runs, so the program pays it in full:
//    on the next sweep of that problem the tile trailed the member by 3% from a warm graph, led on worst case 0.971
//    to 0.946, and as the entry ran 0.969x PyTorch eager there, where no entry (the member) ran 1.01x.
// The evidence is over heuristic-first (no_entry[0]), what the runtime's transfer rules read: 1 in every measured
// condition for heuristic-first itself.
struct NoEntryChoice {
  int challenger = -1;  // index into challengers, or -1
  int member = 0;       // with challenger -1: index into no_entry
  MarginEvidence evidence;
};
NoEntryChoice choose_over_no_entry(const std::vector<std::vector<ConditionTime>>& no_entry,
                                   const std::vector<std::vector<ConditionTime>>& challengers,
                                   const std::vector<double>& min_noise = {});

}  // namespace gemmtune
