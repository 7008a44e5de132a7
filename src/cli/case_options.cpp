#include "cli/case_options.hpp"

#include <charconv>

#include "common/error.hpp"

namespace gemmtune::cli {
namespace {

// Shortest text that reads back as the same float, as problem keys write it.
std::string float_text(float v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

}  // namespace

GemmProblem CaseOptions::problem() const {
  GemmProblem p;
  p.pass = parse_pass(pass);
  p.m = m;
  p.n = n;
  p.k = k;
  if (layout.size() != 2 || (layout[0] != 'n' && layout[0] != 't') || (layout[1] != 'n' && layout[1] != 't'))
    throw InputError("--layout must be nn, nt, tn or tt, not '" + layout + "'");
  p.trans_a = layout[0] == 't';
  p.trans_b = layout[1] == 't';
  if (out != "row" && out != "col") throw InputError("--out must be row or col, not '" + out + "'");
  p.out = out == "col" ? OutputLayout::Transposed : OutputLayout::RowMajor;
  p.epi.bias = bias;
  p.epi.act = parse_activation(act);
  p.epi.leaky_slope = leaky_slope;
  p.epi.save_z = save_z;
  p.epi.dropout_p = dropout;
  p.mode = parse_math_mode(mode);
  p.validate();
  return p;
}

void add_case_options(CLI::App& cmd, CaseOptions& o, bool required) {
  auto* m = cmd.add_option("--m", o.m, "Rows of Y (and of A)");
  auto* n = cmd.add_option("--n", o.n, "Columns of Y (and of B)");
  auto* k = cmd.add_option("--k", o.k, "The reduction dimension");
  if (required) {
    m->required();
    n->required();
    k->required();
  }
  cmd.add_option("--layout", o.layout, "A and B stored as-is (n) or transposed (t): nn, nt, tn, tt")
      ->capture_default_str();
  cmd.add_option("--out", o.out, "Y stored row-major (row) or transposed (col)")->capture_default_str();
  cmd.add_flag("--bias", o.bias, "Add a per-column bias");
  cmd.add_option("--act", o.act, "Activation: none, relu, leaky_relu, gelu, gelu_erf, sigmoid, tanh")
      ->capture_default_str();
  cmd.add_option("--leaky-slope", o.leaky_slope, "Slope of leaky_relu below zero")->capture_default_str();
  cmd.add_flag("--save-z", o.save_z, "Also store the pre-activation Z");
  cmd.add_option("--dropout", o.dropout, "Dropout probability (0 disables it)")->capture_default_str();
  cmd.add_option("--mode", o.mode, "Math mode: fp32, tf32, 3xtf32")->capture_default_str();
  cmd.add_option("--pass", o.pass, "fwd, or the backward GEMMs bwd_a (gA) and bwd_b (gB)")->capture_default_str();
}

bool case_given(const CaseOptions& o) { return o.m != 0 || o.n != 0 || o.k != 0; }

std::vector<std::string> case_arguments(const GemmProblem& p) {
  std::vector<std::string> args = {"--m", std::to_string(p.m), "--n", std::to_string(p.n), "--k", std::to_string(p.k)};
  if (p.layout() != "nn") args.insert(args.end(), {"--layout", p.layout()});
  if (p.out == OutputLayout::Transposed) args.insert(args.end(), {"--out", "col"});
  if (p.epi.bias) args.push_back("--bias");
  if (p.epi.act != Activation::None) args.insert(args.end(), {"--act", to_string(p.epi.act)});
  if (p.epi.act == Activation::LeakyRelu) args.insert(args.end(), {"--leaky-slope", float_text(p.epi.leaky_slope)});
  if (p.epi.save_z) args.push_back("--save-z");
  if (p.epi.dropout()) args.insert(args.end(), {"--dropout", float_text(p.epi.dropout_p)});
  args.insert(args.end(), {"--mode", to_string(p.mode)});
  if (p.pass != Pass::Forward) args.insert(args.end(), {"--pass", to_string(p.pass)});
  return args;
}

}  // namespace gemmtune::cli
