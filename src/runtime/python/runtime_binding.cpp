#include "runtime_binding.hpp"

#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>

#include "call_arrays.hpp"
#include "common/default_db.hpp"
#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"

namespace py = pybind11;

namespace gemmtune::python {
namespace {

using Address = std::uintptr_t;

// A stream handle as the array protocols write it: 0 the legacy default stream (as CUDA's own 0), 1 the legacy default
// stream, 2 the per-thread default stream, else a cudaStream_t.
cudaStream_t to_stream(Address handle) {
  if (handle == 1) return cudaStreamLegacy;
  if (handle == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(handle);
}

// Whether two handles name one stream (0 and 1 both name the legacy default stream), as gemmtune/_arrays.py says it.
bool same_stream(Address a, Address b) { return a == b || (a <= 1 && b <= 1); }

template <typename T>
T* to_pointer(Address address) {
  return reinterpret_cast<T*>(address);
}

// Makes `device` current for a scope and restores the caller's current device after it.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    GT_CUDA_CALL(cudaGetDevice(&previous_));
    changed_ = previous_ != device;
    if (changed_) GT_CUDA_CALL(cudaSetDevice(device));
  }
  ~ScopedDevice() {
    if (changed_) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// Constructing a gemmtune::Runtime makes its GPU current; the Python program's current device is put back. On a
// machine without a usable driver there is no current device to keep, and the Runtime raises NoGpuError.
Runtime make_runtime(const std::string& db, int device, const RuntimeOptions& options) {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    previous = -1;
    cudaGetLastError();  // clear it: the Runtime reports the reason
  }
  Runtime rt(db, device, options);
  if (previous >= 0) GT_CUDA_CALL(cudaSetDevice(previous));
  return rt;
}

RuntimeOptions warning_to(RuntimeOptions options, std::ostream& warnings) {
  options.warnings = &warnings;
  return options;
}

class PyRuntime {
 public:
  PyRuntime(const std::string& db, int device, const RuntimeOptions& options)
      : device_(device),
        rt_(make_runtime(db, device, warning_to(options, warnings_))),
        producer_done_(make_event(device)) {}

  void forward(const GemmProblem& p, Address a, Address b, Address bias, Address y, Address z, std::uint64_t seed,
               std::uint64_t offset, Address offset_ptr, Address stream) {
    GemmOperands x;
    x.A = to_pointer<const float>(a);
    x.B = to_pointer<const float>(b);
    x.bias = to_pointer<const float>(bias);
    x.Y = to_pointer<float>(y);
    x.Z = to_pointer<float>(z);
    x.seed = seed;
    x.offset = offset;
    x.offset_ptr = to_pointer<const std::uint64_t>(offset_ptr);
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    rt_.forward(p, x, to_stream(stream));
  }

  // A call of the resolved-call path (gemmtune/runtime.py, Runtime._protocol_forward): `r` holds A, B, Y and the
  // bias where there is one, read by read_call_arrays. What plan_forward checked for r's key holds; what it checks
  // per pointer is checked here again: each array's GPU (asked of CUDA where the array does not say), then the
  // producer streams are waited for, as order_after does. False where an array is not on this runtime's GPU, before
  // anything is enqueued: the full path then raises the error that names it.
  bool forward_read(const GemmProblem& p, const CallArrays& r, std::uint64_t seed, std::uint64_t offset,
                    Address stream) {
    for (std::size_t i = 0; i < r.pointers.size(); ++i)
      if ((r.devices[i] >= 0 ? r.devices[i] : device_of(r.pointers[i])) != device_) return false;
    GemmOperands x;
    x.A = to_pointer<const float>(r.pointers[0]);
    x.B = to_pointer<const float>(r.pointers[1]);
    x.Y = to_pointer<float>(r.pointers[2]);
    x.bias = r.pointers.size() > 3 ? to_pointer<const float>(r.pointers[3]) : nullptr;
    x.seed = seed;
    x.offset = offset;
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    for (Address producer : r.producer_streams)
      if (!same_stream(producer, stream)) order_after_held(producer, stream);
    rt_.forward(p, x, to_stream(stream));
    return true;
  }

