#include "trace/trace.hpp"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

const char* copy_kind_name(CopyKind k) { return k == CopyKind::Memcpy ? "memcpy" : "memset"; }

std::uint64_t unsigned_field(const JsonFields& f, const std::string& name) {
  const std::int64_t v = f.integer(name);
  if (v < 0) f.fail(name, "must not be negative");
  return static_cast<std::uint64_t>(v);
}

std::uint32_t u32_field(const JsonFields& f, const std::string& name) {
  const std::uint64_t v = unsigned_field(f, name);
  if (v > 0xffffffffull) f.fail(name, "out of range");
  return static_cast<std::uint32_t>(v);
}

void triple_field(const json& j, const JsonFields& f, const std::string& name, std::uint32_t out[3]) {
  const json& v = j.at(name);
  if (!v.is_array() || v.size() != 3) f.fail(name, "expected an array of 3 integers");
  for (std::size_t i = 0; i < 3; ++i) {
    if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0) f.fail(name, "expected an array of 3 integers");
    out[i] = v[i].get<std::uint32_t>();
  }
}

std::vector<std::string> string_array(const json& j, const JsonFields& f, const std::string& name) {
  if (!f.has(name)) f.fail(name, "missing");
  const json& v = j.at(name);
  if (!v.is_array()) f.fail(name, std::string("expected an array, got ") + v.type_name());
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) f.fail(name, "expected an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// name is a literal at every call: a std::string parameter would make GCC 13 warn of a reference into a temporary.
const json& array_at(const json& j, const JsonFields& f, const char* name) {
  if (!f.has(name)) f.fail(name, "missing");
  const json& v = j.at(name);
  if (!v.is_array()) f.fail(name, std::string("expected an array, got ") + v.type_name());
  return v;
}

json gemm_call_json(const TraceGemm& g) {
  json j = {{"pid", g.pid}, {"calls", g.calls}};
  if (const auto* lt = std::get_if<LtCallDesc>(&g.call))
    j["desc"] = *lt;
  else
    j["blas"] = std::get<BlasCallDesc>(g.call);
  return j;
}

// A cublasLtMatmul call keeps its version-1 field, "desc"; a cuBLAS call is "blas".
TraceGemm gemm_call_from(const json& j, const JsonFields& f) {
  TraceGemm g;
  g.pid = static_cast<int>(f.integer("pid"));
  g.calls = unsigned_field(f, "calls");
  if (f.has("blas")) {
    f.object("blas");  // an object, or a clear error
    g.call = f.parse("blas", [&] { return j.at("blas").get<BlasCallDesc>(); });
  } else {
    f.object("desc");
    g.call = f.parse("desc", [&] { return j.at("desc").get<LtCallDesc>(); });
  }
  return g;
}

}  // namespace

std::string TraceGemm::api() const {
  if (const auto* blas = std::get_if<BlasCallDesc>(&call)) return blas->api;
  return "cublasLtMatmul";
}

GemmCallProblem TraceGemm::problem() const {
  if (const auto* blas = std::get_if<BlasCallDesc>(&call)) return blas_call_problem(*blas);
  return lt_call_problem(std::get<LtCallDesc>(call));
}

