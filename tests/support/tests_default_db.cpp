// Before any test runs, the test process, and every gemmtune CLI it starts, gets a default db of its own in the build
// tree (GEMMTUNE_DB: common/default_db.hpp): a test that names no db neither reads what the user tuned into
// ~/.cache/gemmtune/gemmtune.db nor writes into it. The tests of the rule itself set their own variables.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace gemmtune::test {
namespace {

[[maybe_unused]] const bool tests_default_db_set = [] {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string db = ((ec ? std::filesystem::current_path() : exe.parent_path()) / "default-db" / "gemmtune.db")
                             .string();
  return ::setenv("GEMMTUNE_DB", db.c_str(), 1) == 0;
}();

}  // namespace
}  // namespace gemmtune::test
