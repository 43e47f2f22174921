// align_output.hpp: the text formats of `warpsearch align` (TSV, SAM, PAF), one record at a time, as
// pure functions of a pair's names/lengths and its align::Result (docs/ALIGN.md shows each format).
//
// Coordinates: align::Result is 0-based half-open. TSV prints BLAST-tabular 1-based inclusive
// coordinates (qstart = query_begin + 1, qend = query_end), SAM a 1-based POS, PAF the 0-based
// half-open values unchanged. An empty alignment (local score 0) prints 0 0 0 0 in TSV, is an
// unmapped record (FLAG 4) in SAM and has strand '*' in PAF.
// SAM, PAF and TSV's cigar/identity/alnlen columns need Config::traceback; without it a non-empty
// Result has no CIGAR and formatting it is Error(kInternal).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "warpsearch/align.hpp"

namespace warpsearch::cli {

enum class AlignFormat : std::uint8_t { kTsv, kSam, kPaf };
std::optional<AlignFormat> parse_align_format(std::string_view text);  // "tsv" | "sam" | "paf"

// What a record says about its pair besides the Result.
struct PairView {
  std::string_view query_name;
  std::uint64_t query_length = 0;
  std::string_view target_name;
  std::uint64_t target_length = 0;
  std::string_view query_letters;  // SAM SEQ: the query's letters, upper case (SAM only)
  std::string_view query_quality;  // SAM QUAL: FASTQ qualities; empty prints '*'
};

// One @SQ line of a SAM header.
struct SamReference {
  std::string name;
  std::uint64_t length = 0;
};

// Percent identity as BLAST's pident: 100 * matches / alignment columns (gap columns included),
// two decimals ("87.50"); "0.00" for an empty alignment.
std::string identity_percent(const align::Result& r);
// SAM NM: mismatch columns plus gap columns (= length - matches).
std::uint32_t edit_distance(const align::Result& r);
// The Result's CIGAR with soft clips for the unaligned query ends: "4S2=1I2=1S"; "*" when empty.
std::string sam_cigar(const align::Result& r, std::uint64_t query_length);

// TSV: "query target score qstart qend tstart tend" (+ "cigar identity alnlen" with_cigar), tab
// separated, newline terminated.
std::string tsv_header(bool with_cigar);
void append_tsv(std::string& out, const PairView& pair, const align::Result& r, bool with_cigar);

// SAM 1.6: @HD, one @SQ per reference (in the order given), @PG naming warpsearch and its version.
std::string sam_header(std::span<const SamReference> references, std::string_view version);
// One record: QNAME FLAG RNAME POS MAPQ CIGAR * 0 0 SEQ QUAL AS:i NM:i. An empty alignment is an
// unmapped record placed on its target (FLAG 4, RNAME target, POS 1, MAPQ 0, CIGAR *, AS:i:0, no NM).
void append_sam(std::string& out, const PairView& pair, const align::Result& r);

// PAF: qname qlen qstart qend + tname tlen tstart tend nmatch alnlen 255 AS:i cg:Z. An empty
// alignment: zeros, strand '*', MAPQ 0, AS:i:0 and no cg tag (minimap2's convention for no hit).
void append_paf(std::string& out, const PairView& pair, const align::Result& r);

}  // namespace warpsearch::cli
