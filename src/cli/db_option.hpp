// --db of the commands that read or write the tuning db nobody named (common/default_db.hpp): their help says where
// that is, and a --db left out becomes that path when the command runs (not at parse time: --help and the commands
// that need no db work without HOME).
#pragma once

#include <string>

#include "common/default_db.hpp"

namespace gemmtune::cli {

inline const char* const kDefaultDbHelp =
    " (default: $GEMMTUNE_DB, else $XDG_CACHE_HOME/gemmtune/gemmtune.db, else ~/.cache/gemmtune/gemmtune.db; "
    "`gemmtune paths` prints it)";

inline std::string db_or_default(const std::string& given) { return given.empty() ? default_db().path : given; }

}  // namespace gemmtune::cli