  // GPU microseconds per call of `calls` forward calls issued back to back from C++ between two events on `stream`:
  // the C++ runtime's own cost on these arrays in this process, with no Python between its calls. A benchmark sets a
  // Python call's time beside it (scripts/bench_python_overhead.py): a `gemmtune run` in another process had other
  // allocations and another clock, and timed 4096^3 from 348 to 368 us against 348 here (H200).
  double time_forward(const GemmProblem& p, Address a, Address b, Address bias, Address y, Address stream, int calls) {
    if (calls < 1) throw InputError("time_forward: calls must be at least 1, got " + std::to_string(calls));
    GemmOperands x;
    x.A = to_pointer<const float>(a);
    x.B = to_pointer<const float>(b);
    x.bias = to_pointer<const float>(bias);
    x.Y = to_pointer<float>(y);
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    const cudaStream_t s = to_stream(stream);
    const CudaEvent start, stop;
    start.record(s);
    for (int i = 0; i < calls; ++i) rt_.forward(p, x, s);
    stop.record(s);
    GT_CUDA_CALL(cudaEventSynchronize(stop.get()));
    return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / calls;
  }

  void backward(const GemmProblem& p, Address a, Address b, Address z, Address gy, Address ga, Address gb,
                Address gbias, std::uint64_t seed, std::uint64_t offset, Address offset_ptr, Address stream) {
    BackwardOperands x;
    x.A = to_pointer<const float>(a);
    x.B = to_pointer<const float>(b);
    x.Z = to_pointer<const float>(z);
    x.gY = to_pointer<const float>(gy);
    x.gA = to_pointer<float>(ga);
    x.gB = to_pointer<float>(gb);
    x.gBias = to_pointer<float>(gbias);
    x.seed = seed;
    x.offset = offset;
    x.offset_ptr = to_pointer<const std::uint64_t>(offset_ptr);
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    rt_.backward(p, x, to_stream(stream));
  }

  void prepare(const GemmProblem& p, bool backward) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    if (backward)
      rt_.prepare_backward(p);
    else
      rt_.prepare(p);
  }

  bool prepared(const GemmProblem& p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return rt_.prepared(p);
  }

  std::string explain(const GemmProblem& p, bool backward) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    return backward ? rt_.explain_backward(p) : rt_.explain(p);
  }

  void flush() {
    const std::lock_guard<std::mutex> lock(mutex_);
    rt_.flush();
  }

  // After the Python layer has warned at exit that the misses could not be written: the Runtime's destructor would
  // try once more and print the same warning again.
  void silence_warnings() {
    const std::lock_guard<std::mutex> lock(mutex_);
    warnings_.rdbuf(nullptr);
  }

  // The CUDA device that holds `address`; -1 where it is host memory or no CUDA allocation.
  int device_of(Address address) const {
    cudaPointerAttributes a{};
    GT_CUDA_CALL(cudaPointerGetAttributes(&a, to_pointer<const void>(address)));
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
  }

  // __cuda_array_interface__ v3: work on `stream` must follow what the producer queued on its stream. An event
  // recorded there and waited for here keeps the host free. Inside a graph capture the producer's stream cannot join
  // the capture, so nothing is done: the caller orders the capture's inputs (returns false then).
  bool order_after(Address producer, Address stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const ScopedDevice on(device_);
    return order_after_held(producer, stream);
  }

  int device() const { return device_; }
  const std::string& device_key() const { return rt_.device_key(); }
  std::size_t cache_size() const { return rt_.cache_size(); }
  py::tuple call_graphs() const {
    const CallGraphUse use = rt_.call_graphs();
    return py::make_tuple(use.graphs, use.replays);
  }

 private:
  static CudaEvent make_event(int device) {
    const ScopedDevice on(device);
    return CudaEvent();
  }

  // order_after with mutex_ held and the device current.
  bool order_after_held(Address producer, Address stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    GT_CUDA_CALL(cudaStreamIsCapturing(to_stream(stream), &status));
    if (status != cudaStreamCaptureStatusNone) return false;
    producer_done_.record(to_stream(producer));
    GT_CUDA_CALL(cudaStreamWaitEvent(to_stream(stream), producer_done_.get(), 0));
    return true;
  }

  std::mutex mutex_;
  int device_;
  std::ostream warnings_{std::cerr.rdbuf()};  // declared before rt_, which writes to it until it is destroyed
  Runtime rt_;
  CudaEvent producer_done_;
};

void advance_offset(Address counter, std::uint64_t increment, Address stream, int device) {
  if (device < 0) {
    Runtime::advance_offset(to_pointer<std::uint64_t>(counter), increment, to_stream(stream));
    return;
  }
  const ScopedDevice on(device);
  Runtime::advance_offset(to_pointer<std::uint64_t>(counter), increment, to_stream(stream));
}

}  // namespace

