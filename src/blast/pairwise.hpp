// pairwise.hpp: BLAST+ 2.12 blastp's pairwise report (-outfmt 0), byte-identical to blastp's for the
// default options of that format (descriptions and alignments of every hit, 60 columns per line).
//
// Contents:
//   CompAdjustMethod       the ", Method: ..." suffix of an HSP's score line (composition-based statistics)
//   PairwiseHsp            one HSP (score, bits, E-value, coordinates, edit script, method)
//   PairwiseSubjectHits    a subject with hits: defline, residues, HSPs in output order
//   PairwiseQuery          a query: defline, residues, SEG mask, ungapped Karlin block, search space
//   PairwiseOptions        the run-level facts (matrix name, gap costs, threshold, window, database)
//   PairwiseWriter         header(), query(), footer(): the report's three parts
//   pairwise_hsp, pairwise_hits   conversions from the engine's Hsp / SubjectHits
//   subject_database_title the "Database:" title of blastp -subject
//   blast_wrap, blast_defline_title   the text rules below, exposed for tests
//
// Where the printed numbers come from (driver mapping, search.hpp / hsp.hpp names):
//   Query=, Length=                     PairwiseQuery::defline / residues.size()
//   " Score = B bits (S),  Expect = E"  Hsp::bit_score, Hsp::score, Hsp::evalue (+ the HSP's method)
//   Identities / Positives / Gaps       computed here from the edit script and the residues
//   first "Lambda K H a alpha" line     BlastpSetup::ungapped (lambda, K, H: the masked query's block),
//                                       a_un / alpha_un of stats::gumbel_params(matrix, gaps)
//   "Gapped" line                       stats::gapped_params(matrix, gaps) (== BlastpSetup::gapped) and
//                                       a / alpha / sigma of stats::gumbel_params(matrix, gaps)
//   Effective search space used         BlastpSetup::lengths.search_space
//   (with PairwiseOptions::old_fsc, -searchsp, both Karlin lines stop after H)
//   Neighboring words threshold         BlastpSetup::threshold (blastp_default_threshold for 0)
//   Window for multiple hits            BlastpOptions::window
//   lowercase query letters             BlastpSetup::mask (SEG)
//
// Rules (checked against blastp 2.12.0+ in tests/blast/test_pairwise.cpp):
// - Numbers: E-values as format_evalue (hsp.hpp) without its padding ("0.0", "7e-106", "3e-99", "0.002",
//   "0.16", "1.1", "28", "4496"); bit scores as format_tabular_bitscore (2.12 switches to %.3e above
//   99999, not 9999: 11609 prints as such), padding kept (" 9.6" in the score line and the table).
//   Percentages: 100 when equal, else min(99, (int)(0.5 + 100.0 * n / length)).
// - Deflines are passed as read (the whole header line after '>': blank runs matter). FASTA deflines
//   (every query; subjects in -subject mode) are cut here at their first control character (tab, \v,
//   \x01 ...: blastp's FASTA reader does that; a carriage return already ends the line for blastp, which
//   is the reader's concern). In database mode pass the title the database stores (makeblastdb turns a
//   tab into three blanks) and PairwiseOptions::database_title / posted_date from its .pin header (the
//   title defaults to the FASTA path given to makeblastdb). Query= prints the defline trimmed of
//   blanks and wrapped by blast_wrap(68) (NStr::Wrap, flat-file mode: breaks at the last blank, else the
//   last comma, else the last hyphen of the first 69 columns, else after 68 characters); an empty
//   defline prints "Query= " directly followed by "\nLength=".
// - Subject titles (description table; the "> " line in -subject mode) are blast_defline_title
//   (CDeflineGenerator::GenerateDefline for a protein without source data): trailing ".,;~ " removed
//   (unless that removes everything), empty -> "unnamed protein product", prefixes MAG / TPA / TSA /
//   UNVERIFIED removed (case-insensitive; 2.12 keeps MULTISPECIES: and TLS:), HTML references decoded to
//   UTF-8 (HTML 4.01's named entities, NCBI's ASCII names such as &excl; &Tab;, decimal and hex numeric
//   ones), trailing ",;~ " removed, then blanks compressed as
//   x_CleanAndCompress does (runs of spaces to one, no space after '(' or before ')', " ," -> ", ",
//   ",," -> ", ", "; " runs, ". [" and ", [" -> " ["). In database mode the ">" line prints the title as
//   stored (untouched, blanks kept), or "unnamed protein product" for an empty one.
// - Description rows: title cut to 65 characters + "..." when longer than 68, else padded to 68; then
//   two blanks, the first HSP's bit score padded to the widest (at least 6), two blanks, its E-value
//   padded to the widest (at least 5).
// - "> " (-subject) or ">" (database) then the title wrapped as showalign's s_WrapOutputLine does: after
//   character 60, 120, ... of the title the line breaks after the next whitespace character, which
//   stays at the end of the line (so a title ending in a blank after a break gives an empty line).
// - Alignment lines: "Query  " / "Sbjct  ", the first residue's 1-based position left-justified in
//   (digits of the larger 0-based last position of the two rows) + 2 columns (a longer start runs into the
//   letters: "Sbjct  100 P  100"), up to 60 letters, two blanks, the last
//   residue's position; a line without residues in that row prints blanks for the start and no end. The
//   middle line is the subject letter for identical letters, '+' for a positive score of the display
//   matrix (the named matrix over ARNDCQEGHILKMFPSTWYVBZX, '*' against others -4, U/C pairs scored as
//   C/C, other letters never positive), else a blank, full width. Query letters inside the SEG mask
//   print in lowercase; identities, positives and the middle line use the unmasked letters.
// - Databases made with -parse_seqids: the rows and ">" lines print "ACCESSION title" (PairwiseSubjectHits::
//   heading_id; the ">" line wraps the title as if it stood alone).
// - Not handled: -parse_deflines ids of FASTA subjects, databases with several deflines per sequence,
//   -line_length / -html / -show_gis, titles that are not UTF-8
//   (blastp re-encodes them), numeric references beyond U+10FFFF, queries whose ungapped
//   statistics cannot be computed, and the titles of only punctuation that crash blastp's
//   x_CleanAndCompress (here the scan stops at the end of the string).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blast/gapped.hpp"
#include "blast/hsp.hpp"
#include "blast/seg.hpp"
#include "stats/blast_stats.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

