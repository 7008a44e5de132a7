#include "tuner/sweep_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "problem/candidate_choice.hpp"

namespace gemmtune {
namespace {

std::string us_text(double us) {
  if (us <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", us);
  return buf;
}

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write '" + path + "'");
  return out;
}

// The sweep's "cost": its own setup and wall time, its measured problems and their costs summed.
nlohmann::json sweep_cost_json(const SweepResult& result) {
  ProblemCost sum;
  int measured = 0;
  for (const ProblemResult& pr : result.problems)
    if (!pr.resumed) {
      sum += pr.cost;
      ++measured;
    }
  nlohmann::json j = cost_json(sum);
  j["problems"] = measured;
  j["problems_wall_s"] = j["wall_s"];
  j["wall_s"] = result.wall_s;
  j["setup_s"] = result.setup_s;
  if (!result.gpus.empty()) {
    j["gpus"] = nlohmann::json::array();
    for (const SweepResult::GpuShare& g : result.gpus)
      j["gpus"].push_back({{"device", g.device}, {"shards", g.shards}, {"busy_s", g.busy_s}, {"sweep_s", g.sweep_s}});
  }
  return j;
}

}  // namespace

nlohmann::json cost_json(const ProblemCost& c) {
  return {{"wall_s", c.wall_s},         {"prepare_s", c.prepare_s}, {"verify_s", c.verify_s},
          {"sample_s", c.sample_s},     {"finalist_s", c.finalist_s}, {"store_s", c.store_s},
          {"candidates", c.candidates}, {"sampled", c.sampled},     {"pruned", c.pruned},
          {"finalists", c.finalists},   {"out_of_reach", c.out_of_reach}};
}

ProblemCost cost_from_json(const nlohmann::json& problem_entry) {
  ProblemCost c;
  if (!problem_entry.contains("cost") || !problem_entry["cost"].is_object()) return c;
  const nlohmann::json& j = problem_entry["cost"];
  c.wall_s = j.value("wall_s", 0.0);
  c.prepare_s = j.value("prepare_s", 0.0);
  c.verify_s = j.value("verify_s", 0.0);
  c.sample_s = j.value("sample_s", 0.0);
  c.finalist_s = j.value("finalist_s", 0.0);
  c.store_s = j.value("store_s", 0.0);
  c.candidates = j.value("candidates", 0);
  c.sampled = j.value("sampled", 0);
  c.pruned = j.value("pruned", 0);
  c.finalists = j.value("finalists", 0);
  c.out_of_reach = j.value("out_of_reach", 0);
  return c;
}

nlohmann::json finalist_stage_json(const ProblemResult& pr) {
  const MeasurementRecord* kept = pr.kept_record >= 0 ? kept_candidate(pr) : nullptr;
  if (!kept) return nullptr;
  nlohmann::json finalists = nlohmann::json::array();
  for (const FinalistTiming& f : pr.finalists) {
    nlohmann::json conditions = nlohmann::json::array();
    for (const ConditionTime& c : f.conditions)
      conditions.push_back({{"condition", c.condition}, {"median_us", c.median_us}, {"rel_spread", c.rel_spread}});
    finalists.push_back(
        {{"candidate", f.candidate}, {"role", f.role}, {"noise_bound", f.noise_bound}, {"conditions", conditions}});
  }
  return {{"kept", kept->candidate.id()}, {"evidence", pr.evidence.encode()}, {"finalists", finalists}};
}

void finalist_stage_from_json(const nlohmann::json& problem_entry, ProblemResult& pr) {
  if (!problem_entry.contains("finalist_stage")) return;
  const std::string where = "finalist_stage of " + pr.problem.key();
  try {
    const nlohmann::json& j = problem_entry.at("finalist_stage");
    const std::string kept = j.at("kept").get<std::string>();
    const auto it = std::find_if(pr.records.begin(), pr.records.end(), [&](const MeasurementRecord& r) {
      return r.status == MeasureStatus::Ok && r.candidate.id() == kept;
    });
    if (it == pr.records.end()) throw InputError(where + ": kept candidate '" + kept + "' has no ok record");
    std::vector<FinalistTiming> finalists;
    for (const nlohmann::json& f : j.at("finalists")) {
      FinalistTiming t{f.at("candidate").get<std::string>(), f.at("role").get<std::string>(),
                       f.at("noise_bound").get<double>(), {}};
      for (const nlohmann::json& c : f.at("conditions"))
        t.conditions.push_back({c.at("condition").get<std::string>(), c.at("median_us").get<double>(),
                                c.at("rel_spread").get<double>()});
      finalists.push_back(std::move(t));
    }
    pr.evidence = MarginEvidence::decode(j.at("evidence").get<std::string>());
    pr.kept_record = static_cast<int>(it - pr.records.begin());
    pr.finalists = std::move(finalists);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": " + e.what());
  }
}

