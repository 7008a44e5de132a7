#include "profiler/report_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "common/data_dir.hpp"
#include "profiler/gpu_peaks.hpp"
#include "profiler/roofline.hpp"

namespace gemmtune {
namespace {

using Case = std::pair<std::string, std::string>;  // (problem key, candidate id)

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

std::string shape(const GemmProblem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

nlohmann::json problem_json(const GemmProblem& p) {
  const std::string key = p.key();
  // The key's fields in order: pass:shape:layout:out:epilogue:mode.
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t end; (end = key.find(':', start)) != std::string::npos; start = end + 1)
    fields.push_back(key.substr(start, end - start));
  fields.push_back(key.substr(start));
  return {{"problem_key", key}, {"pass", fields[0]}, {"shape", shape(p)},   {"layout", fields[2]},
          {"out", fields[3]},   {"epilogue", fields[4]}, {"mode", fields[5]}, {"flops", p.flops()}};
}

nlohmann::json peaks_json(const std::optional<GpuPeaks>& peaks) {
  if (!peaks) return nullptr;
  return {{"model", peaks->model},
          {"nominal", true},
          {"tflops", {{"fp32", peaks->tflops(MathMode::Fp32)},
                      {"tf32", peaks->tflops(MathMode::Tf32)},
                      {"3xtf32", peaks->tflops(MathMode::Tf32x3)}}},
          {"dram_tbytes_per_s", peaks->dram_tbytes_per_s}};
}

// The imported kernels of one case, reduced to one call: per launch index the median over profiled calls.
struct NcuCase {
  std::vector<NcuKernelMetrics> rows;  // of the latest import only
  double call_us = 0;                  // sum over launch indices of the median duration
  double call_dram_bytes = 0;          // likewise for DRAM bytes; < 0 when a kernel lacked it
};

std::map<Case, NcuCase> ncu_cases(const std::vector<NcuKernelMetrics>& rows) {
  std::map<Case, std::string> latest_import;
  for (const NcuKernelMetrics& r : rows) {
    std::string& t = latest_import[{r.problem_key, r.candidate_id}];
    t = std::max(t, r.imported_at);
  }
  std::map<Case, NcuCase> cases;
  for (const NcuKernelMetrics& r : rows)
    if (r.imported_at == latest_import[{r.problem_key, r.candidate_id}])
      cases[{r.problem_key, r.candidate_id}].rows.push_back(r);
  for (auto& [which, c] : cases) {
    std::map<int, std::vector<double>> durations, bytes;
    for (const NcuKernelMetrics& r : c.rows) {
      durations[r.launch_index].push_back(r.duration_us);
      bytes[r.launch_index].push_back(r.dram_bytes);
    }
    for (const auto& [index, d] : durations) c.call_us += median(d);
    for (const auto& [index, b] : bytes) {
      const double m = median(b);
      c.call_dram_bytes = (m < 0 || c.call_dram_bytes < 0) ? -1 : c.call_dram_bytes + m;
    }
  }
  return cases;
}

nlohmann::json roofline_json(const GemmProblem& p, double median_us, double dram_bytes, const char* bytes_source,
                             const std::optional<GpuPeaks>& peaks) {
  if (!peaks || median_us <= 0 || dram_bytes <= 0) return nullptr;
  const RooflineVerdict v =
      classify_roofline(p.flops(), dram_bytes, median_us * 1e-6, peaks->tflops(p.mode), peaks->dram_tbytes_per_s);
  return {{"bound", to_string(v.bound)},          {"intensity", v.intensity},
          {"ridge", v.ridge},                     {"attainable_tflops", v.attainable_tflops},
          {"achieved_tflops", v.achieved_tflops}, {"pct_of_bound", v.pct_of_bound},
          {"dram_bytes", dram_bytes},             {"bytes_source", bytes_source}};
}

// The latest run's fields with the latest measurements of every problem (TuningDb::latest_measurements): the same
// for one sweep whether it ran as one process or as shards merged into one db.
nlohmann::json run_json(const TuningDb& db, const RunInfo& run) {
  nlohmann::json measurements = nlohmann::json::array();
  std::map<std::string, std::vector<const MeasurementRecord*>> by_problem;
  const std::vector<MeasurementRecord> records = db.latest_measurements(run.device.key());
  for (const MeasurementRecord& r : records) {
    nlohmann::json m = problem_json(r.problem);
    m.update({{"candidate_id", r.candidate.id()},
              {"backend", to_string(r.candidate.backend)},
              {"heuristic_rank", r.candidate.heuristic_rank},
              {"status", to_string(r.status)},
              {"median_us", r.stats.median_us},
              {"p10_us", r.stats.p10_us},
              {"p90_us", r.stats.p90_us},
              {"tflops", r.tflops()},
              {"timer", r.stats.timer}});
    measurements.push_back(std::move(m));
    if (r.status == MeasureStatus::Ok) by_problem[r.problem.key()].push_back(&r);
  }
  nlohmann::json speedups = nlohmann::json::array();
  for (const auto& [key, ok] : by_problem) {
    const auto best = std::min_element(ok.begin(), ok.end(), [](auto* a, auto* b) {
      return a->stats.median_us < b->stats.median_us;
    });
    const auto first = std::find_if(ok.begin(), ok.end(), [](auto* r) {
      return r->candidate.backend == Backend::Lt && r->candidate.heuristic_rank == 0;
    });
    if (first == ok.end()) continue;  // cuBLASLt did not run this problem: nothing to compare with
    nlohmann::json s = problem_json((*best)->problem);
    s.update({{"heuristic_first_id", (*first)->candidate.id()},
              {"heuristic_first_us", (*first)->stats.median_us},
              {"best_id", (*best)->candidate.id()},
              {"best_backend", to_string((*best)->candidate.backend)},
              {"best_us", (*best)->stats.median_us},
              {"speedup", (*first)->stats.median_us / (*best)->stats.median_us}});
    speedups.push_back(std::move(s));
  }
  return {{"id", run.id},
          {"profile", run.profile},
          {"started_at", run.started_at},
          {"finished_at", run.finished_at},
          {"gemmtune_version", run.gemmtune_version},
          {"sm_clock_max_mhz", run.sm_clock_max_mhz},
          {"measurements", measurements},
          {"speedups", speedups}};
}

nlohmann::json device_json(const TuningDb& db, const std::string& device_key, const std::optional<RunInfo>& latest) {
  const std::optional<GpuPeaks> peaks = nominal_peaks(gpu_name_of_device_key(device_key));
  const std::map<Case, NcuCase> ncu = ncu_cases(db.ncu_metrics(device_key));

  // The sweep's own time for a case: the latest run's median for that candidate, else the cache entry's.
  std::map<Case, std::pair<double, std::string>> sweep_us;
  nlohmann::json run = nullptr;
  if (latest) {
    run = run_json(db, *latest);
    for (const auto& m : run["measurements"])
      if (m["status"] == "ok")
        sweep_us[{m["problem_key"].get<std::string>(), m["candidate_id"].get<std::string>()}] = {m["median_us"].get<double>(),
                                                           "run " + std::to_string(latest->id)};
  }

  CacheFilter filter;
  filter.device_key = device_key;
  nlohmann::json cache = nlohmann::json::array();
  for (const CacheEntry& e : db.cache_entries(filter)) {
    const Case which{e.problem.key(), e.candidate.id()};
    sweep_us.emplace(which, std::make_pair(e.stats.median_us, std::string("algo cache")));
    // ncu's bytes place a case only when ncu started from cold caches (--cache-control all), as the analytic
    // minimum assumes: with warm caches a 1024³ tf32 GEMM read 12 KB of its 12 MB from DRAM on the H100.
    const auto measured = ncu.find(which);
    const bool ncu_bytes = measured != ncu.end() && measured->second.call_dram_bytes > 0 &&
                           measured->second.rows.front().cache_control == "all";
    nlohmann::json c = problem_json(e.problem);
    c.update({{"candidate_id", which.second},
              {"backend", to_string(e.candidate.backend)},
              {"median_us", e.stats.median_us},
              {"tflops", e.stats.median_us > 0 ? e.problem.flops() / (e.stats.median_us * 1e6) : 0.0},
              {"roofline", roofline_json(e.problem, e.stats.median_us,
                                         ncu_bytes ? measured->second.call_dram_bytes : min_dram_bytes(e.problem),
                                         ncu_bytes ? "ncu dram__bytes.sum" : "analytic minimum", peaks)}});
    cache.push_back(std::move(c));
  }

  nlohmann::json ncu_json = nlohmann::json::array();
  for (const auto& [which, c] : ncu) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const NcuKernelMetrics& k : c.rows) {
      nlohmann::json stalls = nlohmann::json::parse(k.top_stalls.empty() ? "[]" : k.top_stalls, nullptr, false);
      kernels.push_back({{"kernel_name", k.kernel_name},
                         {"launch_index", k.launch_index},
                         {"duration_us", k.duration_us},
                         {"sm_throughput_pct", k.sm_throughput_pct},
                         {"memory_throughput_pct", k.memory_throughput_pct},
                         {"dram_throughput_pct", k.dram_throughput_pct},
                         {"achieved_occupancy_pct", k.achieved_occupancy_pct},
                         {"registers_per_thread", k.registers_per_thread},
                         {"shared_mem_bytes", k.shared_mem_bytes},
                         {"dram_bytes", k.dram_bytes},
                         {"l2_hit_rate_pct", k.l2_hit_rate_pct},
                         {"top_stalls", stalls.is_discarded() ? nlohmann::json::array() : stalls}});
    }
    const auto sweep = sweep_us.find(which);
    const double sweep_median = sweep == sweep_us.end() ? -1 : sweep->second.first;
    ncu_json.push_back({{"problem_key", which.first},
                        {"candidate_id", which.second},
                        {"cache_control", c.rows.front().cache_control},
                        {"report_path", c.rows.front().report_path},
                        {"imported_at", c.rows.front().imported_at},
                        {"profiled_kernels", c.rows.size()},
                        {"ncu_call_us", c.call_us},
                        {"sweep_median_us", sweep_median},
                        {"sweep_source", sweep == sweep_us.end() ? "" : sweep->second.second},
                        {"ncu_over_sweep", sweep_median > 0 ? c.call_us / sweep_median : -1.0},
                        {"kernels", kernels}});
  }

