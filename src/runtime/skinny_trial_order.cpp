#include "runtime/skinny_trial_order.hpp"

#include <algorithm>

namespace gemmtune::runtime {

namespace {

// Appends the variants of row tile bm, the families taking turns, each in registry order.
void append_by_turns(const std::vector<SkinnyVariant>& runs, int bm, std::vector<std::string>& order) {
  std::vector<std::vector<const SkinnyVariant*>> by_family;
  for (const SkinnyVariant& v : runs) {
    if (v.bm != bm) continue;
    auto it = std::find_if(by_family.begin(), by_family.end(),
                           [&](const auto& f) { return f[0]->family == v.family; });
    if (it == by_family.end())
      by_family.push_back({&v});
    else
      it->push_back(&v);
  }
  for (std::size_t turn = 0, taken = 1; taken > 0; ++turn) {
    taken = 0;
    for (const auto& family : by_family) {
      if (turn >= family.size()) continue;
      order.push_back(family[turn]->name);
      ++taken;
    }
  }
}

}  // namespace

std::vector<std::string> skinny_trial_order(const std::vector<SkinnyVariant>& runs, std::int64_t m) {
  int below = 0, above = 0;  // the bracketing row tiles (0: none)
  for (const SkinnyVariant& v : runs) {
    if (v.bm < m) below = std::max(below, v.bm);
    if (v.bm >= m && (above == 0 || v.bm < above)) above = v.bm;
  }
  std::vector<std::string> order;
  if (above > 0) append_by_turns(runs, above, order);
  if (below > 0) append_by_turns(runs, below, order);
  return order;
}

bool skinny_rows_alike(std::int64_t measured_m, std::int64_t m, int widest_bm) {
  return (measured_m <= widest_bm) == (m <= widest_bm);
}

}  // namespace gemmtune::runtime
