// gemmtune._gemmtune.Runtime: gemmtune::Runtime (gemmtune/runtime.hpp) called with device pointers and stream handles
// as Python ints. The Python layer (gemmtune/runtime.py, gemmtune/torch.py) reads arrays and checks arguments; this
// layer only makes the calls safe to make from Python:
//   - each call runs with the Runtime's GPU current (and the caller's current GPU restored after), since a Python
//     program's other libraries may have made another GPU current;
//   - launches release the GIL, and a mutex keeps the Runtime to one host thread at a time, as it requires;
//   - the stream a __cuda_array_interface__ (v3) says its data was written on is waited for with an event, not a
//     host synchronization.
#pragma once

#include <pybind11/pybind11.h>

namespace gemmtune::python {

void bind_runtime(pybind11::module_& m);

}  // namespace gemmtune::python
