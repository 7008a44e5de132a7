#include "trace/raw_records.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "trace/raw_format.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

// CUpti_ActivityMemcpyKind, by value.
std::string copy_direction(std::int64_t kind) {
  switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "unknown";
  }
}

constexpr std::int64_t kMarkerStart = 1 << 1;  // CUPTI_ACTIVITY_FLAG_MARKER_START
constexpr std::int64_t kMarkerEnd = 1 << 2;    // CUPTI_ACTIVITY_FLAG_MARKER_END

struct Launch {
  std::uint64_t ns = 0;
  std::uint32_t tid = 0;
};

struct OpenRange {
  std::string name, domain;
  std::uint64_t start = 0;
  std::uint32_t tid = 0;
};

std::string nullable_string(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint64_t u64(const JsonFields& f, const std::string& name) {
  const std::int64_t v = f.integer(name);
  if (v < 0) f.fail(name, "must not be negative");
  return static_cast<std::uint64_t>(v);
}

std::uint32_t u32(const JsonFields& f, const std::string& name) {
  const std::uint64_t v = u64(f, name);
  if (v > 0xffffffffull) f.fail(name, "out of range");
  return static_cast<std::uint32_t>(v);
}

void read_triple(const json& j, const JsonFields& f, const char* name, std::uint32_t out[3]) {
  if (!f.has(name)) f.fail(name, "missing");
  const json& v = j.at(name);
  if (!v.is_array() || v.size() != 3) f.fail(name, "expected an array of 3 integers");
  for (std::size_t d = 0; d < 3; ++d) {
    if (!v[d].is_number_integer() || v[d].get<std::int64_t>() < 0) f.fail(name, "expected an array of 3 integers");
    out[d] = v[d].get<std::uint32_t>();
  }
}

// The lines of a file; a last line cut short (the process died mid-write) is reported through *truncated.
std::vector<json> parse_lines(const std::string& text, const std::string& where, bool* truncated) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  std::size_t number = 0;
  *truncated = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::parse_error&) {
      if (in.peek() == std::char_traits<char>::eof()) {
        *truncated = true;
        break;
      }
      throw InputError(where + ":" + std::to_string(number) + ": not a JSON record");
    }
  }
  return out;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

