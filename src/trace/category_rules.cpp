#include "trace/category_rules.hpp"

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "profile/sweep_profile.hpp"

namespace gemmtune {

CategoryRules CategoryRules::parse(const nlohmann::json& j, const std::string& where) {
  const JsonFields root(j, where);
  const std::string schema = root.string("schema");
  if (schema != "gemmtune.trace_categories")
    throw InputError(where + ": not a trace category file (schema '" + schema + "')");
  if (const std::int64_t v = root.integer("schema_version"); v != 1)
    throw InputError(where + ": category file schema_version " + std::to_string(v) + ", this gemmtune reads 1");
  CategoryRules rules;
  for (const JsonFields& f : root.objects("rules")) {
    Rule r;
    r.category = f.string("category");
    if (r.category.empty()) f.fail("category", "must not be empty");
    r.pattern = f.string("pattern");
    try {
      r.re = std::regex(r.pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    } catch (const std::regex_error& e) {
      f.fail("pattern", std::string("not a valid regex (") + e.what() + ")");
    }
    rules.rules_.push_back(std::move(r));
  }
  return rules;
}

CategoryRules CategoryRules::load(const std::string& path) { return parse(read_json_file(path), path); }

std::string CategoryRules::default_path() { return default_profiles_dir() + "/trace_categories.json"; }

CategoryRules CategoryRules::load_default() { return load(default_path()); }

void CategoryRules::prepend(const CategoryRules& first) {
  std::vector<Rule> rules = first.rules_;
  rules.insert(rules.end(), rules_.begin(), rules_.end());
  rules_ = std::move(rules);
}

std::string CategoryRules::classify(const std::string& kernel_name) const {
  for (const Rule& r : rules_)
    if (std::regex_search(kernel_name, r.re)) return r.category;
  return kOtherCategory;
}

}  // namespace gemmtune
