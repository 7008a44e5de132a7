// A problem key or a device key (db rows, sweep records, cache exports, NVTX ranges): parsed, and when accepted its
// canonical form must parse back to the same problem, and a device key must be exactly what its fields print.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "problem/device_key.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/measurement.hpp"
#include "problem/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const gemmtune::GemmProblem p = gemmtune::GemmProblem::parse_key(text);
    if (!(gemmtune::parse_canonical_problem_key(p.key()) == p)) std::abort();  // key() must round-trip
    gemmtune::parse_canonical_problem_key(text);
  });
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    if (gemmtune::parse_device_key(text).key() != text) std::abort();  // an accepted key is its fields' spelling
  });
}
