// --device-key values are held to the format gemmtune writes (problem/device_key.hpp): a mistyped key is a usage error
// (exit 2) with the reason, not a filter that silently matches nothing or a key filed into a db.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "problem/device_key.hpp"

namespace gemmtune::cli {

inline CLI::Validator device_key_check() {
  return CLI::Validator(
      [](std::string& key) -> std::string {
        try {
          parse_device_key(key);
          return {};
        } catch (const InputError& e) {
          return e.what();
        }
      },
      "DEVICE_KEY");
}

}  // namespace gemmtune::cli
