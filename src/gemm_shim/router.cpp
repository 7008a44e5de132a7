#include "gemm_shim/router.hpp"

#include <cublas_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "apply/apply_report.hpp"
#include "apply/apply_settings.hpp"
#include "apply/backend/apply_backend.h"

namespace gemmtune::gemm_shim {
namespace {

constexpr const char* kBackendLibrary = "libgemmtune_apply_backend.so";
// How every reason the runtime is not there begins (no GPU, a backend that does not load), so a report reads alike.
constexpr const char* kNoRuntime = "no runtime in this process: ";

struct LtCallDescHash {
  std::size_t operator()(const LtCallDesc& c) const {
    std::size_t h = 0;
    const auto mix = [&h](const auto&... fields) {
      ((h = h * 1000003u ^ std::hash<std::decay_t<decltype(fields)>>{}(fields)), ...);
    };
    mix(c.compute, c.scale, c.pointer_mode, c.transa, c.transb, c.epilogue, c.bias, c.bias_type, c.aux, c.aux_ld,
        c.aux_type, c.alpha.value_or(-0.5), c.beta.value_or(-0.5));
    for (const auto* m : {&c.a, &c.b, &c.c, &c.d}) {
      mix(m->has_value());
      if (*m) mix((*m)->type, (*m)->order, (*m)->rows, (*m)->cols, (*m)->ld, (*m)->batch);
    }
    return h;
  }
};

// What the router knows of one signature. Undecided: its problem was first seen during a capture.
struct Decision {
  enum class Kind { Undecided, Routed, PassThrough };
  Kind kind = Kind::Undecided;
  apply::Route route;
  int id = -1;           // the backend's problem id, when routed
  bool yields = false;   // apply::yields_when_drained of its entry, when routed
  std::size_t row = 0;   // its report row
};

using OpenFn = decltype(&gemmtune_apply_open);
using ProblemFn = decltype(&gemmtune_apply_problem);
using ForwardFn = decltype(&gemmtune_apply_forward);

struct Backend {
  gemmtune_apply_backend* handle = nullptr;
  ProblemFn problem = nullptr;
  ForwardFn forward = nullptr;
  std::string why_not;  // why there is none
};

struct Router {
  std::mutex mu;
  apply::ApplySettings settings;
  pid_t pid = 0;  // a forked child inherits the tables and must not write the parent's report
  bool backend_loaded = false;
  Backend backend;
  bool warned = false;
  std::unordered_map<BlasSignature, Decision, BlasSignatureHash> blas;
  std::unordered_map<LtCallDesc, Decision, LtCallDescHash> lt;
  std::vector<apply::ReportRow> rows;
};

void at_exit();

Router* make_router() {
  auto* r = new Router;
  r->settings = apply::read_apply_settings([](const char* name) { return std::getenv(name); });
  if (r->settings.on) {
    r->pid = ::getpid();
    std::atexit(at_exit);
  }
  return r;
}

Router& router() {
  static Router* r = make_router();  // never destroyed: a GEMM may run during static destruction
  return *r;
}

// One line per process: the first failure says what happened, later ones would repeat it.
void warn_once(Router& r, const std::string& line) {
  if (r.warned) return;
  r.warned = true;
  std::fprintf(stderr, "gemmtune apply: warning: %s; such calls run on the library\n", line.c_str());
}

// The directory this library was loaded from, where the backend is installed beside it.
std::string own_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&applying), &info) == 0 || !info.dli_fname) return ".";
  const std::string path = info.dli_fname;
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Loaded at the first routable call, RTLD_DEEPBIND: the runtime's own cuBLASLt and CUDA calls bind to the libraries
// it was linked with before the global scope, where this shim's interceptors and the program's libraries are.
void load_backend(Router& r) {
  r.backend_loaded = true;
  if (!r.settings.error.empty()) {
    r.backend.why_not = std::string(kNoRuntime) + r.settings.error;
    warn_once(r, r.backend.why_not);
    return;
  }
  const std::string path = own_directory() + "/" + kBackendLibrary;
  void* lib = nullptr;
  {
    const OwnLibraries backend_libraries({"libcublas.so.13", "libcublas.so.12", "libcublas.so", "libcublasLt.so.13",
                               "libcublasLt.so.12", "libcublasLt.so"});
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  }
  if (!lib) {
    const char* e = ::dlerror();
    r.backend.why_not = std::string(kNoRuntime) + "cannot load " + path + ": " + (e ? e : "unknown error");
    warn_once(r, r.backend.why_not);
    return;
  }
  const auto open = reinterpret_cast<OpenFn>(::dlsym(lib, "gemmtune_apply_open"));
  r.backend.problem = reinterpret_cast<ProblemFn>(::dlsym(lib, "gemmtune_apply_problem"));
  r.backend.forward = reinterpret_cast<ForwardFn>(::dlsym(lib, "gemmtune_apply_forward"));
  if (!open || !r.backend.problem || !r.backend.forward) {
    r.backend.why_not = std::string(kNoRuntime) + path + " lacks the functions of apply_backend.h";
    warn_once(r, r.backend.why_not);
    return;
  }
  char text[512] = "";
  r.backend.handle = open(r.settings.db.c_str(), r.settings.options.fp32_equivalent ? 1 : 0,
                          r.settings.record ? 1 : 0, r.settings.memory_mib << 20, text, sizeof(text));
  if (!r.backend.handle) r.backend.why_not = std::string(kNoRuntime) + text;
}

