// device.cpp: --device / --gpus resolution and multi-GPU work splitting (host code, every build).
//
// Contents: parse_device_mode, gpu_support_compiled, probe_devices (forwards to the CUDA probe in
// src/gpu/cuda/probe.cu when the build has CUDA), select_devices, split_work. This file includes no
// CUDA header, so it compiles the same way in CPU-only and CUDA builds.
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch {

#ifdef WARPSEARCH_HAVE_CUDA
// Implemented in src/gpu/cuda/probe.cu, compiled only in CUDA builds.
DeviceProbe probe_cuda_devices(const std::function<std::vector<int>(int count)>& choose);
void release_cuda_devices(std::span<const int> ids);
#endif

namespace {

constexpr std::string_view kBlanks = " \t\r\n";

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(kBlanks);
  return text.substr(first, last - first + 1);
}

// "0 (NVIDIA H100 80GB HBM3), 1 (...)", or "none (<reason>)".
std::string describe_visible(const DeviceProbe& probe) {
  if (probe.devices.empty()) return "none (" + probe.unavailable_reason + ")";
  std::string out;
  for (const DeviceInfo& d : probe.devices) {
    if (!out.empty()) out += ", ";
    out += std::to_string(d.id) + " (" + d.name + ")";
  }
  return out;
}

// Parses --gpus: comma-separated non-negative decimal ids, blanks around ids ignored. Returns the ids
// in the order given; an all-blank list is empty. Syntax errors and repeated ids are usage errors.
std::vector<int> parse_gpu_list(std::string_view gpu_list) {
  std::vector<int> ids;
  if (trim(gpu_list).empty()) return ids;
  const std::string quoted = "--gpus \"" + std::string(gpu_list) + "\"";
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = gpu_list.find(',', pos);
    const std::string_view token =
        trim(gpu_list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (token.empty()) throw Error(ErrorKind::kUsage, quoted + ": empty device id (expected e.g. \"0,2\")");
    int id = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), id);
    if (ec != std::errc() || end != token.data() + token.size() || id < 0) {
      throw Error(ErrorKind::kUsage,
                  quoted + ": \"" + std::string(token) + "\" is not a device id (expected e.g. \"0,2\")");
    }
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      throw Error(ErrorKind::kUsage, quoted + ": device " + std::to_string(id) + " is listed twice");
    }
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return ids;
}

}  // namespace

std::optional<DeviceMode> parse_device_mode(std::string_view text) {
  if (text == "auto") return DeviceMode::kAuto;
  if (text == "cpu") return DeviceMode::kCpu;
  if (text == "gpu") return DeviceMode::kGpu;
  return std::nullopt;
}

