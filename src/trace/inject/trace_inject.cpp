// libgemmtune_trace_inject.so: the CUPTI injection library `gemmtune trace` loads into the traced program.
//
// The CUDA driver loads it from CUDA_INJECTION64_PATH when the program initializes CUDA and calls
// InitializeInjection(); NVTX loads it from NVTX_INJECTION64_PATH at the first NVTX call and calls
// InitializeInjectionNvtx2(), which hands NVTX to CUPTI through cuptiNvtxInitialize2 (the way CUPTI's guide gives
// for a CUPTI-based library; naming libcupti.so's path instead could load a second CUPTI beside the program's own).
//
// It records kernel, memcpy, memset and NVTX marker activity, the runtime/driver launch calls (thread and time of
// each launch, so kernels can be put in the NVTX range that launched them) and the external correlation ids the
// GEMM shim pushes. The launch calls come from CUPTI's callback API, enabled for those calls alone: the runtime and
// driver activity kinds record every API call (PyTorch makes several per kernel: cudaGetDevice,
// cudaStreamIsCapturing, ...), and cost a launch-bound training step 11-14% of its time (H200). CUPTI's external
// correlation records come only with those kinds, so the GEMM call a launch belongs to is this library's own: the
// shim's scopes push and pop it on a per-thread stack that the launch callback reads. Records stream to
// <GEMMTUNE_TRACE_DIR>/<pid>.cupti.jsonl as CUPTI hands over each buffer; at exit the buffers are flushed and an end
// line says how many records CUPTI dropped.
//
// No exceptions leave this library and it never ends the program: a failure is written into the file as an
// "error" line and the program runs on untraced.
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "trace/raw_format.hpp"

