// A `sweep --json` document as the gate reads it (--baseline, --current).
#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "fuzz_input.hpp"
#include "gate/sweep_results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const nlohmann::json doc = gemmtune::parse_json_text(text, "fuzz.json");  // as read_json_file parses a file
    gemmtune::sweep_results_from_json(doc, "fuzz.json");
  });
}
