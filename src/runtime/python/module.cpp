// gemmtune._gemmtune: the binding of the runtime library. The Python package gemmtune (gemmtune/__init__.py) is the
// API; this module is what it calls.
#include <pybind11/pybind11.h>

#include "array_view.hpp"
#include "call_arrays.hpp"
#include "errors.hpp"
#include "problem_binding.hpp"
#include "runtime_binding.hpp"

PYBIND11_MODULE(_gemmtune, m) {
  m.doc() = "The binding of gemmtune's fused GEMM runtime; use the gemmtune package";
  m.attr("__version__") = GEMMTUNE_VERSION;
  gemmtune::python::bind_errors(m);
  gemmtune::python::bind_problem(m);
  gemmtune::python::bind_array_view(m);
  gemmtune::python::bind_call_arrays(m);
  gemmtune::python::bind_runtime(m);
}
