#include "common/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace gemmtune {

std::string data_dir_for(const std::string& executable, const char* data_dir_env) {
  if (data_dir_env && *data_dir_env) return data_dir_env;
  const std::filesystem::path exe_dir = std::filesystem::path(executable).parent_path();
  const std::filesystem::path installed = (exe_dir / ".." / "share" / "gemmtune").lexically_normal();
  const std::filesystem::path build_tree = exe_dir / "share" / "gemmtune";
  std::error_code ec;
  if (std::filesystem::is_directory(installed, ec)) return installed.string();
  if (std::filesystem::is_directory(build_tree, ec)) return build_tree.string();
  return installed.string();
}

std::string data_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  // Without /proc the relative lookup has nothing to start from; the current directory is the least surprising base.
  return data_dir_for(ec ? std::string("./gemmtune") : exe.string(), std::getenv("GEMMTUNE_DATA_DIR"));
}

}  // namespace gemmtune
