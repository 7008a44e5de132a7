#include "common/scratch_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/error.hpp"

namespace gemmtune {

ScratchDir::ScratchDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  std::string path = pattern;  // mkdtemp fills in the Xs, even when it fails
  if (!::mkdtemp(path.data()))
    throw CheckError("cannot create a scratch directory " + pattern + ": " + std::strerror(errno));
  path_ = path;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace gemmtune
