#include "profile/sweep_profile.hpp"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/data_dir.hpp"
#include "common/error.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

// Every error names the profile and the JSON path of the field, so a typo is found without reading the code.
class FieldReader {
 public:
  explicit FieldReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InputError("profile " + origin_ + ": field '" + field + "': " + why);
  }

  const json& array(const json& obj, const std::string& name, const std::string& path) const {
    const json& v = obj.at(name);
    if (!v.is_array() || v.empty()) fail(path, "must be a non-empty array");
    return v;
  }

  std::vector<std::string> strings(const json& obj, const std::string& name) const {
    std::vector<std::string> out;
    const json& arr = array(obj, name, name);
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string()) fail(name + "[" + std::to_string(i) + "]", "must be a string");
      out.push_back(arr[i].get<std::string>());
    }
    return out;
  }

  std::int64_t positive(const json& v, const std::string& path) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1) fail(path, "must be an integer >= 1");
    return v.get<std::int64_t>();
  }

  double number(const json& obj, const std::string& name, const std::string& path, double lo, double hi) const {
    const json& v = obj.at(name);
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
      fail(path, "must be a number in [" + fmt(lo) + ", " + fmt(hi) + "]");
    return v.get<double>();
  }

  void only_known(const json& obj, const std::string& path, const std::set<std::string>& known) const {
    if (!obj.is_object()) fail(path, "must be an object");
    for (const auto& item : obj.items())
      if (!known.count(item.key())) fail(path.empty() ? item.key() : path + "." + item.key(), "unknown field");
  }

  // Runs f, turning the InputError of a value parser into one that names the field.
  template <typename F>
  auto parse(const std::string& path, F f) const -> decltype(f()) {
    try {
      return f();
    } catch (const InputError& e) {
      fail(path, e.what());
    }
  }

 private:
  static std::string fmt(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  }
  std::string origin_;
};

// The full profile plans 33,000 problems; a profile far beyond that is a mistake (or a hostile file) that would
// otherwise take minutes and gigabytes to plan before the first measurement.
constexpr long long kMaxProfileProblems = 100000;

struct Shape {
  std::int64_t m, n, k;
};

std::vector<Shape> read_shapes(const json& doc, const FieldReader& r) {
  std::vector<Shape> shapes;
  if (doc.contains("shapes")) {
    const json& arr = r.array(doc, "shapes", "shapes");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string path = "shapes[" + std::to_string(i) + "]";
      const json& s = arr[i];
      if (s.is_array()) {
        if (s.size() != 3) r.fail(path, "must be [m, n, k]");
        shapes.push_back({r.positive(s[0], path + "[0]"), r.positive(s[1], path + "[1]"), r.positive(s[2], path + "[2]")});
      } else if (s.is_object()) {
        r.only_known(s, path, {"m", "n", "k", "label"});
        for (const char* d : {"m", "n", "k"})
          if (!s.contains(d)) r.fail(path + "." + d, "is missing");
        shapes.push_back({r.positive(s["m"], path + ".m"), r.positive(s["n"], path + ".n"), r.positive(s["k"], path + ".k")});
      } else {
        r.fail(path, "must be [m, n, k] or {\"m\":..,\"n\":..,\"k\":..}");
      }
    }
  }
  if (doc.contains("grid")) {
    const json& g = doc["grid"];
    r.only_known(g, "grid", {"m", "n", "k"});
    std::vector<std::int64_t> dims[3];
    const char* names[3] = {"m", "n", "k"};
    for (int d = 0; d < 3; ++d) {
      if (!g.contains(names[d])) r.fail(std::string("grid.") + names[d], "is missing");
      const json& arr = r.array(g, names[d], std::string("grid.") + names[d]);
      for (std::size_t i = 0; i < arr.size(); ++i)
        dims[d].push_back(r.positive(arr[i], std::string("grid.") + names[d] + "[" + std::to_string(i) + "]"));
    }
    const double grid_shapes =
        static_cast<double>(dims[0].size()) * static_cast<double>(dims[1].size()) * static_cast<double>(dims[2].size());
    if (grid_shapes > kMaxProfileProblems)
      r.fail("grid", "has " + std::to_string(static_cast<long long>(grid_shapes)) + " shapes (at most " +
                         std::to_string(kMaxProfileProblems) + ")");
    for (auto m : dims[0])
      for (auto n : dims[1])
        for (auto k : dims[2]) shapes.push_back({m, n, k});
  }
  if (shapes.empty()) r.fail("shapes", "the profile names no shapes (give 'shapes' or 'grid')");
  return shapes;
}

}  // namespace