std::size_t add_row(Router& r, const char* api, const apply::Route& route) {
  apply::ReportRow row;
  row.api = api;
  row.problem = route.routed ? route.problem.key() : route.shape;
  row.reason = route.reason;
  r.rows.push_back(std::move(row));
  return r.rows.size() - 1;
}

// The report row of a call and an outcome (the candidate that ran it, or why it passed through), found or added.
// Outcomes change rarely (a capture, a failure, a null pointer), so a scan.
std::size_t row_for(Router& r, const apply::ReportRow& call, const std::string& candidate, const std::string& reason) {
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const apply::ReportRow& row = r.rows[i];
    if (row.api == call.api && row.problem == call.problem && row.candidate == candidate && row.reason == reason)
      return i;
  }
  r.rows.push_back(apply::ReportRow{call.api, call.problem, 0, 0, candidate, reason});
  return r.rows.size() - 1;
}

// Points d at its new outcome's row; a row that has counted no call yet takes the outcome itself.
void set_outcome(Router& r, Decision& d, const std::string& candidate, const std::string& reason) {
  apply::ReportRow& current = r.rows[d.row];
  if (current.candidate == candidate && current.reason == reason) return;
  if (current.calls == 0) {
    current.candidate = candidate;
    current.reason = reason;
    return;
  }
  const apply::ReportRow call = current;
  d.row = row_for(r, call, candidate, reason);
}

// Decides a signature's first call (and an Undecided one's next): the rule, then the backend. Called with mu held.
void decide(Router& r, Decision& d, void* stream) {
  if (!d.route.routed) {
    d.kind = Decision::Kind::PassThrough;
    return;
  }
  if (!r.backend_loaded) load_backend(r);
  if (!r.backend.handle) {
    d.kind = Decision::Kind::PassThrough;
    set_outcome(r, d, "", r.backend.why_not);
    return;
  }
  char text[2048] = "";
  int id = -1;
  double saving_us = -1;
  const int verdict = r.backend.problem(r.backend.handle, d.route.problem.key().c_str(), stream, &id, &saving_us,
                                        text, sizeof(text));
  if (verdict == GEMMTUNE_APPLY_ROUTED) {
    if (const std::string why = apply::already_the_library(r.rows[d.row].api, text); !why.empty()) {
      d.kind = Decision::Kind::PassThrough;
      set_outcome(r, d, "", why);
      return;
    }
    d.kind = Decision::Kind::Routed;
    d.id = id;
    d.yields = apply::yields_when_drained(text, saving_us, r.settings.options);
    set_outcome(r, d, text, "");
  } else {
    d.kind = verdict == GEMMTUNE_APPLY_CAPTURING ? Decision::Kind::Undecided : Decision::Kind::PassThrough;
    set_outcome(r, d, "", text);
  }
}

// One call of a signature: decided if it was not, then run through the runtime where it routes. Called with mu held
// (through lock), which it lets go while the runtime enqueues the call.
bool run(Router& r, Decision* d, const apply::CallOperands& operands, void* stream,
         std::unique_lock<std::mutex>& lock) {
  if (d->kind == Decision::Kind::Undecided) decide(r, *d, stream);
  if (d->kind != Decision::Kind::Routed) {
    ++r.rows[d->row].calls;
    return false;
  }
  GemmOperands x;
  std::string why;
  if (!apply::routed_operands(d->route, operands, x, why)) {
    // This call alone passes through: the signature stays routed.
    const apply::ReportRow call = r.rows[d->row];
    ++r.rows[row_for(r, call, "", why)].calls;
    return false;
  }
  const int id = d->id;
  const int yields = d->yields ? 1 : 0;
  lock.unlock();  // the runtime serializes its own calls; other threads' lookups need not wait for this launch
  char text[2048] = "";
  const int verdict = r.backend.forward(r.backend.handle, id, x.A, x.B, x.bias, x.Y, x.Z, stream, yields, text,
                                        sizeof(text));
  lock.lock();
  if (verdict == GEMMTUNE_APPLY_ROUTED) {
    ++r.rows[d->row].calls;
    ++r.rows[d->row].routed_calls;
    return true;
  }
  if (verdict == GEMMTUNE_APPLY_FAILED) {
    d->kind = Decision::Kind::PassThrough;
    warn_once(r, "the runtime failed on " + r.rows[d->row].problem + ": " + text);
    set_outcome(r, *d, "", std::string("the runtime failed: ") + text);
    ++r.rows[d->row].calls;
    return false;
  }
  // Another GPU without an exact entry, its first call there in a capture, or a drained stream where the entry costs
  // more host time: this call alone goes to the library.
  const apply::ReportRow call = r.rows[d->row];
  ++r.rows[row_for(r, call, "", text)].calls;
  return false;
}

