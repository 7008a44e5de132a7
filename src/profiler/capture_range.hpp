// ProfilerCaptureRange: cudaProfilerStart for the lifetime of the object, cudaProfilerStop at its end, so
// `nsys profile --capture-range=cudaProfilerApi` (and `ncu --profile-from-start off`) record only that region.
// Without a profiler attached both calls do nothing.
#pragma once

namespace gemmtune {

class ProfilerCaptureRange {
 public:
  ProfilerCaptureRange();
  ~ProfilerCaptureRange();
  ProfilerCaptureRange(const ProfilerCaptureRange&) = delete;
  ProfilerCaptureRange& operator=(const ProfilerCaptureRange&) = delete;
};

}  // namespace gemmtune
