// gemmtune's exceptions in Python, one per C++ error type (common/error.hpp), so a Python program catches what a C++
// one would:
//   gemmtune.Error        (RuntimeError)            every gemmtune failure
//   gemmtune.InputError   (gemmtune.Error, ValueError)  bad input: an argument, a problem, a damaged db
//   gemmtune.NoGpuError   (gemmtune.Error)           no usable CUDA GPU (never an abort)
//   gemmtune.CheckError   (gemmtune.Error)           a failed CUDA or cuBLASLt call, a failed check
#pragma once

#include <pybind11/pybind11.h>

namespace gemmtune::python {

// Adds the classes to the module and translates the C++ errors into them.
void bind_errors(pybind11::module_& m);

}  // namespace gemmtune::python
