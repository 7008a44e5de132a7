#include "errors.hpp"

#include <Python.h>

#include "common/error.hpp"

namespace py = pybind11;

namespace gemmtune::python {
namespace {

// The classes live as long as the process: the module that owns them is never unloaded.
PyObject* error_class = nullptr;
PyObject* input_error_class = nullptr;
PyObject* no_gpu_error_class = nullptr;
PyObject* check_error_class = nullptr;

PyObject* new_class(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("gemmtune.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

}  // namespace

void bind_errors(py::module_& m) {
  const py::handle runtime_error(PyExc_RuntimeError), value_error(PyExc_ValueError);
  error_class = new_class(m, "Error", py::make_tuple(runtime_error), "Every error gemmtune raises.");
  const py::handle error(error_class);
  input_error_class = new_class(m, "InputError", py::make_tuple(error, value_error),
                                "Bad input: an argument, a problem, a damaged db. The message names what.");
  no_gpu_error_class = new_class(m, "NoGpuError", py::make_tuple(error), "No usable CUDA GPU, with CUDA's reason.");
  check_error_class = new_class(m, "CheckError", py::make_tuple(error),
                                "A failed CUDA or cuBLASLt call (with the call, file and line), or a failed check.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error_class, e.what());
    } catch (const NoGpuError& e) {
      PyErr_SetString(no_gpu_error_class, e.what());
    } catch (const CheckError& e) {
      PyErr_SetString(check_error_class, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error_class, e.what());
    }
  });
}

}  // namespace gemmtune::python
