#include "runtime/trial_decision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/error.hpp"
#include "lt/no_entry_candidates.hpp"
#include "problem/candidate_choice.hpp"

namespace gemmtune::runtime {
namespace {

constexpr const char* kKeptAmongWinners = " beat heuristic-first and was kept among the winners in a ";
constexpr const char* kRunsAsEagersCall =
    " runs as PyTorch eager's own call, held to which (below) nothing else could run, in a ";

// Why one winner of a trial runs rather than another (first_within_tie_band).
std::string kept_over_other_winners() {
  return " took the least time over the four conditions, or was first by id among those within " +
         std::to_string(static_cast<int>(std::lround(kChoiceTieBand * 100))) + "% of the least,";
}

// Whether t was timed in every condition.
bool timed_in_full(const TrialChallenger& t) {
  return t.times && t.times->warm.batches > 0 && t.times->cold.batches > 0 && t.times->graph.batches > 0 &&
         t.times->graph_cold.batches > 0;
}

// What a no-entry challenger that won is, and what it beat.
std::string no_entry_winner_text(const Candidate& c) {
  if (c.lt_padded)
    return "cuBLASLt heuristic's first algo on operands copied into 16-byte aligned rows, then our epilogue kernel: "
           "faster than heuristic-first on the unaligned rows in a ";
  if (c.backend == Backend::Blas)
    return "cuBLAS's own choice (cublasSgemm, as torch.mm calls it), then our epilogue kernel where there is one: "
           "faster than cuBLASLt's heuristic-first in a ";
  if (c.lt_bias_in_gemm)
    return "cuBLASLt heuristic's first algo with its BIAS epilogue, then our kernel for the rest (as PyTorch's "
           "addmm + activation): faster than heuristic-first in a ";
  if (c.lt_epilogue_kernel)
    return "cuBLASLt heuristic's first algo for the plain GEMM, then our epilogue kernel: faster than its fused "
           "epilogue in a ";
  return "cuBLASLt heuristic's first algo at a framework's smaller workspace: faster than at the runtime's in a ";
}

}  // namespace

std::vector<TrialChallenger> trial_challengers(const Choice& choice, const TrialSetting& s,
                                              const std::vector<Candidate>& no_entry,
                                              const std::vector<RankedVariant>& rivals) {
  const std::optional<Candidate>& eager = s.eager;
  std::vector<TrialChallenger> tried;
  if (s.had_standin) tried.push_back({choice.candidate, "the stand-in " + choice.candidate.id(), false, {}, {}});
  if (s.own_entry) tried.push_back({choice.candidate, "the entry " + choice.candidate.id(), false, {}, {}});
  if (s.own_entry && eager && !s.eager_is_heuristic_first())
    tried.push_back({*eager, eager->id() + " (PyTorch eager's own call, timed as the measure of the eager limit)",
                     true, {}, {}, false, true});
  for (const Candidate& c : no_entry)
    tried.push_back({c, c.id() + " (" + no_entry_challenger_kind(c) + ")", true, {}, {}, false,
                     eager && c.id() == eager->id()});
  if (s.had_standin)
    for (const Choice::Alternative& a : choice.trial_alternatives)
      tried.push_back({a.candidate, a.candidate.id() + " (" + a.source + ")", false, {}, {}});
  for (const RankedVariant& r : rivals) {
    char source[120];
    std::snprintf(source, sizeof(source), " (the sweep timed it x%.2f over heuristic-first at this shape)", r.speedup);
    tried.push_back({r.candidate, r.candidate.id() + source, false, {}, {}});
  }
  return tried;
}

std::string trial_times_text(const ProgramTrial& t) {
  std::string out;
  const std::pair<const char*, const TrialResult*> conditions[] = {
      {"stream warm", &t.warm}, {"stream cold", &t.cold}, {"graph warm", &t.graph},
      {"graph cold", &t.graph_cold}};
  for (const auto& [name, r] : conditions) {
    if (r->batches == 0) continue;
    char text[200];
    std::snprintf(text, sizeof(text),
                  out.empty()
                      ? "%s %.2f us per call (slowest batch %.2f) vs heuristic-first %.2f us (fastest batch %.2f)"
                      : "%s %.2f (slowest %.2f) vs %.2f (fastest %.2f)",
                  name, r->challenger_us, r->challenger_slowest_us, r->default_us, r->default_fastest_us);
    out += (out.empty() ? "" : ", ") + std::string(text);
  }
  return out;
}

void decide_after_trial(const std::vector<TrialChallenger>& tried, const TrialSetting& s, Choice& choice) {
  if (tried.empty()) throw CheckError("decide_after_trial: a trial of no challenger");
  const bool exact = s.exact, own_entry = s.own_entry, had_standin = s.had_standin;
  const DefaultCandidate& d = s.heuristic_first;
  const std::optional<Candidate>& eager = s.eager;
  const auto is_entry = [&](const Candidate& c) { return c.id() == choice.candidate.id(); };
  std::vector<ProgramTrial> times;
  for (const TrialChallenger& t : tried)
    if (t.times) times.push_back(*t.times);
  const DefaultFastest fastest = fastest_default(times);
  const auto wins = [&](const TrialChallenger& t) { return t.times && t.times->challenger_wins(fastest); };
  // The winner with the least time summed over the conditions; of sums within the tie band, the first by id, as the
  // sweep's finalist stage settles them (problem/candidate_choice.hpp: first_within_tie_band).
  std::vector<const TrialChallenger*> winners;
  for (const TrialChallenger& t : tried)
    if (wins(t) && !(own_entry && t.eager)) winners.push_back(&t);
  std::stable_sort(winners.begin(), winners.end(), [](const TrialChallenger* a, const TrialChallenger* b) {
    return a->candidate.id() < b->candidate.id();
  });
  std::vector<double> winner_us;
  for (const TrialChallenger* w : winners) winner_us.push_back(w->times->challenger_us());
  const int first = first_within_tie_band(winner_us);
  const TrialChallenger* best = first >= 0 ? winners[static_cast<std::size_t>(first)] : nullptr;
  if (own_entry && best && best != &tried.front() && timed_in_full(tried.front()) &&
      tried.front().times->challenger_us() <= best->times->challenger_us())
    best = nullptr;  // a near-tie beat heuristic-first by the floor where the entry did not, yet took longer
  const TrialChallenger* eager_tried = nullptr;
  for (const TrialChallenger& t : tried)
    if (t.eager) eager_tried = &t;
  std::optional<ConditionRatios> eager_ratios;
  if (s.eager_is_heuristic_first())
    eager_ratios = kHeuristicFirstRatios;
  else if (eager_tried && eager_tried->times)
    eager_ratios = ratios_over_heuristic_first(*eager_tried->times);
  // Null: heuristic-first's. Nullopt where a condition has no median to hold to the limit.
  const auto ratios_of = [](const TrialChallenger* t) -> std::optional<ConditionRatios> {
    if (!t) return kHeuristicFirstRatios;
    return t->times ? ratios_over_heuristic_first(*t->times) : std::nullopt;
  };
  std::string eager_note;  // why the eager limit changed what runs, if it did
  // What runs so far: `best`, else heuristic-first, or for an own entry the entry.
  const TrialChallenger* current = best ? best : own_entry ? &tried.front() : nullptr;
  // pool[0] is heuristic-first (null), or for an own entry the entry, the fallback the trial has there.
  std::vector<const TrialChallenger*> pool = {own_entry ? current : nullptr};
  for (const TrialChallenger* w : winners)
    if (w != pool.front()) pool.push_back(w);
  std::vector<TrialOption> held_options;
  for (const TrialChallenger* t : pool)
    if (const std::optional<ConditionRatios> r = ratios_of(t))
      held_options.push_back({*r, t ? t->times->challenger_us() : 0});
  if (eager_ratios && held_options.size() == pool.size()) {
    const int chosen = static_cast<int>(std::find(pool.begin(), pool.end(), current) - pool.begin());
    const int held = hold_to_eager_call(held_options, chosen, *eager_ratios);
    const TrialChallenger* runs = held >= 0 ? pool[static_cast<std::size_t>(held)] : eager_tried;
    if (runs != current) {
      const EagerDeficit behind = deficit_against_eager(*ratios_of(current), *eager_ratios);
      char text[360];
      std::snprintf(text, sizeof(text),
                    "; %s ran %.1f%% slower than PyTorch eager's own call (%s) in %s (medians over heuristic-first "
                    "in their pairs), beyond the %.1f%% by which what runs may trail it in any condition, so %s runs",
                    current ? current->candidate.id().c_str() : "heuristic-first", (behind.ratio - 1) * 100,
                    eager->id().c_str(), kConditionNames[behind.condition], kEagerCallLimit * 100,
                    runs ? runs->candidate.id().c_str() : "heuristic-first");
      eager_note = text;
      best = runs;
      if (best && std::find(winners.begin(), winners.end(), best) == winners.end()) winners.push_back(best);
    }
  }
  // What a call inside a graph capture runs, where it is not `best`: heuristic-first (timed beside `best` in its
  // pairs) or another winner, by its graph warm + graph cold time (faster_in_graph).
  struct GraphOption {
    Candidate candidate;
    std::string name;
    double warm_us, cold_us;
  };
  std::optional<GraphOption> in_graph;
  if (best) {
    const ProgramTrial& b = *best->times;
    // Inside a capture, too, nothing runs that trails eager's call from a graph beyond the limit.
    const auto graph_within = [&](const TrialChallenger* t) {
      const std::optional<ConditionRatios> r = ratios_of(t);
      return !eager_ratios || !r ||
             deficit_against_eager(*r, *eager_ratios, {false, false, true, true}).within_limit();
    };
    std::vector<GraphOption> options;
    if (graph_within(nullptr))
      options.push_back(
          {d.candidate, "heuristic-first (" + d.candidate.id() + ")", b.graph.default_us, b.graph_cold.default_us});
    int runs = -1;
    for (const TrialChallenger* w : winners) {
      if (w == best)
        runs = static_cast<int>(options.size());
      else if (!graph_within(w))
        continue;
      options.push_back({w->candidate, w->candidate.id(), w->times->graph.challenger_us,
                         w->times->graph_cold.challenger_us});
    }
    std::vector<double> graph_us;
    for (const GraphOption& o : options) graph_us.push_back(o.warm_us + o.cold_us);
    if (const int i = faster_in_graph(graph_us, runs); i >= 0)
      in_graph = options[static_cast<std::size_t>(i)];
  }
  // Where `best` runs: what a captured call runs instead, and why (appended to the choice's why).
  const auto choose_in_graph = [&] {
    if (!in_graph || choice.candidate.id() != best->candidate.id()) return;
    char text[320];
    std::snprintf(text, sizeof(text),
                  "; inside a CUDA graph capture %s runs instead, faster from a graph in this trial by more than "
                  "%.0f%%: graph warm %.2f + graph cold %.2f us per call against %.2f + %.2f",
                  in_graph->name.c_str(), kChoiceTieBand * 100, in_graph->warm_us, in_graph->cold_us,
                  best->times->graph.challenger_us, best->times->graph_cold.challenger_us);
    choice.in_graph = in_graph->candidate;
    choice.why += text;
  };
  std::string others;
  for (const TrialChallenger& t : tried)
    if (&t != best)
      others += "; " + t.name +
                (own_entry && t.eager ? std::string(" was timed beside them in a ")
                 : !wins(t)           ? std::string(" was not faster in a ")
                 : best ? " also beat heuristic-first, but " + best->candidate.id() + kept_over_other_winners() +
                              " in a "
                        : std::string(" beat heuristic-first where the entry did not, yet took longer than the "
                                      "entry, in a ")) +
                t.text;
  others += eager_note;
  if (!times.empty()) {
    char text[280];
    std::snprintf(text, sizeof(text),
                  "; each challenger's slowest batch was held against heuristic-first's fastest over the %zu "
                  "trials (stream warm %.2f us, stream cold %.2f, graph warm %.2f, graph cold %.2f), by %.0f%%",
                  times.size(), fastest.warm_us, fastest.cold_us, fastest.graph_us, fastest.graph_cold_us,
                  (kTrialNoiseFloor - 1) * 100);
    others += text;
    // What the trial held the challengers to (challenger_rule), read back from their results.
    if (std::any_of(tried.begin(), tried.end(),
                    [](const TrialChallenger& t) { return t.times && t.times->own_pairs && !t.times->by_median; }))
      others += "; a challenger that runs heuristic-first's own algo with another epilogue, or where either is a "
                "clustered cuBLASLt algo, was held against heuristic-first's batches in its own pairs only";
    if (std::any_of(tried.begin(), tried.end(), [](const TrialChallenger& t) { return t.times && t.times->by_median; }))
      others += "; what cuBLAS and cuBLASLt offer in the runtime's place was held to "
                "heuristic-first's medians in its own pairs, no floor: it wins where the geometric mean over the "
                "four conditions of its median over heuristic-first's is below 1";
  }
  others += s.cost;
  const std::string before = choice.why;
  if (own_entry) {
    // The sweep's evidence stands against heuristic-first: a near-tie replaces the entry only by beating
    // heuristic-first here and the entry's own time in this trial.
    // No `best` after the eager limit changed it: heuristic-first, which is eager's call there.
    const Candidate& runs = best ? best->candidate : eager_note.empty() ? choice.candidate : d.candidate;
    choice.why = before + "; the sweep timed other own variants within " +
                 std::to_string(static_cast<int>(kRivalWithin * 100)) +
                 "% of it at this shape, so a first-use trial on this problem decided: " +
                 (is_entry(runs) ? "it runs" : runs.id() + " runs") + ", " +
                 (best ? best->name + (best->eager ? kRunsAsEagersCall : kKeptAmongWinners) + best->text
                  : !eager_note.empty()
                      ? std::string("heuristic-first, which is PyTorch eager's own call here, by the eager limit "
                                    "(below)")
                      : std::string("no near-tie beat both heuristic-first and the entry, so the sweep's choice "
                                    "stands")) +
                 others;
    choice.candidate = runs;
    choose_in_graph();
    return;
  }
  if (exact) {
    // A trial that ran out of budget before it had timed the entry in full says nothing against the sweep's
    // measurement: the entry stands unless a challenger won.
    // Where the eager limit set `best` aside, the limit decided.
    const bool entry_stands =
        !best && eager_note.empty() &&
        std::any_of(tried.begin(), tried.end(),
                    [&](const TrialChallenger& t) { return is_entry(t.candidate) && t.out_of_budget; });
    const Candidate& runs = best ? best->candidate : entry_stands ? choice.candidate : d.candidate;
    choice.why = before + "; it is one of what the runtime tries without an entry, so a first-use trial on this "
                 "problem decided: " + (is_entry(runs) ? "it runs" : runs.id() + " runs") + ", " +
                 (best           ? best->name + (wins(*best) ? kKeptAmongWinners : kRunsAsEagersCall) + best->text
                  : entry_stands ? std::string("no challenger beat heuristic-first, and the trial's budget ran "
                                               "out before it had timed the entry in full")
                                 : std::string("no challenger beat heuristic-first")) +
                 others;
    choice.candidate = runs;
    choose_in_graph();
    return;
  }
  if (!best) {
    choice.candidate = d.candidate;
    choice.source = ChoiceSource::Default;
    choice.why = had_standin
                     ? d.how +
                           (eager_note.empty() ? ", because no challenger beat it on this problem"
                                               : ", because every winner trailed PyTorch eager's own call") +
                           others + " (" + before + ")"
                     : before + others;
  } else if (had_standin && best == &tried.front()) {
    choice.why = before + "; confirmed by a " + best->text + others;
  } else if (best->no_entry) {
    choice.candidate = best->candidate;
    choice.source = ChoiceSource::Default;
    choice.why = (wins(*best) ? no_entry_winner_text(best->candidate) : best->name + kRunsAsEagersCall) +
                 best->text + others + " (the default: " +
                 (had_standin ? d.how : before) + ")";
  } else {
    choice.candidate = best->candidate;
    choice.why = best->name + kKeptAmongWinners + best->text + others + " (" + before + ")";
  }
  choose_in_graph();
}

}  // namespace gemmtune::runtime
