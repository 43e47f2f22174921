// hmm_wire.hpp: hmmsearch results as MPI messages (dist/bytes.hpp encoding): a rank's part of one model's
// search (its hits, complete with domains and alignment displays, in insertion order, and its pipeline
// counters) and the pieces it is made of; and the public per-model result (hmmsearch::ModelResult) that a
// query-split search sends to rank 0 with the model's output text. Decoding gives back exactly the encoded
// values (floats by bit pattern), so the rank-0 merge sees what a single process would have built.
#pragma once

#include <span>

#include "dist/bytes.hpp"
#include "hmm/reporting.hpp"
#include "hmm/tophits.hpp"
#include "warpsearch/hmmsearch.hpp"

namespace warpsearch::dist {

void write_alidisplay(ByteWriter& w, const hmm::AliDisplay& ad);
hmm::AliDisplay read_alidisplay(ByteReader& r);
void write_domain(ByteWriter& w, const hmm::Domain& d);
hmm::Domain read_domain(ByteReader& r);
void write_hit(ByteWriter& w, const hmm::Hit& h);
hmm::Hit read_hit(ByteReader& r);
void write_counts(ByteWriter& w, const hmm::PipelineCounts& c);
hmm::PipelineCounts read_counts(ByteReader& r);

void write_model_result(ByteWriter& w, const hmmsearch::ModelResult& m);
hmmsearch::ModelResult read_model_result(ByteReader& r);

// One rank's part of a model search: every hit of `hits` in insertion order, then the counters.
Bytes encode_model_part(const hmm::TopHits& hits, const hmm::PipelineCounts& counts);
// Appends the encoded hits to `hits` (add(), insertion order kept) and returns the counters.
hmm::PipelineCounts decode_model_part(std::span<const std::uint8_t> message, hmm::TopHits& hits);

}  // namespace warpsearch::dist
