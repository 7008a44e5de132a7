// NcuRawTable: the "raw" page of an ncu report as `ncu --import R --csv --page raw` prints it: a header row of
// column names (fixed ones such as "ID" and "Kernel Name", then one per metric), a row of units, one row per
// profiled kernel.
//
// ncu writes numbers for people: "17,568" with thousands separators, "n/a" where a metric has no value. value()
// reads them back; text() gives a cell as it is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/csv.hpp"

namespace gemmtune {

class NcuRawTable {
 public:
  // Finds the header row (the first line starting with "ID"), so application output or ==PROF== lines that ncu
  // printed before the table are skipped. Throws InputError when there is no table.
  static NcuRawTable parse(const std::string& ncu_csv_output);

  std::size_t kernel_count() const { return rows_.size(); }
  bool has_column(const std::string& name) const { return columns_.count(name) != 0; }
  std::vector<std::string> column_names() const;
  const std::string& unit(const std::string& column) const;

  // The cell of kernel `row` in `column`; empty when the column is absent.
  std::string text(std::size_t row, const std::string& column) const;
  // The cell as a number: separators dropped, nullopt when the column is absent or the cell holds no number.
  std::optional<double> value(std::size_t row, const std::string& column) const;
  // value() scaled to the column's base unit (nanoseconds, bytes) when its unit is a scaled one ("usecond", "Kbyte").
  std::optional<double> base_value(std::size_t row, const std::string& column) const;

 private:
  std::map<std::string, std::size_t> columns_;
  std::vector<std::string> units_;
  std::vector<CsvRow> rows_;
};

}  // namespace gemmtune
