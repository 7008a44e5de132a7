#include "problem/candidate_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "common/error.hpp"

namespace gemmtune {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

double parse_number(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
    throw InputError("margin evidence '" + whole + "': '" + text + "' is not a non-negative number");
  return v;
}

}  // namespace

const MeasurementRecord* heuristic_first(const std::vector<MeasurementRecord>& records) {
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && r.candidate.backend == Backend::Lt && r.candidate.heuristic_rank == 0)
      return &r;
  return nullptr;
}

const MeasurementRecord* chosen_candidate(const std::vector<MeasurementRecord>& records) {
  const MeasurementRecord* fastest = nullptr;
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && (!fastest || r.stats.median_us < fastest->stats.median_us)) fastest = &r;
  const MeasurementRecord* first = heuristic_first(records);
  if (first && first->stats.median_us <= fastest->stats.median_us * (1 + kChoiceTieBand)) return first;
  return fastest;
}

bool run_replaces_cached(const CacheContender& cached, const CacheContender& measured) {
  return cached.imported || cached.run_id < measured.run_id || measured.median_us < cached.median_us;
}

bool merge_replaces_cached(const CacheContender& cached, const CacheContender& offered) {
  return offered.median_us < cached.median_us;
}

std::vector<const MeasurementRecord*> finalists(const std::vector<MeasurementRecord>& records, int max_challengers,
                                                double within) {
  const MeasurementRecord* first = heuristic_first(records);
  if (!first) return {};
  std::vector<const MeasurementRecord*> others;
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && &r != first && r.candidate.id() != first->candidate.id())
      others.push_back(&r);
  std::stable_sort(others.begin(), others.end(), [](const MeasurementRecord* a, const MeasurementRecord* b) {
    return a->stats.median_us < b->stats.median_us;
  });
  const double fastest = std::min(first->stats.median_us, others.empty() ? first->stats.median_us
                                                                          : others.front()->stats.median_us);
  std::vector<const MeasurementRecord*> out = {first};
  for (const MeasurementRecord* r : others) {
    if (static_cast<int>(out.size()) > max_challengers) break;
    if (r->stats.median_us > fastest * (1 + within)) break;
    out.push_back(r);
  }
  return out;
}

bool ConditionMargin::operator==(const ConditionMargin& o) const {
  return condition == o.condition && margin == o.margin && noise == o.noise;
}

double MarginEvidence::min_margin() const {
  double m = 0;
  for (std::size_t i = 0; i < conditions.size(); ++i)
    m = i == 0 ? conditions[i].margin : std::min(m, conditions[i].margin);
  return m;
}

double MarginEvidence::min_excess() const {
  double m = 0;
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    const double excess = conditions[i].margin - 1 - conditions[i].noise;
    m = i == 0 ? excess : std::min(m, excess);
  }
  return m;
}

std::string MarginEvidence::condition_names() const {
  std::string s;
  for (const ConditionMargin& c : conditions) s += (s.empty() ? "" : ",") + c.condition;
  return s;
}

std::string MarginEvidence::encode() const {
  std::string s;
  for (const ConditionMargin& c : conditions)
    s += (s.empty() ? "" : ";") + c.condition + "=" + fixed(c.margin, 4) + "~" + fixed(c.noise, 4);
  return s;
}

MarginEvidence MarginEvidence::decode(const std::string& text) {
  MarginEvidence e;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('='), tilde = item.find('~');
    if (eq == std::string::npos || eq == 0 || tilde == std::string::npos || tilde < eq)
      throw InputError("margin evidence '" + text + "': '" + item + "' is not CONDITION=MARGIN~NOISE");
    ConditionMargin c;
    c.condition = item.substr(0, eq);
    c.margin = parse_number(item.substr(eq + 1, tilde - eq - 1), text);
    c.noise = parse_number(item.substr(tilde + 1), text);
    if (!(c.margin > 0)) throw InputError("margin evidence '" + text + "': a margin must be > 0");
    for (const ConditionMargin& seen : e.conditions)
      if (seen.condition == c.condition)
        throw InputError("margin evidence '" + text + "': condition '" + c.condition + "' appears twice");
    e.conditions.push_back(c);
    start = end + 1;
  }
  return e;
}

