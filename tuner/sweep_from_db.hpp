// A sweep result rebuilt from a db: per problem the latest measurements of one device key. What `cache merge
// --sweep-json` writes, so the gate can compare a sweep that ran as shards (and was merged) like one that did not.
#pragma once

#include <string>

#include "db/tuning_db.hpp"
#include "tuner/sweep.hpp"

namespace gemmtune {

// The device key's latest run gives the run fields; its problems come in the order they were stored. Throws
// InputError when the db has no run of that device key.
SweepResult sweep_result_from_db(const TuningDb& db, const std::string& device_key);

}  // namespace gemmtune
