#include "cli/sweep_devices.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <cstring>

#include <nlohmann/json.hpp>
#include <poll.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "common/scratch_dir.hpp"
#include "profiler/child_process.hpp"
#include "profiler/process.hpp"
#include "tuner/device_workers.hpp"
#include "tuner/shard_plan.hpp"
#include "tuner/sweep_report.hpp"

namespace gemmtune::cli {
namespace {

constexpr auto kStopGrace = std::chrono::seconds(10);  // after SIGTERM, before SIGKILL

volatile std::sig_atomic_t g_caught_signal = 0;
extern "C" void remember_signal(int sig) { g_caught_signal = sig; }

// Catches SIGINT, SIGTERM and SIGHUP while the workers run (so they are stopped and reaped, not orphaned), and
// puts the previous handlers back afterwards.
class SignalCatcher {
 public:
  SignalCatcher() {
    g_caught_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = remember_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &previous_[i]);
  }
  ~SignalCatcher() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
  }
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

struct GpuInfo {
  int index = 0;
  std::string key;
};

std::vector<GpuInfo> list_gpus() {
  // Asked of a child: this process never creates a CUDA context of its own on the workers' GPUs.
  const ProcessOutput r = capture_process({self_executable(), "devices", "--json"});
  std::string why = r.err;
  if (const std::size_t pos = why.find("error: "); pos != std::string::npos) why = why.substr(pos + 7);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (r.status == static_cast<int>(ExitCode::NoGpu)) throw NoGpuError(why);
  if (r.status != 0)
    throw CheckError("`gemmtune devices --json` failed (status " + std::to_string(r.status) + "): " + why);
  std::vector<GpuInfo> gpus;
  for (const nlohmann::json& d : nlohmann::json::parse(r.out))
    gpus.push_back({d.at("index").get<int>(), d.at("key").get<std::string>()});
  return gpus;
}

struct Group {
  std::string key;
  std::vector<int> devices;
  int shards = 1;
  std::vector<int> pending;             // shard numbers not started yet, next first
  std::map<int, std::string> json_of;   // shard -> its worker's --json
};

struct Worker {
  int device = 0;
  std::size_t group = 0;
  int shard = -1;
  bool retired = false;  // its GPU failed: it takes no more shards
  std::unique_ptr<ChildProcess> process;
  std::chrono::steady_clock::time_point started;
  SweepResult::GpuShare share;  // what this GPU ran so far
};

int severity(int status) { return status >= 0 && status <= 3 ? status : 4; }

// One line for the whole host: rewritten in place on a terminal, one line per problem in a log.
class ProgressLine {
 public:
  explicit ProgressLine(std::size_t total) : total_(total), tty_(::isatty(STDERR_FILENO) != 0) {}

  void problem(const Worker& w, const WorkerProgress& p) {
    ++done_;
    if (!p.resumed) ++measured_;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = measured_ ? elapsed / static_cast<double>(measured_) * static_cast<double>(total_ - done_) : 0;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "[%zu/%zu] gpu%d ", done_, total_, w.device);
    last_ = buf + p.text + " | " + std::to_string(running_) + " worker" + (running_ == 1 ? "" : "s") + ", elapsed " +
            duration_text(elapsed) + ", ETA " + (measured_ ? duration_text(eta) : std::string("?"));
    draw();
  }
  void message(const std::string& text) {
    std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", text.c_str());
    if (tty_ && !last_.empty()) draw();
  }
  void set_running(int running) { running_ = running; }
  void finish() {
    if (tty_ && !last_.empty()) std::fputc('\n', stderr);
  }

 private:
  void draw() {
    if (tty_)
      std::fprintf(stderr, "\r\033[K%s", last_.c_str());
    else
      std::fprintf(stderr, "%s\n", last_.c_str());
    std::fflush(stderr);
  }

