// gemmtune: find the fastest verified way to run a GEMM on this GPU, keep it, and check it stays fast.
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace {

// "devices, paths, sweep, …": what may follow `command`, in the order its --help lists them.
std::string subcommand_names(const CLI::App& command) {
  std::string names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// An option before the subcommand, named as such: CLI11 checks that a subcommand was given before it looks at what
// was, and says only "A subcommand is required".
std::string option_before_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  const std::string first = argv[1];
  if (first[0] != '-' || first == "-h" || first == "--help" || first == "--version") return {};
  return "unknown option '" + first + "' before the subcommand, one of " + subcommand_names(app);
}

// The deepest subcommand the command line selected (the top level where none), and its command line.
struct SelectedCommand {
  const CLI::App* app;
  std::string line;
};
SelectedCommand selected_command(const CLI::App& app) {
  SelectedCommand c{&app, "gemmtune"};
  while (!c.app->get_subcommands().empty()) {
    c.app = c.app->get_subcommands().back();
    c.line += " " + c.app->get_name();
  }
  return c;
}

// The word after the selected command's own on the command line ("nosuch" in `gemmtune cache nosuch`); empty where
// none follows or an option does.
std::string word_after(const SelectedCommand& c, int argc, char** argv) {
  std::istringstream path(c.line);
  std::string name;
  path >> name;  // "gemmtune", argv[0]'s
  int i = 1;
  while (path >> name)
    while (i < argc && name != argv[i++]) {}
  return i < argc && argv[i][0] != '-' ? argv[i] : "";
}

// One line for a usage error, naming the subcommands where one is missing (CLI11: "A subcommand is required").
std::string usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const SelectedCommand c = selected_command(app);
  if (c.app->get_require_subcommand_min() > 0 && c.app->get_subcommands().empty()) {
    const std::string unknown = word_after(c, argc, argv);
    return (unknown.empty() ? "give " + c.line + " a subcommand: "
                            : "unknown subcommand '" + unknown + "' of " + c.line + ": one of ") +
           subcommand_names(*c.app);
  }
  return e.what() + std::string(" (") + c.line + " --help lists its options)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gemmtune: autotune, verify, time and profile GEMMs with fused epilogues"};
  app.set_version_flag("--version", std::string("gemmtune ") + GEMMTUNE_VERSION);
  app.require_subcommand(1);

  gemmtune::cli::register_devices(app);
  gemmtune::cli::register_paths(app);
  gemmtune::cli::register_sweep(app);
  gemmtune::cli::register_run(app);
  gemmtune::cli::register_ncu(app);
  gemmtune::cli::register_nsys(app);
  gemmtune::cli::register_report(app);
  gemmtune::cli::register_cache(app);
  gemmtune::cli::register_gate(app);
  gemmtune::cli::register_trace(app);
  gemmtune::cli::register_accuracy(app);
  gemmtune::cli::register_apply(app);

  if (const std::string unknown = option_before_subcommand(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "gemmtune: error: %s\n", unknown.c_str());
    return static_cast<int>(gemmtune::ExitCode::BadInput);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 raises help and version as "errors" with exit code 0; a usage error is one line and our exit code 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "gemmtune: error: %s\n", usage_error(app, e, argc, argv).c_str());
    return static_cast<int>(gemmtune::ExitCode::BadInput);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
    return static_cast<int>(gemmtune::ExitCode::CheckFailed);
  }
  return 0;
}
