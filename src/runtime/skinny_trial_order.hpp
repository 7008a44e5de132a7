// Which decode-sized (skinny) variants a first-use trial times where the db measured none of them, best guess first
// (select_candidate in runtime/selection.cpp takes up to half of max_trial_candidates of them).
//
// Only the row tiles that bracket m run: the smallest at or above m and the largest below it (8 for m ≤ 8, 8 and 16
// for m = 9-16); a wider one pads rows for nothing (results/nvidia-h200/decode_bench_sweep_exact.json.gz). The one at
// or above m goes first: one row of blocks covers m, so each block of B leaves DRAM once, where the tile below reads
// it ceil(m / bm) times, from L2 at best. Within a row tile the families (FFMA, mma.sync, streamed B) take turns in
// registry order, so that the first few are one of each. On the H200 at m = 9-16 the fastest skinny variant had the
// 16-row tile at 20 of 23 shapes; the best of the first six ran 1.175x the fastest skinny variant's time (geomean, up
// to 1.58x) with the 8-row tiles first and 1.030x (up to 1.10x) this way, on ten shapes drawn after the rule was
// written (results/nvidia-h200/decode_trial_order_probe.txt).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace gemmtune::runtime {

// A skinny variant that runs the problem, as the registry lists it.
struct SkinnyVariant {
  std::string name;
  kernels::Family family;
  int bm = 0;  // its row tile
};

// The names of those of `runs` (in registry order) that a trial should time at m rows, best guess first.
std::vector<std::string> skinny_trial_order(const std::vector<SkinnyVariant>& runs, std::int64_t m);

// Whether a sweep's times of the skinny variants at measured_m rows rank them at m rows. Up to the widest row tile
// (widest_bm) one or two row blocks cover m and B leaves DRAM about once; above it B is read ceil(m / bm) times, so a
// variant's standing on one side says little of it on the other: seed 9784's db (H100) measured them only at
// 64x5120x4536, and that ranking kept every skinny variant out of a 4x11008x14336 tf32 trial's twelve places.
bool skinny_rows_alike(std::int64_t measured_m, std::int64_t m, int widest_bm);

}  // namespace gemmtune::runtime
