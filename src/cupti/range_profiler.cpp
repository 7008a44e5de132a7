#include "cupti/range_profiler.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cuda/cuda_call.hpp"
#include "cuda/device_info.hpp"
#include "cupti/cupti_call.hpp"
#include "cupti/l2_flush.hpp"

namespace gemmtune {
namespace {

// Order matters: RangeMetrics is filled by index.
const char* const kMetricNames[] = {
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
};
constexpr std::size_t kMetricCount = sizeof(kMetricNames) / sizeof(kMetricNames[0]);

// A handful of metrics needs one or two passes; many more means CUPTI never reports completion.
constexpr int kMaxPasses = 64;

// Zeroed CUPTI parameter struct with its size set, as every CUPTI call expects.
template <typename Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

// CUPTI's C API wants `const char**`; it does not write through it.
const char** metric_names() { return const_cast<const char**>(kMetricNames); }

// The current CUcontext, fetched through the runtime so gemmtune does not link libcuda (absent on CPU machines).
CUcontext current_context() {
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult found{};
  GT_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &symbol, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || symbol == nullptr)
    throw CheckError("the CUDA driver does not export cuCtxGetCurrent");
  CUresult (*get_current)(CUcontext*) = nullptr;
  std::memcpy(&get_current, &symbol, sizeof(symbol));
  CUcontext ctx = nullptr;
  if (get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) throw CheckError("no current CUDA context to profile");
  return ctx;
}

const char* support_level_name(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
  }
}

void require_profiling_support(int device) {
  auto p = cupti_params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  GT_CUPTI_CALL(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  std::string why = "CUPTI range profiling is not available on device " + std::to_string(device) + ":";
  const std::pair<const char*, CUpti_Profiler_Support_Level> parts[] = {
      {"architecture", p.architecture}, {"SLI", p.sli}, {"vGPU", p.vGpu},
      {"confidential compute", p.confidentialCompute}, {"CMP", p.cmp}, {"WSL", p.wsl}};
  for (const auto& [what, level] : parts)
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += std::string(" ") + what + " " + support_level_name(level);
  throw CheckError(why);
}

// cuptiProfilerInitialize/DeInitialize bracket every use of the profiling API in this process.
class ProfilerApi {
 public:
  ProfilerApi() {
    auto p = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    GT_CUPTI_CALL(cuptiProfilerInitialize(&p));
  }
  ~ProfilerApi() {
    auto p = cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&p);
  }
  ProfilerApi(const ProfilerApi&) = delete;
  ProfilerApi& operator=(const ProfilerApi&) = delete;
};

// The host-side metric evaluator for one chip; it also builds the config image that schedules the counters.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& counter_availability) {
    auto p = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = counter_availability.data();
    GT_CUPTI_CALL(cuptiProfilerHostInitialize(&p));
    host_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return host_; }

 private:
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

// Range profiling enabled on a context; disabled (and the object freed) on destruction.
class EnabledRangeProfiler {
 public:
  explicit EnabledRangeProfiler(CUcontext ctx) {
    auto p = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    GT_CUPTI_CALL(cuptiRangeProfilerEnable(&p));
    object_ = p.pRangeProfilerObject;
  }
  ~EnabledRangeProfiler() {
    auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&p);
  }
  EnabledRangeProfiler(const EnabledRangeProfiler&) = delete;
  EnabledRangeProfiler& operator=(const EnabledRangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::string read_chip_name(int device) {
  auto p = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<std::size_t>(device);
  GT_CUPTI_CALL(cuptiDeviceGetChipName(&p));
  return p.pChipName;
}

std::vector<std::uint8_t> read_counter_availability(CUcontext ctx) {
  auto p = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  GT_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&p));
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  GT_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&p));
  return image;
}

std::vector<std::uint8_t> config_image(CUpti_Profiler_Host_Object* host) {
  auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host;
  add.ppMetricNames = metric_names();
  add.numMetrics = kMetricCount;
  GT_CUPTI_CALL(cuptiProfilerHostConfigAddMetrics(&add));
  auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  GT_CUPTI_CALL(cuptiProfilerHostGetConfigImageSize(&size));
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  GT_CUPTI_CALL(cuptiProfilerHostGetConfigImage(&get));
  return image;
}

// Room for exactly one range: measure() profiles one call.
std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler) {
  auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = metric_names();
  size.numMetrics = kMetricCount;
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  GT_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  GT_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));
  return image;
}

}  // namespace

