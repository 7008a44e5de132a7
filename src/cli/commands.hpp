// Each subcommand lives in its own cmd_<name>.cpp and registers itself on the top-level CLI11 app.
// A subcommand's callback reports failure by throwing gemmtune::Error (its code becomes the exit code).
#pragma once

#include <CLI/CLI.hpp>

namespace gemmtune::cli {

void register_devices(CLI::App& app);
void register_paths(CLI::App& app);
void register_sweep(CLI::App& app);
void register_run(CLI::App& app);
void register_ncu(CLI::App& app);
void register_nsys(CLI::App& app);
void register_report(CLI::App& app);
void register_cache(CLI::App& app);
void register_gate(CLI::App& app);
void register_trace(CLI::App& app);
void register_accuracy(CLI::App& app);
void register_apply(CLI::App& app);

}  // namespace gemmtune::cli
