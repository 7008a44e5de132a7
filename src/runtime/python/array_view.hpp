// ArrayView: what the binding needs of a caller's device array, read through __cuda_array_interface__ (versions 0-3)
// or __dlpack__, never copied: the data pointer, shape, strides in elements, the CUDA device where the array says,
// and the stream its data was last written on where the array says (__cuda_array_interface__ v3's `stream`).
// Reading checks only what the protocols state (element type, mask, memory kind, stride units); the rank, shape and
// layout an argument needs are the caller's checks, which name the argument (gemmtune/_arrays.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace gemmtune::python {

// The element types the runtime takes: float32 operands, and 64-bit dropout counters (offset_ptr).
enum class ElementType { Float32, Counter64 };

struct ArrayView {
  std::uintptr_t ptr = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements; compact row-major where the array gives none
  std::optional<int> device;          // CUDA device index; none: the array does not say (ask CUDA where ptr lives)
  std::optional<std::uintptr_t> stream;  // the producer's stream (CAI v3; 1 legacy, 2 per-thread); none: no sync asked
  bool read_only = false;
  std::string protocol;  // "__cuda_array_interface__" or "__dlpack__"
};

// Reads `obj` as a device array of `type`. `name` is the argument's name, put first in every error. `dlpack_stream`
// is handed to __dlpack__(stream=...), the stream the data will be used on (1: the legacy default stream), so that
// the producer orders its pending work before it. Raises TypeError (no protocol, wrong element type, a protocol
// getter that failed) or ValueError (host memory, a mask, strides that are not whole elements).
ArrayView read_array(pybind11::handle obj, const std::string& name, ElementType type, std::uintptr_t dlpack_stream);

void bind_array_view(pybind11::module_& m);

}  // namespace gemmtune::python