std::string MarginEvidence::describe() const {
  if (!known()) return "no margin over heuristic-first known";
  double noise = 0;
  std::string each;
  for (const ConditionMargin& c : conditions) {
    each += (each.empty() ? "" : ", ") + c.condition + " x" + fixed(c.margin, 3);
    noise = std::max(noise, c.noise);
  }
  return "margin over heuristic-first x" + fixed(min_margin(), 3) + " (min over " + each + "; noise up to " +
         fixed(100 * noise, 1) + "%)";
}

double placement_noise(const Candidate& c) {
  const bool workspace_bound = c.lt_clustered() || (c.backend == Backend::Lt && c.lt.splitk > 1);
  return workspace_bound ? kWorkspacePlacementNoise : kMinProgramNoise;
}

KeepVerdict keep_over_heuristic(const std::vector<ConditionTime>& candidate,
                                const std::vector<ConditionTime>& heuristic, double min_noise) {
  KeepVerdict v;
  v.keep = !candidate.empty();
  for (const ConditionTime& c : candidate) {
    const auto h = std::find_if(heuristic.begin(), heuristic.end(),
                                [&](const ConditionTime& t) { return t.condition == c.condition; });
    if (h == heuristic.end() || !(c.median_us > 0) || !(h->median_us > 0)) {
      v.keep = false;
      continue;
    }
    ConditionMargin m;
    m.condition = c.condition;
    m.margin = h->median_us / c.median_us;
    m.noise = std::max({min_noise, c.rel_spread, h->rel_spread});
    if (!m.beyond_noise()) v.keep = false;
    v.evidence.conditions.push_back(m);
  }
  return v;
}

int first_within_tie_band(const std::vector<double>& total_us) {
  if (total_us.empty()) return -1;
  const double least = *std::min_element(total_us.begin(), total_us.end());
  for (std::size_t i = 0; i < total_us.size(); ++i)
    if (total_us[i] <= least * (1 + kChoiceTieBand)) return static_cast<int>(i);
  return -1;
}

ProgramChoice choose_as_program_pays(const std::vector<ConditionTime>& heuristic,
                                     const std::vector<std::vector<ConditionTime>>& challengers,
                                     const std::vector<double>& min_noise) {
  const NoEntryChoice c = choose_over_no_entry({heuristic}, challengers, min_noise);
  return {c.challenger, c.evidence};
}

