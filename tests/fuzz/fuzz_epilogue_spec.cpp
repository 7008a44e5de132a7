// An epilogue spec (profiles' "epilogues", the epilogue part of a problem key) and a candidate id: parsed, and
// when accepted their canonical forms must parse back to the same value.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemmtune;
  fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const Epilogue e = Epilogue::parse(text);
    if (!(Epilogue::parse(e.key()) == e)) std::abort();
  });
  return fuzz::refuse_or_accept(data, size, [](const std::string& text) {
    const Candidate c = Candidate::parse_id(text);
    if (Candidate::parse_id(c.id()).id() != c.id()) std::abort();
    parse_canonical_candidate_id(text);
  });
}
