// NvtxRange: a push/pop NVTX range in the "gemmtune" domain for the lifetime of the object.
//
// Ranges go to their own domain (not the default one) so that ncu and nsys filters name gemmtune's ranges without
// matching a library's, and so that a range pushed by cuBLASLt or a caller can never be popped by us.
// With no tool attached, NVTX calls are no-ops, so the ranges stay in release builds.
#pragma once

#include <string>

namespace gemmtune {

// The NVTX domain of every gemmtune range; ncu filters write it before '@', nsys shows it as the row name.
inline constexpr const char* kNvtxDomain = "gemmtune";

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  // Not movable: push/pop ranges nest per thread, so a range must end in the scope (and thread) that began it.
  NvtxRange(NvtxRange&&) = delete;
  NvtxRange& operator=(NvtxRange&&) = delete;
};

}  // namespace gemmtune
