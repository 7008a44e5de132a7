#include "profiler/csv.hpp"

#include "common/error.hpp"

namespace gemmtune {

std::vector<CsvRow> parse_csv(const std::string& text) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false;        // inside a quoted field
  bool field_started = false; // the current row has a field (possibly empty) still to be pushed
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!field.empty()) throw InputError("CSV line " + std::to_string(line) + ": quote inside an unquoted field");
        quoted = true;
        field_started = true;
        break;
      case ',':
        row.push_back(std::move(field));
        field.clear();
        field_started = true;
        break;
      case '\r':
        break;
      case '\n':
        if (field_started || !field.empty() || !row.empty()) {
          row.push_back(std::move(field));
          rows.push_back(std::move(row));
        }
        row.clear();
        field.clear();
        field_started = false;
        ++line;
        break;
      default:
        field += c;
        field_started = true;
    }
  }
  if (quoted) throw InputError("CSV line " + std::to_string(line) + ": quoted field never closed");
  if (field_started || !field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace gemmtune
