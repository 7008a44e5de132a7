#include "tuner/sweep_from_db.hpp"

#include <map>

#include "common/error.hpp"

namespace gemmtune {

SweepResult sweep_result_from_db(const TuningDb& db, const std::string& device_key) {
  SweepResult result;
  bool found = false;
  for (const RunInfo& run : db.runs())
    if (run.device.key() == device_key) {
      if (!found) result.run.started_at = run.started_at;  // the earliest: where a sharded sweep began
      const std::string started = result.run.started_at;
      result.run = run;  // ids only grow: the last one is the latest
      result.run.started_at = started;
      found = true;
    }
  if (!found) throw InputError("no run of device key '" + device_key + "' in " + db.path());
  std::map<std::string, std::size_t> position;
  for (MeasurementRecord& r : db.latest_measurements(device_key)) {
    const std::string key = r.problem.key();
    auto [it, added] = position.emplace(key, result.problems.size());
    if (added) {
      result.problems.emplace_back();
      result.problems.back().problem = r.problem;
    }
    if (r.status == MeasureStatus::VerifyFailed) ++result.verify_failures;
    if (r.status == MeasureStatus::Error) ++result.errors;
    if (r.stats.timer == "events") result.timer_warning = "some records were timed with CUDA events";
    result.problems[it->second].records.push_back(std::move(r));
  }
  return result;
}

}  // namespace gemmtune
