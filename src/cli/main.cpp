// gemmtune: find the fastest verified way to run a GEMM on this GPU, keep it, and check it stays fast.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help and version as "errors" with exit code 0; real usage errors become our exit code 2.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(gemmtune::ExitCode::BadInput);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
    return static_cast<int>(gemmtune::ExitCode::CheckFailed);
  }
  return 0;
}
