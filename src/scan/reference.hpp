// reference.hpp: the scan DP of model.hpp computed literally (plain loops, O(m) memory). The CPU
// reference every other tier (threaded CPU engine, CUDA kernel) is tested against bit for bit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scan/model.hpp"

namespace warpsearch::scan {

// Computes columns [start, end) of the DP of `query` against `target` (whole target sequence; column
// j reads target[j]). The state before column `start` is `initial` (m rows) or, when null, all zero
// (as at column 0 of a real table). Writes the column record of every column j in [own_begin, end) to
// records[j - own_begin] (records.size() >= end - own_begin). When probe is non-null and
// own_begin > start, *probe receives the state after column own_begin - 1. When end_state is non-null
// it receives the state after column end - 1. Requires 0 <= start <= own_begin <= end <= target.size().
void reference_columns(const ScanModel& model, std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> target, std::int64_t start, std::int64_t own_begin,
                       std::int64_t end, const ColumnState* initial, std::span<ColumnRecord> records,
                       ColumnState* probe, ColumnState* end_state);

// The whole table from column 0: one record per target column.
std::vector<ColumnRecord> reference_scan(const ScanModel& model, std::span<const std::uint8_t> query,
                                         std::span<const std::uint8_t> target);

}  // namespace warpsearch::scan