std::string cost_summary(const SweepResult& result) {
  ProblemCost sum;
  int measured = 0, staged = 0;
  for (const ProblemResult& pr : result.problems) {
    if (pr.resumed) continue;
    sum += pr.cost;
    ++measured;
    staged += pr.cost.finalists > 0 ? 1 : 0;
  }
  if (measured == 0) return "";
  char line[640];
  std::snprintf(line, sizeof(line),
                "cost: %d problems in %.1f s (%.2f s each): prepare %.1f s, verify and first batches %.1f s, "
                "sampling %.1f s, finalist stage %.1f s, db %.1f s; %d candidates: %d sampled to convergence, "
                "%d pruned after their first batch; finalist stage at %d problems (%d challengers timed, %d out of "
                "reach)",
                measured, sum.wall_s, sum.wall_s / measured, sum.prepare_s, sum.verify_s, sum.sample_s,
                sum.finalist_s, sum.store_s, sum.candidates, sum.sampled, sum.pruned, staged, sum.finalists,
                sum.out_of_reach);
  return line;
}

ProblemSummary summarize_problem(const ProblemResult& pr) {
  ProblemSummary s;
  s.problem_key = pr.problem.key();
  for (const MeasurementRecord& r : pr.records) {
    ++s.candidates;
    if (r.status == MeasureStatus::VerifyFailed) ++s.verify_failed;
    if (r.status != MeasureStatus::Ok) continue;
    double& backend_best = r.candidate.backend == Backend::Own ? s.best_own_us : s.best_lt_us;
    if (backend_best == 0 || r.stats.median_us < backend_best) backend_best = r.stats.median_us;
  }
  if (const MeasurementRecord* first = heuristic_first(pr.records)) s.heuristic_first_us = first->stats.median_us;
  if (const MeasurementRecord* chosen = kept_candidate(pr)) {
    s.best_us = chosen->stats.median_us;
    s.best_candidate = chosen->candidate.id();
    s.best_tflops = chosen->tflops();
  }
  return s;
}

void print_sweep_table(const SweepResult& result, std::ostream& out) {
  out << "device: " << result.run.device.key() << "\n";
  char line[512];
  std::snprintf(line, sizeof(line), "%-44s %10s %10s %10s %10s %8s %8s %7s  %s\n", "problem", "lt-heur0", "lt-best",
                "own-best", "best", "speedup", "own/lt", "TFLOP/s", "chosen");
  out << line;
  for (const ProblemResult& pr : result.problems) {
    if (pr.resumed) {
      std::snprintf(line, sizeof(line), "%-44s (already in the db: --resume)\n", pr.problem.key().c_str());
      out << line;
      continue;
    }
    const ProblemSummary s = summarize_problem(pr);
    const std::string speedup = s.heuristic_first_us > 0 && s.best_us > 0 ? us_text(s.heuristic_first_us / s.best_us) : "-";
    const std::string own_vs_lt = s.best_own_us > 0 && s.best_lt_us > 0 ? us_text(s.best_lt_us / s.best_own_us) : "-";
    std::snprintf(line, sizeof(line), "%-44s %10s %10s %10s %10s %8s %8s %7.1f  %s%s\n", s.problem_key.c_str(),
                  us_text(s.heuristic_first_us).c_str(), us_text(s.best_lt_us).c_str(), us_text(s.best_own_us).c_str(),
                  us_text(s.best_us).c_str(), speedup.c_str(), own_vs_lt.c_str(), s.best_tflops,
                  s.best_candidate.empty() ? "(no verified candidate)" : s.best_candidate.c_str(),
                  s.verify_failed ? (" [" + std::to_string(s.verify_failed) + " failed verification]").c_str() : "");
    out << line;
  }
  bool any_metrics = false;
  for (const ProblemResult& pr : result.problems) any_metrics = any_metrics || pr.metrics.has_value();
  if (any_metrics) {
    std::snprintf(line, sizeof(line), "\n%-44s %10s %10s %6s %7s %8s %8s  %s\n", "metrics of the best candidate",
                  "DRAM MB", "min MB", "x min", "SM %", "bound", "% bound", "candidate");
    out << line;
    for (const ProblemResult& pr : result.problems) {
      if (!pr.metrics) continue;
      const ProblemMetrics& m = *pr.metrics;
      std::snprintf(line, sizeof(line), "%-44s %10.1f %10.1f %6.2f %7.1f %8s %8s  %s\n", pr.problem.key().c_str(),
                    m.counters.dram_bytes() / 1e6, m.min_dram_bytes / 1e6, m.counters.dram_bytes() / m.min_dram_bytes,
                    m.counters.sm_throughput_pct, m.roofline ? to_string(m.roofline->bound) : "?",
                    m.roofline ? us_text(m.roofline->pct_of_bound).c_str() : "?", m.candidate_id.c_str());
      out << line;
    }
    out << "DRAM bytes and SM throughput from CUPTI's range profiler (L2 flushed before the call); bound and % of it "
           "from the sweep's median against the GPU's nominal peaks\n";
  }
  if (const std::string cost = cost_summary(result); !cost.empty()) out << cost << "\n";
  out << "times are medians in microseconds of CUPTI kernel time (" << (result.timer_warning.empty() ? "cupti" : "events")
      << "); speedup = lt-heur0 / best; own/lt = lt-best / own-best (>1: ours faster)\n";
}

