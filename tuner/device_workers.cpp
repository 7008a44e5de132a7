#include "tuner/device_workers.hpp"

#include <algorithm>
#include <sstream>

#include "common/error.hpp"

namespace gemmtune {

constexpr int kShardsPerWorker = 4;

std::vector<int> select_devices(const std::string& spec, const std::vector<int>& available) {
  if (spec == "all") return available;
  const std::string expected = "--devices '" + spec + "': expected all or GPU indices such as 0,2,3";
  std::vector<int> chosen;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const bool digits = !item.empty() && item.size() < 6 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) throw InputError(expected);
    const int d = std::stoi(item);
    if (std::find(available.begin(), available.end(), d) == available.end())
      throw InputError("--devices '" + spec + "': there is no GPU " + item + " (this machine has " +
                       std::to_string(available.size()) + "; see `gemmtune devices`)");
    if (std::find(chosen.begin(), chosen.end(), d) != chosen.end())
      throw InputError("--devices '" + spec + "': GPU " + item + " is named twice");
    chosen.push_back(d);
  }
  if (chosen.empty() || spec.back() == ',') throw InputError(expected);
  return chosen;
}

int shards_for_group(int workers, std::size_t problems, double estimated_s) {
  if (workers <= 1) return 1;
  const double share_s = estimated_s / workers;
  const int per_worker = std::clamp(static_cast<int>(share_s / kMinShardSeconds), 1, kShardsPerWorker);
  return static_cast<int>(std::max<std::size_t>(1, std::min(static_cast<std::size_t>(per_worker * workers), problems)));
}

std::optional<WorkerProgress> parse_worker_progress(const std::string& line) {
  const std::size_t close = line.find("] ");
  const std::size_t slash = line.find('/');
  if (line.empty() || line[0] != '[' || close == std::string::npos || slash == std::string::npos || slash > close ||
      slash == 1 || slash + 1 == close)
    return std::nullopt;
  for (std::size_t i = 1; i < close; ++i)
    if (i != slash && (line[i] < '0' || line[i] > '9')) return std::nullopt;
  WorkerProgress p;
  p.text = line.substr(close + 2);
  p.text = p.text.substr(0, p.text.find(" | elapsed"));
  p.resumed = p.text.find("skipped (--resume)") != std::string::npos;
  return p;
}

}  // namespace gemmtune
