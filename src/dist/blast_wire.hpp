// blast_wire.hpp: blastp scan results as MPI messages (dist/bytes.hpp encoding): one rank's
// blast::BlastpScanPart (each query's pruned preliminary selection with its HSPs and seeds, the subjects
// they refer to with deflines and residues, the seed stages' counters) and the pieces it is made of; and
// the traceback work rank 0 gives a rank, and a rank's traceback results (HSP lists or composition-based
// redos).
// Decoding gives back exactly the encoded values (doubles by bit pattern).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "blast/engine.hpp"
#include "blast/kappa.hpp"
#include "dist/bytes.hpp"

namespace warpsearch::dist {

void write_hsp(ByteWriter& w, const blast::Hsp& h);
blast::Hsp read_hsp(ByteReader& r);
void write_subject_hits(ByteWriter& w, const blast::SubjectHits& h);
blast::SubjectHits read_subject_hits(ByteReader& r);
void write_prelim_entry(ByteWriter& w, const blast::PrelimEntry& e);
blast::PrelimEntry read_prelim_entry(ByteReader& r);
void write_search_counts(ByteWriter& w, const blast::SearchCounts& c);
blast::SearchCounts read_search_counts(ByteReader& r);

void write_subject_redo(ByteWriter& w, const blast::SubjectRedo& r);
blast::SubjectRedo read_subject_redo(ByteReader& r);

Bytes encode_scan_part(const blast::BlastpScanPart& part);
blast::BlastpScanPart decode_scan_part(std::span<const std::uint8_t> message);

// Stage-6 work of a distributed blastp, sent by rank 0 to the rank that traces it (rank 0 spreads the work
// items over the ranks by their cost, whichever rank's shard holds the subject): each item's index in rank
// 0's work list, its query (index in the call), its preliminary entry and the subject's residues.
struct TraceWorkView {
  std::uint64_t index = 0;
  std::uint64_t query = 0;
  const blast::PrelimEntry* entry = nullptr;
  std::span<const std::uint8_t> residues;
};
struct TraceWork {
  std::uint64_t index = 0;
  std::uint64_t query = 0;
  blast::PrelimEntry entry;
  std::vector<std::uint8_t> residues;
};
Bytes encode_trace_work(std::span<const TraceWorkView> items);
std::vector<TraceWork> decode_trace_work(std::span<const std::uint8_t> message);

// A rank's stage-6 results of a distributed blastp: for each of its work items (index[i] in rank 0's work
// list) the traced HSPs (traced[i], without composition-based statistics) or the redo (redone[i], with
// them; whichever vector is not empty). decode_traced stores them at their indices of the full-size
// traced / redone vectors (the one in use must already have the work list's size).
Bytes encode_traced(const std::vector<std::uint64_t>& index,
                    const std::vector<std::vector<blast::Hsp>>& traced,
                    const std::vector<blast::SubjectRedo>& redone);
void decode_traced(std::span<const std::uint8_t> message, std::vector<std::vector<blast::Hsp>>& traced,
                   std::vector<blast::SubjectRedo>& redone);

}  // namespace warpsearch::dist
