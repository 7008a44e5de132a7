// The profile of `sweep --from-misses`: the problems runtimes recorded as misses for one device key (most-missed
// first), measured with another profile's candidate settings and timing rule.
#pragma once

#include <string>

#include "profile/sweep_profile.hpp"

namespace gemmtune {

// `settings` with its problems replaced by the misses of device_key in the db at db_path (opened read-only; a
// missing or damaged db throws InputError). The result may have no problems.
SweepProfile profile_from_misses(const SweepProfile& settings, const std::string& db_path,
                                 const std::string& device_key);

}  // namespace gemmtune