json trace_to_json(const Trace& t) {
  json j;
  j["schema"] = kTraceSchema;
  j["schema_version"] = kTraceSchemaVersion;
  j["gemmtune_version"] = GEMMTUNE_VERSION;
  j["command"] = t.command;
  j["exit_code"] = t.exit_code;
  j["wall_ms"] = t.wall_ms;
  j["gemms"] = t.gemms;
  j["gpu_note"] = t.gpu_note;
  j["processes"] = json::array();
  for (const TraceProcess& p : t.processes)
    j["processes"].push_back({{"pid", p.pid}, {"complete", p.complete}, {"dropped", p.dropped}, {"errors", p.errors}});
  // Kernel names repeat thousands of times: each is stored once and kernels refer to it by index.
  std::unordered_map<std::string, std::size_t> name_index;
  json names = json::array();
  json kernels = json::array();
  for (const TraceKernel& k : t.kernels) {
    auto it = name_index.find(k.name);
    if (it == name_index.end()) {
      it = name_index.emplace(k.name, names.size()).first;
      names.push_back(k.name);
    }
    kernels.push_back({{"pid", k.pid},
                       {"device", k.device},
                       {"stream", k.stream},
                       {"start", k.start},
                       {"end", k.end},
                       {"name", it->second},
                       {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                       {"block", {k.block[0], k.block[1], k.block[2]}},
                       {"launch_tid", k.launch_tid ? json(*k.launch_tid) : json(nullptr)},
                       {"launch_ns", k.launch_ns},
                       {"gemm", k.gemm ? json(*k.gemm) : json(nullptr)},
                       {"gemm_call", k.gemm_call}});
  }
  j["kernel_names"] = std::move(names);
  j["kernels"] = std::move(kernels);
  j["copies"] = json::array();
  for (const TraceCopy& c : t.copies)
    j["copies"].push_back({{"pid", c.pid},
                           {"kind", copy_kind_name(c.kind)},
                           {"direction", c.direction},
                           {"device", c.device},
                           {"stream", c.stream},
                           {"start", c.start},
                           {"end", c.end},
                           {"bytes", c.bytes}});
  j["ranges"] = json::array();
  for (const TraceRange& r : t.ranges)
    j["ranges"].push_back({{"pid", r.pid},
                           {"tid", r.tid},
                           {"name", r.name},
                           {"domain", r.domain},
                           {"start", r.start},
                           {"end", r.end},
                           {"depth", r.depth}});
  j["gemm_calls"] = json::array();
  for (const TraceGemm& g : t.gemms_called) j["gemm_calls"].push_back(gemm_call_json(g));
  j["gemm_coverage"] = t.gemm_coverage ? json(*t.gemm_coverage) : json(nullptr);
  return j;
}

Trace trace_from_json(const json& j, const std::string& where) {
  const JsonFields root(j, where);
  const std::string schema = root.string("schema");
  if (schema != kTraceSchema)
    throw InputError(where + ": not a gemmtune trace (schema '" + schema + "', expected '" + kTraceSchema + "')");
  const std::int64_t version = root.integer("schema_version");
  if (version != 1 && version != kTraceSchemaVersion)
    throw InputError(where + ": trace schema_version " + std::to_string(version) + ", this gemmtune reads 1 and " +
                     std::to_string(kTraceSchemaVersion));
  Trace t;
  t.command = string_array(j, root, "command");
  t.exit_code = static_cast<int>(root.integer("exit_code"));
  t.wall_ms = root.number("wall_ms");
  if (t.wall_ms < 0) root.fail("wall_ms", "must not be negative");
  t.gemms = root.boolean("gemms");
  t.gpu_note = root.string("gpu_note");
  const auto processes = root.objects("processes");
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const JsonFields& f = processes[i];
    TraceProcess p;
    p.pid = static_cast<int>(f.integer("pid"));
    p.complete = f.boolean("complete");
    p.dropped = unsigned_field(f, "dropped");
    p.errors = string_array(j.at("processes")[i], f, "errors");
    t.processes.push_back(std::move(p));
  }
  const std::vector<std::string> names = string_array(j, root, "kernel_names");
  const auto gemm_objects = root.objects("gemm_calls");
  for (std::size_t i = 0; i < gemm_objects.size(); ++i)
    t.gemms_called.push_back(gemm_call_from(j.at("gemm_calls")[i], gemm_objects[i]));
  if (version >= 2) {
    if (!root.has("gemm_coverage")) root.fail("gemm_coverage", "missing");
    if (!j.at("gemm_coverage").is_null()) {
      t.gemm_coverage = root.number("gemm_coverage");
      if (*t.gemm_coverage < 0 || *t.gemm_coverage > 1) root.fail("gemm_coverage", "must be a fraction in [0, 1]");
    }
  }
  const json& kernels = array_at(j, root, "kernels");
  const auto kernel_objects = root.objects("kernels");
  for (std::size_t i = 0; i < kernel_objects.size(); ++i) {
    const JsonFields& f = kernel_objects[i];
    const json& kj = kernels[i];
    TraceKernel k;
    k.pid = static_cast<int>(f.integer("pid"));
    k.device = u32_field(f, "device");
    k.stream = u32_field(f, "stream");
    k.start = unsigned_field(f, "start");
    k.end = unsigned_field(f, "end");
    if (k.end < k.start) f.fail("end", "before start");
    const std::uint64_t name = unsigned_field(f, "name");
    if (name >= names.size()) f.fail("name", "no kernel name " + std::to_string(name));
    k.name = names[name];
    triple_field(kj, f, "grid", k.grid);
    triple_field(kj, f, "block", k.block);
    if (!f.has("launch_tid")) f.fail("launch_tid", "missing");
    if (!kj.at("launch_tid").is_null()) k.launch_tid = u32_field(f, "launch_tid");
    k.launch_ns = unsigned_field(f, "launch_ns");
    if (!f.has("gemm")) f.fail("gemm", "missing");
    if (!kj.at("gemm").is_null()) {
      const std::uint64_t g = unsigned_field(f, "gemm");
      if (g >= t.gemms_called.size()) f.fail("gemm", "no gemm call " + std::to_string(g));
      k.gemm = static_cast<std::size_t>(g);
    }
    k.gemm_call = u32_field(f, "gemm_call");
    t.kernels.push_back(std::move(k));
  }
  for (const JsonFields& f : root.objects("copies")) {
    TraceCopy c;
    c.pid = static_cast<int>(f.integer("pid"));
    const std::string kind = f.string("kind");
    if (kind == "memcpy")
      c.kind = CopyKind::Memcpy;
    else if (kind == "memset")
      c.kind = CopyKind::Memset;
    else
      f.fail("kind", "expected memcpy or memset, got '" + kind + "'");
    c.direction = f.string("direction");
    c.device = u32_field(f, "device");
    c.stream = u32_field(f, "stream");
    c.start = unsigned_field(f, "start");
    c.end = unsigned_field(f, "end");
    if (c.end < c.start) f.fail("end", "before start");
    c.bytes = unsigned_field(f, "bytes");
    t.copies.push_back(std::move(c));
  }
  for (const JsonFields& f : root.objects("ranges")) {
    TraceRange r;
    r.pid = static_cast<int>(f.integer("pid"));
    r.tid = u32_field(f, "tid");
    r.name = f.string("name");
    r.domain = f.string("domain");
    r.start = unsigned_field(f, "start");
    r.end = unsigned_field(f, "end");
    if (r.end < r.start) f.fail("end", "before start");
    r.depth = static_cast<int>(f.integer("depth"));
    t.ranges.push_back(std::move(r));
  }
  return t;
}

void write_trace_file(const Trace& t, const std::string& path) { write_json_file(path, trace_to_json(t)); }

Trace read_trace_file(const std::string& path) { return trace_from_json(read_json_file(path), path); }

}  // namespace gemmtune