void add_raw_process(Trace& t, const std::string& cupti_jsonl, const std::string& gemms_jsonl,
                     const std::string& where) {
  bool truncated = false;
  const std::vector<json> lines = parse_lines(cupti_jsonl, where, &truncated);
  if (lines.empty()) throw InputError(where + ": empty record file");
  const JsonFields head(lines[0], where, "line 1");
  if (head.string("t") != "process") head.fail("t", "the first record must be the process record");
  const std::int64_t format = head.integer("format");
  if (format != trace_raw::kFormatVersion)
    throw InputError(where + ": raw record format " + std::to_string(format) + ", this gemmtune reads " +
                     std::to_string(trace_raw::kFormatVersion) + " (the injection library is from another build)");
  TraceProcess process;
  process.pid = static_cast<int>(head.integer("pid"));
  process.complete = false;

  // The shim's signatures: (sig number) -> index into t.gemms_called.
  std::unordered_map<std::uint32_t, std::size_t> gemm_of_signature;
  if (!gemms_jsonl.empty()) {
    bool gemms_truncated = false;
    for (const json& j : parse_lines(gemms_jsonl, where + " (gemms)", &gemms_truncated)) {
      const JsonFields f(j, where + " (gemms)");
      const std::string type = f.string("t");
      TraceGemm g;
      g.pid = process.pid;
      if (type == "lt") {
        f.object("desc");
        g.call = f.parse("desc", [&] { return j.at("desc").get<LtCallDesc>(); });
      } else if (type == "blas") {
        f.object("call");
        g.call = f.parse("call", [&] { return j.at("call").get<BlasCallDesc>(); });
      } else {
        continue;
      }
      g.calls = u64(f, "calls");
      gemm_of_signature[u32(f, "sig")] = t.gemms_called.size();
      t.gemms_called.push_back(g);
    }
  }

  std::unordered_map<std::uint32_t, Launch> launch_of;          // API correlation id -> launch
  std::unordered_map<std::uint32_t, std::uint64_t> external_of;  // API correlation id -> shim's external id
  std::unordered_map<std::uint32_t, OpenRange> open_ranges;      // marker id -> its start
  std::vector<std::pair<TraceKernel, std::uint32_t>> kernels;    // with their correlation id
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const JsonFields f(lines[i], where, "line " + std::to_string(i + 1));
    const std::string type = f.string("t");
    if (type == "k") {
      TraceKernel k;
      k.pid = process.pid;
      k.device = u32(f, "dev");
      k.stream = u32(f, "str");
      k.start = u64(f, "s");
      k.end = u64(f, "e");
      k.name = f.string("n");
      read_triple(lines[i], f, "g", k.grid);
      read_triple(lines[i], f, "b", k.block);
      kernels.emplace_back(std::move(k), u32(f, "c"));
    } else if (type == "m" || type == "ms") {
      TraceCopy c;
      c.pid = process.pid;
      c.kind = type == "m" ? CopyKind::Memcpy : CopyKind::Memset;
      if (type == "m") c.direction = copy_direction(f.integer("kind"));
      c.device = u32(f, "dev");
      c.stream = u32(f, "str");
      c.start = u64(f, "s");
      c.end = u64(f, "e");
      c.bytes = u64(f, "bytes");
      t.copies.push_back(std::move(c));
    } else if (type == "a") {
      launch_of.emplace(u32(f, "c"), Launch{u64(f, "s"), u32(f, "tid")});
    } else if (type == "x") {
      external_of[u32(f, "c")] = u64(f, "id");
    } else if (type == "r") {
      const std::int64_t flags = f.integer("f");
      const std::uint32_t id = u32(f, "id");
      if (flags & kMarkerStart) {
        open_ranges[id] = OpenRange{nullable_string(lines[i], "n"), nullable_string(lines[i], "d"), u64(f, "ts"),
                                    u32(f, "tid")};
      } else if (flags & kMarkerEnd) {
        const auto it = open_ranges.find(id);
        if (it == open_ranges.end()) continue;  // its start came before the trace began
        TraceRange r;
        r.pid = process.pid;
        r.tid = it->second.tid;
        r.name = it->second.name;
        r.domain = it->second.domain;
        r.start = it->second.start;
        r.end = std::max(r.start, u64(f, "ts"));
        t.ranges.push_back(std::move(r));
        open_ranges.erase(it);
      }
    } else if (type == "error") {
      process.errors.push_back(f.string("what"));
    } else if (type == "end") {
      process.dropped = u64(f, "dropped");
      process.complete = !truncated;
    }
  }
  for (auto& [k, correlation] : kernels) {
    if (const auto it = launch_of.find(correlation); it != launch_of.end()) {
      k.launch_tid = it->second.tid;
      k.launch_ns = it->second.ns;
    }
    if (const auto it = external_of.find(correlation); it != external_of.end()) {
      const auto g = gemm_of_signature.find(trace_raw::gemm_signature_of(it->second));
      if (g != gemm_of_signature.end()) {
        k.gemm = g->second;
        k.gemm_call = static_cast<std::uint32_t>(it->second & 0xffffffffu);
      }
    }
    t.kernels.push_back(std::move(k));
  }
  t.processes.push_back(std::move(process));
}

void set_range_depths(Trace& t) {
  std::map<std::pair<int, std::uint32_t>, std::vector<TraceRange*>> by_thread;
  for (TraceRange& r : t.ranges) by_thread[{r.pid, r.tid}].push_back(&r);
  for (auto& [thread, ranges] : by_thread) {
    // Outer ranges first: by start, and the longer of two that start together.
    std::sort(ranges.begin(), ranges.end(), [](const TraceRange* a, const TraceRange* b) {
      return a->start != b->start ? a->start < b->start : a->end > b->end;
    });
    std::vector<const TraceRange*> open;
    for (TraceRange* r : ranges) {
      while (!open.empty() && open.back()->end < r->end) open.pop_back();
      r->depth = static_cast<int>(open.size());
      open.push_back(r);
    }
  }
}

Trace read_raw_records(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = trace_raw::kCuptiSuffix;
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.push_back(e.path());
  }
  if (ec) throw InputError("cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  Trace t;
  for (const fs::path& f : files) {
    const std::string name = f.filename().string();
    const std::string pid = name.substr(0, name.size() - std::string(trace_raw::kCuptiSuffix).size());
    const fs::path gemms = f.parent_path() / (pid + trace_raw::kGemmsSuffix);
    add_raw_process(t, read_text(f), fs::exists(gemms) ? read_text(gemms) : std::string(), f.string());
  }
  std::sort(t.kernels.begin(), t.kernels.end(),
            [](const TraceKernel& a, const TraceKernel& b) { return a.start < b.start; });
  std::sort(t.copies.begin(), t.copies.end(), [](const TraceCopy& a, const TraceCopy& b) { return a.start < b.start; });
  std::sort(t.ranges.begin(), t.ranges.end(), [](const TraceRange& a, const TraceRange& b) { return a.start < b.start; });
  set_range_depths(t);
  return t;
}

}  // namespace gemmtune
