// gemmtune._gemmtune.Runtime: gemmtune::Runtime (gemmtune/runtime.hpp) called with device pointers and stream handles
// as Python ints. The Python layer (gemmtune/runtime.py, gemmtune/torch.py) reads arrays and checks arguments; this
// layer only makes the calls safe to make from Python:
//   - each call runs with the Runtime's GPU current (and the caller's current GPU restored after), since a Python
//     program's other libraries may have made another GPU current;
//   - launches release the GIL; a mutex serializes the calls, which also keeps the one event order_after records
//     to one thread at a time (the Runtime itself takes any thread and stream);
//   - the stream a __cuda_array_interface__ (v3) says its data was written on is waited for with an event, not a
//     host synchronization.
#pragma once

#include <pybind11/pybind11.h>

namespace gemmtune::python {

void bind_runtime(pybind11::module_& m);

}  // namespace gemmtune::python
