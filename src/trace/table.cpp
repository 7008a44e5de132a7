#include "trace/table.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// Display width in characters: UTF-8 continuation bytes take no column.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string cut(const std::string& s, std::size_t max) {
  if (width(s) <= max) return s;
  std::string out;
  std::size_t w = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++w > max - 1) break;
    out += c;
  }
  return out + "…";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string md_field(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void render_text(const Table& t, std::ostream& out, std::size_t max_text) {
  std::vector<std::size_t> widths;
  for (const std::string& c : t.columns) widths.push_back(width(c));
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    std::vector<std::string> line;
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      line.push_back(row[i].number ? row[i].text : cut(row[i].text, max_text));
      widths[i] = std::max(widths[i], width(line.back()));
    }
    cells.push_back(std::move(line));
  }
  // Numbers right-aligned, text left-aligned, as nsys stats prints them; the last column is never padded.
  std::vector<bool> numeric(t.columns.size(), !t.rows.empty());
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < numeric.size(); ++i)
      if (!row[i].number && !row[i].text.empty() && row[i].text != "-") numeric[i] = false;
  const auto print_row = [&](const std::vector<std::string>& line) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      const std::size_t pad = widths[i] - width(line[i]);
      const bool last = i + 1 == line.size();
      if (numeric[i]) out << std::string(pad, ' ') << line[i];
      else out << line[i] << (last ? "" : std::string(pad, ' '));
      if (!last) out << "  ";
    }
    out << "\n";
  };
  out << "\n" << t.title << ":\n\n";
  print_row(t.columns);
  std::vector<std::string> rule;
  for (std::size_t w : widths) rule.push_back(std::string(w, '-'));
  print_row(rule);
  for (const auto& line : cells) print_row(line);
  for (const std::string& n : t.notes) out << "  " << n << "\n";
}

void render_csv(const Table& t, std::ostream& out, bool several) {
  if (several) out << "# " << t.title << "\n";
  for (std::size_t i = 0; i < t.columns.size(); ++i) out << (i ? "," : "") << csv_field(t.columns[i]);
  out << "\n";
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_field(row[i].text);
    out << "\n";
  }
  if (several) out << "\n";
}

void render_md(const Table& t, std::ostream& out, std::size_t max_text) {
  out << "### " << t.title << "\n\n|";
  for (const std::string& c : t.columns) out << " " << md_field(c) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < t.columns.size(); ++i) out << " --- |";
  out << "\n";
  for (const auto& row : t.rows) {
    out << "|";
    for (const TableCell& c : row) out << " " << md_field(c.number ? c.text : cut(c.text, max_text)) << " |";
    out << "\n";
  }
  for (const std::string& n : t.notes) out << "\n" << n << "\n";
  out << "\n";
}

}  // namespace

TableCell TableCell::num(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  TableCell c(text);
  c.number = v;
  return c;
}

TableCell TableCell::count(std::uint64_t v) {
  TableCell c(std::to_string(v));
  c.number = static_cast<double>(v);
  return c;
}

TableFormat parse_table_format(const std::string& s) {
  if (s == "table") return TableFormat::Text;
  if (s == "csv") return TableFormat::Csv;
  if (s == "md") return TableFormat::Markdown;
  if (s == "json") return TableFormat::Json;
  throw InputError("unknown format '" + s + "' (table, csv, json or md)");
}

nlohmann::json tables_to_json(const std::vector<Table>& tables) {
  nlohmann::json j;
  j["schema"] = "gemmtune.trace_tables";
  j["schema_version"] = 1;
  j["tables"] = nlohmann::json::object();
  for (const Table& t : tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : t.rows) {
      nlohmann::json r = nlohmann::json::object();
      for (std::size_t i = 0; i < row.size() && i < t.columns.size(); ++i)
        r[t.columns[i]] = row[i].number ? nlohmann::json(*row[i].number) : nlohmann::json(row[i].text);
      rows.push_back(std::move(r));
    }
    j["tables"][t.id] = {{"title", t.title}, {"columns", t.columns}, {"rows", std::move(rows)}, {"notes", t.notes}};
  }
  return j;
}

void render_tables(const std::vector<Table>& tables, TableFormat format, std::ostream& out, std::size_t max_text) {
  switch (format) {
    case TableFormat::Text:
      for (const Table& t : tables) render_text(t, out, max_text);
      break;
    case TableFormat::Csv:
      for (const Table& t : tables) render_csv(t, out, tables.size() > 1);
      break;
    case TableFormat::Markdown:
      for (const Table& t : tables) render_md(t, out, max_text);
      break;
    case TableFormat::Json:
      out << tables_to_json(tables).dump(2) << "\n";
      break;
  }
}

}  // namespace gemmtune
