// A sweep profile (profiles/*.json, `sweep --profile`): parsed and planned as `sweep --dry-run` does.
#include "fuzz_input.hpp"
#include "profile/sweep_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    gemmtune::parse_sweep_profile(text, "fuzz.json");
  });
}
