// What a sweep learns about one candidate on one problem, and about the run it belongs to.
// These are the rows of the db (measurements, runs) and the records of `sweep --json`, which the gate compares.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

enum class MeasureStatus {
  Ok,            // verified and timed
  VerifyFailed,  // ran, but its result is wrong: never cached
  Unsupported,   // does not apply to this problem (alignment, layout, mode): skipped, not failed
  Error          // a library call failed while running it
};
const char* to_string(MeasureStatus s);
MeasureStatus parse_measure_status(const std::string& s);

// Robust statistics over per-call kernel times in microseconds.
struct TimingStats {
  double median_us = 0, p10_us = 0, p90_us = 0, mean_us = 0, stddev_us = 0, min_us = 0, max_us = 0;
  int samples = 0;
  std::string timer;         // "cupti" (kernel time from activity records) or "events" (fallback)
  double sm_clock_mhz = 0;   // measured SM clock while sampling; 0 when unknown
  // Cross-check: CUDA events around 20 back-to-back calls, divided by 20 (launch gaps included, so it is never
  // below the kernel-time median by more than noise). In sweep outputs only; 0 when not measured.
  double events_per_call_us = 0;
  // Why sampling stopped: "converged", "time cap" (the stopping rule's), "wall cap" (the host's), or a pruning rule
  // ("pruned: first_batch", tuner/candidate_pruning.hpp): then the statistics are of that short batch only. Empty in
  // records read back from a db.
  std::string stopped_by;
  // (p90 − p10) / median: the noise figure the gate and the stopping rule use.
  double rel_spread() const { return median_us > 0 ? (p90_us - p10_us) / median_us : 0.0; }
};

struct MeasurementRecord {
  std::string device_key;
  GemmProblem problem;
  Candidate candidate;
  MeasureStatus status = MeasureStatus::Ok;
  std::string message;        // why it failed or was skipped
  double verify_error = -1;   // relative Frobenius error against the fp64 reference; -1 = not verified
  double tolerance = 0;       // the bound verify_error was held to
  // A 3xtf32 candidate of an fp32 problem that the fp32-equivalent policy admitted (problem/fp32_equivalent.hpp).
  bool fp32_equivalent = false;
  TimingStats stats;

  // The record's key in sweep outputs and for the gate: "<problem key>/<candidate id>".
  std::string key() const { return problem.key() + "/" + candidate.id(); }
  double tflops() const { return stats.median_us > 0 ? problem.flops() / (stats.median_us * 1e6) : 0.0; }
};

// Identifies the machine a measurement is valid for. Two runs compare only when their device keys are equal.
struct DeviceIdentity {
  std::string gpu_name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::string driver;          // e.g. "580.159.04"
  int cuda_runtime = 0;        // cudaRuntimeGetVersion
  std::size_t cublaslt_version = 0;

  // "NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100" (problem/device_key.hpp defines the format)
  std::string key() const;
  // A filesystem-friendly name of the GPU for results/<slug>/: "nvidia-h100-80gb-hbm3".
  std::string slug() const;
};

struct RunInfo {
  std::int64_t id = 0;
  DeviceIdentity device;
  std::string gemmtune_version;
  std::string profile;
  std::string started_at;      // ISO-8601 UTC
  std::string finished_at;     // empty while running or if killed
  double sm_clock_max_mhz = 0;
};

void to_json(nlohmann::json& j, const TimingStats& s);
void from_json(const nlohmann::json& j, TimingStats& s);
void to_json(nlohmann::json& j, const MeasurementRecord& r);
void from_json(const nlohmann::json& j, MeasurementRecord& r);
void to_json(nlohmann::json& j, const DeviceIdentity& d);
void from_json(const nlohmann::json& j, DeviceIdentity& d);

}  // namespace gemmtune
