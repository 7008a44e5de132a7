// A `sweep --json` document as the gate reads it (--baseline, --current).
#include <nlohmann/json.hpp>

#include "fuzz_input.hpp"
#include "gate/sweep_results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      return;  // read_json_file turns this into an InputError naming the file
    }
    gemmtune::sweep_results_from_json(doc, "fuzz.json");
  });
}
