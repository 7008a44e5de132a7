// test::ScratchDir: a fresh directory for one test (common/scratch_dir.hpp), removed with its contents when the test
// ends; and the byte-level file helpers that tests use to prove a refused file was left exactly as it was.
#pragma once

#include <string>

#include "common/scratch_dir.hpp"

namespace gemmtune::test {

class ScratchDir : public gemmtune::ScratchDir {
 public:
  ScratchDir() : gemmtune::ScratchDir("gemmtune-test") {}
};

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

}  // namespace gemmtune::test
