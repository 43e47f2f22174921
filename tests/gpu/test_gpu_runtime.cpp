// test_gpu_runtime.cpp: host-side GPU runtime tests that run in every build, with or without a GPU:
// --device parsing, device selection against fake probes (every error path), and split_work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/residue_histogram.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"

namespace warpsearch {
namespace {

DeviceInfo fake_device(int id, std::string name) {
  DeviceInfo d;
  d.id = id;
  d.name = std::move(name);
  d.sm_count = 132;
  d.cc_major = 9;
  return d;
}

// Three usable devices, deliberately not in id order.
DeviceProbe three_devices() {
  return DeviceProbe{{fake_device(2, "GPU-two"), fake_device(0, "GPU-zero"), fake_device(1, "GPU-one")}, {}};
}

DeviceProbe no_devices() { return DeviceProbe{{}, "no CUDA device is visible"}; }

std::vector<int> ids_of(const DeviceSelection& selection) {
  std::vector<int> ids;
  for (const DeviceInfo& d : selection.devices) ids.push_back(d.id);
  return ids;
}

// Runs select_devices expecting an Error of `kind`; returns its message.
std::string select_error(DeviceMode mode, std::string_view list, const DeviceProbe& probe, ErrorKind kind) {
  try {
    select_devices(mode, list, probe);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "no error for --gpus \"" << list << "\"";
  return {};
}

TEST(DeviceMode, ParsesTheThreeModes) {
  EXPECT_EQ(parse_device_mode("auto"), DeviceMode::kAuto);
  EXPECT_EQ(parse_device_mode("cpu"), DeviceMode::kCpu);
  EXPECT_EQ(parse_device_mode("gpu"), DeviceMode::kGpu);
  EXPECT_EQ(parse_device_mode(""), std::nullopt);
  EXPECT_EQ(parse_device_mode("cuda"), std::nullopt);
  EXPECT_EQ(parse_device_mode("gpus"), std::nullopt);
}

TEST(DeviceProbe, MatchesTheBuild) {
#ifdef WARPSEARCH_HAVE_CUDA
  EXPECT_TRUE(gpu_support_compiled());
#else
  EXPECT_FALSE(gpu_support_compiled());
#endif
  const DeviceProbe probe = probe_devices();
  if (!gpu_support_compiled()) {
    EXPECT_TRUE(probe.devices.empty());
    EXPECT_EQ(probe.unavailable_reason, "warpsearch was built without CUDA support");
  }
  // An empty list always comes with a reason; a usable device has sensible properties.
  EXPECT_EQ(probe.devices.empty(), !probe.unavailable_reason.empty()) << probe.unavailable_reason;
  for (const DeviceInfo& d : probe.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.cc_major, 0);
    EXPECT_GT(d.total_memory, 0u);
    EXPECT_LE(d.free_memory, d.total_memory);
  }
}

// The rank-local selection (MPI ranks sharing a node): each process gets its dist::local_devices share of
// the visible devices and probes only those; usage errors as select_devices. On a machine without a
// usable GPU, auto falls back to the CPU for every rank.
TEST(SelectLocalDevices, EachProcessGetsItsShareAndProbesOnlyIt) {
  const DeviceProbe all = probe_devices();
  std::vector<int> ids;
  for (const DeviceInfo& d : all.devices) ids.push_back(d.id);
  for (const int local_size : {1, 2, 3, 5}) {
    for (int r = 0; r < local_size; ++r) {
      const DeviceSelection s = select_local_devices(DeviceMode::kAuto, "", r, local_size);
      EXPECT_EQ(s.use_gpu, !ids.empty());
      std::vector<int> got;
      for (const DeviceInfo& d : s.devices) got.push_back(d.id);
      EXPECT_EQ(got, dist::local_devices(ids, r, local_size)) << r << " of " << local_size;
    }
  }
  // The probe inspects only the chosen devices.
  std::vector<int> asked;
  const DeviceProbe none = probe_devices([&](int count) {
    asked.push_back(count);
    return std::vector<int>{};
  });
  EXPECT_TRUE(none.devices.empty());
  EXPECT_FALSE(none.unavailable_reason.empty());
  if (!ids.empty()) {
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_GE(asked[0], static_cast<int>(ids.size()));
    const DeviceProbe last = probe_devices([&](int) { return std::vector<int>{ids.back(), -1, 1 << 20}; });
    ASSERT_EQ(last.devices.size(), 1u);
    EXPECT_EQ(last.devices[0].id, ids.back());
  }
  for (const std::string_view junk : {"x", "0,0", "-1"}) {
    try {
      select_local_devices(DeviceMode::kAuto, junk, 0, 2);
      ADD_FAILURE() << "accepted --gpus " << junk;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << junk;
    }
  }
  EXPECT_THROW(select_local_devices(DeviceMode::kCpu, "0", 1, 2), Error);
  EXPECT_FALSE(select_local_devices(DeviceMode::kCpu, "", 1, 2).use_gpu);
}

TEST(SelectDevices, CpuModeNeverProbesAndRejectsGpuList) {
  const DeviceSelection s = select_devices(DeviceMode::kCpu, "", three_devices());
  EXPECT_FALSE(s.use_gpu);
  EXPECT_TRUE(s.devices.empty());
  EXPECT_TRUE(s.note.empty());
  EXPECT_FALSE(select_devices(DeviceMode::kCpu, " ").use_gpu);
  const std::string message = select_error(DeviceMode::kCpu, "0", three_devices(), ErrorKind::kUsage);
  EXPECT_NE(message.find("--device cpu"), std::string::npos) << message;
}

TEST(SelectDevices, AutoWithoutDevicesFallsBackToCpuWithNote) {
  for (const std::string_view list : {"", "0,1"}) {
    const DeviceSelection s = select_devices(DeviceMode::kAuto, list, no_devices());
    EXPECT_FALSE(s.use_gpu);
    EXPECT_TRUE(s.devices.empty());
    EXPECT_NE(s.note.find("no CUDA device is visible"), std::string::npos) << s.note;
    EXPECT_NE(s.note.find("CPU"), std::string::npos) << s.note;
  }
}

TEST(SelectDevices, GpuWithoutDevicesIsAGpuErrorWithTheReason) {
  const std::string message = select_error(DeviceMode::kGpu, "", no_devices(), ErrorKind::kGpu);
  EXPECT_NE(message.find("no CUDA device is visible"), std::string::npos) << message;
  select_error(DeviceMode::kGpu, "0", no_devices(), ErrorKind::kGpu);
}

TEST(SelectDevices, EmptyListSelectsAllDevicesInIdOrder) {
  for (const DeviceMode mode : {DeviceMode::kAuto, DeviceMode::kGpu}) {
    for (const std::string_view list : {"", "  ", "\t"}) {
      const DeviceSelection s = select_devices(mode, list, three_devices());
      EXPECT_TRUE(s.use_gpu);
      EXPECT_EQ(ids_of(s), (std::vector<int>{0, 1, 2}));
      EXPECT_TRUE(s.note.empty());
    }
  }
}

TEST(SelectDevices, ListKeepsTheGivenOrderAndToleratesBlanks) {
  EXPECT_EQ(ids_of(select_devices(DeviceMode::kGpu, "2,0", three_devices())), (std::vector<int>{2, 0}));
  EXPECT_EQ(ids_of(select_devices(DeviceMode::kAuto, " 1 ,\t2 ", three_devices())), (std::vector<int>{1, 2}));
  const DeviceSelection one = select_devices(DeviceMode::kGpu, "1", three_devices());
  ASSERT_EQ(one.devices.size(), 1u);
  EXPECT_EQ(one.devices[0].name, "GPU-one");
}

TEST(SelectDevices, UnknownIdNamesItAndTheUsableDevices) {
  for (const DeviceMode mode : {DeviceMode::kAuto, DeviceMode::kGpu}) {
    const std::string message = select_error(mode, "0,3", three_devices(), ErrorKind::kUsage);
    EXPECT_NE(message.find("id 3"), std::string::npos) << message;
    EXPECT_NE(message.find("0 (GPU-zero)"), std::string::npos) << message;
    EXPECT_NE(message.find("2 (GPU-two)"), std::string::npos) << message;
  }
}

TEST(SelectDevices, DuplicateIdIsAUsageError) {
  const std::string message = select_error(DeviceMode::kGpu, "1, 0,1", three_devices(), ErrorKind::kUsage);
  EXPECT_NE(message.find("device 1 is listed twice"), std::string::npos) << message;
}

TEST(SelectDevices, JunkIsAUsageErrorEvenWithoutDevices) {
  for (const std::string_view junk :
       {"x", "1x", "-1", "+1", "1.5", "0,", ",0", "0,,1", "0 1", "99999999999"}) {
    for (const DeviceMode mode : {DeviceMode::kAuto, DeviceMode::kGpu}) {
      select_error(mode, junk, three_devices(), ErrorKind::kUsage);
      select_error(mode, junk, no_devices(), ErrorKind::kUsage);
    }
  }
  const std::string message = select_error(DeviceMode::kGpu, "0,abc", three_devices(), ErrorKind::kUsage);
  EXPECT_NE(message.find("\"abc\""), std::string::npos) << message;
}

#ifndef WARPSEARCH_HAVE_CUDA
TEST(SelectDevices, CpuOnlyBuildExplainsWhyThereIsNoGpu) {
  try {
    select_devices(DeviceMode::kGpu, "");
    FAIL() << "--device gpu succeeded in a CPU-only build";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGpu);
    EXPECT_NE(e.message().find("built without CUDA support"), std::string::npos) << e.what();
  }
  const DeviceSelection s = select_devices(DeviceMode::kAuto, "");
  EXPECT_FALSE(s.use_gpu);
  EXPECT_NE(s.note.find("built without CUDA support"), std::string::npos) << s.note;
}
#endif

// Checks the split_work invariants: `parts` ranges, contiguous and in order from 0 to n, weights equal
// to the sums of their items, each part within max item weight + 1 of total / parts.
void expect_valid_split(const std::vector<std::uint64_t>& weights, std::size_t parts) {
  const std::vector<WorkRange> ranges = split_work(weights, parts);
  ASSERT_EQ(ranges.size(), parts);
  std::uint64_t total = 0;
  std::uint64_t max_weight = 0;
  for (const std::uint64_t w : weights) {
    total += w;
    max_weight = std::max(max_weight, w);
  }
  std::size_t next = 0;
  for (const WorkRange& r : ranges) {
    EXPECT_EQ(r.begin, next);
    EXPECT_LE(r.begin, r.end);
    std::uint64_t sum = 0;
    for (std::size_t i = r.begin; i < r.end; ++i) sum += weights[i];
    EXPECT_EQ(r.weight, sum);
    const double ideal = static_cast<double>(total) / static_cast<double>(parts);
    EXPECT_LE(std::abs(static_cast<double>(r.weight) - ideal), static_cast<double>(max_weight) + 1.0)
        << "part [" << r.begin << ", " << r.end << ") of " << parts;
    next = r.end;
  }
  EXPECT_EQ(next, weights.size());
}

TEST(SplitWork, ZeroPartsIsAUsageError) {
  const std::vector<std::uint64_t> weights{1, 2, 3};
  try {
    split_work(weights, 0);
    FAIL() << "no error for 0 parts";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
}

TEST(SplitWork, SmallExamples) {
  const std::vector<std::uint64_t> even{1, 1, 1, 1};
  const std::vector<WorkRange> halves = split_work(even, 2);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(halves[0].end, 2u);
  EXPECT_EQ(halves[1].begin, 2u);
  EXPECT_EQ(halves[0].weight, 2u);

  const std::vector<WorkRange> one = split_work(even, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].begin, 0u);
  EXPECT_EQ(one[0].end, 4u);
  EXPECT_EQ(one[0].weight, 4u);

  // One heavy item: it cannot be split, the light ones gather on the other side.
  const std::vector<std::uint64_t> heavy{1, 100, 1, 1};
  const std::vector<WorkRange> two = split_work(heavy, 2);
  EXPECT_EQ(two[0].end, 2u);
  EXPECT_EQ(two[0].weight, 101u);
  EXPECT_EQ(two[1].weight, 2u);
}

TEST(SplitWork, NoItemsGivesEmptyRanges) {
  const std::vector<WorkRange> ranges = split_work({}, 3);
  ASSERT_EQ(ranges.size(), 3u);
  for (const WorkRange& r : ranges) {
    EXPECT_EQ(r.begin, 0u);
    EXPECT_EQ(r.end, 0u);
    EXPECT_EQ(r.weight, 0u);
  }
}

TEST(SplitWork, MorePartsThanItems) {
  expect_valid_split({5, 5}, 4);
  expect_valid_split({7}, 8);
  expect_valid_split({1, 2, 3}, 16);
}

TEST(SplitWork, ZeroWeightItems) {
  expect_valid_split({0, 0, 0, 0}, 3);
  expect_valid_split({0, 4, 0, 0, 4, 0}, 2);
  expect_valid_split({0, 0, 9, 0}, 5);
}

TEST(SplitWork, HugeWeightsDoNotOverflowTheTargets) {
  const std::uint64_t big = std::uint64_t{1} << 62;
  expect_valid_split({big, big, big}, 3);
  expect_valid_split({big, 1, big, 1, big - 2}, 7);
  const std::vector<std::uint64_t> too_big{std::numeric_limits<std::uint64_t>::max(), 1};
  EXPECT_THROW(split_work(too_big, 2), Error);
}

TEST(SplitWork, RandomSplitsAreValidAndDeterministic) {
  std::mt19937_64 rng(20240601);
  for (int round = 0; round < 300; ++round) {
    const std::size_t n = rng() % 200;
    const std::uint64_t max_weight = std::uint64_t{1} << (rng() % 40);
    std::vector<std::uint64_t> weights(n);
    for (std::uint64_t& w : weights) w = (rng() % 8 == 0) ? 0 : rng() % (max_weight + 1);
    const std::size_t parts = 1 + rng() % 12;
    expect_valid_split(weights, parts);
    const std::vector<WorkRange> a = split_work(weights, parts);
    const std::vector<WorkRange> b = split_work(weights, parts);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].begin, b[i].begin);
      EXPECT_EQ(a[i].end, b[i].end);
    }
  }
}

}  // namespace
}  // namespace warpsearch

namespace warpsearch::gpu {
namespace {

TEST(ResidueHistogramReference, CountsByHand) {
  // Three sequences: "ACA" (codes 0 1 0), "" and "Y*" in protein codes (19, 26).
  const std::vector<std::uint8_t> residues = {0, 1, 0, 19, 26};
  const std::vector<std::uint64_t> offsets = {0, 3, 3, 5};
  const std::vector<std::uint32_t> counts = residue_histogram_reference(residues, offsets);
  ASSERT_EQ(counts.size(), 3u * kMaxCodes);
  std::vector<std::uint32_t> expected(3 * kMaxCodes, 0);
  expected[0 * kMaxCodes + 0] = 2;
  expected[0 * kMaxCodes + 1] = 1;
  expected[2 * kMaxCodes + 19] = 1;
  expected[2 * kMaxCodes + 26] = 1;
  EXPECT_EQ(counts, expected);
  EXPECT_TRUE(residue_histogram_reference({}, {}).empty());
}

}  // namespace
}  // namespace warpsearch::gpu
