// The CSV `ncu --import R --csv --page raw` prints, as `ncu import` reads it: the raw table, then the per-case
// kernel metrics.
#include "fuzz_input.hpp"
#include "profiler/ncu_import.hpp"
#include "profiler/ncu_raw_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const gemmtune::NcuRawTable table = gemmtune::NcuRawTable::parse(text);
    gemmtune::import_ncu_kernels(table, "all", "fuzz.ncu-rep");
  });
}
