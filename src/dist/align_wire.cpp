// align_wire.cpp: see align_wire.hpp.
#include "dist/align_wire.hpp"

#include <fmt/format.h>

#include "dist/shard.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::dist {

std::vector<std::uint64_t> align_split(std::span<const std::uint64_t> cells, int parts) {
  if (parts < 1) throw Error(ErrorKind::kInternal, fmt::format("align split: {} parts", parts));
  // shard_bounds weighs "length" L as L + 1: here cells + 1.
  return shard_bounds(cells, parts);
}

void write_align_result(ByteWriter& w, const align::Result& r) {
  w.integer(r.score);
  w.integer(r.query_begin);
  w.integer(r.query_end);
  w.integer(r.target_begin);
  w.integer(r.target_end);
  w.str(r.cigar);
  w.integer(r.matches);
  w.integer(r.length);
}

align::Result read_align_result(ByteReader& r) {
  align::Result a;
  a.score = r.integer<std::int32_t>();
  a.query_begin = r.integer<std::uint32_t>();
  a.query_end = r.integer<std::uint32_t>();
  a.target_begin = r.integer<std::uint32_t>();
  a.target_end = r.integer<std::uint32_t>();
  a.cigar = r.str();
  a.matches = r.integer<std::uint32_t>();
  a.length = r.integer<std::uint32_t>();
  return a;
}

Bytes encode_align_results(std::span<const align::Result> results) {
  ByteWriter w;
  w.integer(static_cast<std::uint64_t>(results.size()));
  for (const align::Result& r : results) write_align_result(w, r);
  return w.take();
}

std::vector<align::Result> decode_align_results(std::span<const std::uint8_t> message) {
  ByteReader in(message);
  // Each Result takes at least 36 bytes (7 fixed 4-byte fields and the CIGAR's 8-byte length).
  const std::size_t n = in.count(36);
  std::vector<align::Result> results;
  results.reserve(n);
  for (std::size_t i = 0; i < n; ++i) results.push_back(read_align_result(in));
  in.expect_done();
  return results;
}

}  // namespace warpsearch::dist
