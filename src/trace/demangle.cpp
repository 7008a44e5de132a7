#include "trace/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gemmtune {

std::string demangle(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                    std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

}  // namespace gemmtune
