// `gemmtune trace diff A B`: how the GPU time moved between two traces (the seed's "change one thing, check how
// the shares moved"): totals, then per category, per kernel and per GEMM problem, each sorted by time moved.
#pragma once

#include <vector>

#include "trace/category_rules.hpp"
#include "trace/table.hpp"
#include "trace/trace.hpp"

namespace gemmtune {

std::vector<Table> trace_diff_tables(const Trace& before, const Trace& after, const CategoryRules& rules);

}  // namespace gemmtune
