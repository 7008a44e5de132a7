// POSIX shell quoting for the command lines gemmtune prints: pasted into sh, bash or zsh, a printed line runs
// exactly the argv it was made from.
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

// The word as is when every character is one the shell never interprets, else in single quotes, each embedded
// single quote written as '\'' (end quote, escaped quote, reopen). The empty word becomes ''.
std::string shell_quote(const std::string& word);

// The words quoted and joined by single spaces.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace gemmtune
