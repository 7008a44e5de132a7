// What `gemmtune report` shows, gathered from a tuning db into one JSON document (DIR/report.json) that
// scripts/report.py lays out and draws. Every number is computed here (roofline places, tuned-vs-heuristic speedups,
// ncu-vs-sweep ratios), so the script only draws, and the JSON can be checked without a browser.
//
// Per device key: its GPU's nominal peaks; its latest run's measurements; per problem of that run the heuristic's
// first cuBLASLt algo against the fastest verified candidate; the algo cache placed on the roofline (with the DRAM
// bytes ncu measured where a report was imported, else the analytic minimum); and the imported ncu kernels, each
// case's ncu time per call beside the sweep's median for the same candidate.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "db/tuning_db.hpp"

namespace gemmtune {

nlohmann::json build_report_json(const TuningDb& db);

// $GEMMTUNE_REPORT_SCRIPT when set, else scripts/report.py in data_dir() (common/data_dir.hpp).
std::string default_report_script();

}  // namespace gemmtune
