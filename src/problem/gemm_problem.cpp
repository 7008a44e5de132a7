#include "problem/gemm_problem.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// Shortest text that parses back to the same float, so keys round-trip exactly.
std::string format_float(float v) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

float parse_float(const std::string& s, const std::string& what) {
  float v = 0.f;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) throw InputError("bad number '" + s + "' for " + what);
  return v;
}

std::int64_t parse_dim(const std::string& s, const std::string& what) {
  std::int64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) throw InputError("bad dimension '" + s + "' for " + what);
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) parts.push_back(cur);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

std::string epilogue_key_of(const Epilogue& e) {
  std::vector<std::string> tokens;
  if (e.bias) tokens.emplace_back("bias");
  if (e.act == Activation::LeakyRelu)
    tokens.push_back(std::string("leaky_relu=") + format_float(e.leaky_slope));
  else if (e.act != Activation::None)
    tokens.emplace_back(to_string(e.act));
  if (e.save_z) tokens.emplace_back("z");
  if (e.dropout()) tokens.push_back("dropout=" + format_float(e.dropout_p));
  if (tokens.empty()) return "none";
  std::string out = tokens[0];
  for (std::size_t i = 1; i < tokens.size(); ++i) out += "+" + tokens[i];
  return out;
}

Epilogue parse_epilogue_spec(const std::string& s) {
  Epilogue e;
  if (s == "none") return e;
  // Each part at most once: "relu+gelu" or "bias+bias" would otherwise mean whichever came last.
  bool has_bias = false, has_z = false, has_dropout = false, has_act = false;
  const auto once = [&s](bool& seen, const std::string& part) {
    if (seen) throw InputError("epilogue '" + s + "' gives " + part + " twice");
    seen = true;
  };
  for (const std::string& tok : split(s, '+')) {
    if (tok == "bias") {
      once(has_bias, "bias");
      e.bias = true;
    } else if (tok == "z") {
      once(has_z, "z");
      e.save_z = true;
    } else if (tok.rfind("dropout=", 0) == 0) {
      once(has_dropout, "dropout");
      e.dropout_p = parse_float(tok.substr(8), "dropout");
      if (!(e.dropout_p >= 0.f && e.dropout_p < 1.f)) throw InputError("bad dropout '" + tok.substr(8) + "': must be in [0, 1)");
    } else if (tok.rfind("leaky_relu=", 0) == 0) {
      once(has_act, "an activation");
      e.act = Activation::LeakyRelu;
      e.leaky_slope = parse_float(tok.substr(11), "leaky_relu slope");
      if (!std::isfinite(e.leaky_slope)) throw InputError("bad leaky_relu slope '" + tok.substr(11) + "': must be finite");
    } else {
      once(has_act, "an activation");
      e.act = parse_activation(tok);
      if (e.act == Activation::None) throw InputError("epilogue '" + s + "': 'none' stands alone");
    }
  }
  return e;
}

}  // namespace

std::string Epilogue::key() const { return epilogue_key_of(*this); }

Epilogue Epilogue::parse(const std::string& spec) {
  if (spec.empty()) throw InputError("empty epilogue (use 'none')");
  return parse_epilogue_spec(spec);
}

bool Epilogue::operator==(const Epilogue& o) const {
  return bias == o.bias && act == o.act && (act != Activation::LeakyRelu || leaky_slope == o.leaky_slope) &&
         save_z == o.save_z && dropout_p == o.dropout_p;
}

bool GemmProblem::operator==(const GemmProblem& o) const {
  return pass == o.pass && m == o.m && n == o.n && k == o.k && trans_a == o.trans_a && trans_b == o.trans_b &&
         out == o.out && epi == o.epi && mode == o.mode;
}

const char* to_string(MathMode m) {
  switch (m) {
    case MathMode::Fp32: return "fp32";
    case MathMode::Tf32: return "tf32";
    case MathMode::Tf32x3: return "3xtf32";
  }
  return "?";
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::LeakyRelu: return "leaky_relu";
    case Activation::Gelu: return "gelu";
    case Activation::GeluErf: return "gelu_erf";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Tanh: return "tanh";
  }
  return "?";
}

const char* to_string(Pass p) {
  switch (p) {
    case Pass::Forward: return "fwd";
    case Pass::GradA: return "bwd_a";
    case Pass::GradB: return "bwd_b";
  }
  return "?";
}

MathMode parse_math_mode(const std::string& s) {
  for (MathMode m : {MathMode::Fp32, MathMode::Tf32, MathMode::Tf32x3})
    if (s == to_string(m)) return m;
  throw InputError("unknown math mode '" + s + "' (expected fp32, tf32 or 3xtf32)");
}

