#include "gemm_shim/recorder.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "trace/raw_format.hpp"

namespace gemmtune::gemm_shim {
namespace {

namespace raw = trace_raw;

struct Signature {
  std::string lt_desc;                 // a cublasLtMatmul call: its description, as written
  std::optional<BlasSignature> blas;   // a cuBLAS call
  std::uint64_t calls = 0;
};

struct State {
  std::mutex mu;
  bool recording = false;
  pid_t pid = 0;  // the process that records: a forked child inherits the signatures and must not write them
  std::string path;
  std::unordered_map<std::string, std::uint32_t> lt_index;  // description -> 1-based signature number
  std::unordered_map<BlasSignature, std::uint32_t, BlasSignatureHash> blas_index;
  std::vector<Signature> signatures;
  std::uint32_t next_call = 0;
};

void write_signatures();

State* make_state() {
  auto* s = new State;
  const char* dir = std::getenv(raw::kDirEnv);
  if (dir && *dir) {
    s->pid = ::getpid();
    s->path = std::string(dir) + "/" + std::to_string(s->pid) + raw::kGemmsSuffix;
    s->recording = true;
    std::atexit(write_signatures);
  }
  return s;
}

State& state() {
  static State* s = make_state();  // never destroyed: a GEMM may run during static destruction
  return *s;
}

std::atomic<raw::PushCorrelationFn> push_hook{nullptr};
std::atomic<raw::PopCorrelationFn> pop_hook{nullptr};
thread_local int call_depth = 0;

// alpha and beta print exactly (a float's value is a double's); an unread pair is null.
void write_scalar(std::FILE* f, const BlasSignature& b, double v) {
  if (b.has_scalars)
    std::fprintf(f, "%.17g", v);
  else
    std::fputs("null", f);
}

void write_blas(std::FILE* f, const BlasSignature& b) {
  std::fprintf(f,
               "{\"api\":\"%s\",\"transa\":%d,\"transb\":%d,\"m\":%" PRId64 ",\"n\":%" PRId64 ",\"k\":%" PRId64
               ",\"lda\":%" PRId64 ",\"ldb\":%" PRId64 ",\"ldc\":%" PRId64
               ",\"a_type\":%d,\"b_type\":%d,\"c_type\":%d,\"compute\":%d,\"math_mode\":%d,\"pointer_mode\":%d,"
               "\"alpha\":",
               b.api, b.transa, b.transb, b.m, b.n, b.k, b.lda, b.ldb, b.ldc, b.a_type, b.b_type, b.c_type,
               b.compute, b.math_mode, b.pointer_mode);
  write_scalar(f, b, b.alpha);
  std::fputs(",\"beta\":", f);
  write_scalar(f, b, b.beta);
  std::fprintf(f, ",\"batch\":%" PRId64 ",\"stride_a\":%" PRId64 ",\"stride_b\":%" PRId64 ",\"stride_c\":%" PRId64 "}",
               b.batch, b.stride_a, b.stride_b, b.stride_c);
}

void write_signatures() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.signatures.empty() || ::getpid() != s.pid) return;
  std::FILE* f = std::fopen(s.path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "gemmtune trace: cannot write %s: %s\n", s.path.c_str(), std::strerror(errno));
    return;
  }
  for (std::size_t i = 0; i < s.signatures.size(); ++i) {
    const Signature& sig = s.signatures[i];
    if (sig.blas) {
      std::fprintf(f, "{\"t\":\"blas\",\"sig\":%zu,\"calls\":%" PRIu64 ",\"call\":", i + 1, sig.calls);
      write_blas(f, *sig.blas);
      std::fputs("}\n", f);
    } else {
      std::fprintf(f, "{\"t\":\"lt\",\"sig\":%zu,\"calls\":%" PRIu64 ",\"desc\":%s}\n", i + 1, sig.calls,
                   sig.lt_desc.c_str());
    }
  }
  std::fclose(f);
}

// Counts a call of the signature `index` finds or adds (1-based); called with State::mu held.
template <typename Index, typename Key, typename Add>
std::uint64_t count_call(State& s, Index& index, const Key& key, Add add) {
  auto it = index.find(key);
  if (it == index.end()) {
    s.signatures.push_back(add());
    it = index.emplace(key, static_cast<std::uint32_t>(s.signatures.size())).first;
  }
  ++s.signatures[it->second - 1].calls;
  return raw::gemm_external_id(it->second, ++s.next_call);
}

}  // namespace

std::uint64_t record_lt_call(const std::string& desc_json) {
  State& s = state();
  if (!s.recording) return 0;
  std::lock_guard<std::mutex> lock(s.mu);
  return count_call(s, s.lt_index, desc_json, [&] { return Signature{desc_json, std::nullopt, 0}; });
}

std::uint64_t record_blas_call(const BlasSignature& signature) {
  State& s = state();
  if (!s.recording) return 0;
  std::lock_guard<std::mutex> lock(s.mu);
  return count_call(s, s.blas_index, signature, [&] { return Signature{{}, signature, 0}; });
}

namespace {

std::mutex own_mu;
std::vector<std::string> own_sonames;  // libraries that came with gemmtune's own (OwnLibraries)

bool is_own(const char* soname) {
  std::lock_guard<std::mutex> lock(own_mu);
  return std::find(own_sonames.begin(), own_sonames.end(), soname) != own_sonames.end();
}

bool is_loaded(const char* soname) {
  void* lib = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (lib) ::dlclose(lib);  // NOLOAD still counts a reference
  return lib != nullptr;
}

}  // namespace

void* real_symbol(const char* name, std::initializer_list<const char*> sonames) {
  if (void* f = ::dlsym(RTLD_NEXT, name)) return f;
  for (const char* soname : sonames) {
    if (is_own(soname)) continue;
    if (void* lib = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      if (void* f = ::dlsym(lib, name)) return f;
    }
  }
  return nullptr;
}

OwnLibraries::OwnLibraries(std::initializer_list<const char*> sonames) {
  for (const char* soname : sonames)
    if (!is_loaded(soname)) absent_.emplace_back(soname);
}

OwnLibraries::~OwnLibraries() {
  std::lock_guard<std::mutex> lock(own_mu);
  for (const std::string& soname : absent_)
    if (is_loaded(soname.c_str())) own_sonames.push_back(soname);
}

std::size_t BlasSignatureHash::operator()(const BlasSignature& s) const {
  std::size_t h = 0;
  std::apply(
      [&h](const auto&... field) { ((h = h * 1000003u ^ std::hash<std::decay_t<decltype(field)>>{}(field)), ...); },
      s.fields());
  return h;
}

bool recording() { return state().recording; }

CallScope::CallScope() : outermost_(call_depth++ == 0) {}

CallScope::~CallScope() { --call_depth; }

Correlation::Correlation(std::uint64_t id) {
  const raw::PushCorrelationFn push = push_hook.load();
  pushed_ = id != 0 && push && pop_hook.load() && push(id) == 0;
}

Correlation::~Correlation() {
  if (pushed_) pop_hook.load()();
}

}  // namespace gemmtune::gemm_shim

extern "C" __attribute__((visibility("default"))) void gemmtune_trace_set_correlation_hooks(
    gemmtune::trace_raw::PushCorrelationFn push, gemmtune::trace_raw::PopCorrelationFn pop) {
  gemmtune::gemm_shim::pop_hook = pop;
  gemmtune::gemm_shim::push_hook = push;
}
