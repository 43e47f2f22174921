// tabular.hpp: BLAST+ 2.12 blastp tabular output (-outfmt 6 and 7) with custom field lists, byte-identical
// to blastp's for the default (no -parse_deflines) mode.
//
// Contents:
//   TabularField, TabularFormat, parse_tabular_format   the -outfmt spec ("6", "7 qseqid sseqid ...", "std").
//   field_name, field_description, supported_tabular_fields   names and the outfmt 7 "# Fields:" texts.
//   format_tabular_evalue, format_tabular_bitscore   BLAST's number formats (rules below).
//   TabularSequence, TabularHsp, TabularHit   the plain input a driver fills.
//   TabularWriter   formats one query's hits (outfmt 7: with its comment block) and the final footer.
//   subject_database_label   the "# Database:" text of blastp -subject.
//
// Rules (checked against blastp 2.12.0+ in tests/blast/test_tabular.cpp):
// - Ids: without -parse_deflines every id form (qseqid, qacc, qaccver, sallseqid, sallacc and the subject
//   forms) is the defline's first whitespace-delimited token as written ("sp|P69905|HBA_HUMAN" stays whole);
//   qgi, sgi, sallgi print 0. (-parse_deflines accession parsing is not implemented.)
// - E-value: < 1e-180 -> "0.0"; < 0.0009 -> %.2e; < 0.1 -> %.3f; < 1 -> %.2f; < 10 -> %.1f; else %.0f.
//   (No "%2.0le" branch below 1e-99 as in the pairwise report: 4.42e-115 prints as such.) No padding.
// - Bit score (CAlignFormatUtil::GetScoreString): > 99999 -> %5.3e; > 99.9 -> the value TRUNCATED to an
//   integer, printed %3ld (so 99.95 prints " 99"); else %4.1f (padded: " 9.6").
// - pident = 100.0 * nident / length as %.3f; ppos = 100.0 * positive / length as %.2f; mismatch =
//   length - nident - gaps; positive counts aligned pairs with a positive matrix score; identity compares
//   residue codes (as BTOP does).
// - qcovhsp = round(100 * (qend - qstart + 1) / qlen), qcovs the same on the union of the query ranges of
//   all HSPs of that subject (for this query); round(x) = (int)(x + 0.5) if x < 99 else (int)x, so 380/381
//   prints 99, not 100.
// - Subjects of a BLAST+ database made with -parse_seqids print the ids and title the database stores
//   (TabularSequence::ids: sacc "P69905" from "sp|P69905|HBA_HUMAN", stitle without the id).
// - Not handled: -parse_deflines id parsing of queries and FASTA subjects (qacc "P69905" from
//   "sp|P69905|..."), blastp's Query_N / Subject_N names for deflines without an id, outfmt 10 (CSV).
// - qframe, sframe print 1 and frames "1/1" for blastp (as 2.12 does).
// - Taxonomy fields (staxid, ssciname, scomname, sblastname, sskingdom and the plural forms), sstrand and
//   qcovus print "N/A", as blastp 2.12 does without taxdb / taxonomy in the database (qcovus: N/A both with
//   -subject and -db; it is blastn-only), except staxids, which prints "0" for a database (no tax ids).
//   stitle / salltitles: "N/A" with -subject; with a database made by makeblastdb without -parse_seqids, the
//   whole defline as written (id included, trailing blanks kept).
// - Letters (qseq, sseq, btop) are those of the matrix's alphabet (protein for blastp; swsearch also DNA).
// - outfmt 7 per query: "# BLASTP 2.12.0+" (TabularOptions::program), "# Query: <defline up to its first
// control character, trailing blanks
//   removed>", "# Database: <label>", then when there are hits "# Fields: <descriptions joined by ', '>",
//   then "# N hits found" (also for 0 and 1); after all queries "# BLAST processed N queries"
//   (TabularOptions::processed_by).
// - Unknown field names are refused (blastp ignores them) with an Error(kUsage) listing the supported ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blast/gapped.hpp"
#include "blast/subject_ids.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

class DisplayMatrix;  // display_matrix.hpp

// Every field blastp 2.12 lists for -outfmt 6/7/10 (blastp -help), in that order.
enum class TabularField : std::uint8_t {
  kQseqid,
  kQgi,
  kQacc,
  kQaccver,
  kQlen,
  kSseqid,
  kSallseqid,
  kSgi,
  kSallgi,
  kSacc,
  kSaccver,
  kSallacc,
  kSlen,
  kQstart,
  kQend,
  kSstart,
  kSend,
  kQseq,
  kSseq,
  kEvalue,
  kBitscore,
  kScore,
  kLength,
  kPident,
  kNident,
  kMismatch,
  kPositive,
  kGapopen,
  kGaps,
  kPpos,
  kFrames,
  kQframe,
  kSframe,
  kBtop,
  kStaxid,
  kSsciname,
  kScomname,
  kSblastname,
  kSskingdom,
  kStaxids,
  kSscinames,
  kScomnames,
  kSblastnames,
  kSskingdoms,
  kStitle,
  kSalltitles,
  kSstrand,
  kQcovs,
  kQcovhsp,
  kQcovus,
};

