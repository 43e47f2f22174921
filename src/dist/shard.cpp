// shard.cpp: the residue-balanced contiguous split of shard.hpp.
#include "dist/shard.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "warpsearch/error.hpp"

namespace warpsearch::dist {

__extension__ typedef unsigned __int128 Wide;  // (2 P + w) * parts needs up to 64 + 32 bits

ShardPlanner::ShardPlanner(std::uint64_t total_weight, int parts) : total_(total_weight), parts_(parts) {
  if (parts < 1) throw Error(ErrorKind::kInternal, fmt::format("shard planner: {} parts", parts));
}

int ShardPlanner::next(std::uint64_t length) {
  const std::uint64_t w = length + 1;
  int part = parts_ - 1;
  if (total_ > 0) {
    const Wide x = (Wide{prefix_} * 2 + w) * static_cast<Wide>(parts_);
    const Wide p = x / (Wide{total_} * 2);
    if (p < static_cast<Wide>(parts_)) part = static_cast<int>(p);
  }
  prefix_ += w;
  return part;
}

std::vector<std::uint64_t> shard_bounds(std::uint64_t count,
                                        const std::function<std::uint64_t(std::uint64_t)>& length,
                                        int parts) {
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < count; ++i) total += length(i) + 1;
  ShardPlanner planner(total, parts);
  std::vector<std::uint64_t> bounds(static_cast<std::size_t>(parts) + 1, count);
  bounds[0] = 0;
  // bounds[p] = first index whose part is >= p.
  int filled = 0;  // bounds[1..filled] are set
  for (std::uint64_t i = 0; i < count; ++i) {
    const int part = planner.next(length(i));
    while (filled < part) bounds[static_cast<std::size_t>(++filled)] = i;
  }
  return bounds;
}

std::vector<std::uint64_t> shard_bounds(std::span<const std::uint64_t> lengths, int parts) {
  return shard_bounds(
      lengths.size(), [lengths](std::uint64_t i) { return lengths[i]; }, parts);
}

ShardRange shard_range(std::uint64_t count, const std::function<std::uint64_t(std::uint64_t)>& length,
                       int part, int parts) {
  const std::vector<std::uint64_t> bounds = shard_bounds(count, length, parts);
  return {bounds[static_cast<std::size_t>(part)], bounds[static_cast<std::size_t>(part) + 1]};
}

}  // namespace warpsearch::dist
