// sw_wire.hpp: swsearch results as MPI messages (dist/bytes.hpp encoding): one reported hit of a query
// (swsearch::Hit: target, scores, E-value, and with alignments the align::Result, the target's residues
// and the counts derived from the CIGAR). Decoding gives back exactly the encoded values (doubles by bit
// pattern). Used by the distributed swsearch (src/swsearch/search.cpp; docs/MPI.md).
#pragma once

#include "dist/bytes.hpp"
#include "warpsearch/swsearch.hpp"

namespace warpsearch::dist {

void write_sw_hit(ByteWriter& w, const swsearch::Hit& hit);
swsearch::Hit read_sw_hit(ByteReader& r);

}  // namespace warpsearch::dist
