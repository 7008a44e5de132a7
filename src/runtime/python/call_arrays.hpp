// CallArrays: a forward call's arrays read at once, in C, for the resolved-call path of gemmtune.Runtime.forward over
// arrays that are not PyTorch tensors (issue 48). The full path (gemmtune/_arrays.py over read_array) builds an
// ArrayView, a Matrix and a dataclass per argument at every call, 18-36 us of an H200 machine's host beside torch.mm's
// 12-18; this reads what the checks depend on into one hashable key, and the pointers, devices and producer streams a
// launch needs, so a call whose key was resolved before costs a dict lookup and one launch.
//
// Only the common case is read: float32 arrays on a CUDA device with a non-null pointer, through
// __cuda_array_interface__ (versions 0-3, no mask, whole-element strides, not stream 0) or an unconsumed "dltensor"
// capsule from __dlpack__(stream=...). Anything else reads as nothing, with no Python error left set: the full path
// then reads the arrays again and raises the error that names the argument.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <pybind11/pybind11.h>

namespace gemmtune::python {

struct CallArrays {
  // Per array, in the order given: which protocol, the rank, the shape, the strides in elements (compact where the
  // array gives none) and the read-only flag. Two calls with equal keys pass or fail plan_forward's checks alike; the
  // pointers, devices and streams below are what each call must look at again.
  pybind11::tuple key;
  std::vector<std::uintptr_t> pointers;
  std::vector<int> devices;  // the CUDA device the array names (DLPack); -1: it does not say (ask CUDA)
  std::vector<std::uintptr_t> producer_streams;  // __cuda_array_interface__ v3 `stream`s, to be waited for
};

// `dlpack_stream` is handed to __dlpack__(stream=...): the stream the call will run on (1: the legacy default).
std::optional<CallArrays> read_call_arrays(const pybind11::tuple& arrays, std::uintptr_t dlpack_stream);

void bind_call_arrays(pybind11::module_& m);

}  // namespace gemmtune::python
