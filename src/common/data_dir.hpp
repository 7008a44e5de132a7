// Where gemmtune finds the data it reads at run time (profiles, ncu section sets, the report script): beside its
// own executable, so an installed or copied gemmtune never reaches back into the source tree it was built from.
#pragma once

#include <string>

namespace gemmtune {

// $GEMMTUNE_DATA_DIR when set; else <exe dir>/../share/gemmtune (an install: <prefix>/bin/gemmtune), else
// <exe dir>/share/gemmtune (the build tree: build/gemmtune beside build/share/gemmtune, which CMake links to the
// source files). When neither exists, the install location, so an error names where the data was expected.
std::string data_dir();

// data_dir() resolved from a given executable path and environment value; pure but for the directory checks.
std::string data_dir_for(const std::string& executable, const char* data_dir_env);

}  // namespace gemmtune
