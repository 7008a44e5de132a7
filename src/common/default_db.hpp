// The tuning db gemmtune uses where no command or program names one: one per-user file, the same from any working
// directory, so that what a program's runtime missed is what `gemmtune sweep --from-misses` tunes, and what that
// sweep tuned is what the next runtime finds. The CLI, gemmtune::Runtime and Python's gemmtune.Runtime all ask here.
//
//   $GEMMTUNE_DB where it is set (and not empty);
//   else $XDG_CACHE_HOME/gemmtune/gemmtune.db where XDG_CACHE_HOME is an absolute path (the XDG base directory
//   specification says to ignore a relative one);
//   else $HOME/.cache/gemmtune/gemmtune.db.
//
// Its directories are created at the first write to it, not when it is read: a missing default db reads as empty.
#pragma once

#include <optional>
#include <string>

namespace gemmtune {

struct DefaultDb {
  std::string path;
  std::string set_by;  // the variable the path comes from: GEMMTUNE_DB, XDG_CACHE_HOME or HOME
};

// The default db as this process's environment places it; InputError (naming GEMMTUNE_DB) where none of the three
// variables gives a place.
DefaultDb default_db();

// The same rule on given variable values (null: unset); nullopt where none of them gives a place. Pure.
std::optional<DefaultDb> default_db_for(const char* gemmtune_db, const char* xdg_cache_home, const char* home);

// Before a write to the db at `path`. Where it is the default db, creates its missing directories and checks that the
// db can be written there, else throws an InputError that names the path and the variable that placed it. Any other
// path is left as it is: a db given by name is written where it was named, and its directory must exist.
void prepare_default_db_write(const std::string& path);

}  // namespace gemmtune
