// What every fuzz target holds its reader to: bad input is refused with an InputError (the CLI's exit 2) and
// nothing else. Any other exception, a crash, a sanitizer report, a hang or a blown memory limit is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"

namespace gemmtune::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs read(text); an InputError is the expected refusal, so it ends the input quietly.
template <class Read>
int refuse_or_accept(const std::uint8_t* data, std::size_t size, Read read) {
  try {
    read(as_text(data, size));
  } catch (const InputError&) {
  }
  return 0;
}

}  // namespace gemmtune::fuzz