NoEntryChoice choose_over_no_entry(const std::vector<std::vector<ConditionTime>>& no_entry,
                                   const std::vector<std::vector<ConditionTime>>& challengers,
                                   const std::vector<double>& min_noise) {
  NoEntryChoice best;
  if (no_entry.empty()) return best;
  const std::vector<ConditionTime>& heuristic = no_entry.front();
  for (const ConditionTime& t : heuristic) best.evidence.conditions.push_back({t.condition, 1.0, kMinProgramNoise});
  const auto noise_of = [&](std::size_t i) { return i < min_noise.size() ? min_noise[i] : kMinProgramNoise; };
  std::vector<std::size_t> kept;
  std::vector<double> kept_total_us;
  for (std::size_t i = 0; i < challengers.size(); ++i) {
    bool keep = true;
    for (std::size_t m = 0; m < no_entry.size() && keep; ++m)
      keep = keep_over_heuristic(challengers[i], no_entry[m], noise_of(i)).keep;
    if (!keep) continue;
    double total_us = 0;
    for (const ConditionTime& t : challengers[i]) total_us += t.median_us;
    kept.push_back(i);
    kept_total_us.push_back(total_us);
  }
  if (const int k = first_within_tie_band(kept_total_us); k >= 0) {
    const std::size_t i = kept[static_cast<std::size_t>(k)];
    best.challenger = static_cast<int>(i);
    best.evidence = keep_over_heuristic(challengers[i], heuristic, noise_of(i)).evidence;
    return best;
  }
  // The member whose worst margin over the other members is largest. A condition one of them was not measured in
  // counts as a loss (margin 0). A member other than heuristic-first stands only where it is at least as fast as
  // heuristic-first in every condition: the runtime's trial runs a challenger only where it wins in each condition it
  // times, so a mixed one (1x332x768 bias+gelu fp32 on an H200: x1.007 in a stream, x0.998 from a graph) is not what
  // the runtime runs without an entry, and as an entry it ran 0.984x of no entry.
  // With them, a challenger that beats heuristic-first beyond noise everywhere but not every member (see the header).
  struct Contender {
    const std::vector<ConditionTime>* times;
    int member, challenger;  // one of them -1
  };
  std::vector<Contender> pool;
  for (std::size_t m = 0; m < no_entry.size(); ++m) {
    if (m > 0) {
      const MarginEvidence over_heuristic = keep_over_heuristic(no_entry[m], heuristic).evidence;
      if (over_heuristic.conditions.size() != heuristic.size() || over_heuristic.min_margin() < 1.0) continue;
    }
    pool.push_back({&no_entry[m], static_cast<int>(m), -1});
  }
  // Not a challenger that a member beats beyond noise in some condition: the program would pay that condition in
  // full (211x4096x103 fp32 bias+gelu, H200: 0.969x PyTorch eager from a warm graph as the entry, 1.01x without).
  const std::size_t members = pool.size();
  const auto trails_a_member = [&](std::size_t i) {
    for (std::size_t m = 0; m < members; ++m) {
      const MarginEvidence member_over_it = keep_over_heuristic(*pool[m].times, challengers[i], noise_of(i)).evidence;
      for (const ConditionMargin& c : member_over_it.conditions)
        if (c.beyond_noise()) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < challengers.size(); ++i)
    if (keep_over_heuristic(challengers[i], heuristic, noise_of(i)).keep && !trails_a_member(i))
      pool.push_back({&challengers[i], -1, static_cast<int>(i)});
  double best_worst = 0, member_worst = 0;
  int best_member = 0;
  for (std::size_t c = 0; c < pool.size(); ++c) {
    std::optional<double> worst;  // none for heuristic-first alone
    for (std::size_t o = 0; o < pool.size(); ++o) {
      if (o == c) continue;
      const MarginEvidence e = keep_over_heuristic(*pool[c].times, *pool[o].times).evidence;
      const double margin = e.conditions.size() == pool[o].times->size() ? e.min_margin() : 0.0;
      worst = worst ? std::min(*worst, margin) : margin;
    }
    const double w = worst.value_or(1.0);
    if (pool[c].member >= 0 && (c == 0 || w > member_worst)) {
      member_worst = w;
      best_member = pool[c].member;
    }
    if (c == 0 || w > best_worst) {
      best_worst = w;
      best.member = pool[c].member;
      best.challenger = pool[c].challenger;
    }
  }
  // A challenger's worst case must lead the best member's by more than its noise bound; within it noise picks, and
  // the member is what the runtime without an entry runs anyway. At 211x4096x103 fp32 bias+gelu (held-out seed 9772,
  // H200) our SIMT tile led cuBLASLt's +bias call 0.960 to 0.954, trading graph/warm (-4%) for stream/cold (+5%), and
  // as the entry ran 0.950x of no entry graph/warm.
  if (best.challenger >= 0 &&
      best_worst <= member_worst * (1 + noise_of(static_cast<std::size_t>(best.challenger)))) {
    best.challenger = -1;
    best.member = best_member;
  }
  if (best.challenger >= 0) {
    const std::size_t i = static_cast<std::size_t>(best.challenger);
    best.member = 0;
    best.evidence = keep_over_heuristic(challengers[i], heuristic, noise_of(i)).evidence;
  } else if (best.member > 0) {
    best.evidence = keep_over_heuristic(no_entry[static_cast<std::size_t>(best.member)], heuristic).evidence;
  }
  return best;
}

}  // namespace gemmtune