  std::size_t total_, done_ = 0, measured_ = 0;
  int running_ = 0;
  bool tty_;
  std::string last_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string shard_name(int shard, int shards) { return std::to_string(shard) + "/" + std::to_string(shards); }

// The records and finalist stages of one group's finished shards as one sweep result, in plan order. A problem a
// worker skipped (--resume) is marked resumed; problems of shards that did not finish are left out.
SweepResult combine_group(const SweepPlan& plan, const SweepProfile& profile, const Group& g) {
  SweepResult result;
  std::map<std::string, std::vector<MeasurementRecord>> records;
  std::map<std::string, ProblemCost> measured;  // problem key -> what its worker spent on it
  std::map<std::string, nlohmann::json> entries;  // problem key -> its entry of the worker's "problems"
  bool first = true;
  for (const auto& [shard, path] : g.json_of) {
    const nlohmann::json doc = read_json_file(path);
    if (first) {
      result.run.device = doc.at("device").get<DeviceIdentity>();
      result.run.gemmtune_version = doc.at("gemmtune_version").get<std::string>();
      result.run.profile = doc.at("profile").get<std::string>();
      result.run.id = doc.at("run_id").get<std::int64_t>();
      result.run.started_at = doc.at("started_at").get<std::string>();
      first = false;
    }
    result.run.id = std::min(result.run.id, doc.at("run_id").get<std::int64_t>());
    result.run.started_at = std::min(result.run.started_at, doc.at("started_at").get<std::string>());
    result.run.finished_at = std::max(result.run.finished_at, doc.at("finished_at").get<std::string>());
    if (doc.at("timer") == "events") result.timer_warning = "a worker timed with CUDA events";
    if (doc.contains("cost")) result.setup_s += doc["cost"].value("setup_s", 0.0);
    for (const nlohmann::json& p : doc.at("problems")) {
      const std::string key = p.at("problem_key").get<std::string>();
      measured[key] = cost_from_json(p);
      entries[key] = p;
    }
    for (const nlohmann::json& r : doc.at("results")) {
      MeasurementRecord rec = r.get<MeasurementRecord>();
      records[rec.problem.key()].push_back(std::move(rec));
    }
  }
  const std::vector<Shard> cut = partition_plan(plan, profile, g.shards);
  std::vector<bool> finished(plan.problems.size(), false);
  for (const auto& [shard, path] : g.json_of)
    for (const std::size_t i : cut.at(static_cast<std::size_t>(shard)).problems) finished[i] = true;
  for (std::size_t i = 0; i < plan.problems.size(); ++i) {
    if (!finished[i]) continue;
    ProblemResult pr;
    pr.problem = plan.problems[i].problem;
    const std::string key = pr.problem.key();
    const auto cost = measured.find(key);
    pr.resumed = cost == measured.end();
    if (!pr.resumed) pr.cost = cost->second;
    if (auto it = records.find(key); it != records.end()) pr.records = std::move(it->second);
    if (auto it = entries.find(key); it != entries.end()) finalist_stage_from_json(it->second, pr);
    for (const MeasurementRecord& r : pr.records) {
      if (r.status == MeasureStatus::VerifyFailed) ++result.verify_failures;
      if (r.status == MeasureStatus::Error) ++result.errors;
    }
    result.problems.push_back(std::move(pr));
  }
  return result;
}

// The seconds a worker's sweep itself took (its --json's cost.wall_s); 0 when it wrote none (it failed or was killed).
double worker_sweep_seconds(const std::string& json_path) {
  std::error_code ec;
  if (!std::filesystem::exists(json_path, ec)) return 0;
  try {
    const nlohmann::json doc = read_json_file(json_path);
    return doc.contains("cost") ? doc["cost"].value("wall_s", 0.0) : 0.0;
  } catch (const Error&) {
    return 0;
  }
}

}  // namespace

