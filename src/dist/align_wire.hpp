// align_wire.hpp: the distributed `warpsearch align` (src/cli/cmd_align.cpp; docs/ALIGN.md, docs/MPI.md):
// how a chunk of pairs is split over the ranks, and align::Result lists as MPI messages.
//
// Split rule: the pairs of a chunk are cut into `parts` contiguous index ranges balanced by work, pair i
// weighing its DP cells (query length * target length) plus one (the per-pair cost; places pairs with an
// empty sequence). It is dist/shard.hpp's rule with cells in place of lengths: pair i goes to the part
// containing the midpoint of its weight, so parts keep input order, cover every pair once, each is within
// one pair of the mean weight, and some may be empty (more ranks than pairs, or one huge pair). A pure
// function of the cells and `parts`: every rank computes the same ranges.
//
// Messages: a count then each Result's fields in declaration order (dist/bytes.hpp encoding); decoding
// gives back exactly the encoded Results.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dist/bytes.hpp"
#include "warpsearch/align.hpp"

namespace warpsearch::dist {

// Part boundaries for pairs of these cell counts: bounds[p] .. bounds[p + 1] is part p (parts + 1 values,
// bounds[0] = 0, bounds[parts] = cells.size()). parts >= 1, else Error(kInternal).
std::vector<std::uint64_t> align_split(std::span<const std::uint64_t> cells, int parts);

void write_align_result(ByteWriter& w, const align::Result& r);
align::Result read_align_result(ByteReader& r);

// A whole list as one message, and back (Error(kInternal) on a truncated or overlong message).
Bytes encode_align_results(std::span<const align::Result> results);
std::vector<align::Result> decode_align_results(std::span<const std::uint8_t> message);

}  // namespace warpsearch::dist