namespace {

namespace raw = gemmtune::trace_raw;

constexpr std::size_t kBufferBytes = 4u << 20;
constexpr std::size_t kRecordAlignment = 8;
constexpr auto kGemmCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;  // CUSTOM0 is CuptiKernelTimer's

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MARKER,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
// Where the callback API cannot be had (the program subscribed to it first), launches come from these instead.
constexpr CUpti_ActivityKind kApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// The per-process record file. CUPTI calls buffer_completed on its own thread, the flush at exit on the main one.
struct Output {
  std::mutex mu;
  std::FILE* file = nullptr;
  std::map<std::pair<int, std::uint32_t>, bool> launch_api;  // (domain, cbid) -> does the call launch work
};

Output& output() {
  static Output* o = new Output;  // never destroyed: CUPTI may deliver a buffer during static destruction
  return *o;
}

void append_escaped(std::string& out, const char* s) {
  if (!s) {
    out += "null";
    return;
  }
  out += '"';
  for (; *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void append_format(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void append_format(std::string& out, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (n > 0) out.append(line, std::min(static_cast<std::size_t>(n), sizeof(line) - 1));
}

void write_line(const std::string& line) {
  Output& o = output();
  std::lock_guard<std::mutex> lock(o.mu);
  if (o.file) std::fwrite(line.data(), 1, line.size(), o.file);
}

void write_error(const char* what, CUptiResult r) {
  const char* name = nullptr;
  if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS) name = "unknown CUPTI error";
  std::string line = "{\"t\":\"error\",\"what\":";
  append_escaped(line, (std::string(what) + ": " + name).c_str());
  line += "}\n";
  write_line(line);
}

// Only API calls that put work on the GPU are kept: launches (kernels, cooperative kernels, graphs) and copies.
bool names_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  return cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name &&
         (std::strstr(name, "Launch") || std::strstr(name, "Memcpy") || std::strstr(name, "Memset"));
}

// The answer cached per id, for the API activity records. Called with Output::mu held.
bool is_launch_api(Output& o, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const auto key = std::make_pair(static_cast<int>(domain), static_cast<std::uint32_t>(cbid));
  const auto it = o.launch_api.find(key);
  if (it != o.launch_api.end()) return it->second;
  return o.launch_api.emplace(key, names_launch(domain, cbid)).first->second;
}

// The launch calls the callback API saw since the last buffer was written: the program's threads append, the
// thread that writes a buffer (or the exit) takes them.
struct LaunchCall {
  std::uint32_t correlation;
  std::uint32_t tid;
  std::uint64_t ns;
  std::uint64_t gemm;  // the external id of the GEMM call that launched it, 0 for none
};
struct LaunchCalls {
  std::mutex mu;
  std::vector<LaunchCall> calls;
};

LaunchCalls& launch_calls() {
  static LaunchCalls* l = new LaunchCalls;  // never destroyed, as Output
  return *l;
}

// The GEMM calls this thread is inside, innermost last (the shim's CallScope); deeper than kMaxDepth are counted,
// not kept.
constexpr int kMaxDepth = 8;
thread_local std::uint64_t gemm_calls[kMaxDepth];
thread_local int gemm_depth = 0;

int push_gemm_call(std::uint64_t id) {
  if (gemm_depth < kMaxDepth) gemm_calls[gemm_depth] = id;
  ++gemm_depth;
  return 0;
}

int pop_gemm_call() {
  if (gemm_depth > 0) --gemm_depth;
  return 0;
}

std::uint64_t current_gemm_call() {
  return gemm_depth == 0 ? 0 : gemm_calls[std::min(gemm_depth, kMaxDepth) - 1];
}

void CUPTIAPI on_launch_call(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite != CUPTI_API_ENTER) return;
  std::uint64_t ns = 0;
  if (cuptiGetTimestamp(&ns) != CUPTI_SUCCESS) return;
  // The system thread id: start() sets CUPTI's records (NVTX markers) to the same kind.
  const LaunchCall c{call->correlationId, static_cast<std::uint32_t>(::gettid()), ns, current_gemm_call()};
  LaunchCalls& l = launch_calls();
  std::lock_guard<std::mutex> lock(l.mu);
  l.calls.push_back(c);
}

// Appends the launch calls recorded so far to `out`, in the API and external correlation records' formats.
void take_launch_calls(std::string& out) {
  std::vector<LaunchCall> calls;
  {
    LaunchCalls& l = launch_calls();
    std::lock_guard<std::mutex> lock(l.mu);
    calls.swap(l.calls);
  }
  for (const LaunchCall& c : calls) {
    append_format(out, "{\"t\":\"a\",\"c\":%u,\"s\":%" PRIu64 ",\"tid\":%u}\n", c.correlation, c.ns, c.tid);
    if (c.gemm) append_format(out, "{\"t\":\"x\",\"c\":%u,\"id\":%" PRIu64 "}\n", c.correlation, c.gemm);
  }
}

// Subscribes to the launch calls of the runtime and driver APIs; false where CUPTI refuses (one subscriber a
// process).
bool subscribe_to_launch_calls() {
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r = cuptiSubscribe(&subscriber, on_launch_call, nullptr);
  if (r != CUPTI_SUCCESS) {
    write_error("cuptiSubscribe (launches recorded from API activity instead)", r);
    return false;
  }
  const std::pair<CUpti_CallbackDomain, int> domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, static_cast<int>(CUPTI_RUNTIME_TRACE_CBID_SIZE)},
      {CUPTI_CB_DOMAIN_DRIVER_API, static_cast<int>(CUPTI_DRIVER_TRACE_CBID_SIZE)}};
  for (const auto& [domain, size] : domains)
    for (int id = 1; id < size; ++id) {
      const auto cbid = static_cast<CUpti_CallbackId>(id);
      if (!names_launch(domain, cbid)) continue;
      r = cuptiEnableCallback(1, subscriber, domain, cbid);
      if (r != CUPTI_SUCCESS) write_error(("cuptiEnableCallback(" + std::to_string(id) + ")").c_str(), r);
    }
  return true;
}

