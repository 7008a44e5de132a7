#include "profiler/ncu_raw_table.hpp"

#include <cstdlib>

#include "common/error.hpp"
#include "problem/validate.hpp"

namespace gemmtune {
namespace {

const std::string kEmpty;

std::optional<double> parse_number(const std::string& cell) {
  std::string digits;
  for (char c : cell)
    if (c != ',' && c != ' ') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

// ncu scales units by powers of 1000 ("Kbyte" is 1e3 bytes); time units are named after the second.
double unit_scale(const std::string& unit) {
  static const std::map<std::string, double> scales = {
      {"nsecond", 1}, {"ns", 1}, {"usecond", 1e3}, {"us", 1e3}, {"msecond", 1e6}, {"ms", 1e6}, {"second", 1e9},
      {"s", 1e9}, {"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"Tbyte", 1e12}};
  const auto it = scales.find(unit);
  return it == scales.end() ? 1.0 : it->second;
}

}  // namespace

NcuRawTable NcuRawTable::parse(const std::string& ncu_csv_output) {
  // ncu prints UTF-8; names that are not (a damaged report) could not be stored and written out again as JSON.
  if (const std::size_t bad = first_invalid_utf8(ncu_csv_output); bad != std::string::npos)
    throw InputError("ncu raw table: byte " + std::to_string(bad) + " is not UTF-8 text");
  std::size_t start = 0;
  while (start < ncu_csv_output.size() && ncu_csv_output.compare(start, 5, "\"ID\",") != 0) {
    const std::size_t next = ncu_csv_output.find('\n', start);
    if (next == std::string::npos) {
      start = ncu_csv_output.size();
      break;
    }
    start = next + 1;
  }
  if (start >= ncu_csv_output.size())
    throw InputError("ncu printed no raw-page table (no line starting with \"ID\"): is this an ncu report?");
  std::vector<CsvRow> rows = parse_csv(ncu_csv_output.substr(start));

  NcuRawTable table;
  const CsvRow& header = rows.front();
  // A name twice would make "the metric's column" ambiguous (and left column_names() writing past its end).
  for (std::size_t i = 0; i < header.size(); ++i)
    if (!table.columns_.emplace(header[i], i).second)
      throw InputError("ncu raw table: column '" + header[i] + "' appears twice");
  std::size_t first_kernel = 1;
  // The units row has an empty ID; kernel rows number their kernels from 0.
  if (rows.size() > 1 && !rows[1].empty() && rows[1][0].empty()) {
    table.units_ = rows[1];
    first_kernel = 2;
  }
  table.units_.resize(header.size());
  for (std::size_t r = first_kernel; r < rows.size(); ++r) {
    if (rows[r].size() != header.size())
      throw InputError("ncu raw table row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
                       " cells for " + std::to_string(header.size()) + " columns");
    table.rows_.push_back(std::move(rows[r]));
  }
  return table;
}

std::vector<std::string> NcuRawTable::column_names() const {
  std::vector<std::string> names(columns_.size());
  for (const auto& [name, index] : columns_) names[index] = name;
  return names;
}

const std::string& NcuRawTable::unit(const std::string& column) const {
  const auto it = columns_.find(column);
  return it == columns_.end() ? kEmpty : units_[it->second];
}

std::string NcuRawTable::text(std::size_t row, const std::string& column) const {
  const auto it = columns_.find(column);
  return it == columns_.end() ? std::string() : rows_.at(row)[it->second];
}

std::optional<double> NcuRawTable::value(std::size_t row, const std::string& column) const {
  const auto it = columns_.find(column);
  if (it == columns_.end()) return std::nullopt;
  return parse_number(rows_.at(row)[it->second]);
}

std::optional<double> NcuRawTable::base_value(std::size_t row, const std::string& column) const {
  const std::optional<double> v = value(row, column);
  if (!v) return v;
  return *v * unit_scale(unit(column));
}

}  // namespace gemmtune