class DisplayMatrix;  // display_matrix.hpp

// What blastp prints after an HSP's E-value (blast_kappa.c's comp_adjustment_method): nothing without
// composition-based statistics; with -comp_based_stats 1/2/3, ", Method: Composition-based stats." for
// an HSP scored with the scaled standard matrix and ", Method: Compositional matrix adjust." for one
// scored with an adjusted matrix.
enum class CompAdjustMethod : std::uint8_t { kNone = 0, kCompositionBasedStats = 1, kMatrixAdjust = 2 };

// One HSP: coordinates 0-based, ends exclusive, with its edit script (GappedAlignment conventions).
struct PairwiseHsp {
  int score = 0;
  double bits = 0;
  double evalue = 0;
  int q_start = 0, q_end = 0;
  int s_start = 0, s_end = 0;
  std::vector<EditRun> script;
  CompAdjustMethod method = CompAdjustMethod::kNone;
};

// A subject with hits, in report order; hsps non-empty, in report order (the first one is the
// description row's).
struct PairwiseSubjectHits {
  std::string_view defline;  // -subject: the FASTA defline without '>'; database: the stored title
  Residues residues;         // the whole subject (protein codes)
  std::vector<PairwiseHsp> hsps;
  // Database made with -parse_seqids: defline is "ID title" (BlastDefline::report_line) and this the ID;
  // the ">" line prints the ID, a blank, then the title wrapped as a title of its own.
  std::string_view heading_id;
};

