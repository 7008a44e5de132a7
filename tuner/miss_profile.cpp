#include "tuner/miss_profile.hpp"

#include "db/tuning_db.hpp"

namespace gemmtune {

SweepProfile profile_from_misses(const SweepProfile& settings, const std::string& db_path,
                                 const std::string& device_key) {
  SweepProfile p = settings;
  p.name = "misses";
  p.description = "problems a runtime found no exact cache entry for, measured with profile '" + settings.name +
                  "'s candidate settings and timing";
  p.problems.clear();
  const TuningDb db(db_path, TuningDb::Access::ReadOnly);
  for (const std::string& key : db.misses(device_key)) p.problems.push_back(GemmProblem::parse_key(key));
  return p;
}

}  // namespace gemmtune