void format_record(Output& o, const CUpti_Activity* record, std::string& out) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      append_format(out,
                    "{\"t\":\"k\",\"dev\":%u,\"str\":%u,\"s\":%" PRIu64 ",\"e\":%" PRIu64
                    ",\"c\":%u,\"g\":[%d,%d,%d],\"b\":[%d,%d,%d],\"n\":",
                    k->deviceId, k->streamId, k->start, k->end, k->correlationId, k->gridX, k->gridY, k->gridZ,
                    k->blockX, k->blockY, k->blockZ);
      append_escaped(out, k->name);
      out += "}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      append_format(out,
                    "{\"t\":\"m\",\"dev\":%u,\"str\":%u,\"s\":%" PRIu64 ",\"e\":%" PRIu64 ",\"c\":%u,\"bytes\":%" PRIu64
                    ",\"kind\":%u}\n",
                    m->deviceId, m->streamId, m->start, m->end, m->correlationId, m->bytes,
                    static_cast<unsigned>(m->copyKind));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      append_format(out,
                    "{\"t\":\"ms\",\"dev\":%u,\"str\":%u,\"s\":%" PRIu64 ",\"e\":%" PRIu64 ",\"c\":%u,\"bytes\":%" PRIu64
                    "}\n",
                    m->deviceId, m->streamId, m->start, m->end, m->correlationId, m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const CUpti_CallbackDomain domain =
          record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      if (!is_launch_api(o, domain, a->cbid)) break;
      append_format(out, "{\"t\":\"a\",\"c\":%u,\"s\":%" PRIu64 ",\"tid\":%u}\n", a->correlationId, a->start,
                    a->threadId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (x->externalKind != kGemmCorrelationKind) break;
      append_format(out, "{\"t\":\"x\",\"c\":%u,\"id\":%" PRIu64 "}\n", x->correlationId, x->externalId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      const std::uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
      append_format(out, "{\"t\":\"r\",\"f\":%u,\"id\":%u,\"ts\":%" PRIu64 ",\"tid\":%u,\"n\":",
                    static_cast<unsigned>(m->flags), m->id, m->timestamp, tid);
      append_escaped(out, m->name);
      out += ",\"d\":";
      append_escaped(out, m->domain);
      out += "}\n";
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  Output& o = output();
  std::string text;
  text.reserve(valid);
  {
    std::lock_guard<std::mutex> lock(o.mu);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) format_record(o, record, text);
    take_launch_calls(text);
    if (o.file) std::fwrite(text.data(), 1, text.size(), o.file);
  }
  std::free(buffer);
}

// Where the callback API could not be had: CUPTI's external correlation, recorded with the API activity kinds.
int push_gemm_correlation(std::uint64_t id) {
  return static_cast<int>(cuptiActivityPushExternalCorrelationId(kGemmCorrelationKind, id));
}

int pop_gemm_correlation() {
  std::uint64_t id = 0;
  return static_cast<int>(cuptiActivityPopExternalCorrelationId(kGemmCorrelationKind, &id));
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::string calls;
  take_launch_calls(calls);
  Output& o = output();
  std::lock_guard<std::mutex> lock(o.mu);
  if (!o.file) return;
  std::fwrite(calls.data(), 1, calls.size(), o.file);
  std::fprintf(o.file, "{\"t\":\"end\",\"dropped\":%zu}\n", dropped);
  std::fclose(o.file);
  o.file = nullptr;
}

// Opens the file, enables the activity kinds and hands the shim its hooks; once per process, whichever entry point
// (CUDA's or NVTX's) comes first.
void start() {
  const char* dir = std::getenv(raw::kDirEnv);
  if (!dir || !*dir) return;  // loaded outside `gemmtune trace`: record nothing
  const std::string path = std::string(dir) + "/" + std::to_string(::getpid()) + raw::kCuptiSuffix;
  {
    Output& o = output();
    std::lock_guard<std::mutex> lock(o.mu);
    o.file = std::fopen(path.c_str(), "w");
    if (!o.file) {
      std::fprintf(stderr, "gemmtune trace: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
      return;
    }
    std::fprintf(o.file, "{\"t\":\"process\",\"pid\":%d,\"format\":%d}\n", static_cast<int>(::getpid()),
                 raw::kFormatVersion);
  }
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    write_error("cuptiActivityRegisterCallbacks", r);
    return;
  }
  r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r != CUPTI_SUCCESS) write_error("cuptiSetThreadIdType", r);
  const bool callbacks = r == CUPTI_SUCCESS && subscribe_to_launch_calls();
  for (CUpti_ActivityKind kind : kKinds) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) write_error(("cuptiActivityEnable(" + std::to_string(kind) + ")").c_str(), r);
  }
  if (!callbacks)
    for (CUpti_ActivityKind kind : kApiKinds) {
      r = cuptiActivityEnable(kind);
      if (r != CUPTI_SUCCESS) write_error(("cuptiActivityEnable(" + std::to_string(kind) + ")").c_str(), r);
    }
  std::atexit(at_exit);
  if (auto set_hooks = reinterpret_cast<raw::SetHooksFn>(::dlsym(RTLD_DEFAULT, raw::kSetHooksSymbol))) {
    if (callbacks)
      set_hooks(push_gemm_call, pop_gemm_call);
    else
      set_hooks(push_gemm_correlation, pop_gemm_correlation);
  }
}

std::once_flag started;

}  // namespace

// Exported by libcupti but declared in no header (CUPTI's guide, "Initialization to Receive NVTX Callbacks or
// Activity Records"): they install CUPTI's handlers for the NVTX calls of the module that asked.
extern "C" CUptiResult CUPTIAPI cuptiNvtxInitialize(void* get_export_table);
extern "C" CUptiResult CUPTIAPI cuptiNvtxInitialize2(void* get_export_table);

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  std::call_once(started, start);
  return 1;
}

// NVTX's injection entry points (NVTX v1/v2 and v3): start recording, then hand NVTX to CUPTI, as CUPTI's guide
// says a CUPTI-based profiling library named by NVTX_INJECTION64_PATH does.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx(void* get_export_table) {
  std::call_once(started, start);
  return cuptiNvtxInitialize(get_export_table) == CUPTI_SUCCESS ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  std::call_once(started, start);
  return cuptiNvtxInitialize2(get_export_table) == CUPTI_SUCCESS ? 1 : 0;
}
