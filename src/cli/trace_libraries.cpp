#include "cli/trace_libraries.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "profiler/process.hpp"

namespace gemmtune::cli {

namespace fs = std::filesystem;

std::string find_trace_library(const char* name) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("GEMMTUNE_TRACE_LIB_DIR")) dirs.emplace_back(env);
  const fs::path exe_dir = fs::path(self_executable()).parent_path();
  dirs.push_back(exe_dir);
  dirs.push_back(exe_dir / ".." / "lib");
  dirs.push_back(exe_dir / ".." / "lib" / "gemmtune");
  std::string looked;
  for (const fs::path& d : dirs) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(d / name, ec);
    if (!ec && fs::is_regular_file(p, ec)) return p.string();
    looked += (looked.empty() ? "" : ", ") + d.string();
  }
  throw InputError(std::string("cannot find ") + name + " (looked in " + looked +
                   "; set GEMMTUNE_TRACE_LIB_DIR to its directory)");
}

IgnoreInterrupts::IgnoreInterrupts() : int_(std::signal(SIGINT, SIG_IGN)), quit_(std::signal(SIGQUIT, SIG_IGN)) {}

IgnoreInterrupts::~IgnoreInterrupts() {
  std::signal(SIGINT, int_);
  std::signal(SIGQUIT, quit_);
}

}  // namespace gemmtune::cli
