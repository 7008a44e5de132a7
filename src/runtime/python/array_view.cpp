#include "array_view.hpp"

#include <Python.h>
#include <pybind11/stl.h>

#include "common/error.hpp"
#include "dlpack_abi.hpp"

namespace py = pybind11;

namespace gemmtune::python {
namespace {

struct ElementSpec {
  const char* name;              // as errors say it
  std::vector<const char*> typestrs;  // __cuda_array_interface__ typestr values (little-endian machine)
  std::vector<std::uint8_t> dlpack_codes;
  std::int64_t bytes;
};

const ElementSpec& spec_of(ElementType type) {
  static const ElementSpec float32{"float32", {"<f4"}, {dlpack::kDLFloat}, 4};
  // A counter is read as an unsigned 64-bit word; int64 arrays (PyTorch has no uint64 kernels) hold the same bits.
  static const ElementSpec counter{"uint64 or int64", {"<u8", "<i8"}, {dlpack::kDLUInt, dlpack::kDLInt}, 8};
  return type == ElementType::Float32 ? float32 : counter;
}

// A TypeError naming the argument, with the protocol's own exception as its cause (and its words in the message).
[[noreturn]] void raise_type_error_from(py::error_already_set& e, const std::string& message) {
  const std::string cause = py::str(e.value());
  py::raise_from(e, PyExc_TypeError, (message + ": " + cause).c_str());
  throw py::error_already_set();
}

// obj.<attr>, or None where obj has no such attribute. Any other failure of the getter (PyTorch refuses both protocols
// for a tensor that requires grad) is a TypeError that names the argument.
py::object attribute_or_none(py::handle obj, const char* attr, const std::string& name) {
  PyObject* value = PyObject_GetAttrString(obj.ptr(), attr);
  if (value) return py::reinterpret_steal<py::object>(value);
  if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    return py::none();
  }
  py::error_already_set e;
  raise_type_error_from(e, name + ": reading its " + attr + " failed");
}

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

std::int64_t to_int64(py::handle v, const std::string& what) {
  if (!py::isinstance<py::int_>(v)) throw py::type_error(what + " must be an int, not " + type_name(v));
  return v.cast<std::int64_t>();
}

// A device the kernels can read, from a DLPack (type, id) pair: CUDA or CUDA-managed memory.
int cuda_device_of(std::int64_t device_type, std::int64_t device_id, const std::string& name) {
  if (device_type == dlpack::kDLCUDA || device_type == dlpack::kDLCUDAManaged) return static_cast<int>(device_id);
  if (device_type == dlpack::kDLCPU || device_type == dlpack::kDLCUDAHost)
    throw InputError(name + ": the array is in host memory; pass a CUDA device array");
  throw InputError(name + ": the array is on a device of DLPack type " + std::to_string(device_type) +
                   ", not a CUDA GPU");
}

// Row-major strides, in elements, of a compact array of this shape.
std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

ArrayView read_cuda_array_interface(py::handle obj, const py::object& cai, const std::string& name,
                                    const ElementSpec& spec) {
  if (!py::isinstance<py::dict>(cai)) throw py::type_error(name + ": its __cuda_array_interface__ is not a dict");
  const py::dict d = cai.cast<py::dict>();
  const std::string where = name + ": __cuda_array_interface__";
  for (const char* key : {"shape", "typestr", "data"})
    if (!d.contains(key)) throw py::type_error(where + " has no '" + key + "'");
  const std::int64_t version = d.contains("version") ? to_int64(d["version"], where + "['version']") : 0;
  if (version < 0 || version > 3)
    throw py::type_error(where + " is version " + std::to_string(version) + "; versions 0 to 3 are understood");

  const std::string typestr = py::str(d["typestr"]);
  bool type_ok = false;
  for (const char* t : spec.typestrs) type_ok = type_ok || typestr == t;
  if (!type_ok)
    throw py::type_error(name + ": the array's element type is '" + typestr + "'; " + spec.name + " is needed");
  if (d.contains("mask") && !d["mask"].is_none())
    throw InputError(name + ": the array has a mask; masked arrays are not supported");

  ArrayView v;
  v.protocol = "__cuda_array_interface__";
  const py::object data = d["data"];
  if (!py::isinstance<py::tuple>(data) || py::len(data) != 2)
    throw py::type_error(where + "['data'] must be a (pointer, read_only) tuple");
  v.ptr = static_cast<std::uintptr_t>(to_int64(data.cast<py::tuple>()[0], where + "['data'][0]"));
  v.read_only = data.cast<py::tuple>()[1].cast<bool>();
  for (py::handle e : d["shape"]) v.shape.push_back(to_int64(e, where + "['shape']"));
  const py::object strides = d.contains("strides") ? py::object(d["strides"]) : py::none();
  if (strides.is_none()) {
    v.strides = compact_strides(v.shape);
  } else {
    for (py::handle e : strides) {
      const std::int64_t bytes = to_int64(e, where + "['strides']");
      if (bytes % spec.bytes != 0)
        throw InputError(name + ": a stride of " + std::to_string(bytes) + " bytes is not a whole number of " +
                         spec.name + " elements");
      v.strides.push_back(bytes / spec.bytes);
    }
    if (v.strides.size() != v.shape.size()) throw py::type_error(where + "'s strides and shape differ in length");
  }
  // The protocol's v3 contract: the consumer orders its work after `stream` (none: the producer needs no ordering).
  // 0 is disallowed by the protocol, being ambiguous between the legacy and the per-thread default stream.
  if (version >= 3 && d.contains("stream") && !d["stream"].is_none()) {
    const std::int64_t s = to_int64(d["stream"], where + "['stream']");
    if (s == 0) throw InputError(where + " names stream 0, which the protocol disallows");
    v.stream = static_cast<std::uintptr_t>(s);
  }
  // The interface does not say where the memory is; arrays that also speak DLPack (PyTorch, CuPy) say it there.
  const py::object dlpack_device = attribute_or_none(obj, "__dlpack_device__", name);
  if (!dlpack_device.is_none()) {
    const py::tuple dev = dlpack_device();
    v.device = cuda_device_of(to_int64(dev[0], name + ": __dlpack_device__()[0]"),
                              to_int64(dev[1], name + ": __dlpack_device__()[1]"), name);
  }
  return v;
}

ArrayView read_dlpack(const py::object& dlpack, const std::string& name, const ElementSpec& spec,
                      std::uintptr_t dlpack_stream) {
  py::object capsule;
  try {
    capsule = dlpack(py::arg("stream") = dlpack_stream);
  } catch (py::error_already_set& e) {
    raise_type_error_from(e, name + ": its __dlpack__() failed");
  }
  if (!PyCapsule_IsValid(capsule.ptr(), dlpack::kCapsuleName))
    throw py::type_error(name + ": __dlpack__() did not return an unconsumed DLPack capsule");
  // Read, not consumed: the capsule keeps its name, so dropping it runs the producer's deleter, and the memory stays
  // the caller's array's.
  const dlpack::DLTensor& t =
      static_cast<const dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), dlpack::kCapsuleName))->dl_tensor;
  ArrayView v;
  v.protocol = "__dlpack__";
  v.device = cuda_device_of(t.device.device_type, t.device.device_id, name);
  bool type_ok = false;
  for (std::uint8_t code : spec.dlpack_codes) type_ok = type_ok || t.dtype.code == code;
  if (!type_ok || t.dtype.bits != spec.bytes * 8 || t.dtype.lanes != 1)
    throw py::type_error(name + ": the array's element type is DLPack (code " + std::to_string(t.dtype.code) +
                         ", " + std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                         " lanes); " + spec.name + " is needed");
  v.ptr = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides = t.strides ? std::vector<std::int64_t>(t.strides, t.strides + t.ndim) : compact_strides(v.shape);
  return v;
}

}  // namespace

