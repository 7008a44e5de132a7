#include "call_arrays.hpp"

#include <Python.h>
#include <pybind11/stl.h>

#include "dlpack_abi.hpp"

namespace py = pybind11;

namespace gemmtune::python {
namespace {

// The names a call looks up, made once: a dict lookup by an interned string skips building and hashing a new one.
struct Names {
  PyObject* interface = PyUnicode_InternFromString("__cuda_array_interface__");
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* data = PyUnicode_InternFromString("data");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* strides = PyUnicode_InternFromString("strides");
  PyObject* typestr = PyUnicode_InternFromString("typestr");
  PyObject* version = PyUnicode_InternFromString("version");
  PyObject* mask = PyUnicode_InternFromString("mask");
  PyObject* stream = PyUnicode_InternFromString("stream");
};

const Names& names() {
  static const Names n;  // kept for the interpreter's life, as interned strings are
  return n;
}

bool read_int(PyObject* o, long long& out) {
  if (!PyLong_Check(o)) return false;
  out = PyLong_AsLongLong(o);
  if (out == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// Appends a tuple or list of ints (the interface's shape and strides; CuPy writes tuples, some producers lists) to
// `key`; returns how many, or -1 where it is not one.
long long append_ints(PyObject* seq, std::vector<long long>& key) {
  const bool tuple = PyTuple_Check(seq);
  if (!tuple && !PyList_Check(seq)) return -1;
  const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(seq) : PyList_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = 0;
    if (!read_int(tuple ? PyTuple_GET_ITEM(seq, i) : PyList_GET_ITEM(seq, i), v)) return -1;
    key.push_back(v);
  }
  return n;
}

// Appends the row-major strides, in elements, of a compact array whose shape ends `key` (its last `rank` values).
void append_compact_strides(std::vector<long long>& key, std::size_t rank) {
  const std::size_t shape_at = key.size() - rank;
  key.resize(key.size() + rank);
  long long stride = 1;
  for (std::size_t i = rank; i-- > 0;) {
    key[shape_at + rank + i] = stride;
    stride *= key[shape_at + i];
  }
}

// An array's entry in the key is its protocol, rank, shape, strides (elements) and read-only flag.
enum Protocol : long long { kInterface = 0, kDlpack = 1 };

// A __cuda_array_interface__ dict, where it is one the fast path takes.
bool read_interface(PyObject* d, std::vector<long long>& key, CallArrays& out) {
  const Names& n = names();
  if (!PyDict_CheckExact(d)) return false;
  long long version = 0;
  if (PyObject* v = PyDict_GetItem(d, n.version); v && !read_int(v, version)) return false;
  if (version < 0 || version > 3) return false;
  PyObject* typestr = PyDict_GetItem(d, n.typestr);
  if (!typestr || !PyUnicode_Check(typestr) || PyUnicode_CompareWithASCIIString(typestr, "<f4") != 0) return false;
  if (PyObject* mask = PyDict_GetItem(d, n.mask); mask && mask != Py_None) return false;
  PyObject* data = PyDict_GetItem(d, n.data);
  if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) return false;
  long long ptr = 0;
  if (!read_int(PyTuple_GET_ITEM(data, 0), ptr) || ptr == 0) return false;
  const int read_only = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
  if (read_only < 0) {
    PyErr_Clear();
    return false;
  }
  if (version >= 3) {
    if (PyObject* s = PyDict_GetItem(d, n.stream); s && s != Py_None) {
      long long stream = 0;
      if (!read_int(s, stream) || stream <= 0) return false;  // 0 is the protocol's error: the full path says so
      out.producer_streams.push_back(static_cast<std::uintptr_t>(stream));
    }
  }
  key.push_back(kInterface);
  const std::size_t rank_at = key.size();
  key.push_back(0);
  PyObject* shape = PyDict_GetItem(d, n.shape);
  const long long rank = shape ? append_ints(shape, key) : -1;
  if (rank < 0) return false;
  key[rank_at] = rank;
  PyObject* strides = PyDict_GetItem(d, n.strides);
  if (!strides || strides == Py_None) {
    append_compact_strides(key, static_cast<std::size_t>(rank));
  } else {
    if (append_ints(strides, key) != rank) return false;
    for (std::size_t i = key.size() - static_cast<std::size_t>(rank); i < key.size(); ++i) {
      if (key[i] % 4 != 0) return false;  // bytes that are not whole float32 elements
      key[i] /= 4;
    }
  }
  key.push_back(read_only);
  out.pointers.push_back(static_cast<std::uintptr_t>(ptr));
  out.devices.push_back(-1);
  return true;
}

// The capsule of __dlpack__(stream=...), read and dropped (the producer's deleter runs; the memory stays the array's).
bool read_capsule(PyObject* method, std::uintptr_t stream, std::vector<long long>& key, CallArrays& out) {
  py::object capsule;
  try {
    capsule = py::reinterpret_borrow<py::object>(method)(py::arg("stream") = stream);
  } catch (py::error_already_set&) {
    return false;  // the full path calls it again and raises its error, naming the argument
  }
  if (!PyCapsule_IsValid(capsule.ptr(), dlpack::kCapsuleName)) return false;
  const dlpack::DLTensor& t =
      static_cast<const dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), dlpack::kCapsuleName))->dl_tensor;
  if (t.device.device_type != dlpack::kDLCUDA && t.device.device_type != dlpack::kDLCUDAManaged) return false;
  if (t.dtype.code != dlpack::kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1) return false;
  const std::uintptr_t ptr = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
  if (ptr == 0 || t.ndim < 0) return false;
  key.push_back(kDlpack);
  key.push_back(t.ndim);
  key.insert(key.end(), t.shape, t.shape + t.ndim);
  if (t.strides)
    key.insert(key.end(), t.strides, t.strides + t.ndim);
  else
    append_compact_strides(key, static_cast<std::size_t>(t.ndim));
  key.push_back(0);  // an unversioned capsule has no read-only flag
  out.pointers.push_back(ptr);
  out.devices.push_back(t.device.device_id);
  return true;
}

