#include "profiler/shell_quote.hpp"

#include <cctype>

namespace gemmtune {
namespace {

// No shell expands, splits or globs on these anywhere in a word. '=' is left out: a first word holding one is
// read as a variable assignment. '~' and '#' only matter at a word's start, but quoting them always is simpler.
bool shell_safe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/' ||
         c == ',' || c == ':' || c == '@' || c == '%' || c == '+';
}

}  // namespace

std::string shell_quote(const std::string& word) {
  bool safe = !word.empty();
  for (char c : word) safe = safe && shell_safe(c);
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  quoted += '\'';
  return quoted;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

}  // namespace gemmtune