ArrayView read_array(py::handle obj, const std::string& name, ElementType type, std::uintptr_t dlpack_stream) {
  const ElementSpec& spec = spec_of(type);
  // The interface first: it hands over a pointer without creating anything, where __dlpack__ builds a capsule.
  if (py::object cai = attribute_or_none(obj, "__cuda_array_interface__", name); !cai.is_none())
    return read_cuda_array_interface(obj, cai, name, spec);
  if (py::object dlpack = attribute_or_none(obj, "__dlpack__", name); !dlpack.is_none())
    return read_dlpack(dlpack, name, spec, dlpack_stream);
  throw py::type_error(name + ": a CUDA device array is needed (an object with __cuda_array_interface__ or "
                              "__dlpack__), not " + type_name(obj));
}

void bind_array_view(py::module_& m) {
  py::class_<ArrayView>(m, "ArrayView", "A device array as the binding read it (no copy): gemmtune.read_array")
      .def_readonly("ptr", &ArrayView::ptr)
      .def_property_readonly("shape", [](const ArrayView& v) { return py::tuple(py::cast(v.shape)); })
      .def_property_readonly("strides", [](const ArrayView& v) { return py::tuple(py::cast(v.strides)); },
                             "In elements")
      .def_readonly("device", &ArrayView::device)
      .def_readonly("stream", &ArrayView::stream)
      .def_readonly("read_only", &ArrayView::read_only)
      .def_readonly("protocol", &ArrayView::protocol)
      .def("__repr__", [](const ArrayView& v) {
        return "ArrayView(ptr=" + std::to_string(v.ptr) + ", shape=" + std::string(py::repr(py::cast(v.shape))) +
               ", strides=" + std::string(py::repr(py::cast(v.strides))) + ", " + v.protocol + ")";
      });
  m.def(
      "read_array",
      [](py::handle obj, const std::string& name, const std::string& element, std::uintptr_t dlpack_stream) {
        if (element != "float32" && element != "counter")
          throw py::value_error("element must be 'float32' or 'counter', not '" + element + "'");
        return read_array(obj, name, element == "float32" ? ElementType::Float32 : ElementType::Counter64,
                          dlpack_stream);
      },
      py::arg("obj"), py::arg("name"), py::arg("element") = "float32", py::arg("dlpack_stream") = 1,
      "Reads obj's __cuda_array_interface__ or __dlpack__ (no copy); errors name the argument `name`.");
}

}  // namespace gemmtune::python
