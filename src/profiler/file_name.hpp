// Report file names made from problem keys and candidate ids, which hold ':', '+', '=' and '/'.
#pragma once

#include <string>

namespace gemmtune {

// Every character outside [A-Za-z0-9._-] replaced by '_': safe in any file system and unquoted in a shell.
std::string file_safe_name(const std::string& text);

}  // namespace gemmtune