bool gpu_support_compiled() {
#ifdef WARPSEARCH_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

DeviceProbe probe_devices() {
  return probe_devices([](int count) {
    std::vector<int> all(static_cast<std::size_t>(std::max(count, 0)));
    for (int id = 0; id < count; ++id) all[static_cast<std::size_t>(id)] = id;
    return all;
  });
}

void release_devices(std::span<const int> ids) {
#ifdef WARPSEARCH_HAVE_CUDA
  release_cuda_devices(ids);
#else
  static_cast<void>(ids);
#endif
}

DeviceProbe probe_devices(const std::function<std::vector<int>(int count)>& choose) {
#ifdef WARPSEARCH_HAVE_CUDA
  return probe_cuda_devices(choose);
#else
  static_cast<void>(choose);
  return DeviceProbe{{}, "warpsearch was built without CUDA support"};
#endif
}

DeviceSelection select_local_devices(DeviceMode mode, std::string_view gpu_list, int local_rank,
                                     int local_size) {
  if (local_size <= 1 || mode == DeviceMode::kCpu) return select_devices(mode, gpu_list);
  const std::vector<int> listed = parse_gpu_list(gpu_list);  // usage errors first, as select_devices
  std::vector<int> mine;
  const DeviceProbe probe = probe_devices([&](int count) {
    std::vector<int> ids = listed;
    if (ids.empty())
      for (int id = 0; id < count; ++id) ids.push_back(id);
    mine = dist::local_devices(ids, local_rank, local_size);
    return mine;
  });
  std::string share;
  for (const int id : mine) {
    if (!share.empty()) share.push_back(',');
    share.append(std::to_string(id));
  }
  return select_devices(mode, share, probe);
}

DeviceSelection select_devices(DeviceMode mode, std::string_view gpu_list) {
  if (mode == DeviceMode::kCpu) return select_devices(mode, gpu_list, DeviceProbe{});
  return select_devices(mode, gpu_list, probe_devices());
}

// Rules, in order:
//   --device cpu: the CPU; a non-blank --gpus contradicts it (usage error).
//   --gpus syntax is checked next (usage error for junk, empty or repeated ids), whatever the probe says.
//   No usable device: --device gpu fails (GPU error with the probe's reason); --device auto runs on the
//     CPU and says why in `note`.
//   Otherwise every listed id must be a usable device (usage error naming the id and the visible ones);
//     the selection keeps the --gpus order, or all usable devices in id order when --gpus is blank.
DeviceSelection select_devices(DeviceMode mode, std::string_view gpu_list, const DeviceProbe& probe) {
  DeviceSelection selection;
  if (mode == DeviceMode::kCpu) {
    if (!trim(gpu_list).empty()) {
      throw Error(ErrorKind::kUsage,
                  "--gpus \"" + std::string(gpu_list) + "\" cannot be combined with --device cpu");
    }
    return selection;
  }
  const std::vector<int> ids = parse_gpu_list(gpu_list);
  if (probe.devices.empty()) {
    if (mode == DeviceMode::kGpu) {
      throw Error(ErrorKind::kGpu, "--device gpu: no usable GPU: " + probe.unavailable_reason);
    }
    selection.note = "no usable GPU (" + probe.unavailable_reason + "); running on the CPU";
    return selection;
  }
  selection.use_gpu = true;
  if (ids.empty()) {
    selection.devices = probe.devices;
    std::sort(selection.devices.begin(), selection.devices.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
    return selection;
  }
  for (const int id : ids) {
    const auto it = std::find_if(probe.devices.begin(), probe.devices.end(),
                                 [id](const DeviceInfo& d) { return d.id == id; });
    if (it == probe.devices.end()) {
      throw Error(ErrorKind::kUsage, "--gpus \"" + std::string(gpu_list) + "\": no usable GPU with id " +
                                         std::to_string(id) + "; usable devices: " + describe_visible(probe));
    }
    selection.devices.push_back(*it);
  }
  return selection;
}

// Let P[0..n] be the prefix sums of the weights (P[0] = 0, P[n] = total) and T_k = floor(total * k /
// parts) the ideal end of part k-1, for k = 1..parts-1. Boundary b_k is the index whose P[b] is nearest
// to T_k: with hi the first index where P[hi] >= T_k, b_k = hi - 1 when T_k - P[hi-1] < P[hi] - T_k,
// else hi (ties go to hi). Because T_k never decreases, neither does b_k, so the ranges
// [b_{k-1}, b_k) with b_0 = 0 and b_parts = n are contiguous and in order. Each boundary misses its
// target by at most half an item, so every part weighs total/parts within max item weight + 1.
// Zero-weight items stay in place; when all weights are zero every item lands in the last part.
std::vector<WorkRange> split_work(std::span<const std::uint64_t> weights, std::size_t parts) {
  if (parts == 0) throw Error(ErrorKind::kUsage, "split_work: the number of parts must be at least 1");
  std::vector<std::uint64_t> prefix(weights.size() + 1, 0);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (__builtin_add_overflow(prefix[i], weights[i], &prefix[i + 1])) {
      throw Error(ErrorKind::kInternal, "split_work: the total weight does not fit in 64 bits");
    }
  }
  const std::uint64_t total = prefix.back();
  __extension__ typedef unsigned __int128 Wide;  // total * k needs up to 128 bits

  std::vector<WorkRange> ranges(parts);
  std::size_t begin = 0;
  for (std::size_t k = 1; k <= parts; ++k) {
    std::size_t end = weights.size();
    if (k < parts) {
      const auto target = static_cast<std::uint64_t>(static_cast<Wide>(total) * k / parts);
      const auto hi =
          static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
      end = (hi > 0 && target - prefix[hi - 1] < prefix[hi] - target) ? hi - 1 : hi;
    }
    ranges[k - 1] = WorkRange{begin, end, prefix[end] - prefix[begin]};
    begin = end;
  }
  return ranges;
}

}  // namespace warpsearch
