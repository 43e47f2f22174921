// output.hpp: the text formats of `warpsearch scan` (TSV, SAM, PAF and a human-readable view), as pure
// functions of a scan::QueryResult and its hits, plus ResultFormatter, which turns a run's results (one
// QueryResult per query, in query order) into one output text with its header written once.
// docs/SCAN.md shows each format.
//
// Coordinates: scan::Hit is 0-based half-open on the forward query and the forward target strand.
//   TSV   1-based inclusive, as BLAST tabular: qstart = query_begin + 1, qend = query_end; plus strand
//         tstart = target_begin + 1, tend = target_end; minus strand tstart = target_end,
//         tend = target_begin + 1 (tstart > tend, BLAST's convention for a minus-strand subject).
//   SAM   POS = target_begin + 1; hard clips for the unaligned query ends, in the alignment's
//         orientation (minus strand: the reverse-complemented query, so the clips swap ends).
//   PAF   the 0-based half-open values unchanged, strand '+' or '-'.
//   view  1-based positions at both ends of every row; the minus strand shows the forward query against
//         the reverse-complemented target, with target positions counting down.
// Hit::cigar is in forward-target orientation ('=' 'X' 'I' 'D', I = query residue against a gap). A hit
// without one (scan::Config::traceback off) prints '*' for TSV's cigar and identity; SAM, PAF and the
// view need the alignment, and formatting such a hit with them is Error(kInternal) (the CLI refuses the
// combination as a usage error first).
// E-values print as BLAST+'s tabular output does (format_evalue); a hit without statistics prints '-'
// in TSV and the view and has no ZE tag in SAM/PAF.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpsearch/scan.hpp"

namespace warpsearch::scan {

enum class OutputFormat : std::uint8_t { kTsv, kSam, kPaf, kView };
std::optional<OutputFormat> parse_output_format(std::string_view text);  // "tsv" | "sam" | "paf" | "view"
// SAM, PAF and the view print the alignment, so they need Config::traceback.
bool needs_traceback(OutputFormat format);

// BLAST+ 2.12 tabular (-outfmt 6) E-value text: "0.0" below 1e-180, "%.2e" below 0.0009 ("4.67e-32"),
// "%.3f" below 0.1 ("0.007"), "%.2f" below 1 ("0.69"), "%.1f" below 10 ("6.9"), "%.0f" otherwise ("694").
std::string format_evalue(double evalue);
// Percent identity as BLAST's pident: 100 * matches / alignment columns, two decimals ("87.50"); "*"
// for a hit without traceback.
std::string identity_percent(const Hit& hit);
// SAM NM: mismatch columns plus gap columns.
std::uint32_t edit_distance(const Hit& hit);
// The hit's CIGAR with hard clips for the unaligned query ends in the alignment's orientation: plus
// strand query_begin 'H' first and qlen - query_end 'H' last, minus strand the other way round.
std::string sam_cigar(const Hit& hit, std::uint64_t query_length);
// The CIGAR read backwards ("3=1I2X" -> "2X1I3="): the same alignment seen from the other strand.
std::string reverse_cigar(std::string_view cigar);

// TSV: "query target strand score qstart qend tstart tend cigar identity evalue", tab separated,
// newline terminated; the header once per output.
std::string tsv_header();
void append_tsv(std::string& out, const QueryResult& result, const Hit& hit);

// SAM 1.6: @HD VN:1.6 SO:unsorted, one @SQ per target (in the order given; empty targets, which SAM
// cannot describe and no hit refers to, are left out), @PG naming warpsearch and its version.
std::string sam_header(std::span<const std::pair<std::string, std::uint64_t>> targets,
                       std::string_view version);
// One record: QNAME FLAG RNAME POS 255 CIGAR * 0 0 * * AS:i NM:i [ZE:f]. FLAG: 16 on the minus strand,
// plus 256 (secondary) unless primary (the query's first hit). SEQ and QUAL are '*': a scan query is
// typically 10^6 residues long and would be repeated in every record.
void append_sam(std::string& out, const QueryResult& result, const Hit& hit, bool primary);

// PAF: qname qlen qstart qend strand tname tlen tstart tend nmatch alnlen 255 tp:A:P|S AS:i cg:Z [ZE:f]
// (tp:A:P for the query's first hit, tp:A:S for the others).
void append_paf(std::string& out, const QueryResult& result, const Hit& hit, bool primary);

// The letters the view prints for one hit.
struct ViewLetters {
  std::string_view query;   // the whole query, forward strand (index = 0-based query position)
  std::string_view target;  // forward target residues [hit.target_begin, hit.target_end)
  bool rna = false;         // complement A as U (minus-strand target rows)
};
// Residues per alignment row of the view.
inline constexpr std::size_t kViewWidth = 60;
// The view's per-query heading: "Query: NAME (N residues): K alignments" and a blank line.
void append_view_heading(std::string& out, const QueryResult& result);
// One hit (number = its 1-based rank): a header (query, target, strand, score, E-value, identities,
// gaps), then rows of kViewWidth columns: "Query  START LETTERS END", a match line ('|' for '=' columns,
// ' ' for mismatches and gaps) and "Target START LETTERS END". START/END are the 1-based positions of
// the row's first and last residue; a row with no residue of a sequence shows the position before it
// twice. Minus strand: the target row is the reverse complement (nucleotide letters, case kept) and its
// positions count down. Error(kInternal) if the letters do not match the hit's coordinates and CIGAR.
void append_view(std::string& out, const QueryResult& result, const Hit& hit, std::size_t number,
                 const ViewLetters& letters);
// The reverse complement of nucleotide letters, IUPAC codes included (R<->Y, M<->K, B<->V, H<->D; S, W, N
// are their own complements), case kept; T and U both complement to A, A to T (to U when rna).
std::string reverse_complement_letters(std::string_view letters, bool rna = false);

// A whole output: the header once (TSV header; SAM header with @SQ lines from the first result's
// targets, which every query of a run shares), then each result's records in hit order.
class ResultFormatter {
 public:
  ResultFormatter(OutputFormat format, std::string version);
  // Text to write for the next query's result. For the view, letters[i] belongs to result.hits[i]
  // (other formats ignore it). Throws Error(kInternal) for a hit without the alignment in SAM, PAF or
  // the view, or if letters is short.
  std::string format(const QueryResult& result, std::span<const ViewLetters> letters = {});
  // The header alone, for an output that receives no result (TSV header; SAM @HD/@PG; nothing else).
  std::string finish();
  OutputFormat output_format() const { return format_; }

 private:
  std::string header(const QueryResult* first) const;

  OutputFormat format_;
  std::string version_;
  bool header_written_ = false;
};

}  // namespace warpsearch::scan
