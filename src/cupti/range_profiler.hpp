// CuptiRangeProfiler: hardware-counter metrics of one GEMM call, in process, without ncu.
//
// It wraps the call in one CUPTI user range with user replay: the callable runs once per counter pass (CUPTI
// decides how many passes the metrics need), each time after the same L2 preparation, and the counters of all
// kernels the call launches (a split-k reduction or our epilogue kernel included) are summed over the range.
// So the callable must be idempotent (a GEMM that overwrites its output is) and must launch its work on the
// profiler's device; the profiler synchronizes the device before it closes the range.
//
// Runs beside the activity-based CuptiKernelTimer: on the H100 (CUPTI 2025.3.1) a profiler made and used while a
// timer traced left the timer's times unchanged (342.5 µs before, 343.4 µs after for a 2048³ fp32 GEMM), and either
// can be made after the other is gone. It cannot run under ncu, which owns the counters: the constructor then throws.
//
// Use (sweep --metrics, for a problem's best candidate):
//   CuptiRangeProfiler profiler(device);                                  // once
//   const RangeMetrics m = profiler.measure([&] { launcher.launch(x, stream); });
//   const auto peaks = nominal_peaks(gpu_name);                           // profiler/gpu_peaks.hpp
//   const RooflineVerdict v = classify_roofline(p.flops(), m.dram_bytes(), sweep_median_us * 1e-6,
//                                               peaks->tflops(p.mode), peaks->dram_tbytes_per_s);
#pragma once

#include <functional>
#include <memory>

namespace gemmtune {

struct RangeMetrics {
  // gpu__time_duration.sum: GPU time from the range's push to its pop. It includes the launch latency and the
  // profiler's own per-range work (about 0.1 ms on the H100: 0.46 ms for a 0.34 ms GEMM), so it is not the kernel
  // time; take that from the sweep. DRAM bytes are not affected, and sm_throughput_pct is diluted by the same gap.
  double duration_us = 0;
  double dram_read_bytes = 0;      // dram__bytes_read.sum
  double dram_write_bytes = 0;     // dram__bytes_write.sum
  double sm_throughput_pct = 0;    // sm__throughput.avg.pct_of_peak_sustained_elapsed
  double dram_throughput_pct = 0;  // dram__throughput.avg.pct_of_peak_sustained_elapsed
  int passes = 0;                  // how many times the callable ran

  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
};

// What the L2 holds when a pass starts. Flushed matches ncu's default --cache-control all and gives DRAM bytes that
// do not depend on what ran before; Warm leaves whatever the previous pass left (ncu --cache-control none).
enum class L2State { Flushed, Warm };

class CuptiRangeProfiler {
 public:
  // Makes `device` current. Throws NoGpuError without a usable GPU, CheckError when CUPTI cannot profile it
  // (unsupported configuration, counters restricted to admin users, another profiling session active).
  explicit CuptiRangeProfiler(int device);
  ~CuptiRangeProfiler();
  CuptiRangeProfiler(const CuptiRangeProfiler&) = delete;
  CuptiRangeProfiler& operator=(const CuptiRangeProfiler&) = delete;

  // Runs `launch` once outside the range (first-call costs), then once per counter pass inside it (8 passes for
  // these metrics on the H100), and returns the range's metrics.
  RangeMetrics measure(const std::function<void()>& launch, L2State l2 = L2State::Flushed);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gemmtune