nlohmann::json problem_summary_json(const ProblemResult& pr) {
  const ProblemSummary s = summarize_problem(pr);
  return {{"problem_key", s.problem_key},
          {"heuristic_first_us", s.heuristic_first_us},
          {"best_lt_us", s.best_lt_us},
          {"best_own_us", s.best_own_us},
          {"best_us", s.best_us},
          {"best_candidate", s.best_candidate},
          {"best_tflops", s.best_tflops},
          {"candidates", s.candidates},
          {"verify_failed", s.verify_failed}};
}

nlohmann::json sweep_json(const SweepResult& result) {
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemResult& pr : result.problems) {
    for (const MeasurementRecord& r : pr.records) results.push_back(r);
    if (pr.resumed) continue;
    problems.push_back(problem_summary_json(pr));
    problems.back()["cost"] = cost_json(pr.cost);
    if (nlohmann::json stage = finalist_stage_json(pr); !stage.is_null()) problems.back()["finalist_stage"] = stage;
    if (pr.metrics) {
      const ProblemMetrics& m = *pr.metrics;
      nlohmann::json jm = {{"candidate", m.candidate_id},
                           {"dram_bytes", m.counters.dram_bytes()},
                           {"dram_read_bytes", m.counters.dram_read_bytes},
                           {"dram_write_bytes", m.counters.dram_write_bytes},
                           {"min_dram_bytes", m.min_dram_bytes},
                           {"sm_throughput_pct", m.counters.sm_throughput_pct},
                           {"dram_throughput_pct", m.counters.dram_throughput_pct},
                           {"passes", m.counters.passes}};
      if (m.roofline)
        jm["roofline"] = {{"bound", to_string(m.roofline->bound)},
                          {"intensity_flop_per_byte", m.roofline->intensity},
                          {"ridge_flop_per_byte", m.roofline->ridge},
                          {"attainable_tflops", m.roofline->attainable_tflops},
                          {"achieved_tflops", m.roofline->achieved_tflops},
                          {"pct_of_bound", m.roofline->pct_of_bound}};
      problems.back()["metrics"] = jm;
    }
  }
  return {{"schema", "gemmtune.sweep"},
          {"schema_version", 1},
          {"gemmtune_version", result.run.gemmtune_version},
          {"device", result.run.device},
          {"profile", result.run.profile},
          {"run_id", result.run.id},
          {"started_at", result.run.started_at},
          {"finished_at", result.run.finished_at},
          {"timer", result.timer_warning.empty() ? "cupti" : "events"},
          {"results", results},
          {"problems", problems},
          {"cost", sweep_cost_json(result)}};
}

void write_sweep_json(const SweepResult& result, const std::string& path) {
  std::ofstream out = open_output(path);
  out << sweep_json(result).dump(2) << "\n";
}

void write_sweep_csv(const SweepResult& result, const std::string& path) {
  std::ofstream out = open_output(path);
  out << "key,problem_key,candidate,backend,mode,status,median_us,p10_us,p90_us,samples,verify_error,tflops,timer,"
         "sm_clock_mhz\n";
  for (const ProblemResult& pr : result.problems)
    for (const MeasurementRecord& r : pr.records)
      out << r.key() << ',' << r.problem.key() << ',' << r.candidate.id() << ',' << to_string(r.candidate.backend)
          << ',' << to_string(r.problem.mode) << ',' << to_string(r.status) << ',' << r.stats.median_us << ','
          << r.stats.p10_us << ',' << r.stats.p90_us << ',' << r.stats.samples << ',' << r.verify_error << ','
          << r.tflops() << ',' << r.stats.timer << ',' << r.stats.sm_clock_mhz << '\n';
}

}  // namespace gemmtune
