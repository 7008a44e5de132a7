#include "runtime/selection.hpp"

#include <cstdio>
#include <vector>

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

// "tuned median 16.20 us (run 7)", "(run 3 of other.db)" when it came through import or merge.
std::string tuned_text(const CacheEntry& e) {
  std::string s = "tuned median " + fixed(e.stats.median_us, 2) + " us, run " + std::to_string(e.run_id);
  if (!e.origin.empty()) s += " of " + e.origin;
  return s;
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
                        const SupportCheck& supports, const DefaultChooser& fallback) {
  std::vector<std::string> rejected;  // cached candidates that no longer apply, in the order they were tried
  Choice c;
  if (const CacheEntry* e = index.exact(p)) {
    std::string why = policy_refusal(*e, p, rules);
    if (why.empty()) why = supports(p, e->candidate);
    if (why.empty()) {
      c.candidate = e->candidate;
      c.source = ChoiceSource::Exact;
      c.why = "exact cache hit (" + tuned_text(*e) + ")" + policy_note(*e);
      return c;
    }
    rejected.push_back("the exact entry " + e->candidate.id() + " no longer applies: " + why);
  }

  std::string beyond;  // the nearest shape too far away to be used, if that is why there is no nearest
  for (const Neighbor& n : index.neighbors(p)) {
    if (n.distance > rules.max_nearest_distance) {
      beyond = std::string(rejected.empty() ? "the nearest" : "the next") + " tuned shape " +
               shape_of(n.entry->problem) + " is at log-distance " + fixed(n.distance, 2) + ", beyond " +
               fixed(rules.max_nearest_distance, 2);
      break;
    }
    std::string why = policy_refusal(*n.entry, p, rules);
    if (why.empty()) why = supports(p, n.entry->candidate);
    if (!why.empty()) {
      rejected.push_back("nearest " + shape_of(n.entry->problem) + "'s " + n.entry->candidate.id() +
                         " does not apply here: " + why);
      continue;
    }
    c.candidate = n.entry->candidate;
    c.source = ChoiceSource::Nearest;
    c.why = "no exact entry; nearest tuned shape " + shape_of(n.entry->problem) + " at log-distance " +
            fixed(n.distance, 2) + " (" + tuned_text(*n.entry) + "), re-checked OK for this shape" +
            policy_note(*n.entry);
    for (const std::string& r : rejected) c.why += "; " + r;
    return c;
  }

  const DefaultCandidate d = fallback(p);
  c.candidate = d.candidate;
  c.source = ChoiceSource::Default;
  std::string because;
  if (!rules.cache_note.empty())
    because = rules.cache_note;
  else if (index.size() == 0)
    because = "the cache has no entry for this device";
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
