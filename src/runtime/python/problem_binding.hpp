// gemmtune.Problem: the GemmProblem a call runs (problem/gemm_problem.hpp), as the tuner and the db key it.
#pragma once

#include <pybind11/pybind11.h>

namespace gemmtune::python {

void bind_problem(pybind11::module_& m);

}  // namespace gemmtune::python
