#include "problem_binding.hpp"

#include <functional>
#include <string>

#include "common/error.hpp"
#include "problem/gemm_problem.hpp"

namespace py = pybind11;

namespace gemmtune::python {
namespace {

// The parsers' errors, with the keyword argument that carried the bad value put first.
template <typename T>
T parse_argument(const char* argument, const std::string& value, T (*parse)(const std::string&)) {
  try {
    return parse(value);
  } catch (const InputError& e) {
    throw InputError(std::string(argument) + ": " + e.what());
  }
}

OutputLayout parse_output_layout(const std::string& s) {
  if (s == "row") return OutputLayout::RowMajor;
  if (s == "col") return OutputLayout::Transposed;
  throw InputError("unknown output layout '" + s + "' (expected row, or col for Y stored transposed)");
}

GemmProblem make_problem(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
                         const std::string& out, bool bias, const std::string& act, float leaky_slope, bool save_z,
                         float dropout, const std::string& mode, const std::string& pass) {
  GemmProblem p;
  p.pass = parse_argument("pass_", pass, parse_pass);
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.out = parse_argument("out", out, parse_output_layout);
  p.epi.bias = bias;
  p.epi.act = parse_argument("act", act, parse_activation);
  p.epi.leaky_slope = leaky_slope;
  p.epi.save_z = save_z;
  p.epi.dropout_p = dropout;
  p.mode = parse_argument("mode", mode, parse_math_mode);
  p.validate();
  return p;
}

}  // namespace

void bind_problem(py::module_& m) {
  py::class_<GemmProblem>(m, "Problem",
                          "One GEMM as the tuner measures and the runtime runs it: Y = epilogue(op(A)·op(B)), A m×k, "
                          "B k×n, Y m×n (row-major; trans_a/trans_b: stored transposed; out='col': Y stored n×m).")
      .def(py::init(&make_problem), py::arg("m"), py::arg("n"), py::arg("k"), py::kw_only(),
           py::arg("trans_a") = false, py::arg("trans_b") = false, py::arg("out") = "row", py::arg("bias") = false,
           py::arg("act") = "none", py::arg("leaky_slope") = 0.01f, py::arg("save_z") = false,
           py::arg("dropout") = 0.0f, py::arg("mode") = "tf32", py::arg("pass_") = "fwd")
      .def_static("parse", &GemmProblem::parse_key, py::arg("key"),
                  "The problem of a db key, e.g. 'fwd:1000x4096x1024:nt:row:bias+gelu+z:tf32'")
      .def_property_readonly("key", &GemmProblem::key)
      .def_property_readonly("pass_", [](const GemmProblem& p) { return to_string(p.pass); })
      .def_readonly("m", &GemmProblem::m)
      .def_readonly("n", &GemmProblem::n)
      .def_readonly("k", &GemmProblem::k)
      .def_readonly("trans_a", &GemmProblem::trans_a)
      .def_readonly("trans_b", &GemmProblem::trans_b)
      .def_property_readonly("out",
                             [](const GemmProblem& p) { return p.out == OutputLayout::Transposed ? "col" : "row"; })
      .def_property_readonly("bias", [](const GemmProblem& p) { return p.epi.bias; })
      .def_property_readonly("act", [](const GemmProblem& p) { return to_string(p.epi.act); })
      .def_property_readonly("leaky_slope", [](const GemmProblem& p) { return p.epi.leaky_slope; })
      .def_property_readonly("save_z", [](const GemmProblem& p) { return p.epi.save_z; })
      .def_property_readonly("dropout", [](const GemmProblem& p) { return p.epi.dropout_p; })
      .def_property_readonly("mode", [](const GemmProblem& p) { return to_string(p.mode); })
      .def("__eq__", [](const GemmProblem& a, const GemmProblem& b) { return a == b; }, py::is_operator())
      .def("__hash__", [](const GemmProblem& p) { return std::hash<std::string>()(p.key()); })
      .def("__repr__", [](const GemmProblem& p) { return "gemmtune.Problem.parse('" + p.key() + "')"; });
}

}  // namespace gemmtune::python
