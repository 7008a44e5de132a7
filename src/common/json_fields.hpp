// JsonFields: checked, typed access to the fields of one object of a JSON document read from a file. Every failure
// is an InputError naming the document and the field's path, so a bad file is fixed without reading our code:
//   "cache.json: entries[3].stats.median_us: expected a number, got string"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {

class JsonFields {
 public:
  // Throws unless value is an object. source names the document, path the object within it ("" = the root).
  JsonFields(const nlohmann::json& value, std::string source, std::string path = "");

  std::string string(const std::string& name) const;
  double number(const std::string& name) const;              // finite
  std::int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  bool has(const std::string& name) const;  // the field is present (any type)
  JsonFields object(const std::string& name) const;
  std::vector<JsonFields> objects(const std::string& name) const;  // an array whose elements are all objects

  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }
  // "entries[3].stats.median_us"
  std::string path_of(const std::string& name) const;
  [[noreturn]] void fail(const std::string& name, const std::string& why) const;
  // Runs parser(), turning an InputError it throws (a bad key, an unknown enum name) into one naming the field.
  template <class F>
  auto parse(const std::string& name, F parser) const -> decltype(parser()) {
    try {
      return parser();
    } catch (const InputError& e) {
      fail(name, e.what());
    }
  }

 private:
  const nlohmann::json& at(const std::string& name) const;  // required, any type
  const nlohmann::json& value_;
  std::string source_;
  std::string path_;
};

// Parses JSON text read from `source`; malformed text, and numbers beyond a double's range (1e999, which the
// parser reports as out_of_range rather than parse_error), are an InputError naming the source.
nlohmann::json parse_json_text(const std::string& text, const std::string& source);
// Reads and parses a whole JSON file; a missing, unreadable or malformed file is an InputError naming it.
nlohmann::json read_json_file(const std::string& path);
// Writes j (indented) to path through a temporary file and a rename, so a reader never sees half a document.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace gemmtune
