// RFC 4180 CSV, as ncu --csv writes it: every field quoted, quotes inside a field doubled, newlines allowed
// inside quotes, rows ending in \n or \r\n.
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

using CsvRow = std::vector<std::string>;

// Throws InputError on an unterminated quoted field or a stray quote inside an unquoted one.
std::vector<CsvRow> parse_csv(const std::string& text);

}  // namespace gemmtune
