// sw_wire.cpp: see sw_wire.hpp. Every field is written and read explicitly, in declaration order.
#include "dist/sw_wire.hpp"

#include <cstdint>
#include <utility>

#include "dist/align_wire.hpp"

namespace warpsearch::dist {

void write_sw_hit(ByteWriter& w, const swsearch::Hit& hit) {
  w.integer(hit.target_id);
  w.str(hit.target_name);
  w.str(hit.target_description);
  w.integer(hit.target_length);
  w.integer(hit.score);
  w.f64(hit.bits);
  w.f64(hit.evalue);
  w.boolean(hit.alignment.has_value());
  if (hit.alignment) write_align_result(w, *hit.alignment);
  w.bytes(hit.target_residues);
  w.integer(hit.positives);
  w.integer(hit.gap_opens);
  w.integer(hit.gaps);
}

swsearch::Hit read_sw_hit(ByteReader& r) {
  swsearch::Hit hit;
  hit.target_id = r.integer<std::uint64_t>();
  hit.target_name = r.str();
  hit.target_description = r.str();
  hit.target_length = r.integer<std::uint32_t>();
  hit.score = r.integer<std::int32_t>();
  hit.bits = r.f64();
  hit.evalue = r.f64();
  if (r.boolean()) hit.alignment = read_align_result(r);
  hit.target_residues = r.bytes();
  hit.positives = r.integer<std::uint32_t>();
  hit.gap_opens = r.integer<std::uint32_t>();
  hit.gaps = r.integer<std::uint32_t>();
  return hit;
}

}  // namespace warpsearch::dist
