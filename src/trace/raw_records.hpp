// Reads the per-process raw record files of a traced run (trace/raw_format.hpp) into one Trace: kernels tagged
// with the thread and time of their launch and, with --gemms, the cuBLAS or cuBLASLt call that launched them; NVTX
// start/end markers paired into ranges with their nesting depth.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace gemmtune {

// Fills processes, kernels, copies, ranges and gemms_called from every <pid>.cupti.jsonl / <pid>.gemms.jsonl in dir
// (the caller sets command, exit code and wall time). A process's file cut short (the process was killed) keeps its
// records and is marked incomplete. Throws InputError for a file that is not of this raw format.
Trace read_raw_records(const std::string& dir);

// One process's files, given as text: what read_raw_records does per process, for tests.
void add_raw_process(Trace& t, const std::string& cupti_jsonl, const std::string& gemms_jsonl,
                     const std::string& where);

// Sets each range's depth: how many ranges of the same process and thread enclose it.
void set_range_depths(Trace& t);

}  // namespace gemmtune
