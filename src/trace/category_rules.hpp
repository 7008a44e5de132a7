// CategoryRules: which category (GEMM, epilogue/elementwise, transpose, RNG, copy, reduction, ...) a kernel is in,
// by name. The rules are data (profiles/trace_categories.json, beside the profiles): ordered (category, regex)
// pairs, the first match wins, 'other' when none does. A user's file is put in front of the default one.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gemmtune {

inline constexpr const char* kOtherCategory = "other";
inline constexpr const char* kGemmCategory = "GEMM";

class CategoryRules {
 public:
  // Throws InputError naming the file and the rule for a file that is not a rule list or a pattern that is not a
  // valid regex.
  static CategoryRules parse(const nlohmann::json& j, const std::string& where);
  static CategoryRules load(const std::string& path);
  // The default rules: trace_categories.json in the profiles directory.
  static CategoryRules load_default();
  static std::string default_path();

  // Tries `first`'s rules before these.
  void prepend(const CategoryRules& first);
  // The category of a (demangled) kernel name.
  std::string classify(const std::string& kernel_name) const;

 private:
  struct Rule {
    std::string category;
    std::string pattern;
    std::regex re;
  };
  std::vector<Rule> rules_;
};

}  // namespace gemmtune
