// ScratchDir: a fresh temporary directory for one test, removed with its contents when the test ends; and the
// byte-level file helpers that tests use to prove a refused file was left exactly as it was.
#pragma once

#include <filesystem>
#include <string>

namespace gemmtune::test {

class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // The path of name inside the directory (nothing is created).
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

}  // namespace gemmtune::test