struct CuptiRangeProfiler::State {
  int device = 0;
  ProfilerApi api;
  // The host object keeps pointers to the chip name and the availability image it was made from.
  std::string chip;
  std::vector<std::uint8_t> counter_availability;
  std::unique_ptr<HostObject> host;
  std::vector<std::uint8_t> config;
  std::unique_ptr<L2Flush> flush;
};

CuptiRangeProfiler::CuptiRangeProfiler(int device) {
  const DeviceInfo info = query_device(device);  // throws NoGpuError; makes the device current
  GT_CUDA_CALL(cudaFree(nullptr));                // creates the primary context CUPTI attaches to
  state_ = std::make_unique<State>();
  state_->device = device;
  require_profiling_support(device);
  state_->chip = read_chip_name(device);
  state_->counter_availability = read_counter_availability(current_context());
  state_->host = std::make_unique<HostObject>(state_->chip, state_->counter_availability);
  state_->config = config_image(state_->host->get());
  state_->flush = std::make_unique<L2Flush>(info.l2_bytes);
}

CuptiRangeProfiler::~CuptiRangeProfiler() = default;

RangeMetrics CuptiRangeProfiler::measure(const std::function<void()>& launch, L2State l2) {
  GT_CUDA_CALL(cudaSetDevice(state_->device));
  EnabledRangeProfiler profiler(current_context());
  std::vector<std::uint8_t> counter_data = counter_data_image(profiler.get());

  auto config = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = profiler.get();
  config.configSize = state_->config.size();
  config.pConfig = state_->config.data();
  config.counterDataImageSize = counter_data.size();
  config.pCounterDataImage = counter_data.data();
  config.range = CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  GT_CUPTI_CALL(cuptiRangeProfilerSetConfig(&config));

  // One call outside the range first: a first call pays for lazy module loading and cuBLASLt's first-use set-up,
  // which would otherwise land in the first pass (seen on the H100: 3.7 ms instead of 0.46 ms for a 2048³ GEMM).
  launch();
  GT_CUDA_CALL(cudaDeviceSynchronize());

  RangeMetrics m;
  bool all_passes_submitted = false;
  while (!all_passes_submitted) {
    if (m.passes == kMaxPasses)
      throw CheckError("CUPTI range profiler did not finish within " + std::to_string(kMaxPasses) + " passes");
    if (l2 == L2State::Flushed) state_->flush->run(nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());  // the flush and earlier work stay outside the range

    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = profiler.get();
    GT_CUPTI_CALL(cuptiRangeProfilerStart(&start));
    auto push = cupti_params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = profiler.get();
    push.pRangeName = "gemm";
    GT_CUPTI_CALL(cuptiRangeProfilerPushRange(&push));
    launch();
    GT_CUDA_CALL(cudaDeviceSynchronize());  // every kernel of the call ends inside the range
    auto pop = cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = profiler.get();
    GT_CUPTI_CALL(cuptiRangeProfilerPopRange(&pop));
    auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = profiler.get();
    GT_CUPTI_CALL(cuptiRangeProfilerStop(&stop));
    all_passes_submitted = stop.isAllPassSubmitted != 0;
    ++m.passes;
  }

  auto decode = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler.get();
  GT_CUPTI_CALL(cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped != 0) throw CheckError("CUPTI range profiler dropped the measured range");

  auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  GT_CUPTI_CALL(cuptiRangeProfilerGetCounterDataInfo(&info));
  if (info.numTotalRanges != 1)
    throw CheckError("CUPTI range profiler recorded " + std::to_string(info.numTotalRanges) + " ranges, expected 1");

  double values[kMetricCount] = {};
  auto evaluate = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  evaluate.pHostObject = state_->host->get();
  evaluate.pCounterDataImage = counter_data.data();
  evaluate.counterDataImageSize = counter_data.size();
  evaluate.rangeIndex = 0;
  evaluate.ppMetricNames = metric_names();
  evaluate.numMetrics = kMetricCount;
  evaluate.pMetricValues = values;
  GT_CUPTI_CALL(cuptiProfilerHostEvaluateToGpuValues(&evaluate));

  m.duration_us = values[0] / 1e3;  // gpu__time_duration is in nanoseconds
  m.dram_read_bytes = values[1];
  m.dram_write_bytes = values[2];
  m.sm_throughput_pct = values[3];
  m.dram_throughput_pct = values[4];
  return m;
}

}  // namespace gemmtune
