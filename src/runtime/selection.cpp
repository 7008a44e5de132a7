#include "runtime/selection.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "runtime/variant_ranking.hpp"

namespace gemmtune::runtime {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string shape_of(const GemmProblem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

// A neighbour's candidate as it would run p (TwinChooser), and the words for a change of twin.
struct Carried {
  Candidate candidate;
  std::string note;  // "" when the candidate is the neighbour's own
};

Carried carry(const Neighbor& n, const GemmProblem& p, const TwinChooser& twin) {
  Carried c{twin ? twin(p, n.entry->candidate) : n.entry->candidate, ""};
  if (c.candidate.id() != n.entry->candidate.id())
    c.note = " as its twin " + c.candidate.id() + " (staged or not as this problem's operand alignment asks)";
  return c;
}

// "tuned median 16.20 us (run 7)", "(run 3 of other.db)" when it came through import or merge.
std::string tuned_text(const CacheEntry& e) {
  std::string s = "tuned median " + fixed(e.stats.median_us, 2) + " us, run " + std::to_string(e.run_id);
  if (!e.origin.empty()) s += " of " + e.origin;
  return s;
}

// "" when the entry's choice may stand in for an untuned shape whose default is cuBLASLt's heuristic; else why not.
std::string transfer_refusal(const CacheEntry& e, double min_margin) {
  if (e.candidate.backend == Backend::Blas)
    return "cuBLAS's own choice is picked anew at every shape, and the first-use trial already times it";
  if (e.candidate.backend != Backend::Own)
    return "a cuBLASLt algo config (tile, split-k) is picked for its own shape and does not transfer";
  if (!e.evidence.known())
    return "its margin over heuristic-first is not known (tuned before margins were recorded, or imported so)";
  if (e.evidence.min_margin() < min_margin)
    return "its " + e.evidence.describe() + " is below the x" + fixed(min_margin, 2) + " a stand-in needs";
  return "";
}

// "" when the tuned shapes in range (each already a valid stand-in) agree, and are enough, to vouch for one variant.
// One shape's win says little about its neighbours: on the H200's held-out shapes, 5 of 8 stand-ins vouched for by a
// single tuned shape (or by two that chose different variants) ran 7-27% slower than heuristic-first.
// Choices are compared as they would run p: a tile chosen staged at one shape and unstaged at another agrees.
std::string agreement_refusal(const std::vector<Neighbor>& in_range, int min_agreeing, const GemmProblem& p,
                              const TwinChooser& twin) {
  const std::string first = carry(in_range.front(), p, twin).candidate.id();
  for (const Neighbor& n : in_range)
    if (carry(n, p, twin).candidate.id() != first)
      return "the tuned shapes in range disagree (" + shape_of(in_range.front().entry->problem) + " chose " +
             in_range.front().entry->candidate.id() + ", " + shape_of(n.entry->problem) + " chose " +
             n.entry->candidate.id() + ")";
  if (static_cast<int>(in_range.size()) < min_agreeing)
    return "only " + std::to_string(in_range.size()) + " tuned shape in range chose " + first + "; " +
           std::to_string(min_agreeing) + " agreeing shapes are needed before its choice stands in";
  return "";
}

// Why an entry the fp32-equivalent policy admitted cannot stand in for p; "" when it can, or was not admitted.
std::string policy_refusal(const CacheEntry& e, const GemmProblem& p, const SelectionRules& rules) {
  if (!e.fp32_equivalent) return "";
  if (!rules.fp32_equivalent)
    return "it is a 3xtf32 candidate admitted by the fp32-equivalent policy, and RuntimeOptions::fp32_equivalent is off";
  if (p.k > e.problem.k)
    return "the fp32-equivalent policy measured its accuracy at k = " + std::to_string(e.problem.k) + " only";
  return "";
}

std::string policy_note(const CacheEntry& e) {
  if (!e.fp32_equivalent) return "";
  char error[32];
  std::snprintf(error, sizeof(error), "%.3g", e.verify_error);
  return "; 3xtf32 for this fp32 problem, admitted by the fp32-equivalent policy (error " + std::string(error) +
         " vs fp64) and allowed by RuntimeOptions::fp32_equivalent";
}

std::string standin_text(const Neighbor& n, const Carried& c) {
  return "no exact entry; nearest tuned shape " + shape_of(n.entry->problem) + " at log-distance " +
         fixed(n.distance, 2) + " stands in" + c.note + " (" + tuned_text(*n.entry) + "; " +
         n.entry->evidence.describe() + ")" + policy_note(*n.entry);
}

// The first-use trial's candidates (selection.hpp): the first becomes c's stand-in, the rest its trial_alternatives.
// First the specialists of p's shape class that the ranking cannot place, up to half the limit; then the own variants
// ranked by what the sweeps measured at the kind's shapes (variant_ranking.hpp); then, for a cache without
// measurements (imported) or to fill the list, the variants tuned shapes chose, nearest first.
// Neighbours in range whose choice cannot be tried are noted in `rejected`; those beyond it are passed over in silence
// (there may be hundreds). False when the kind offers no candidate.
bool trial_candidates(const CacheIndex& index, const std::vector<Neighbor>& neighbors, const GemmProblem& p,
                      const SelectionRules& rules, const SupportCheck& supports, const TwinChooser& twin,
                      const SpecialistsOf& specialists, std::vector<std::string>& rejected, Choice& c) {
  std::vector<std::string> taken;
  const auto take = [&](const Candidate& candidate, const std::string& why, const std::string& source) {
    taken.push_back(candidate.id());
    if (taken.size() == 1) {
      c.candidate = candidate;
      c.source = ChoiceSource::Nearest;
      c.why = why + "; to be confirmed against heuristic-first on this problem";
    } else {
      c.trial_alternatives.push_back({candidate, source});
    }
  };
  const auto full = [&] { return static_cast<int>(taken.size()) >= rules.max_trial_candidates; };

  const std::vector<MeasuredNeighbor> measured = index.measured_neighbors(p);
  const auto twin_at_p = [&](const Candidate& m) { return twin ? twin(p, m) : m; };
  const std::vector<RankedVariant> ranked = rank_own_variants(measured, twin_at_p);
  if (specialists) {
    const Specialists s = specialists(p);
    std::vector<MeasuredNeighbor> placing;  // the measurements that can rank the specialists for p
    for (const MeasuredNeighbor& n : measured)
      if (!s.ranked_by || s.ranked_by(n.shape->problem)) placing.push_back(n);
    const std::vector<RankedVariant> placed =
        placing.size() == measured.size() ? ranked : rank_own_variants(placing, twin_at_p);
    const auto is_ranked = [&](const Candidate& v) {
      return std::any_of(placed.begin(), placed.end(),
                         [&](const RankedVariant& r) { return r.candidate.id() == v.id(); });
    };
    std::vector<Candidate> unranked;
    for (const Candidate& v : s.candidates)
      if (!is_ranked(v) && supports(p, v).empty()) unranked.push_back(v);
    const std::size_t half = static_cast<std::size_t>(rules.max_trial_candidates + 1) / 2;
    if (unranked.size() > half) unranked.resize(half);
    const std::string why = "one of " + s.what + " that no sweep measured at the kind's tuned shapes (" +
                            std::to_string(unranked.size()) + " tried here)";
    for (const Candidate& v : unranked)
      take(v,
           "no exact entry; " + v.id() + " is " + why + (rules.cache_note.empty() ? "" : "; " + rules.cache_note),
           why);
  }
  int rank = 0;
  for (const RankedVariant& r : ranked) {
    if (full()) break;
    ++rank;
    if (!supports(p, r.candidate).empty()) continue;
    if (std::find(taken.begin(), taken.end(), r.candidate.id()) != taken.end()) continue;  // a specialist, above
    const std::string evidence = "x" + fixed(r.speedup, 2) + " over heuristic-first at " + std::to_string(r.shapes) +
                                 " measured shape" + (r.shapes == 1 ? "" : "s") + " of the kind, weighted toward " +
                                 shape_of(measured.front().shape->problem) + " at log-distance " +
                                 fixed(measured.front().distance, 2);
    take(r.candidate,
         "no exact entry; " + r.candidate.id() + " ranked " + std::to_string(rank) + " of the " +
             std::to_string(ranked.size()) + " own variants the sweeps measured (" + evidence + ")",
         "ranked " + std::to_string(rank) + " of " + std::to_string(ranked.size()) + ": " + evidence);
  }

  for (const Neighbor& n : neighbors) {
    if (full()) break;
    const bool in_range = n.distance <= rules.max_nearest_distance;
    const std::string name = "nearest " + shape_of(n.entry->problem) + "'s " + n.entry->candidate.id();
    if (const std::string weak = transfer_refusal(*n.entry, 1.0); !weak.empty()) {
      if (in_range) rejected.push_back(name + " is no candidate for a trial: " + weak);
      continue;
    }
    const Carried carried = carry(n, p, twin);
    if (std::find(taken.begin(), taken.end(), carried.candidate.id()) != taken.end()) continue;
    std::string why = policy_refusal(*n.entry, p, rules);
    if (why.empty()) why = supports(p, carried.candidate);
    if (!why.empty()) {
      if (in_range) rejected.push_back(name + " does not apply here: " + why);
      continue;
    }
    take(carried.candidate, standin_text(n, carried),
         "chosen at " + shape_of(n.entry->problem) + carried.note + ", log-distance " + fixed(n.distance, 2) + " (" +
             n.entry->evidence.describe() + ")");
  }
  if (taken.empty()) return false;
  for (const std::string& r : rejected) c.why += "; " + r;
  return true;
}

}  // namespace

const char* to_string(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::Exact: return "exact";
    case ChoiceSource::Nearest: return "nearest";
    case ChoiceSource::Default: return "default";
    case ChoiceSource::Pinned: return "pinned";
  }
  return "?";
}