BlasCallDesc blas_desc(const BlasSignature& s) {
  BlasCallDesc d;
  d.api = s.api;
  d.transa = s.transa;
  d.transb = s.transb;
  d.m = s.m;
  d.n = s.n;
  d.k = s.k;
  d.lda = s.lda;
  d.ldb = s.ldb;
  d.ldc = s.ldc;
  d.a_type = s.a_type;
  d.b_type = s.b_type;
  d.c_type = s.c_type;
  d.compute = s.compute;
  d.math_mode = s.math_mode;
  d.pointer_mode = s.pointer_mode;
  if (s.has_scalars) {
    d.alpha = s.alpha;
    d.beta = s.beta;
  }
  d.batch = s.batch;
  d.stride_a = s.stride_a;
  d.stride_b = s.stride_b;
  d.stride_c = s.stride_c;
  return d;
}

// The stream a cuBLAS handle runs its calls on; false where cuBLAS cannot say (then the call must stay with it).
bool stream_of(void* handle, void** stream) {
  using GetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t*);
  static const auto get_stream = reinterpret_cast<GetStreamFn>(
      real_symbol("cublasGetStream_v2", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}));
  cudaStream_t s = nullptr;
  if (!get_stream || get_stream(static_cast<cublasHandle_t>(handle), &s) != CUBLAS_STATUS_SUCCESS) return false;
  *stream = s;
  return true;
}

// Written under another name and renamed into place, so the CLI never reads a part a process was killed writing.
void write_report(const Router& r) {
  const std::string path = r.settings.report_dir + "/" + std::to_string(r.pid) + apply::kReportPartSuffix;
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << apply::report_json(apply::merge_rows(r.rows)).dump() << "\n";
    if (!out) {
      std::fprintf(stderr, "gemmtune apply: cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
      return;
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0)
    std::fprintf(stderr, "gemmtune apply: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
}

void at_exit() {
  Router& r = router();
  std::lock_guard<std::mutex> lock(r.mu);
  if (::getpid() != r.pid || r.settings.report_dir.empty() || r.rows.empty()) return;
  try {
    write_report(r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmtune apply: %s\n", e.what());
  }
}

}  // namespace

bool applying() { return router().settings.on; }

bool route_blas_call(const BlasSignature& signature, const apply::CallOperands& operands, void* handle) {
  try {
    Router& r = router();
    std::unique_lock<std::mutex> lock(r.mu);
    auto it = r.blas.find(signature);
    if (it == r.blas.end()) {
      Decision d;
      d.route = apply::route_blas_call(blas_desc(signature), r.settings.options);
      d.row = add_row(r, signature.api, d.route);
      it = r.blas.emplace(signature, std::move(d)).first;
    }
    Decision* d = &it->second;
    // Asked only for a call that may run through the runtime: a pass-through pays no cuBLAS call for it.
    void* stream = nullptr;
    if (d->kind != Decision::Kind::PassThrough && d->route.routed && !stream_of(handle, &stream)) {
      const apply::ReportRow call = r.rows[d->row];
      ++r.rows[row_for(r, call, "", "cublasGetStream_v2 cannot say which stream the handle runs on")].calls;
      return false;
    }
    return run(r, d, operands, stream, lock);
  } catch (const std::exception&) {
    return false;  // out of memory in a table: the library runs the call
  }
}

bool route_lt_call(const LtCallDesc& call, const apply::CallOperands& operands, void* stream) {
  try {
    Router& r = router();
    std::unique_lock<std::mutex> lock(r.mu);
    auto it = r.lt.find(call);
    if (it == r.lt.end()) {
      Decision d;
      d.route = apply::route_lt_call(call, r.settings.options);
      d.row = add_row(r, "cublasLtMatmul", d.route);
      it = r.lt.emplace(call, std::move(d)).first;
    }
    return run(r, &it->second, operands, stream, lock);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace gemmtune::gemm_shim