  return {{"device_key", device_key}, {"gpu_name", gpu_name_of_device_key(device_key)},
          {"peaks", peaks_json(peaks)}, {"latest_run", run},
          {"cache", cache},           {"ncu", ncu_json}};
}

}  // namespace

nlohmann::json build_report_json(const TuningDb& db) {
  std::map<std::string, RunInfo> latest_run;  // by device key: ids only grow
  for (const RunInfo& r : db.runs()) {
    auto [it, inserted] = latest_run.emplace(r.device.key(), r);
    if (!inserted && r.id > it->second.id) it->second = r;
  }
  std::set<std::string> device_keys;
  for (const auto& [key, run] : latest_run) device_keys.insert(key);
  for (const CacheEntry& e : db.cache_entries()) device_keys.insert(e.device_key);

  nlohmann::json devices = nlohmann::json::array();
  for (const std::string& key : device_keys) {
    const auto run = latest_run.find(key);
    devices.push_back(device_json(db, key, run == latest_run.end() ? std::nullopt : std::optional<RunInfo>(run->second)));
  }
  return {{"db", db.path()}, {"gemmtune_version", GEMMTUNE_VERSION}, {"devices", devices}};
}

std::string default_report_script() {
  if (const char* env = std::getenv("GEMMTUNE_REPORT_SCRIPT")) return env;
  return data_dir() + "/scripts/report.py";
}

}  // namespace gemmtune
