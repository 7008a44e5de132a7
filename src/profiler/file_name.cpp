#include "profiler/file_name.hpp"

#include <cctype>

namespace gemmtune {

std::string file_safe_name(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_') c = '_';
  return out;
}

}  // namespace gemmtune
