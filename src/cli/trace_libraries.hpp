// What `gemmtune trace` and `gemmtune apply` share to run a program with our libraries inside it: finding those
// libraries, and waiting for the program through a Ctrl-C.
#pragma once

#include <string>

namespace gemmtune::cli {

// The injection library and the GEMM shim.
inline constexpr const char* kInjectLibrary = "libgemmtune_trace_inject.so";
inline constexpr const char* kGemmShimLibrary = "libgemmtune_trace_gemms.so";

// Our libraries sit beside the gemmtune executable in a build tree, or in ../lib (or ../lib/gemmtune) when
// installed; GEMMTUNE_TRACE_LIB_DIR overrides both. Throws InputError naming the places looked in.
std::string find_trace_library(const char* name);

// Ctrl-C reaches the command and gemmtune alike; gemmtune waits for the command to end and keeps what it recorded,
// as a shell does for its foreground job.
class IgnoreInterrupts {
 public:
  IgnoreInterrupts();
  ~IgnoreInterrupts();
  IgnoreInterrupts(const IgnoreInterrupts&) = delete;
  IgnoreInterrupts& operator=(const IgnoreInterrupts&) = delete;

 private:
  void (*int_)(int);
  void (*quit_)(int);
};

}  // namespace gemmtune::cli