Activation parse_activation(const std::string& s) {
  for (Activation a : {Activation::None, Activation::Relu, Activation::LeakyRelu, Activation::Gelu, Activation::GeluErf,
                       Activation::Sigmoid, Activation::Tanh})
    if (s == to_string(a)) return a;
  throw InputError("unknown activation '" + s + "' (expected none, relu, leaky_relu, gelu, gelu_erf, sigmoid or tanh)");
}

Pass parse_pass(const std::string& s) {
  for (Pass p : {Pass::Forward, Pass::GradA, Pass::GradB})
    if (s == to_string(p)) return p;
  throw InputError("unknown pass '" + s + "' (expected fwd, bwd_a or bwd_b)");
}

std::string GemmProblem::layout() const { return std::string(trans_a ? "t" : "n") + (trans_b ? "t" : "n"); }

std::string GemmProblem::key() const {
  std::ostringstream os;
  os << to_string(pass) << ':' << m << 'x' << n << 'x' << k << ':' << layout() << ':'
     << (out == OutputLayout::Transposed ? "col" : "row") << ':' << epi.key() << ':' << to_string(mode);
  return os.str();
}

std::string GemmProblem::kind_key() const {
  std::ostringstream os;
  os << to_string(pass) << ':' << layout() << ':' << (out == OutputLayout::Transposed ? "col" : "row") << ':'
     << epi.key() << ':' << to_string(mode);
  return os.str();
}

GemmProblem GemmProblem::parse_key(const std::string& key) {
  const auto parts = split(key, ':');
  if (parts.size() != 6)
    throw InputError("bad problem key '" + key + "': expected pass:MxNxK:layout:out:epilogue:mode");
  GemmProblem p;
  p.pass = parse_pass(parts[0]);
  const auto dims = split(parts[1], 'x');
  if (dims.size() != 3) throw InputError("bad shape '" + parts[1] + "' in problem key (expected MxNxK)");
  p.m = parse_dim(dims[0], "m");
  p.n = parse_dim(dims[1], "n");
  p.k = parse_dim(dims[2], "k");
  const std::string& lay = parts[2];
  if (lay.size() != 2 || (lay[0] != 'n' && lay[0] != 't') || (lay[1] != 'n' && lay[1] != 't'))
    throw InputError("bad layout '" + lay + "' in problem key (expected nn, nt, tn or tt)");
  p.trans_a = lay[0] == 't';
  p.trans_b = lay[1] == 't';
  if (parts[3] == "row")
    p.out = OutputLayout::RowMajor;
  else if (parts[3] == "col")
    p.out = OutputLayout::Transposed;
  else
    throw InputError("bad output layout '" + parts[3] + "' in problem key (expected row or col)");
  p.epi = Epilogue::parse(parts[4]);
  p.mode = parse_math_mode(parts[5]);
  p.validate();
  return p;
}

void GemmProblem::validate() const {
  if (m < 1 || n < 1 || k < 1)
    throw InputError("bad shape " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     ": m, n and k must be >= 1");
  constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
  if (m >= kMaxDim || n >= kMaxDim || k >= kMaxDim) throw InputError("bad shape: every dimension must be < 2^31");
  if (!(epi.dropout_p >= 0.f && epi.dropout_p < 1.f))
    throw InputError("bad dropout probability " + format_float(epi.dropout_p) + ": must be in [0, 1)");
  if (epi.act == Activation::LeakyRelu && !std::isfinite(epi.leaky_slope))
    throw InputError("bad leaky_relu slope: must be finite");
}

void to_json(nlohmann::json& j, const GemmProblem& p) {
  j = nlohmann::json{{"pass", to_string(p.pass)},
                     {"m", p.m},
                     {"n", p.n},
                     {"k", p.k},
                     {"layout", p.layout()},
                     {"out", p.out == OutputLayout::Transposed ? "col" : "row"},
                     {"bias", p.epi.bias},
                     {"act", to_string(p.epi.act)},
                     {"save_z", p.epi.save_z},
                     {"dropout", p.epi.dropout_p},
                     {"mode", to_string(p.mode)},
                     {"key", p.key()}};
  if (p.epi.act == Activation::LeakyRelu) j["leaky_slope"] = p.epi.leaky_slope;
}

void from_json(const nlohmann::json& j, GemmProblem& p) {
  // The key is authoritative: it is what the db and the gate compare.
  if (!j.contains("key") || !j["key"].is_string()) throw InputError("problem object has no string field 'key'");
  p = GemmProblem::parse_key(j["key"].get<std::string>());
}

}  // namespace gemmtune