void bind_runtime(py::module_& m) {
  const RuntimeOptions d;
  using release_gil = py::call_guard<py::gil_scoped_release>;
  py::class_<PyRuntime>(m, "Runtime",
                        "gemmtune::Runtime over device pointers (ints); gemmtune.Runtime is the array-taking API")
      .def(py::init([](const std::string& db, int device, std::size_t workspace_bytes, Address workspace,
                       double max_nearest_distance, double min_transfer_margin, int min_agreeing_neighbours,
                       bool confirm_standins, int max_trial_candidates, bool concurrent_backward,
                       bool fp32_equivalent, bool replay_repeated_calls) {
             RuntimeOptions o;
             o.workspace_bytes = workspace_bytes;
             o.workspace = to_pointer<void>(workspace);
             o.max_nearest_distance = max_nearest_distance;
             o.min_transfer_margin = min_transfer_margin;
             o.min_agreeing_neighbours = min_agreeing_neighbours;
             o.confirm_standins = confirm_standins;
             o.max_trial_candidates = max_trial_candidates;
             o.concurrent_backward = concurrent_backward;
             o.fp32_equivalent = fp32_equivalent;
             o.replay_repeated_calls = replay_repeated_calls;
             return new PyRuntime(db, device, o);
           }),
           py::arg("db"), py::arg("device"), py::kw_only(), py::arg("workspace_bytes") = d.workspace_bytes,
           py::arg("workspace") = Address{0}, py::arg("max_nearest_distance") = d.max_nearest_distance,
           py::arg("min_transfer_margin") = d.min_transfer_margin,
           py::arg("min_agreeing_neighbours") = d.min_agreeing_neighbours,
           py::arg("confirm_standins") = d.confirm_standins, py::arg("max_trial_candidates") = d.max_trial_candidates,
           py::arg("concurrent_backward") = d.concurrent_backward, py::arg("fp32_equivalent") = d.fp32_equivalent,
           py::arg("replay_repeated_calls") = d.replay_repeated_calls, release_gil())
      .def("forward", &PyRuntime::forward, py::arg("problem"), py::arg("a"), py::arg("b"), py::arg("bias"),
           py::arg("y"), py::arg("z"), py::arg("seed"), py::arg("offset"), py::arg("offset_ptr"), py::arg("stream"),
           release_gil())
      .def("forward_read", &PyRuntime::forward_read, py::arg("problem"), py::arg("arrays"), py::arg("seed"),
           py::arg("offset"), py::arg("stream"), release_gil())
      .def("time_forward", &PyRuntime::time_forward, py::arg("problem"), py::arg("a"), py::arg("b"), py::arg("bias"),
           py::arg("y"), py::arg("stream"), py::arg("calls"), release_gil())
      .def("backward", &PyRuntime::backward, py::arg("problem"), py::arg("a"), py::arg("b"), py::arg("z"),
           py::arg("gy"), py::arg("ga"), py::arg("gb"), py::arg("gbias"), py::arg("seed"), py::arg("offset"),
           py::arg("offset_ptr"), py::arg("stream"), release_gil())
      .def("prepare", &PyRuntime::prepare, py::arg("problem"), py::arg("backward") = false, release_gil())
      .def("prepared", &PyRuntime::prepared, py::arg("problem"))
      .def("explain", &PyRuntime::explain, py::arg("problem"), py::arg("backward") = false, release_gil())
      .def("flush", &PyRuntime::flush, release_gil())
      .def("silence_warnings", &PyRuntime::silence_warnings)
      .def("device_of", &PyRuntime::device_of, py::arg("address"))
      .def("order_after", &PyRuntime::order_after, py::arg("producer"), py::arg("stream"))
      .def_property_readonly("device", &PyRuntime::device)
      .def_property_readonly("device_key", &PyRuntime::device_key)
      .def_property_readonly("cache_size", &PyRuntime::cache_size)
      .def_property_readonly("call_graphs", &PyRuntime::call_graphs,
                             "(graphs, replays): forward calls captured once and replayed since (runtime.hpp)")
      .def_static("advance_offset", &advance_offset, py::arg("counter"), py::arg("increment"), py::arg("stream"),
                  py::arg("device") = -1);
  m.def("default_db", [] { return default_db().path; },
        "The db used where none is named (common/default_db.hpp), as this process's environment places it");
}

}  // namespace gemmtune::python
