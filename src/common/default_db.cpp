#include "common/default_db.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

bool given(const char* value) { return value != nullptr && *value != '\0'; }

}  // namespace

std::optional<DefaultDb> default_db_for(const char* gemmtune_db, const char* xdg_cache_home, const char* home) {
  if (given(gemmtune_db)) return DefaultDb{gemmtune_db, "GEMMTUNE_DB"};
  const std::filesystem::path in_cache = std::filesystem::path("gemmtune") / "gemmtune.db";
  if (given(xdg_cache_home) && std::filesystem::path(xdg_cache_home).is_absolute())
    return DefaultDb{(std::filesystem::path(xdg_cache_home) / in_cache).string(), "XDG_CACHE_HOME"};
  if (given(home)) return DefaultDb{(std::filesystem::path(home) / ".cache" / in_cache).string(), "HOME"};
  return std::nullopt;
}

DefaultDb default_db() {
  std::optional<DefaultDb> db =
      default_db_for(std::getenv("GEMMTUNE_DB"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"));
  if (!db) throw InputError("no default db: GEMMTUNE_DB, XDG_CACHE_HOME and HOME are all unset; set GEMMTUNE_DB");
  return *db;
}

void prepare_default_db_write(const std::string& path) {
  const std::optional<DefaultDb> db =
      default_db_for(std::getenv("GEMMTUNE_DB"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"));
  if (!db || db->path != path) return;
  const auto refuse = [&](const std::string& why) {
    throw InputError("cannot write the default db " + path + " (placed by " + db->set_by + "): " + why +
                     "; set GEMMTUNE_DB to a file that can be written");
  };
  namespace fs = std::filesystem;
  const fs::path file(path);
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) refuse("cannot create directory " + dir.string() + ": " + ec.message());
  // SQLite would say only "unable to open database file"; ask the file system while the reason can still be named.
  const fs::path target = fs::exists(file, ec) ? file : dir;
  if (::access(target.c_str(), W_OK) != 0) refuse(target.string() + " is not writable: " + std::strerror(errno));
}

}  // namespace gemmtune