Choice select_candidate(const CacheIndex& index, const GemmProblem& p, const SelectionRules& rules,
                        const SupportCheck& supports, const DefaultChooser& fallback, const TwinChooser& twin,
                        const SpecialistsOf& specialists) {
  std::vector<std::string> rejected;  // cached candidates that no longer apply, in the order they were tried
  Choice c;
  if (const CacheEntry* e = index.exact(p)) {
    std::string why = policy_refusal(*e, p, rules);
    if (why.empty()) why = supports(p, e->candidate);
    if (why.empty()) {
      c.candidate = e->candidate;
      c.source = ChoiceSource::Exact;
      c.why = "exact cache hit (" + tuned_text(*e) + "; " + e->evidence.describe() + ")" + policy_note(*e);
      return c;
    }
    rejected.push_back("the exact entry " + e->candidate.id() + " no longer applies: " + why);
  }

  const std::vector<Neighbor> neighbors = index.neighbors(p);
  std::vector<Neighbor> in_range;
  std::string beyond;  // the nearest shape too far away to be used, if that is why there is no nearest
  for (const Neighbor& n : neighbors) {
    if (n.distance <= rules.max_nearest_distance) {
      in_range.push_back(n);
      continue;
    }
    if (in_range.empty())
      beyond = "the nearest tuned shape " + shape_of(n.entry->problem) + " is at log-distance " +
               fixed(n.distance, 2) + ", beyond " + fixed(rules.max_nearest_distance, 2);
    break;
  }

  const DefaultCandidate d = fallback(p);
  std::string refusal;  // why the tuned shapes nearby may not stand in
  const bool on_trial = d.heuristic_first && rules.confirm_on_first_use;
  if (d.heuristic_first && !on_trial) {
    for (const Neighbor& n : in_range) {
      const std::string why = transfer_refusal(*n.entry, rules.min_transfer_margin);
      if (why.empty()) continue;
      refusal = "the tuned shape " + shape_of(n.entry->problem) + " at log-distance " + fixed(n.distance, 2) +
                " chose " + n.entry->candidate.id() + ": " + why;
      break;
    }
    if (refusal.empty() && !in_range.empty()) refusal = agreement_refusal(in_range, rules.min_agreeing_neighbours, p, twin);
  }
  if (on_trial) {
    if (trial_candidates(index, neighbors, p, rules, supports, twin, specialists, rejected, c)) return c;
  } else if (refusal.empty()) {
    for (const Neighbor& n : in_range) {
      const Carried carried = carry(n, p, twin);
      std::string why = policy_refusal(*n.entry, p, rules);
      if (why.empty()) why = supports(p, carried.candidate);
      if (!why.empty()) {
        rejected.push_back("nearest " + shape_of(n.entry->problem) + "'s " + n.entry->candidate.id() +
                           " does not apply here: " + why);
        continue;
      }
      c.candidate = carried.candidate;
      c.source = ChoiceSource::Nearest;
      c.why = standin_text(n, carried);
      if (d.heuristic_first)
        c.why += "; all " + std::to_string(in_range.size()) + " tuned shape" + (in_range.size() == 1 ? "" : "s") +
                 " within " + fixed(rules.max_nearest_distance, 2) + " chose our kernels by x" +
                 fixed(rules.min_transfer_margin, 2) + " or more in every condition";
      else
        c.why += ", re-checked OK for this shape; the default would be a guess (" + d.how + ")";
      for (const std::string& r : rejected) c.why += "; " + r;
      return c;
    }
  }

  c.candidate = d.candidate;
  c.source = ChoiceSource::Default;
  std::string because;
  if (!rules.cache_note.empty())
    because = rules.cache_note;
  else if (index.size() == 0)
    because = "the cache has no entry for this device";
  else if (!refusal.empty())
    because = "no evidence that a tuned shape's choice transfers here: " + refusal;
  else if (!beyond.empty())
    because = beyond;
  else if (rejected.empty())
    because = "the cache has no tuned entry of kind " + p.kind_key();
  else
    because = "no cached candidate of this kind applies";
  c.why = d.how + ", because " + because;
  for (const std::string& r : rejected) c.why += "; " + r;
  return c;
}

}  // namespace gemmtune::runtime
