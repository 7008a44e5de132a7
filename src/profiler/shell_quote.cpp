#include "profiler/shell_quote.hpp"

#include <cctype>

namespace gemmtune {
namespace {

// No shell expands, splits or globs on these anywhere in a word. '~' and '#' only matter at a word's start, but
// quoting them always is simpler.
bool shell_safe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/' ||
         c == ',' || c == ':' || c == '@' || c == '%' || c == '+' || c == '=';
}

// NAME=... would be read as a variable assignment in a command's first word; "--opt=value" cannot be.
bool reads_as_assignment(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (std::isdigit(static_cast<unsigned char>(word[0])) != 0) return false;
  for (std::size_t i = 0; i < eq; ++i)
    if (std::isalnum(static_cast<unsigned char>(word[i])) == 0 && word[i] != '_') return false;
  return true;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  bool safe = !word.empty() && !reads_as_assignment(word);
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
