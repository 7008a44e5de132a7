#include "runtime/miss_log.hpp"

#include "common/default_db.hpp"
#include "db/tuning_db.hpp"

namespace gemmtune::runtime {

void MissLog::flush(const std::string& db_path, const std::string& device_key) {
  if (pending_.empty()) return;
  prepare_default_db_write(db_path);
  TuningDb db(db_path);
  db.record_misses(device_key, pending_);
  pending_.clear();
}

}  // namespace gemmtune::runtime