struct PairwiseQuery {
  std::string_view defline;        // FASTA defline without '>'
  Residues residues;               // unmasked protein codes
  std::span<const Interval> mask;  // SEG intervals (BlastpSetup::mask), shown in lowercase
  stats::KarlinParams ungapped;    // BlastpSetup::ungapped: lambda, K, H
  std::int64_t search_space = 0;   // BlastpSetup::lengths.search_space
};

struct PairwiseOptions {
  GapCosts gaps{11, 1};
  int threshold = 11;          // BlastpSetup::threshold
  std::string threshold_text;  // when set, printed instead: -threshold as given (blastp prints "11.5")
  int window = 40;             // BlastpOptions::window
  // -subject (true): "> " subject lines with cleaned titles, "Posted date:  Unknown". Database (false):
  // ">" lines with the stored titles.
  bool subject_mode = true;
  std::string database_title;  // subject_database_title(path) or the database's title
  std::int64_t database_sequences = 0;
  std::int64_t database_letters = 0;
  std::string posted_date = "Unknown";  // a database's date as stored ("Nov 21, 2026  7:20 PM")
  // Subjects listed in the description table and subjects whose alignments are shown: blastp's defaults
  // without -max_target_seqs (-num_descriptions 500, -num_alignments 250); with -max_target_seqs N blastp
  // shows N of each (checked for N = 100 and 300 and the defaults; values below 1 are not supported).
  std::size_t num_descriptions = 500;
  std::size_t num_alignments = 250;
  std::size_t line_length = 60;  // alignment letters per line (-line_length, >= 1)
  // BlastpOptions::old_fsc (-searchsp): the Karlin blocks print Lambda, K and H only (no Gumbel block).
  bool old_fsc = false;
};

class PairwiseWriter {
 public:
  // matrix: the search matrix (its name is printed; its scores decide positives). Throws Error(kUsage)
  // when BLAST+ has no gapped or Gumbel parameters for (matrix, gaps).
  PairwiseWriter(const ScoringMatrix& matrix, PairwiseOptions options);

  // "BLASTP 2.12.0+", the references and the "Database:" block.
  std::string header() const;
  // One query's block: Query=, descriptions (or "***** No hits found *****"), alignments, Karlin blocks
  // and the effective search space. Throws Error(kInternal) for an HSP whose coordinates do not match its
  // edit script or the sequences.
  std::string query(const PairwiseQuery& query, std::span<const PairwiseSubjectHits> hits) const;
  // After all queries: the database report and the matrix, gap, threshold and window lines.
  std::string footer() const;

 private:
  ScoringMatrix matrix_;
  std::shared_ptr<const DisplayMatrix> display_;  // positives and the middle line (built once: 64 KB)
  PairwiseOptions options_;
  stats::KarlinParams gapped_;
  stats::GumbelParams gumbel_;
};

PairwiseHsp pairwise_hsp(const Hsp& hsp, CompAdjustMethod method = CompAdjustMethod::kNone);

// The engine's hit lists (search.hpp: oid = index into subjects, deflines[oid] its defline, heading_ids[oid]
// when given its PairwiseSubjectHits::heading_id) as writer input, order kept. The residues and texts must
// outlive the result.
std::vector<PairwiseSubjectHits> pairwise_hits(const std::vector<SubjectHits>& hits,
                                               std::span<const Residues> subjects,
                                               std::span<const std::string_view> deflines,
                                               CompAdjustMethod method = CompAdjustMethod::kNone,
                                               std::span<const std::string_view> heading_ids = {});

// "User specified sequence set (Input: <path as given>)." (with the final period of outfmt 0).
std::string subject_database_title(std::string_view subject_path);

// NStr::Wrap(text, width, fWrap_FlatFile) as blastp uses it for Query= and Database: (rules above).
std::vector<std::string> blast_wrap(std::string_view text, std::size_t width);
// The cleaned title of a protein sequence (CDeflineGenerator rules above).
std::string blast_defline_title(std::string_view title);

}  // namespace warpsearch::blast
