#include "profiler/ncu_section_set.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "profile/sweep_profile.hpp"

namespace gemmtune {
namespace {

// Section, set and metric names are identifiers with dots: nothing a shell or ncu's option parser would split.
bool is_ncu_identifier(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
  });
}

std::vector<std::string> identifier_list(const nlohmann::json& j, const char* field, const std::string& origin) {
  std::vector<std::string> out;
  if (!j.contains(field)) return out;
  if (!j[field].is_array()) throw InputError(origin + ": '" + field + "' must be an array of names");
  for (const auto& item : j[field]) {
    if (!item.is_string() || !is_ncu_identifier(item.get<std::string>()))
      throw InputError(origin + ": '" + field + "' holds " + item.dump() + ", not a section or metric name");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

NcuSectionSet parse_ncu_section_set(const std::string& json_text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw InputError(origin + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(origin + ": an ncu section set must be a JSON object");
  NcuSectionSet s;
  if (!j.contains("name") || !j["name"].is_string() || !is_ncu_identifier(j["name"].get<std::string>()))
    throw InputError(origin + ": 'name' must be a name of letters, digits and '_'");
  s.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    if (!j["description"].is_string()) throw InputError(origin + ": 'description' must be a string");
    s.description = j["description"].get<std::string>();
  }
  if (j.contains("set")) {
    if (!j["set"].is_string() || !is_ncu_identifier(j["set"].get<std::string>()))
      throw InputError(origin + ": 'set' must be an ncu set name such as \"full\"");
    s.ncu_set = j["set"].get<std::string>();
  }
  s.sections = identifier_list(j, "sections", origin);
  s.metrics = identifier_list(j, "metrics", origin);
  return s;
}

NcuSectionSet load_ncu_section_set(const std::string& name_or_path, const std::string& dir) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (!is_path && !is_ncu_identifier(name_or_path)) throw InputError("bad ncu section set name '" + name_or_path + "'");
  const std::string path = is_path ? name_or_path : dir + "/" + name_or_path + ".json";
  std::ifstream in(path);
  if (!in) {
    std::string known;
    for (const std::string& n : list_ncu_section_sets(dir)) known += (known.empty() ? "" : ", ") + n;
    // No set at all: the data directory is not where the binary looked (a copied binary without its share/).
    const std::string hint = known.empty() ? "none in " + dir + ": set GEMMTUNE_DATA_DIR to gemmtune's share/gemmtune"
                                           : known;
    throw InputError("cannot read ncu section set '" + path + "'" + (is_path ? "" : " (known sets: " + hint + ")"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_ncu_section_set(text.str(), path);
}

std::string default_ncu_sets_dir() { return default_profiles_dir() + "/ncu"; }

std::vector<std::string> list_ncu_section_sets(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gemmtune
