// gemmtune devices: what GPUs this machine has, as the tuner and the db will identify them.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cuda/device_info.hpp"

namespace gemmtune::cli {

void register_devices(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List CUDA GPUs: name, compute capability, SMs, L2, memory, clocks, versions");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->callback([json] {
    const int count = cuda_device_count();
    nlohmann::json all = nlohmann::json::array();
    for (int i = 0; i < count; ++i) {
      const DeviceInfo d = query_device(i);
      if (*json) {
        all.push_back(d);
        continue;
      }
      std::printf("GPU %d: %s\n", d.index, d.identity.gpu_name.c_str());
      std::printf("  compute capability  %d.%d, %d SMs, max SM clock %d MHz\n", d.identity.cc_major,
                  d.identity.cc_minor, d.identity.sm_count, d.max_sm_clock_mhz);
      std::printf("  memory              %.1f GiB, %d-bit at %d MHz (nominal %.0f GB/s), L2 %.1f MiB\n",
                  static_cast<double>(d.global_mem_bytes) / (1 << 30), d.memory_bus_bits, d.memory_clock_mhz,
                  d.nominal_dram_gbps(), static_cast<double>(d.l2_bytes) / (1 << 20));
      std::printf("  driver %s (CUDA %d), runtime %d, cuBLASLt %zu\n", d.identity.driver.c_str(), d.cuda_driver_api,
                  d.identity.cuda_runtime, d.identity.cublaslt_version);
      std::printf("  device key          %s\n", d.identity.key().c_str());
    }
    if (*json) std::cout << all.dump(2) << "\n";
  });
}

}  // namespace gemmtune::cli
