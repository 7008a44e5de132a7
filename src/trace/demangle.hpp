// Kernel names as people read them: CUPTI reports the mangled symbol.
#pragma once

#include <string>

namespace gemmtune {

// The demangled name, or the name itself where it is not a mangled C++ symbol (an extern "C" kernel).
std::string demangle(const std::string& name);

}  // namespace gemmtune
