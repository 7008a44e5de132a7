// A problem key (db rows, sweep records, cache exports, NVTX ranges): parsed, and when accepted its canonical
// form must parse back to the same problem.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gemmtune::fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const gemmtune::GemmProblem p = gemmtune::GemmProblem::parse_key(text);
    if (!(gemmtune::parse_canonical_problem_key(p.key()) == p)) std::abort();  // key() must round-trip
    gemmtune::parse_canonical_problem_key(text);
  });
}
