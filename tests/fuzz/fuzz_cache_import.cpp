// A cache export (`cache import`, `cache merge`): read_cache_file on the bytes, as the CLI reads the file.
#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "db/cache_json.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const nlohmann::json doc = gemmtune::parse_json_text(text, "fuzz.json");  // as read_json_file parses a file
    gemmtune::cache_from_json(doc, "fuzz.json");
  });
}
