#include "common/error.hpp"

#include <sstream>

namespace gemmtune::detail {

[[noreturn]] void throw_call_error(const char* library, long long code, const std::string& name, const char* call,
                                   const char* file, int line) {
  std::ostringstream os;
  os << library << " error " << code;
  if (!name.empty()) os << " (" << name << ")";
  os << ": " << call << " at " << file << ":" << line;
  throw CheckError(os.str());
}

}  // namespace gemmtune::detail
