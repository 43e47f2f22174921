// output.hpp: the outputs of `warpsearch swsearch` (docs/SWSEARCH.md "Output"), as pure functions of the
// search results (swsearch::QueryResult, Summary) and the run's settings.
//
//   OutputSettings   the format ("0" report, "6 ..." / "7 ..." tabular) and what the outputs state
//   OutputWriter     header(), one query() text per query in query order, footer()
//
// Formats:
// - "0" (default): a readable report in the manner of ssearch36's: a run header; per query its defline and
//   length, the ranked hit list (score, bits, E-value) and, with alignments, each hit's alignment
//   (identities, positives, gaps, coordinates, CIGAR and a pairwise display of 60 columns a line);
//   a footer with the query and database totals. The report holds nothing that depends on the machine
//   (engines, times, thread or GPU counts), so it is the same on CPU and GPUs.
// - "6 ..." / "7 ...": BLAST+ tabular output with blastp's field names and number formats
//   (blast::TabularWriter; `score` is the raw Smith-Waterman score); outfmt 7's comment lines name
//   "warpsearch swsearch <version>". Ids are the defline's first word, stitle / salltitles the whole
//   defline (name and description). Without alignments (Options::alignments false) the fields that need
//   the alignment (coordinates, qseq/sseq, length, identities, positives, gaps, btop, coverage) are
//   refused when the writer is made (Error(kUsage)).
//
// Conventions (report): deflines are shown without trailing blanks; coordinates are 1-based inclusive;
// identity = identical columns / alignment columns, positives = columns with a positive substitution
// score / alignment columns, gaps = gap columns / alignment columns (BLAST's percentages, one decimal).
// The display's middle line marks identical pairs with a colon and other pairs with a positive score with
// a dot (ssearch36's -m 0 marks). Each display line starts with the 1-based position of its first residue
// and ends with that of its last; a line with no residue of that sequence (all gaps) shows the position of
// the last residue before it on both sides. E-values use BLAST's tabular formats
// (blast::format_tabular_evalue), bits one decimal.
//
// A hit with an alignment must carry its target's residues (Hit::target_residues, the whole target) and an
// alignment consistent with them and with the query (coordinates inside the sequences, CIGAR consuming
// exactly the aligned ranges, '=' columns identical and 'X' columns different, matches and length as
// counted); anything else is Error(kInternal): a bug in the search, not bad input. A local alignment of
// score 0 is empty (no CIGAR): the report says so and the tabular output prints it with empty ranges.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "warpsearch/scoring.hpp"
#include "warpsearch/swsearch.hpp"

namespace warpsearch::swsearch {

struct OutputSettings {
  // "0" (or empty): the readable report; "6", "7", "6 qseqid sseqid score ...": tabular
  // (blast::parse_tabular_format spells the fields).
  std::string format = "0";
  std::string query_label;     // the query file as given (report header)
  std::string database_label;  // the database as given (report header, outfmt 7 "# Database:")
  ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  GapCosts gaps{11, 1};
  bool alignments = true;  // Options::alignments
  std::size_t top = 50;    // Options::top and Options::evalue, stated in the report header
  double evalue = 10.0;
  std::string statistics;       // Statistics::describe() for the report header ("" leaves the line out)
  std::size_t line_width = 60;  // alignment columns per line of the report's pairwise display (>= 1)
};

class OutputWriter {
 public:
  // Error(kUsage) for a bad format or field list, or fields that need alignments when alignments is off.
  explicit OutputWriter(OutputSettings settings);
  ~OutputWriter();
  OutputWriter(OutputWriter&&) noexcept;
  OutputWriter& operator=(OutputWriter&&) noexcept;

  bool tabular() const;
  // Before the first query: the report's run header; empty for tabular output.
  std::string header() const;
  // One query's text (report: defline, hit list, alignments; tabular: one line per hit, outfmt 7 with its
  // comment block).
  std::string query(const QueryResult& result) const;
  // After the last query: the report's totals; outfmt 7's "processed N queries" line; empty for outfmt 6.
  std::string footer(const Summary& summary) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warpsearch::swsearch
