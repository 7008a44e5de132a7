// MissLog: the problems a runtime had no usable exact cache entry for, kept in memory until flushed to the db's
// misses table (PyTorch TunableOp's "record untuned"), where `gemmtune sweep --from-misses` finds them.
#pragma once

#include <string>
#include <vector>

namespace gemmtune::runtime {

class MissLog {
 public:
  // Off the hot path: called once per distinct problem, when it is resolved.
  void record(const std::string& problem_key) { pending_.push_back(problem_key); }
  std::size_t pending() const { return pending_.size(); }

  // Writes the pending keys for device_key to the db at db_path (created if missing; the default db's directories
  // too, common/default_db.hpp) in one transaction; they are cleared only once written, so a failed flush can be
  // retried. Throws InputError if the db cannot be written (for the default db, naming the variable that placed it).
  void flush(const std::string& db_path, const std::string& device_key);

 private:
  std::vector<std::string> pending_;
};

}  // namespace gemmtune::runtime
