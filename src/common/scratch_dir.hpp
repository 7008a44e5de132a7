// ScratchDir: a fresh private directory (mkdtemp, under $TMPDIR or else /tmp), removed with everything in it when the
// object goes: the trace's per-process record files, the sweep workers' JSON records, a test's files.
#pragma once

#include <string>

namespace gemmtune {

class ScratchDir {
 public:
  // Creates "<tmp>/<prefix>-XXXXXX"; throws CheckError when it cannot.
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of name inside the directory (nothing is created).
  std::string path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gemmtune
