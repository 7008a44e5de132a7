// NcuSectionSet: a named choice of what ncu collects (profiles/ncu/<name>.json), so a command line says
// `--set quick` instead of five --section flags.
//
// File format: {"name": "quick", "description": "...", "set": "full" (optional, an ncu --set name),
//               "sections": ["SpeedOfLight", ...] (optional), "metrics": ["lts__t_sector_hit_rate.pct", ...] (optional)}
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

struct NcuSectionSet {
  std::string name;
  std::string description;
  std::string ncu_set;                // passed as --set; empty for none
  std::vector<std::string> sections;  // each passed as --section
  std::vector<std::string> metrics;   // added to --metrics
};

// Loads profiles/ncu/<name>.json from `dir`, or a path (anything with a '/' or ending in .json).
// Throws InputError naming the file and the bad field.
NcuSectionSet load_ncu_section_set(const std::string& name_or_path, const std::string& dir);
NcuSectionSet parse_ncu_section_set(const std::string& json_text, const std::string& origin);

// default_profiles_dir() + "/ncu".
std::string default_ncu_sets_dir();

// Names of the sets in `dir`, sorted; for --help and error messages.
std::vector<std::string> list_ncu_section_sets(const std::string& dir);

}  // namespace gemmtune
