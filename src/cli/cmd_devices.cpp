// cmd_devices.cpp: `warpsearch devices`: the GPUs this build can use, and which --device/--gpus pick.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"

namespace warpsearch::cli {

void register_devices(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand("devices", "List the GPUs warpsearch can use and the device selection");
  cmd->footer(
      "Examples:\n"
      "  warpsearch devices\n"
      "  warpsearch devices --device gpu --gpus 0,1   # fails clearly if those GPUs are not usable");
  cmd->callback([&global] {
    const DeviceProbe probe = probe_devices();
    fmt::print("GPU support compiled: {}\n", gpu_support_compiled() ? "yes (CUDA)" : "no");
    if (probe.devices.empty()) {
      fmt::print("GPUs: none ({})\n", probe.unavailable_reason);
    } else {
      fmt::print("{:>3}  {:<32} {:>4} {:>5} {:>11} {:>11}\n", "id", "name", "SMs", "cc", "memory", "free");
      for (const DeviceInfo& d : probe.devices) {
        fmt::print("{:>3}  {:<32} {:>4} {:>3}.{} {:>7.1f} GiB {:>7.1f} GiB\n", d.id, d.name, d.sm_count,
                   d.cc_major, d.cc_minor, static_cast<double>(d.total_memory) / (1 << 30),
                   static_cast<double>(d.free_memory) / (1 << 30));
      }
    }
    std::fflush(stdout);  // the listing stays before a selection error on a shared terminal
    const auto mode = parse_device_mode(global.device);
    const DeviceSelection sel = select_devices(mode.value_or(DeviceMode::kAuto), global.gpus, probe);
    std::string chosen;
    for (const DeviceInfo& d : sel.devices) chosen += fmt::format("{}{}", chosen.empty() ? "" : ",", d.id);
    fmt::print("selection (--device {}{}): {}\n", global.device,
               global.gpus.empty() ? "" : " --gpus " + global.gpus, sel.use_gpu ? "GPU " + chosen : "CPU");
    if (!sel.note.empty()) fmt::print("note: {}\n", sel.note);
    std::fflush(stdout);
  });
}

}  // namespace warpsearch::cli
