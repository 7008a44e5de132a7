// Comma-separated option values (`--modes tf32,fp32`, `--ks 256,1024`): the items in order, empty ones dropped.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace gemmtune::cli {

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace gemmtune::cli