bool read_one(PyObject* obj, std::uintptr_t dlpack_stream, std::vector<long long>& key, CallArrays& out) {
  const Names& n = names();
  // The interface first, as read_array does: it hands over a pointer without creating anything.
  if (PyObject* interface = PyObject_GetAttr(obj, n.interface)) {
    const bool ok = read_interface(interface, key, out);
    Py_DECREF(interface);
    return ok;
  }
  const bool absent = PyErr_ExceptionMatches(PyExc_AttributeError);
  PyErr_Clear();
  if (!absent) return false;  // a getter that refuses (a tensor that requires grad): the full path says why
  PyObject* method = PyObject_GetAttr(obj, n.dlpack);
  if (!method) {
    PyErr_Clear();
    return false;
  }
  const bool ok = read_capsule(method, dlpack_stream, key, out);
  Py_DECREF(method);
  return ok;
}

}  // namespace

std::optional<CallArrays> read_call_arrays(const py::tuple& arrays, std::uintptr_t dlpack_stream) {
  CallArrays out;
  out.pointers.reserve(arrays.size());
  out.devices.reserve(arrays.size());
  std::vector<long long> key;
  key.reserve(arrays.size() * 8);
  for (py::handle a : arrays)
    if (!read_one(a.ptr(), dlpack_stream, key, out)) return std::nullopt;
  out.key = py::reinterpret_steal<py::tuple>(PyTuple_New(static_cast<Py_ssize_t>(key.size())));
  if (!out.key) throw py::error_already_set();
  for (std::size_t i = 0; i < key.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(key[i]);
    if (!v) throw py::error_already_set();
    PyTuple_SET_ITEM(out.key.ptr(), static_cast<Py_ssize_t>(i), v);  // steals v
  }
  return out;
}

void bind_call_arrays(py::module_& m) {
  py::class_<CallArrays>(m, "CallArrays", "A forward call's arrays as the resolved-call path reads them")
      .def_readonly("key", &CallArrays::key)
      .def_readonly("pointers", &CallArrays::pointers)
      .def_readonly("devices", &CallArrays::devices)
      .def_readonly("producer_streams", &CallArrays::producer_streams);
  m.def("read_call_arrays", &read_call_arrays, py::arg("arrays"), py::arg("dlpack_stream"),
        "The arrays' key, pointers, devices and producer streams, or None where the full path must read them");
}

}  // namespace gemmtune::python