struct TabularFormat {
  int outfmt = 6;                    // 6 (plain), 7 (with comment lines) or 10 (comma-separated)
  std::vector<TabularField> fields;  // in output order, each at most once
  std::string delimiter = "\t";      // between the fields: a tab, for 10 a comma, or "delim=" (below)
};

// "6", "7", "10", "6 qseqid sseqid ...", "7 std qlen" (fields separated by blanks; "std" expands to the
// default 12 columns qaccver saccver pident length mismatch gapopen qstart qend sstart send evalue bitscore;
// also the list for a format number alone). A repeated field is dropped (the first occurrence stays), as
// blastp does. As in blastp, "delim=TEXT" right after the number separates the fields by TEXT instead (an
// empty TEXT keeps the format's own); values are never quoted. Throws Error(kUsage) for another format number
// or an unsupported field (the message lists the supported).
TabularFormat parse_tabular_format(std::string_view spec);

std::string_view field_name(TabularField field);
std::string_view field_description(TabularField field);  // outfmt 7 "# Fields:" text
std::string supported_tabular_fields();                  // space-separated names

std::string format_tabular_evalue(double evalue);
std::string format_tabular_bitscore(double bits);

// A query or subject: its FASTA defline (without '>') and its residues (protein codes, alphabet.hpp).
struct TabularSequence {
  std::string_view defline;
  Residues residues;
  // A subject of a -parse_seqids BLAST+ database: its id and title columns from here (subject_ids.hpp).
  const ParsedSubjectIds* ids = nullptr;
  // The id of a sequence whose defline has none (used only then): a query's (BlastpQuery::unnamed_id,
  // "Query_N", printed for qseqid, qacc and qaccver); a -subject record's "Subject_N" (sallseqid and sallacc;
  // sseqid, sacc and saccver print "unnamed", as blastp does).
  std::string_view unnamed_id{};
};

// One HSP: coordinates 0-based, ends exclusive, with its edit script (GappedAlignment conventions).
struct TabularHsp {
  int score = 0;
  double bits = 0;
  double evalue = 0;
  int q_start = 0, q_end = 0;
  int s_start = 0, s_end = 0;
  std::vector<EditRun> script;
};

// An HSP of one query against subjects[subject] (an index into the span given to TabularWriter::query).
struct TabularHit {
  std::size_t subject = 0;
  TabularHsp hsp;
};

struct TabularOptions {
  std::string database_label;  // "# Database:" text (subject_database_label for -subject)
  bool subject_mode = true;    // -subject (stitle / salltitles print N/A); false: a BLAST database
  // outfmt 7's program lines: "# <program>" opens each query's comment block and "# <processed_by>
  // processed N queries" ends the output. The defaults are blastp 2.12's; other commands (swsearch) name
  // themselves.
  std::string program = "BLASTP 2.12.0+";
  std::string processed_by = "BLAST";
};

class TabularWriter {
 public:
  // The matrix decides "positive": for protein BLAST's formatter rule (the same letter, or a score above
  // zero in display_matrix.hpp's matrix), for DNA a score above zero.
  TabularWriter(TabularFormat format, const ScoringMatrix& matrix, TabularOptions options);

  // One query's output in blastp's order of hits as given (blastp: subjects by best E-value, HSPs within a
  // subject by E-value); outfmt 7 adds the query's comment block. Throws Error(kInternal) for a hit whose
  // coordinates do not match its edit script.
  std::string query(const TabularSequence& query, std::span<const TabularSequence> subjects,
                    std::span<const TabularHit> hits) const;

  // After all queries: outfmt 7's "# BLAST processed N queries" line; empty for outfmt 6.
  std::string footer(std::size_t queries) const;

 private:
  TabularFormat format_;
  ScoringMatrix matrix_;                          // a copy: callers may pass a temporary
  std::shared_ptr<const DisplayMatrix> display_;  // protein matrices only
  TabularOptions options_;
};

// "User specified sequence set (Input: <path as given>)"; for -db the label is the database name as given.
std::string subject_database_label(std::string_view subject_path);

// A FASTA defline as blastp's FASTA reader keeps it: up to its first control character (a tab ends it).
std::string_view fasta_defline(std::string_view defline);
// The first blank-delimited token of a defline (blastp's id without -parse_deflines).
std::string_view defline_id(std::string_view defline);
// The text without its trailing blanks (spaces and tabs).
std::string_view trim_right(std::string_view text);

// What one HSP's edit script gives: alignment length, identities (equal residue codes), positives (protein:
// display's rule, display_matrix.hpp; without a display matrix, a score above zero), gap letters, gap opens,
// the aligned letters ('-' in gaps) and the BTOP string. Throws Error(kInternal) when the script does not
// match the HSP's coordinates or the sequences.
struct HspStats {
  int length = 0, nident = 0, positive = 0, gaps = 0, gap_opens = 0;
  std::string qseq, sseq, btop;
};
HspStats hsp_stats(const TabularHsp& hsp, Residues query, Residues subject, const ScoringMatrix& matrix,
                   const DisplayMatrix* display);

}  // namespace warpsearch::blast