SweepProfile parse_sweep_profile(const std::string& json_text, const std::string& origin) {
  const FieldReader r(origin);
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw InputError("profile " + origin + ": not valid JSON: " + e.what());
  }
  r.only_known(doc, "", {"name", "description", "shapes", "grid", "layouts", "outputs", "epilogues", "modes", "passes",
                         "backends", "lt", "timing", "fp32_equivalent"});

  SweepProfile p;
  if (!doc.contains("name") || !doc["name"].is_string()) r.fail("name", "must be a string");
  p.name = doc["name"].get<std::string>();
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) r.fail("description", "must be a string");
    p.description = doc["description"].get<std::string>();
  }

  const std::vector<Shape> shapes = read_shapes(doc, r);
  const auto layouts = doc.contains("layouts") ? r.strings(doc, "layouts") : std::vector<std::string>{"nn"};
  const auto outputs = doc.contains("outputs") ? r.strings(doc, "outputs") : std::vector<std::string>{"row"};
  const auto epilogues = doc.contains("epilogues") ? r.strings(doc, "epilogues") : std::vector<std::string>{"none"};
  const auto modes = doc.contains("modes") ? r.strings(doc, "modes") : std::vector<std::string>{"tf32"};
  const auto passes = doc.contains("passes") ? r.strings(doc, "passes") : std::vector<std::string>{"fwd"};
  std::vector<Pass> pass_list;
  for (std::size_t i = 0; i < passes.size(); ++i)
    pass_list.push_back(r.parse("passes[" + std::to_string(i) + "]", [&] { return parse_pass(passes[i]); }));
  p.backends = doc.contains("backends") ? r.strings(doc, "backends") : std::vector<std::string>{"own", "lt"};
  for (std::size_t i = 0; i < p.backends.size(); ++i)
    if (p.backends[i] != "own" && p.backends[i] != "lt")
      r.fail("backends[" + std::to_string(i) + "]", "unknown backend '" + p.backends[i] + "' (expected own or lt)");

  std::vector<Epilogue> epis;
  for (std::size_t i = 0; i < epilogues.size(); ++i)
    epis.push_back(r.parse("epilogues[" + std::to_string(i) + "]", [&] { return Epilogue::parse(epilogues[i]); }));
  std::vector<MathMode> mode_list;
  for (std::size_t i = 0; i < modes.size(); ++i)
    mode_list.push_back(r.parse("modes[" + std::to_string(i) + "]", [&] { return parse_math_mode(modes[i]); }));
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const std::string& l = layouts[i];
    if (l != "nn" && l != "nt" && l != "tn" && l != "tt")
      r.fail("layouts[" + std::to_string(i) + "]", "unknown layout '" + l + "' (expected nn, nt, tn or tt)");
  }
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] != "row" && outputs[i] != "col")
      r.fail("outputs[" + std::to_string(i) + "]", "unknown output layout '" + outputs[i] + "' (expected row or col)");

  const double planned = static_cast<double>(mode_list.size()) * static_cast<double>(shapes.size()) *
                         static_cast<double>(layouts.size()) * static_cast<double>(outputs.size()) *
                         static_cast<double>(epis.size()) * static_cast<double>(pass_list.size());
  if (planned > kMaxProfileProblems)
    r.fail("shapes", "the profile expands to " + std::to_string(static_cast<long long>(planned)) +
                         " problems (at most " + std::to_string(kMaxProfileProblems) + ")");
  // Mode outermost: a table per mode reads naturally, and tf32 results do not wait behind slow fp32 ones.
  // A backward pass has no epilogue of its own (problem/pass_gemm.hpp): one problem per shape, layout and output.
  std::set<std::string> seen;
  for (MathMode mode : mode_list)
    for (const Shape& s : shapes)
      for (const std::string& lay : layouts)
        for (const std::string& out : outputs)
          for (const Epilogue& e : epis)
            for (Pass pass : pass_list) {
              GemmProblem q;
              q.m = s.m;
              q.n = s.n;
              q.k = s.k;
              q.trans_a = lay[0] == 't';
              q.trans_b = lay[1] == 't';
              q.out = out == "col" ? OutputLayout::Transposed : OutputLayout::RowMajor;
              q.epi = e;
              q.mode = mode;
              if (pass != Pass::Forward) q = backward_problem(q, pass);
              r.parse("shapes", [&] { q.validate(); return 0; });
              if (seen.insert(q.key()).second) p.problems.push_back(q);
            }

  if (doc.contains("fp32_equivalent")) {
    if (!doc["fp32_equivalent"].is_boolean()) r.fail("fp32_equivalent", "must be true or false");
    p.fp32_equivalent = doc["fp32_equivalent"].get<bool>();
  }
  if (doc.contains("lt")) {
    const json& lt = doc["lt"];
    r.only_known(lt, "lt", {"top_k", "workspace_mib", "search", "per_algo_id", "unfused_baseline"});
    if (lt.contains("top_k")) p.lt.top_k = static_cast<int>(r.number(lt, "top_k", "lt.top_k", 1, 64));
    if (lt.contains("workspace_mib"))
      p.lt.workspace_bytes = static_cast<std::size_t>(r.number(lt, "workspace_mib", "lt.workspace_mib", 0, 4096)) << 20;
    if (lt.contains("search")) {
      if (!lt["search"].is_string()) r.fail("lt.search", "must be \"heuristic\" or \"by_algo_id\"");
      const std::string s = lt["search"].get<std::string>();
      if (s != "heuristic" && s != "by_algo_id") r.fail("lt.search", "must be \"heuristic\" or \"by_algo_id\"");
      p.lt.by_algo_id = s == "by_algo_id";
    }
    if (lt.contains("per_algo_id")) p.lt.per_algo_id = static_cast<int>(r.number(lt, "per_algo_id", "lt.per_algo_id", 1, 64));
    if (lt.contains("unfused_baseline")) {
      if (!lt["unfused_baseline"].is_boolean()) r.fail("lt.unfused_baseline", "must be true or false");
      p.lt.unfused_baseline = lt["unfused_baseline"].get<bool>();
    }
  }
  if (doc.contains("timing")) {
    const json& t = doc["timing"];
    r.only_known(t, "timing", {"warmup_calls", "batch_calls", "min_samples", "max_noise_pct", "min_time_ms", "max_time_ms",
                           "l2_flush", "launch", "l2", "finalists", "prune"});
    TimingSettings& ts = p.timing;
    if (t.contains("warmup_calls")) ts.warmup_calls = static_cast<int>(r.number(t, "warmup_calls", "timing.warmup_calls", 0, 1000));
    if (t.contains("batch_calls")) ts.batch_calls = static_cast<int>(r.number(t, "batch_calls", "timing.batch_calls", 1, 500));
    if (t.contains("min_samples")) ts.min_samples = static_cast<int>(r.number(t, "min_samples", "timing.min_samples", 1, 100000));
    if (t.contains("max_noise_pct")) ts.max_noise_pct = r.number(t, "max_noise_pct", "timing.max_noise_pct", 0, 100);
    if (t.contains("min_time_ms")) ts.min_time_ms = r.number(t, "min_time_ms", "timing.min_time_ms", 0, 60000);
    if (t.contains("max_time_ms")) ts.max_time_ms = r.number(t, "max_time_ms", "timing.max_time_ms", 1, 600000);
    if (ts.max_time_ms < ts.min_time_ms) r.fail("timing.max_time_ms", "must be >= timing.min_time_ms");
    if (t.contains("l2_flush")) {
      if (!t["l2_flush"].is_boolean()) r.fail("timing.l2_flush", "must be true or false");
      ts.l2_flush = t["l2_flush"].get<bool>();
    }
    // "a" | "b" | "both": which of two conditions the finalist stage measures.
    const auto either_or_both = [&](const char* field, const char* a, const char* b, bool* has_a, bool* has_b) {
      if (!t.contains(field)) return;
      const std::string path = std::string("timing.") + field;
      const std::string expected = std::string("must be \"") + a + "\", \"" + b + "\" or \"both\"";
      if (!t[field].is_string()) r.fail(path, expected);
      const std::string v = t[field].get<std::string>();
      if (v != a && v != b && v != "both") r.fail(path, expected + ", not \"" + v + "\"");
      *has_a = v != b;
      *has_b = v != a;
    };
    either_or_both("launch", "stream", "graph", &ts.launch_stream, &ts.launch_graph);
    either_or_both("l2", "warm", "cold", &ts.l2_warm, &ts.l2_cold);
    if (t.contains("finalists")) ts.finalists = static_cast<int>(r.number(t, "finalists", "timing.finalists", 0, 16));
    if (t.contains("prune")) {
      if (!t["prune"].is_boolean()) r.fail("timing.prune", "must be true or false");
      ts.prune = t["prune"].get<bool>();
    }
  }
  return p;
}

SweepProfile load_sweep_profile(const std::string& name_or_path, const std::string& profiles_dir) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  const std::string path = is_path ? name_or_path : profiles_dir + "/" + name_or_path + ".json";
  std::ifstream in(path);
  if (!in)
    throw InputError("cannot read profile '" + name_or_path + "' (" + path + ")" +
                     (is_path ? "" : "; named profiles are read from share/gemmtune/profiles beside the binary, "
                                     "or from $GEMMTUNE_DATA_DIR/profiles"));
  std::stringstream text;
  text << in.rdbuf();
  return parse_sweep_profile(text.str(), path);
}

std::string default_profiles_dir() {
  if (const char* env = std::getenv("GEMMTUNE_PROFILES")) return env;
  return data_dir() + "/profiles";
}

}  // namespace gemmtune
