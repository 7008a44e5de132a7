// gemmtune paths: where this gemmtune reads and writes when nothing names a place, and which variable put it there,
// so a user can see which db a program's runtime, `sweep` and `run` share. Needs no GPU.
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/data_dir.hpp"
#include "common/default_db.hpp"

namespace gemmtune::cli {

void register_paths(CLI::App& app) {
  auto* cmd = app.add_subcommand("paths", "Print the default tuning db (and the variable that placed it) and the data "
                                          "directory; no GPU needed");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->callback([json] {
    const DefaultDb db = default_db();
    std::error_code ec;
    const bool exists = std::filesystem::exists(db.path, ec);
    const std::string data = data_dir();
    if (*json) {
      std::cout << nlohmann::json{{"db", db.path}, {"db_set_by", db.set_by}, {"db_exists", exists}, {"data_dir", data}}
                       .dump(2)
                << "\n";
      return;
    }
    std::cout << "db    " << db.path << "\n"
              << "      placed by " << db.set_by << " ($GEMMTUNE_DB, else $XDG_CACHE_HOME/gemmtune/, else "
              << "~/.cache/gemmtune/); " << (exists ? "it exists" : "not there yet: the first write creates it")
              << "\n"
              << "      what sweep, run, cache show and every runtime given no db use\n"
              << "data  " << data << "\n"
              << "      profiles, ncu section sets, the report script ($GEMMTUNE_DATA_DIR sets another)\n";
  });
}

}  // namespace gemmtune::cli
