// xml.hpp: BLAST+ 2.12 blastp XML output (-outfmt 5), byte-identical to blastp's (the NCBI BlastOutput DTD as
// blastp 2.12 writes it incrementally: one <Iteration> per query).
//
// Contents:
//   XmlOptions, XmlQuery, XmlSubject, XmlSubjectHits   the plain input a driver fills
//   XmlWriter    the preamble (with the first query), one query's <Iteration>, the closing lines
//   xml_escape   text as blastp's XML writer escapes it;  xml_double   its numbers
//
// Rules (checked against blastp 2.12.0+ in tests/cli/test_cli.cpp, BlastpCli.XmlSameAsBlastp):
// - The preamble names the first query (BlastOutput_query-ID/-def/-len) and the parameters: the matrix,
//   -evalue (Parameters_expect), the gap costs and Parameters_filter ("L;" with -seg, else "F").
//   BlastOutput_db is the -db name as given, empty with -subject.
// - Queries: Iteration_query-ID "Query_N" (N the query's 1-based number in the file, whatever its defline),
//   Iteration_query-def the defline (up to its first control character, without trailing blanks; "unnamed
//   protein product" when empty).
// - Subjects (Hit_id, Hit_def, Hit_accession): a database made without -parse_seqids: "gnl|BL_ORD_ID|<oid>",
//   the stored title, "<oid>"; with -parse_seqids: the stored ids, the title without them, the best id's
//   accession without version (a general id: its tag alone); -subject: the defline's first token, the whole
//   defline, "Subject_N" (N the subject's 1-based number in the file; a record without a name: "unnamed",
//   "unnamed protein product"). The driver fills these (src/cli/cmd_blastp.cpp).
// - HSPs: bit score and E-value rounded to 6 significant digits, then written as every other number
//   (xml_double), an E-value below 1e-180 as 0; 1-based coordinates, frames 0; identities and positives
//   counted on the unmasked query (display_matrix.hpp's positives); Hsp_qseq shows residues masked by -seg as
//   X; the midline holds the letter for an identity, '+' for a positive and a blank otherwise.
// - Iteration_stat: -db: the database's sequences and letters; -subject: 0 and 0; then the query's length
//   adjustment, effective search space and the gapped Karlin block's K, lambda and H. A query without hits
//   gets the message "No hits found".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blast/gapped.hpp"
#include "blast/seg.hpp"
#include "blast/tabular.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

class DisplayMatrix;  // display_matrix.hpp

struct XmlOptions {
  bool subject_mode = false;  // -subject
  std::string database;       // BlastOutput_db: the -db name as given (not printed with -subject)
  double evalue = 10;         // Parameters_expect
  GapCosts gaps{11, 1};
  bool seg = false;                     // Parameters_filter "L;" (else "F")
  std::int64_t database_sequences = 0;  // Statistics_db-num / db-len (-db only)
  std::int64_t database_letters = 0;
};

struct XmlQuery {
  std::uint64_t number = 1;        // 1-based number in the query file
  std::string_view defline;        // FASTA defline without '>'
  Residues residues;               // unmasked protein codes
  std::span<const Interval> mask;  // -seg intervals (shown as X in Hsp_qseq)
  stats::KarlinParams gapped;      // Statistics_kappa, lambda, entropy
  int length_adjustment = 0;       // Statistics_hsp-len
  std::int64_t search_space = 0;   // Statistics_eff-space
};

struct XmlSubject {
  std::string id;         // Hit_id
  std::string def;        // Hit_def
  std::string accession;  // Hit_accession
  Residues residues;
};

// A subject with hits, in report order; its HSPs in report order.
struct XmlSubjectHits {
  XmlSubject subject;
  std::vector<TabularHsp> hsps;
};

class XmlWriter {
 public:
  // The matrix decides positives (display_matrix.hpp) and is named in the parameters.
  XmlWriter(const ScoringMatrix& matrix, XmlOptions options);

  // Everything before the first <Iteration>: the XML declaration, the DOCTYPE, the program, the reference,
  // the database, the first query and the parameters.
  std::string header(std::string_view first_defline, std::size_t first_length) const;
  // One query's <Iteration>. Throws Error(kInternal) for an HSP whose coordinates do not match its edit
  // script or the sequences.
  std::string query(const XmlQuery& query, std::span<const XmlSubjectHits> hits) const;
  // After the last query.
  std::string footer() const;

 private:
  ScoringMatrix matrix_;
  std::shared_ptr<const DisplayMatrix> display_;  // positives (built once: 64 KB)
  XmlOptions options_;
};

// &, <, >, " and ' as entities; bytes outside printable ASCII as &#xHH; (blastp writes ASCII XML).
std::string xml_escape(std::string_view text);
// A double as blastp's XML writer prints it (%.15g: 10, 0.0025, 1e-05, 3.83253e-116, 3171150).
std::string xml_double(double value);

}  // namespace warpsearch::blast
