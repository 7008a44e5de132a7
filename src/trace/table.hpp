// Table: one of `gemmtune trace`'s tables (summary, kernels, categories, NVTX ranges, GEMMs, a diff), and its four
// renderings: aligned text, CSV, Markdown and JSON (numbers stay numbers there).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gemmtune {

struct TableCell {
  std::string text;
  std::optional<double> number;  // the value behind text, when it is one

  TableCell(std::string s) : text(std::move(s)) {}  // NOLINT: a string is a cell
  TableCell(const char* s) : text(s) {}              // NOLINT
  static TableCell num(double v, int decimals);
  static TableCell count(std::uint64_t v);
};

struct Table {
  std::string id;     // "kernels": what --table selects, the JSON key
  std::string title;  // "CUDA GPU kernel summary"
  std::vector<std::string> columns;
  std::vector<std::vector<TableCell>> rows;
  std::vector<std::string> notes;  // printed under the table
};

enum class TableFormat { Text, Csv, Markdown, Json };
TableFormat parse_table_format(const std::string& s);  // "table" | "csv" | "md" | "json"; InputError otherwise

// Text cells longer than max_text_width are cut with "…" in text and Markdown (CSV and JSON keep them whole).
void render_tables(const std::vector<Table>& tables, TableFormat format, std::ostream& out,
                   std::size_t max_text_width = 100);
nlohmann::json tables_to_json(const std::vector<Table>& tables);

}  // namespace gemmtune