void sweep_on_devices(const SweepPlan& plan, const SweepProfile& profile, const DeviceSweep& request) {
  const std::vector<GpuInfo> gpus = list_gpus();
  std::vector<int> available;
  for (const GpuInfo& g : gpus) available.push_back(g.index);
  const std::vector<int> chosen = select_devices(request.devices, available);

  std::vector<Group> groups;
  std::vector<Worker> workers;
  for (const int d : chosen) {
    const GpuInfo& gpu = *std::find_if(gpus.begin(), gpus.end(), [&](const GpuInfo& g) { return g.index == d; });
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.key == gpu.key; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{gpu.key, {}, 1, {}, {}});
    it->devices.push_back(d);
    Worker w;
    w.device = d;
    w.group = static_cast<std::size_t>(it - groups.begin());
    w.share.device = d;
    workers.push_back(std::move(w));
  }
  if (groups.size() > 1 && (!request.json.empty() || !request.csv.empty()))
    throw InputError("--json and --csv hold one device key, and --devices '" + request.devices + "' has " +
                     std::to_string(groups.size()) + " GPU models: run --devices once per model");
  double estimated_s = 0;
  for (const PlannedProblem& pp : plan.problems)
    estimated_s += static_cast<double>(estimated_cost_us(pp, profile)) * 1e-6;
  for (Group& g : groups) {
    g.shards = shards_for_group(static_cast<int>(g.devices.size()), plan.problems.size(), estimated_s);
    for (int s = 0; s < g.shards; ++s) g.pending.push_back(s);
  }
  if (request.prepare_outputs) request.prepare_outputs();

  for (const Group& g : groups) {
    std::string list;
    for (const int d : g.devices) list += (list.empty() ? "" : ",") + std::to_string(d);
    std::fprintf(stderr, "gemmtune: GPU%s %s (%s): %zu problems of plan %s in %d shard%s\n",
                 g.devices.size() == 1 ? "" : "s", list.c_str(), g.key.c_str(), plan.problems.size(),
                 plan_fingerprint(plan).c_str(), g.shards, g.shards == 1 ? "" : "s");
  }

  const auto start = std::chrono::steady_clock::now();
  const ScratchDir scratch("gemmtune-sweep");  // the workers' JSON records
  const std::string self = self_executable();
  const SignalCatcher signals;
  ProgressLine progress(plan.problems.size() * groups.size());
  int worst = 0;
  std::vector<std::string> failures;

  const auto launch = [&](Worker& w) {
    Group& g = groups[w.group];
    w.shard = g.pending.front();
    g.pending.erase(g.pending.begin());
    const std::string json = scratch.path() + "/group" + std::to_string(w.group) + "-shard" + std::to_string(w.shard) +
                             ".json";
    std::vector<std::string> argv = {self, "sweep"};
    argv.insert(argv.end(), request.worker_args.begin(), request.worker_args.end());
    for (const std::string& a : {std::string("--device"), std::to_string(w.device), std::string("--shard"),
                                 shard_name(w.shard, g.shards), std::string("--json"), json})
      argv.push_back(a);
    w.process = std::make_unique<ChildProcess>(argv, ChildProcess::Stdout::Discard);
    w.started = std::chrono::steady_clock::now();
    g.json_of[w.shard] = json;
  };
  const auto running = [&] {
    int n = 0;
    for (const Worker& w : workers) n += w.process ? 1 : 0;
    return n;
  };
  const auto reap = [&](Worker& w, int status) {
    Group& g = groups[w.group];
    if (severity(status) > severity(worst)) worst = status;
    ++w.share.shards;
    w.share.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - w.started).count();
    w.share.sweep_s += worker_sweep_seconds(g.json_of[w.shard]);
    // 0: done; 1: done, but a candidate failed verification (its records say which). Anything else: no result.
    if (status != 0 && status != 1) {
      g.json_of.erase(w.shard);
      w.retired = true;
      failures.push_back("gpu" + std::to_string(w.device) + " shard " + shard_name(w.shard, g.shards) + " exited " +
                         std::to_string(status));
      if (!g_caught_signal)
        progress.message("gemmtune: " + failures.back() + "; gpu" + std::to_string(w.device) + " takes no more shards");
    }
    w.process.reset();
    w.shard = -1;
  };

  for (;;) {
    if (!g_caught_signal)
      for (Worker& w : workers)
        if (!w.process && !w.retired && !groups[w.group].pending.empty()) launch(w);
    progress.set_running(running());
    if (running() == 0) break;

    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (Worker& w : workers)
      if (w.process && w.process->stderr_fd() >= 0) {
        fds.push_back({w.process->stderr_fd(), POLLIN, 0});
        owners.push_back(&w);
      }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 250);  // EINTR (a signal) just ends the wait early
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Worker& w = *owners[i];
      std::vector<std::string> lines;
      w.process->read_stderr(lines);
      for (const std::string& line : lines) {
        if (const std::optional<WorkerProgress> p = parse_worker_progress(line))
          progress.problem(w, *p);
        else
          progress.message("gpu" + std::to_string(w.device) + " shard " +
                           shard_name(w.shard, groups[w.group].shards) + ": " + line);
      }
    }
    for (Worker& w : workers)
      if (w.process && w.process->stderr_fd() < 0) reap(w, w.process->wait());

    if (g_caught_signal) {
      // On a terminal, Ctrl-C reached the workers too; `kill` of this process did not: pass it on, then wait.
      for (Worker& w : workers)
        if (w.process) w.process->send_signal(SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
      for (Worker& w : workers) {
        while (w.process && !w.process->try_wait() && std::chrono::steady_clock::now() < deadline)
          ::usleep(20000);
        if (w.process && !w.process->try_wait()) w.process->send_signal(SIGKILL);
        if (w.process) w.process.reset();
      }
      progress.finish();
      const int sig = g_caught_signal;
      throw Error(static_cast<ExitCode>(128 + sig),
                  std::string("interrupted (") + strsignal(sig) +
                      "): the workers were stopped; every problem they finished is in the db, rerun with --resume");
    }
  }
  progress.finish();

  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    if (g.json_of.empty()) continue;
    SweepResult result = combine_group(plan, profile, g);
    result.wall_s = wall_s;
    for (const Worker& w : workers)
      if (w.group == gi) result.gpus.push_back(w.share);
    print_sweep_table(result, std::cout);
    if (!request.json.empty()) write_sweep_json(result, request.json);
    if (!request.csv.empty()) write_sweep_csv(result, request.csv);
  }
  std::cout.flush();
  std::size_t not_run = 0;
  for (const Group& g : groups) not_run += g.pending.size();
  if (worst == 0) return;
  std::string what = std::to_string(failures.size()) + " shard(s) failed";
  for (const std::string& f : failures) what += "; " + f;
  if (not_run) what += "; " + std::to_string(not_run) + " shard(s) were not started (no GPU of their model left)";
  if (failures.empty()) what = "a candidate failed verification or failed to run (they were not cached; see the table)";
  else what += "; rerun with --resume to finish";
  throw Error(static_cast<ExitCode>(worst), what);
}

}  // namespace gemmtune::cli
