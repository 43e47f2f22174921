// shard.hpp: splitting a database into contiguous, residue-balanced shards, one per rank.
//
// Rule (deterministic, streamable): sequence i of length L_i weighs w_i = L_i + 1 (the 1 accounts for the
// per-sequence cost and places empty sequences); with P_i the weight of the sequences before it and W the
// total weight, it belongs to part floor((2 P_i + w_i) * parts / (2 W)): the part containing the midpoint of
// its weight. Parts are therefore contiguous index ranges in database order (the part index never
// decreases along the database), every sequence has exactly one part, and each part's weight is within
// one sequence of W / parts. A part may be empty (more parts than sequences, or one very long sequence).
// Since 2 P_i + w_i < 2 W, the part is always < parts; a caller whose W is not the true total (a sequence
// file whose totals it was given) still gets contiguous parts: indices are clamped to parts - 1.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace warpsearch::dist {

// [begin, end) of sequence indices.
struct ShardRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
  bool contains(std::uint64_t i) const { return i >= begin && i < end; }
  friend bool operator==(const ShardRange&, const ShardRange&) = default;
};

// The streaming form: feed the lengths in database order; next() returns each sequence's part.
class ShardPlanner {
 public:
  // total_weight: sum of (length + 1) over the database. parts >= 1.
  ShardPlanner(std::uint64_t total_weight, int parts);
  int next(std::uint64_t length);

 private:
  std::uint64_t total_ = 0;
  std::uint64_t prefix_ = 0;
  int parts_ = 1;
};

// Total weight of `count` sequences whose lengths sum to `residues`.
inline std::uint64_t shard_weight(std::uint64_t residues, std::uint64_t count) { return residues + count; }

// Part boundaries: bounds[p] .. bounds[p + 1] is part p (parts + 1 values, bounds[0] = 0,
// bounds[parts] = count). length(i) gives the length of sequence i (called twice per sequence).
std::vector<std::uint64_t> shard_bounds(std::uint64_t count,
                                        const std::function<std::uint64_t(std::uint64_t)>& length, int parts);
std::vector<std::uint64_t> shard_bounds(std::span<const std::uint64_t> lengths, int parts);

// Part `part` of shard_bounds(count, length, parts).
ShardRange shard_range(std::uint64_t count, const std::function<std::uint64_t(std::uint64_t)>& length,
                       int part, int parts);

}  // namespace warpsearch::dist
