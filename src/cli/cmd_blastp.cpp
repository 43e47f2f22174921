// cmd_blastp.cpp: `warpsearch blastp`: protein queries against a protein database or a set of subject
// sequences with BLAST+ 2.12 blastp's options, defaults and outputs (library: src/blast/engine.hpp, the
// driver; src/blast/pairwise.hpp, -outfmt 0; src/blast/tabular.hpp, -outfmt 6/7).
//
// Options keep BLAST+'s spellings and may be written with one dash as in BLAST+ (-query, -evalue=1e-5;
// main.cpp rewrites them to CLI11's --name before parsing) or two. Options blastp has but this command
// does not implement (-html, -remote, -culling_limit, ...) are accepted by the parser and refused with a
// usage error naming them, so that a BLAST+ command line fails clearly rather than as an unknown option.
//
// Data flow: option checks that need no data (matrix, gap costs against BLAST+'s tables, -outfmt, -seg,
// -comp_based_stats) come first; then the output is created (an unwritable -out fails before any work),
// the subject-set totals are read once (database_totals), and the queries are read (protein, strict
// letters) in batches of at most kBatchQueries queries or kBatchResidues residues. Each batch is one
// blastp_run; its queries' output is formatted and written in query order before the next batch is read
// (outfmt 0: the report's header before the first batch and its footer after the last; outfmt 7: the
// "# BLAST processed" line after the last). The output is an OutputFile committed at the end, so a failed
// run leaves no partial file. Under mpirun/srun (docs/MPI.md) every rank reads the options, totals and
// queries; with --mpi-split db blastp_run splits the database over the ranks, with --mpi-split queries each
// rank searches every N-th query batch against the whole database and formats its output; rank 0 alone
// creates and writes the output.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blast/composition.hpp"
#include "blast/engine.hpp"
#include "blast/kappa.hpp"
#include "blast/lookup.hpp"
#include "blast/pairwise.hpp"
#include "blast/search.hpp"
#include "blast/tabular.hpp"
#include "blast/xml.hpp"
#include "cli/commands.hpp"
#include "core/blast_db.hpp"
#include "dist/bytes.hpp"
#include "stats/blast_tables.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::cli {
namespace {

// A query batch holds at most this many queries or residues (whichever is reached first; a longer single
// query is a batch of its own).
constexpr std::size_t kBatchQueries = 10000;
constexpr std::size_t kBatchResidues = 8u << 20;
// With --mpi-split queries under MPI, batches are ten times smaller: each rank searches whole batches, so
// more batches balance the ranks better (at the cost of one database pass per batch).
constexpr std::size_t kSplitBatchQueries = kBatchQueries / 10;
constexpr std::size_t kSplitBatchResidues = kBatchResidues / 10;

// blastp options this command parses but does not implement: (name, takes a value).
struct UnsupportedOption {
  const char* name;
  bool takes_value;
};
constexpr UnsupportedOption kUnsupported[] = {
    {"import_search_strategy", true},
    {"export_search_strategy", true},
    {"gilist", true},
    {"seqidlist", true},
    {"negative_gilist", true},
    {"negative_seqidlist", true},
    {"taxids", true},
    {"negative_taxids", true},
    {"taxidlist", true},
    {"negative_taxidlist", true},
    {"ipglist", true},
    {"negative_ipglist", true},
    {"entrez_query", true},
    {"db_soft_mask", true},
    {"db_hard_mask", true},
    {"subject_loc", true},
    {"query_loc", true},
    {"culling_limit", true},
    {"best_hit_overhang", true},
    {"best_hit_score_edge", true},
    {"subject_besthit", false},
    {"lcase_masking", false},
    {"parse_deflines", false},
    {"show_gis", false},
    {"html", false},
    {"ungapped", false},
    {"remote", false},
    {"use_sw_tback", false},
};

struct BlastpCliOptions {
  std::string query = "-";
  std::string db;
  std::string subject;
  std::string out = "-";
  std::string task = "blastp";
  double evalue = 10;
  std::string matrix = "BLOSUM62";
  int gapopen = 0;
  int gapextend = 0;
  int word_size = 3;
  double threshold = 0;
  std::string comp_based_stats = "2";
  std::string seg = "no";
  int max_target_seqs = 500;
  bool exact_max_target_seqs = false;
  bool timing = false;
  int max_hsps = 0;
  double qcov_hsp_perc = 0;
  // Accepted where they change nothing here (check_options): -soft_masking without -seg, -mt_mode 0 (or 1 on
  // one thread), -sorthits / -sorthsps 0, or any value with a format they do not apply to.
  std::string soft_masking = "false";
  int mt_mode = 0, sorthits = 0, sorthsps = 0;
  const CLI::Option* soft_masking_opt = nullptr;
  const CLI::Option* mt_mode_opt = nullptr;
  const CLI::Option* sorthits_opt = nullptr;
  const CLI::Option* sorthsps_opt = nullptr;
  std::int64_t dbsize = 0;    // -dbsize: 0 = the database's length
  std::int64_t searchsp = 0;  // -searchsp: 0 = computed (given at all: BLAST's old statistics)
  CLI::Option* searchsp_opt = nullptr;
  double xdrop_ungap = 0;
  double xdrop_gap = 0;
  double xdrop_gap_final = 0;
  int window_size = 0;  // 0: the matrix's default (blastp_default_window)
  int num_threads = 1;
  std::string outfmt = "0";
  int num_descriptions = 500;  // -outfmt 0: subjects listed / aligned (blastp's defaults)
  int num_alignments = 250;
  int line_length = 60;  // -outfmt 0: alignment letters per line
  // Set when the option was given (CLI11 counts), to tell defaults from explicit values.
  const CLI::Option* db_opt = nullptr;
  const CLI::Option* subject_opt = nullptr;
  const CLI::Option* gapopen_opt = nullptr;
  const CLI::Option* gapextend_opt = nullptr;
  const CLI::Option* threshold_opt = nullptr;
  const CLI::Option* window_size_opt = nullptr;
  const CLI::Option* xdrop_ungap_opt = nullptr;
  const CLI::Option* xdrop_gap_opt = nullptr;
  const CLI::Option* xdrop_gap_final_opt = nullptr;
  const CLI::Option* max_target_seqs_opt = nullptr;
  const CLI::Option* num_descriptions_opt = nullptr;
  const CLI::Option* num_alignments_opt = nullptr;
  const CLI::Option* line_length_opt = nullptr;
  const CLI::Option* max_hsps_opt = nullptr;
  const CLI::Option* num_threads_opt = nullptr;
  const CLI::Option* global_threads_opt = nullptr;  // the global --threads
  std::vector<const CLI::Option*> unsupported;
};

// -comp_based_stats as blastp reads it (its first letter decides): 0/F/f off, 1, 2/T/t/D/d (the default
// for blastp), 3. Anything else is refused (blastp silently treats it as 0).
int parse_comp_based_stats(const std::string& text) {
  if (text == "0" || text == "F" || text == "f") return 0;
  if (text == "1") return 1;
  if (text == "2" || text == "T" || text == "t" || text == "D" || text == "d") return 2;
  if (text == "3") return 3;
  throw Error(
      ErrorKind::kUsage,
      fmt::format("-comp_based_stats {}: expected 0, 1, 2 or 3 (F = 0; T and D = 2, the default)", text));
}

// -seg: yes (SEG with its default window 12, locut 2.2, hicut 2.5), no, or those three numbers.
bool parse_seg(const std::string& text) {
  if (text == "yes") return true;
  if (text == "no") return false;
  std::istringstream in(text);
  int window = 0;
  double locut = 0, hicut = 0;
  std::string rest;
  if (in >> window >> locut >> hicut && !(in >> rest) && window == 12 && locut == 2.2 && hicut == 2.5)
    return true;
  throw Error(
      ErrorKind::kUsage,
      fmt::format("-seg {}: expected yes or no (SEG parameters other than the default '12 2.2 2.5' are "
                  "not supported)",
                  text));
}

// The -matrix value as a ScoringMatrix: a built-in name or an NCBI-format matrix file.
ScoringMatrix load_matrix(const std::string& name) {
  if (!ScoringMatrix::is_builtin(name) && !std::filesystem::exists(name)) {
    throw Error(
        ErrorKind::kUsage,
        fmt::format("-matrix {}: not a supported matrix; supported matrices are: {} (or an NCBI-format "
                    "matrix file)",
                    name, fmt::join(ScoringMatrix::builtin_names(), ", ")));
  }
  ScoringMatrix matrix = ScoringMatrix::load(name);
  if (matrix.alphabet() != AlphabetKind::kProtein)
    throw Error(ErrorKind::kUsage, fmt::format("-matrix {}: blastp needs a protein matrix", name));
  return matrix;
}

// BLAST+'s table of (gap open, gap extend) pairs with statistics for the matrix: the table of the built-in
// matrix with the same scores (as the statistics look it up), or nullptr.
const stats::blast_tables::ProteinMatrixTable* statistics_table(const ScoringMatrix& matrix) {
  for (const std::string_view name : ScoringMatrix::builtin_names()) {
    if (!matrix.same_scores(ScoringMatrix::builtin(name))) continue;
    for (const auto& table : stats::blast_tables::protein_tables()) {
      if (table.name == name) return &table;
    }
  }
  return nullptr;
}

// Refuses gap costs BLAST+ has no statistics for, listing the pairs it has (as blastp does).
void check_gap_costs(const ScoringMatrix& matrix, GapCosts gaps) {
  const auto* table = statistics_table(matrix);
  if (table == nullptr) {
    throw Error(
        ErrorKind::kUsage,
        fmt::format("-matrix {}: BLAST+ has statistics only for the built-in matrices ({}); this matrix "
                    "scores like none of them",
                    matrix.name(), fmt::join(ScoringMatrix::builtin_names(), ", ")));
  }
  std::vector<std::string> pairs;
  for (const auto& row : table->gapped) {
    if (row.open == gaps.open && row.extend == gaps.extend) return;
    pairs.push_back(fmt::format("{}/{}", row.open, row.extend));
  }
  throw Error(
      ErrorKind::kUsage,
      fmt::format("gap costs -gapopen {} -gapextend {} are not supported for {}; supported (open/extend) "
                  "values are: {}",
                  gaps.open, gaps.extend, table->name, fmt::join(pairs, ", ")));
}

// The report writer of -outfmt: "0" (pairwise) or a tabular spec ("6", "7", "6 qseqid ..."); the other
// BLAST+ formats are refused. It formats one batch of queries at a time, in query order.
class ReportWriter {
 public:
  struct Setup {
    const ScoringMatrix* matrix = nullptr;
    const blast::BlastpOptions* search = nullptr;
    bool subject_mode = false;
    std::string target;  // the -subject path or the -db name, as given
    blast::DatabaseTotals totals;
    // -max_target_seqs when given: blastp then lists and aligns that many subjects in -outfmt 0 (else
    // -num_descriptions 500 / -num_alignments 250).
    int report_subjects = 0;
    int num_descriptions = 500, num_alignments = 250;  // -num_descriptions / -num_alignments (outfmt 0)
    int line_length = 60;                              // -line_length (outfmt 0)
    std::string threshold_text;                        // -threshold as given ("11.5"), empty when not given
  };

  ReportWriter(const std::string& spec, const Setup& setup) : subject_mode_(setup.subject_mode) {
    std::istringstream in(spec);
    std::string number;
    in >> number;
    if (number == "0") {
      pairwise_.emplace(*setup.matrix, pairwise_options(setup));
    } else if (number == "5") {
      if (in >> number)
        throw Error(ErrorKind::kUsage, fmt::format("-outfmt '{}': format 5 (XML) takes no field list", spec));
      blast::XmlOptions options;
      options.subject_mode = setup.subject_mode;
      options.database = setup.target;
      options.evalue = setup.search->evalue;
      options.gaps = setup.search->gaps;
      options.seg = setup.search->seg;
      options.database_sequences = setup.totals.sequences;
      options.database_letters = setup.totals.length;
      xml_.emplace(*setup.matrix, std::move(options));
    } else if (number == "6" || number == "7" || number == "10") {
      blast::TabularOptions options;
      options.subject_mode = setup.subject_mode;
      options.database_label =
          setup.subject_mode ? blast::subject_database_label(setup.target) : setup.target;
      tabular_.emplace(blast::parse_tabular_format(spec), *setup.matrix, options);
    } else {
      throw Error(
          ErrorKind::kUsage,
          fmt::format(
              "-outfmt '{}': supported formats are 0 (pairwise), 5 (XML), 6 (tabular), 7 (tabular "
              "with comment lines) and 10 (comma-separated), with an optional field list for 6, 7 and 10",
              spec));
    }
  }

  // Before the first query's results; the XML preamble names the first query (its defline and length).
  std::string header(std::string_view first_defline, std::size_t first_length) const {
    if (xml_) return xml_->header(first_defline, first_length);
    return pairwise_ ? pairwise_->header() : std::string();
  }
  std::string footer(std::size_t queries) const {
    if (xml_) return xml_->footer();
    return pairwise_ ? pairwise_->footer() : tabular_->footer(queries);
  }

  // One batch's output in query order: each query's hits with their subjects. first: the 0-based number of
  // the batch's first query in the query file.
  std::string batch(const std::vector<blast::BlastpQuery>& queries, const blast::BlastpRunResult& result,
                    std::uint64_t first) const {
    std::string text;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const blast::BlastpQueryResult& r = result.queries[q];
      if (xml_) {
        text += xml_query(queries[q], r, result, first + q + 1);
        continue;
      }
      // The writers take this query's subjects as a list; hits refer to them by index (SubjectHits::oid).
      std::vector<const blast::BlastpSubject*> subjects;
      std::vector<std::string> unnamed_ids;  // blastp's "Subject_N" of a -subject record without a name
      std::vector<blast::SubjectHits> hits = r.hits;
      for (blast::SubjectHits& list : hits) {
        const blast::BlastpSubject& s = result.subjects.at(list.oid);
        subjects.push_back(&s);
        // The tabular writer prints it for a subject whose defline has no id.
        unnamed_ids.push_back(subject_mode_ && !s.ids ? fmt::format("Subject_{}", list.oid + 1)
                                                      : std::string());
        list.oid = static_cast<int>(subjects.size() - 1);
      }
      text += pairwise_ ? pairwise_query(queries[q], r, subjects, hits)
                        : tabular_query(queries[q], subjects, unnamed_ids, hits);
    }
    return text;
  }

 private:
  static blast::PairwiseOptions pairwise_options(const Setup& setup) {
    blast::PairwiseOptions options;
    options.gaps = setup.search->gaps;
    options.threshold = setup.search->threshold >= 0 ? setup.search->threshold
                                                     : blast::blastp_default_threshold(setup.matrix->name());
    options.threshold_text = setup.threshold_text;
    options.window =
        setup.search->window > 0 ? setup.search->window : blast::blastp_default_window(setup.matrix->name());
    options.subject_mode = setup.subject_mode;
    options.old_fsc = setup.search->old_fsc;
    options.line_length = static_cast<std::size_t>(setup.line_length);
    options.num_descriptions = static_cast<std::size_t>(setup.num_descriptions);
    options.num_alignments = static_cast<std::size_t>(setup.num_alignments);
    if (setup.report_subjects > 0) {
      options.num_descriptions = static_cast<std::size_t>(setup.report_subjects);
      options.num_alignments = static_cast<std::size_t>(setup.report_subjects);
    }
    // -db: a BLAST+ database's title and date as blastp prints them; another database (FASTA file, packed
    // database), which blastp cannot read, is titled by its name as given.
    if (setup.subject_mode) {
      options.database_title = blast::subject_database_title(setup.target);
    } else if (SequenceSource::is_blast_db(setup.target)) {
      const BlastDb db = BlastDb::open(setup.target);
      options.database_title = db.title();
      options.posted_date = db.date();
    } else {
      options.database_title = setup.target;
    }
    options.database_sequences = setup.totals.sequences;
    options.database_letters = setup.totals.length;
    return options;
  }

  // What blastp prints after an HSP's E-value: nothing without composition-based statistics; with them,
  // per HSP from the matrix rule its subject got (Blast_ChooseMatrixAdjustRule): rescaling the matrix
  // ("Composition-based stats.", mode 1 always) or a relative-entropy adjustment ("Compositional matrix
  // adjust."); a subject left unadjusted prints nothing.
  static blast::CompAdjustMethod compadjust_method(blast::compo::MatrixAdjustRule rule) {
    switch (rule) {
      case blast::compo::MatrixAdjustRule::kDontAdjust: return blast::CompAdjustMethod::kNone;
      case blast::compo::MatrixAdjustRule::kScaleOldMatrix:
        return blast::CompAdjustMethod::kCompositionBasedStats;
      default: return blast::CompAdjustMethod::kMatrixAdjust;
    }
  }

  std::string tabular_query(const blast::BlastpQuery& query,
                            const std::vector<const blast::BlastpSubject*>& subjects,
                            const std::vector<std::string>& unnamed_ids,
                            const std::vector<blast::SubjectHits>& hits) const {
    std::vector<blast::TabularSequence> sequences;
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      const blast::BlastpSubject* s = subjects[i];
      sequences.push_back({s->defline, s->residues, s->ids ? &*s->ids : nullptr, unnamed_ids[i]});
    }
    return tabular_->query({query.defline, query.residues, nullptr, query.unnamed_id}, sequences,
                           blast::tabular_hits(hits));
  }

  std::string pairwise_query(const blast::BlastpQuery& query, const blast::BlastpQueryResult& result,
                             const std::vector<const blast::BlastpSubject*>& subjects,
                             const std::vector<blast::SubjectHits>& hits) const {
    std::vector<blast::Residues> residues;
    std::vector<std::string_view> deflines, heading_ids;
    for (const blast::BlastpSubject* s : subjects) {
      residues.push_back(s->residues);
      deflines.push_back(s->ids ? std::string_view(s->ids->report_line) : std::string_view(s->defline));
      heading_ids.push_back(s->ids ? std::string_view(s->ids->report_id) : std::string_view());
    }
    blast::PairwiseQuery q;
    q.defline = query.defline;
    q.residues = query.residues;
    q.mask = result.setup.mask;
    q.ungapped = result.setup.ungapped;
    q.search_space = result.setup.lengths.search_space;
    std::vector<blast::PairwiseSubjectHits> subject_hits =
        blast::pairwise_hits(hits, residues, deflines, blast::CompAdjustMethod::kNone, heading_ids);
    for (std::size_t i = 0; i < subject_hits.size() && i < result.adjust_rules.size(); ++i)
      for (std::size_t k = 0; k < subject_hits[i].hsps.size() && k < result.adjust_rules[i].size(); ++k)
        subject_hits[i].hsps[k].method = compadjust_method(result.adjust_rules[i][k]);
    return pairwise_->query(q, subject_hits);
  }

  // -outfmt 5: the subjects as blastp's XML names them (xml.hpp): a -subject record by its first token, its
  // defline and "Subject_N" (a record without a name: "unnamed", "unnamed protein product"); a database made
  // with -parse_seqids by its stored ids, title and accession; any other database's subject by its ordinal
  // ("gnl|BL_ORD_ID|<oid>"), its stored title and the ordinal.
  std::string xml_query(const blast::BlastpQuery& query, const blast::BlastpQueryResult& r,
                        const blast::BlastpRunResult& result, std::uint64_t number) const {
    std::vector<blast::XmlSubjectHits> subjects;
    for (const blast::SubjectHits& list : r.hits) {
      const blast::BlastpSubject& s = result.subjects.at(list.oid);
      blast::XmlSubjectHits x;
      x.subject.residues = s.residues;
      if (subject_mode_) {
        x.subject.id = std::string(blast::defline_id(s.defline));
        x.subject.def = std::string(blast::trim_right(blast::fasta_defline(s.defline)));
        if (x.subject.id.empty()) {
          x.subject.id = "unnamed";
          x.subject.def = "unnamed protein product";
        }
        x.subject.accession = fmt::format("Subject_{}", list.oid + 1);
      } else if (s.ids) {
        x.subject.id = s.ids->seqid;
        x.subject.def = s.ids->plain_title;
        x.subject.accession = s.ids->xml_accession;
      } else {
        x.subject.id = fmt::format("gnl|BL_ORD_ID|{}", list.oid);
        x.subject.def = s.defline;
        x.subject.accession = std::to_string(list.oid);
      }
      for (const blast::TabularHit& h : blast::tabular_hits({list})) x.hsps.push_back(h.hsp);
      subjects.push_back(std::move(x));
    }
    blast::XmlQuery q;
    q.number = number;
    q.defline = query.defline;
    q.residues = query.residues;
    q.mask = r.setup.mask;
    q.gapped = r.setup.gapped;
    q.length_adjustment = r.setup.lengths.length_adjustment;
    q.search_space = r.setup.lengths.search_space;
    return xml_->query(q, subjects);
  }

  bool subject_mode_ = false;
  std::optional<blast::XmlWriter> xml_;
  std::optional<blast::TabularWriter> tabular_;
  std::optional<blast::PairwiseWriter> pairwise_;
};

// A query's defline: the header as written (blanks kept, but not the spaces before its name; the reports
// cut it at its first control character as blastp does), else name and description.
std::string defline_of(const Sequence& seq) {
  if (!seq.header.empty())
    return seq.header.substr(std::min(seq.header.find_first_not_of(' '), seq.header.size()));
  return seq.description.empty() ? seq.name : seq.name + " " + seq.description;
}

// One query batch's output (text, number of queries and HSPs, messages for stderr), as a query-split
// search sends it from the rank that searched the batch to rank 0 (dist/bytes.hpp encoding).
struct BatchOutput {
  std::string text;
  std::uint64_t queries = 0;
  std::uint64_t hsps = 0;
  std::string messages;
};

dist::Bytes encode_batch_output(const BatchOutput& b) {
  dist::ByteWriter w;
  w.str(b.text);
  w.integer(b.queries);
  w.integer(b.hsps);
  w.str(b.messages);
  return w.take();
}

BatchOutput decode_batch_output(std::span<const std::uint8_t> message) {
  dist::ByteReader r(message);
  BatchOutput b;
  b.text = r.str();
  b.queries = r.integer<std::uint64_t>();
  b.hsps = r.integer<std::uint64_t>();
  b.messages = r.str();
  r.expect_done();
  return b;
}

// The checks of the options that need no data; returns the -matrix. Throws Error(kUsage).
ScoringMatrix check_options(const BlastpCliOptions& o) {
  for (const CLI::Option* opt : o.unsupported) {
    if (opt->count() > 0) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("-{} is not supported by warpsearch blastp (see warpsearch blastp "
                              "--help for the options it implements)",
                              opt->get_lnames().front()));
    }
  }
  if (o.task != "blastp") {
    throw Error(
        ErrorKind::kUsage,
        fmt::format("-task {}: only the blastp task is supported (not blastp-fast or blastp-short)", o.task));
  }
  const bool have_db = o.db_opt->count() > 0, have_subject = o.subject_opt->count() > 0;
  if (have_db && have_subject)
    throw Error(ErrorKind::kUsage, "-db and -subject are incompatible: give one of them");
  if (!have_db && !have_subject)
    throw Error(ErrorKind::kUsage,
                "either a database (-db) or subject sequences (-subject) must be specified");
  const std::string& target = have_db ? o.db : o.subject;
  if (target == "-") {
    throw Error(
        ErrorKind::kUsage,
        fmt::format("-{} - : the subjects are read twice (totals, then the search), so they cannot be stdin",
                    have_db ? "db" : "subject"));
  }
  if (!(o.evalue > 0)) throw Error(ErrorKind::kUsage, fmt::format("-evalue {}: must be > 0", o.evalue));
  if (o.word_size < 2 || o.word_size > 5) {
    throw Error(ErrorKind::kUsage, fmt::format("-word_size {}: supported word sizes are 2 to 5 (BLAST+'s "
                                               "compressed-alphabet lookup for 6 and 7 is not implemented)",
                                               o.word_size));
  }
  if (o.threshold < 0)
    throw Error(ErrorKind::kUsage, fmt::format("-threshold {}: must be >= 0", o.threshold));
  // blastp refuses a zero threshold (LookupTableOptionsValidate) but takes one below 1, which it truncates
  // to 0: exact words only.
  if (o.threshold_opt->count() > 0 && o.threshold == 0)
    throw Error(ErrorKind::kUsage, "-threshold 0: a non-zero threshold is required (as in blastp)");
  if (o.max_target_seqs < 1)
    throw Error(ErrorKind::kUsage, fmt::format("-max_target_seqs {}: must be >= 1", o.max_target_seqs));
  if (o.line_length < 1)
    throw Error(ErrorKind::kUsage, fmt::format("-line_length {}: must be >= 1", o.line_length));
  for (const auto& [opt, value] : {std::pair{o.num_descriptions_opt, o.num_descriptions},
                                   std::pair{o.num_alignments_opt, o.num_alignments}}) {
    if (opt->count() == 0) continue;
    if (value < 0)
      throw Error(ErrorKind::kUsage, fmt::format("-{}: must be >= 0", opt->get_lnames().front()));
    if (o.max_target_seqs_opt->count() > 0)
      throw Error(ErrorKind::kUsage, fmt::format("-{} is incompatible with -max_target_seqs (as in blastp)",
                                                 opt->get_lnames().front()));
  }
  if (o.max_hsps_opt->count() > 0 && o.max_hsps < 1)
    throw Error(ErrorKind::kUsage, fmt::format("-max_hsps {}: must be >= 1", o.max_hsps));
  if (o.soft_masking_opt->count() > 0) {  // NStr::StringToBool's spellings
    std::string v = o.soft_masking;
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool on = v == "true" || v == "t" || v == "yes" || v == "y" || v == "1";
    if (!on && v != "false" && v != "f" && v != "no" && v != "n" && v != "0")
      throw Error(ErrorKind::kUsage, fmt::format("-soft_masking {}: expected true or false", o.soft_masking));
    if (on && o.seg != "no")
      throw Error(ErrorKind::kUsage,
                  "-soft_masking true with -seg (masking for the lookup table only) is not supported; the "
                  "masked residues are X in every stage here");
  }
  if (o.mt_mode_opt->count() > 0) {
    if (o.mt_mode < 0 || o.mt_mode > 1)
      throw Error(ErrorKind::kUsage, fmt::format("-mt_mode {}: must be 0 or 1", o.mt_mode));
    if (o.num_threads_opt->count() == 0)
      throw Error(ErrorKind::kUsage, "-mt_mode requires -num_threads (as in blastp)");
    if (o.mt_mode == 1 && o.num_threads > 1)
      throw Error(
          ErrorKind::kUsage,
          "-mt_mode 1 (blastp batching the queries by threads) is not supported; results are the same "
          "for any -num_threads with the default mode");
  }
  for (const auto& [opt, value] :
       {std::pair{o.sorthits_opt, o.sorthits}, std::pair{o.sorthsps_opt, o.sorthsps}})
    if (opt->count() > 0 && (value < 0 || value > 4))
      throw Error(ErrorKind::kUsage,
                  fmt::format("-{} {}: must be from 0 to 4", opt->get_lnames().front(), value));
  if (o.dbsize < 0)
    throw Error(ErrorKind::kUsage,
                fmt::format("-dbsize {}: must be >= 0 (0: the database's length)", o.dbsize));
  if (o.searchsp < 0)
    throw Error(ErrorKind::kUsage,
                fmt::format("-searchsp {}: must be >= 0 (0: computed from the database)", o.searchsp));
  if (!(o.qcov_hsp_perc >= 0 && o.qcov_hsp_perc <= 100))
    throw Error(ErrorKind::kUsage, fmt::format("-qcov_hsp_perc {}: must be from 0 to 100", o.qcov_hsp_perc));
  if (o.num_threads < 1)
    throw Error(ErrorKind::kUsage, fmt::format("-num_threads {}: must be >= 1", o.num_threads));
  if (o.window_size_opt->count() > 0 && o.window_size < 1) {
    throw Error(ErrorKind::kUsage,
                fmt::format("-window_size {}: the one-hit algorithm (0) is not supported; give a window >= 1",
                            o.window_size));
  }
  if (o.xdrop_ungap < 0 || o.xdrop_gap < 0 || o.xdrop_gap_final < 0)
    throw Error(ErrorKind::kUsage, "-xdrop_ungap, -xdrop_gap and -xdrop_gap_final must be >= 0");
  if (o.xdrop_ungap_opt->count() > 0 && o.xdrop_ungap == 0)
    throw Error(ErrorKind::kUsage,
                "-xdrop_ungap 0: the ungapped X-dropoff must be greater than zero (as in blastp)");

  return load_matrix(o.matrix);
}

void run_blastp(const BlastpCliOptions& o, const GlobalOptions& global) {
  const dist::Comm one_process;
  const dist::Comm& comm = global.comm != nullptr ? *global.comm : one_process;
  // Under MPI every rank runs this with the same arguments; the steps that can fail run inside
  // dist::agree (an error on any rank stops all of them together), and rank 0 alone writes.
  std::optional<ScoringMatrix> loaded;
  dist::agree(comm, [&] { loaded.emplace(check_options(o)); });
  const ScoringMatrix& matrix = *loaded;
  const bool have_db = o.db_opt->count() > 0, have_subject = o.subject_opt->count() > 0;
  const std::string& target = have_db ? o.db : o.subject;
  blast::BlastpRunOptions run;
  run.comm = &comm;
  blast::BlastpOptions& search = run.search;
  search.matrix = o.matrix;
  // Each gap cost not given is the matrix's BLAST+ default (BLAST_GetProteinGapExistenceExtendParams).
  search.gaps = matrix.default_gaps();
  if (o.gapopen_opt->count() > 0) search.gaps.open = o.gapopen;
  if (o.gapextend_opt->count() > 0) search.gaps.extend = o.gapextend;
  check_gap_costs(matrix, search.gaps);
  search.evalue = o.evalue;
  search.word_size = o.word_size;
  // BLAST+ truncates the threshold to an integer (lookup->threshold = (Int4)opt->threshold), so one below 1
  // keeps exact words only; not given: the matrix's default.
  search.threshold = o.threshold_opt->count() > 0 ? static_cast<int>(o.threshold) : -1;
  search.seg = parse_seg(o.seg);
  search.max_target_seqs = o.max_target_seqs;
  search.exact_max_target_seqs = o.exact_max_target_seqs;
  search.max_hsps = o.max_hsps_opt->count() > 0 ? o.max_hsps : 0;
  search.qcov_hsp_perc = o.qcov_hsp_perc;
  search.db_length = o.dbsize;  // 0: blastp_run takes the database's
  // -searchsp, given at all, switches blastp to the old statistics (it sets OLD_FSC); a non-zero value
  // replaces the effective search space, and blastp then ignores -dbsize.
  search.old_fsc = o.searchsp_opt->count() > 0;
  search.searchsp = o.searchsp;
  if (search.searchsp > 0) search.db_length = 0;
  search.window = o.window_size_opt->count() > 0 ? o.window_size : 0;
  // Given X-dropoffs are taken as they are (blastp 2.12 uses a given 0 for the gapped ones).
  if (o.xdrop_ungap_opt->count() > 0) search.xdrop_ungap_bits = o.xdrop_ungap;
  if (o.xdrop_gap_opt->count() > 0) search.xdrop_gap_bits = o.xdrop_gap;
  if (o.xdrop_gap_final_opt->count() > 0) search.xdrop_gap_final_bits = o.xdrop_gap_final;
  search.comp_based_stats = parse_comp_based_stats(o.comp_based_stats);
  // -num_threads when given, else the global --threads when given, else blastp's default of one thread.
  run.subject_mode = have_subject;
  run.threads = o.num_threads_opt->count() > 0      ? static_cast<unsigned>(o.num_threads)
                : o.global_threads_opt->count() > 0 ? global.resolved_threads()
                                                    : 1u;
  // The seed stages on the GPUs of --device / --gpus (global options; auto: the GPUs when usable). The
  // output is the same either way. Under MPI each rank takes its share of its node's GPUs
  // (GlobalOptions::resolve_devices, select_local_devices: only its share is probed).
  // The GPUs are probed (driver and context start-up: a few hundred ms) while the database totals and the
  // first queries are read; an invalid --device value is reported now.
  const std::optional<DeviceMode> device_mode = parse_device_mode(global.device);
  if (!device_mode)
    throw Error(ErrorKind::kUsage, fmt::format("--device {}: expected auto, cpu or gpu", global.device));
  // After the last query batch's GPU work the devices are released on this thread (release_devices) while
  // the traceback and the output run; it is joined before the command returns.
  std::future<void> release;
  const auto release_gpus = [&release](std::span<const int> ids) {
    release = std::async(std::launch::async,
                         [v = std::vector<int>(ids.begin(), ids.end())] { release_devices(v); });
  };
  std::future<DeviceSelection> device_probe =
      std::async(std::launch::async, [&global] { return global.resolve_devices(); });

  ReportWriter::Setup report{
      &matrix, &search, have_subject, target, {}, 0, o.num_descriptions, o.num_alignments, o.line_length, {}};
  if (o.max_target_seqs_opt->count() > 0) report.report_subjects = o.max_target_seqs;
  // -num_descriptions / -num_alignments, as blastp: with -outfmt 0 (the pairwise report) the subjects listed
  // and aligned, and the search keeps the larger number; with a tabular format -num_alignments is the number
  // of subjects kept and -num_descriptions is ignored (with blastp's warning).
  std::string outfmt_number;
  std::istringstream(o.outfmt) >> outfmt_number;
  const bool pairwise = outfmt_number == "0";
  if (o.num_descriptions_opt->count() > 0 || o.num_alignments_opt->count() > 0) {
    int kept = o.num_alignments;
    if (pairwise) {
      kept = std::max(o.num_descriptions, o.num_alignments);
    } else if (o.num_descriptions_opt->count() > 0) {
      if (!global.quiet)
        fmt::print(stderr,
                   "warpsearch: warning: -num_descriptions is ignored for output formats > 4; use "
                   "-max_target_seqs (as blastp warns)\n");
      if (o.num_alignments_opt->count() == 0) kept = o.max_target_seqs;
    }
    if (kept == 0)
      throw Error(ErrorKind::kUsage, "-num_descriptions / -num_alignments: no hits are being saved");
    search.max_target_seqs = kept;
  }
  // -sorthits / -sorthsps: the report's default order (0) is the only one implemented; blastp ignores them
  // with a warning for the formats they do not apply to.
  for (const auto& [opt, value] :
       {std::pair{o.sorthits_opt, o.sorthits}, std::pair{o.sorthsps_opt, o.sorthsps}}) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_lnames().front();
    if (!pairwise) {
      if (!global.quiet)
        fmt::print(stderr, "warpsearch: warning: -{} is ignored for output formats > 4 (as blastp warns)\n",
                   name);
    } else if (name == "sorthits") {  // blastp's report then has more description columns, even with 0
      throw Error(ErrorKind::kUsage, "-sorthits with -outfmt 0 is not supported");
    } else if (value != 0) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("-{} {}: only the default order (0) is implemented", name, value));
    }
  }
  if (o.line_length_opt->count() > 0 && !pairwise && !global.quiet)
    fmt::print(stderr,
               "warpsearch: warning: -line_length is not applicable to output formats > 4 (as blastp "
               "warns)\n");
  if (o.threshold_opt->count() > 0) report.threshold_text = fmt::format("{}", o.threshold);
  // Output first (an unwritable path fails before any work), then the subject totals, then the queries.
  std::optional<OutputFile> out;
  std::optional<ReportWriter> writer;
  std::optional<SequenceReader> reader;
  const auto start = std::chrono::steady_clock::now();
  Sequence seq;
  bool more = false;
  const blast::DatabaseTotals& totals = report.totals;
  dist::agree(comm, [&] {
    static_cast<void>(ReportWriter(o.outfmt, report));  // -outfmt errors before any work
    if (comm.size() > 1 && o.query == "-")
      throw Error(ErrorKind::kUsage,
                  "-query - : under MPI every rank reads the queries, so they cannot be stdin");
    if (comm.is_root()) out.emplace(o.out);
    report.totals = blast::database_totals(target, have_subject);
    if (totals.sequences == 0) {
      throw Error(ErrorKind::kInput,
                  fmt::format("{} holds no sequences", have_db ? "the database" : "-subject"), target);
    }
    writer.emplace(o.outfmt, report);
    // Queries as blastp reads them: a record without a header or without a name (an id Query_N), an empty
    // sequence (reported without hits) and '-' (skipped) with a warning.
    ReaderOptions query_options = blast::subject_reader_options();  // keeps the header lines
    query_options.allow_unnamed = true;
    query_options.allow_empty_sequences = true;
    query_options.skip_hyphens = true;
    reader.emplace(o.query, query_options);
    more = reader->next(seq);
    if (!more) throw Error(ErrorKind::kInput, "the query file holds no sequences", reader->path());
  });
  std::uint64_t queries = 0, hits = 0;
  if (out) out->write(writer->header(defline_of(seq), seq.length()));
  // Reads the next batch of queries (every rank reads every batch). A batch ends at one of BLAST+'s
  // query-batch boundaries (blastp_query_batches: a batch closes when it holds >= 10000 residues), once it
  // has kBatchQueries queries or kBatchResidues residues, so the composition-based redo sees BLAST's
  // batches (kappa.hpp) whatever our batch size.
  const bool query_split = comm.size() > 1 && global.split() == dist::Split::kQueries;
  const std::size_t batch_queries = query_split ? kSplitBatchQueries : kBatchQueries;
  const std::size_t batch_residues = query_split ? kSplitBatchResidues : kBatchResidues;
  std::uint64_t query_number = 0;    // queries read so far
  std::uint64_t query_residues = 0;  // their residues
  const auto read_batch = [&](std::vector<blast::BlastpQuery>& batch) {
    std::size_t residues = 0;
    std::size_t blast_fill = 0;
    while (more) {
      residues += seq.length();
      blast_fill += seq.length();
      ++query_number;
      query_residues += seq.length();
      batch.push_back({defline_of(seq), std::move(seq.residues),
                       seq.name.empty() ? fmt::format("Query_{}", query_number) : std::string()});
      more = reader->next(seq);
      if (blast_fill >= blast::kBlastpQueryBatchResidues) {
        blast_fill = 0;
        if (batch.size() >= batch_queries || residues >= batch_residues) break;
      }
    }
    // blastp fails ("Query is Empty!") when no query has a residue; so does this, before any output (called
    // inside dist::agree, every rank together).
    if (!more && query_residues == 0)
      throw Error(ErrorKind::kInput, "every query sequence is empty", reader->path());
  };
  // The probe's GPUs (waits for it the first time). blastp_run calls this once its database reader has
  // started, so that the database is read while the devices start up.
  std::optional<std::vector<int>> gpu_ids;
  const auto probe_devices = [&]() -> std::vector<int> {
    if (!gpu_ids) {
      const DeviceSelection devices = device_probe.get();
      gpu_ids.emplace();
      if (devices.use_gpu)
        for (const DeviceInfo& d : devices.devices) gpu_ids->push_back(d.id);
    }
    return *gpu_ids;
  };
  if (*device_mode != DeviceMode::kCpu) run.resolve_gpus = probe_devices;
  const auto gpu_count = [&] { return gpu_ids ? gpu_ids->size() : std::size_t{0}; };
  // A batch's output text, HSP count and stderr messages (timing, warnings); first: the 0-based number of
  // its first query in the query file.
  const auto format_batch = [&](const std::vector<blast::BlastpQuery>& batch,
                                const blast::BlastpRunResult& result, std::uint64_t first) {
    BatchOutput b;
    b.queries = batch.size();
    if (o.timing) {
      const blast::BlastpTimings& t = result.timings;
      b.messages += fmt::format(
          "timing: setup {:.3f} s\ntiming: read {:.3f} s\ntiming: seed {:.3f} s\ntiming: prelim {:.3f} s\n"
          "timing: traceback {:.3f} s\ntiming: batch_total {:.3f} s\n",
          t.setup, t.read, t.seed, t.prelim, t.traceback, t.total);
      if (gpu_count() > 0)
        b.messages += fmt::format(
            "timing: gpu_scan {:.3f} s\ntiming: gpu_screen {:.3f} s\ntiming: gpu_upload {:.3f} s\n"
            "timing: gpu_download {:.3f} s\ntiming: gpu pairs {} (to the CPU: {})\n",
            t.gpu_scan, t.gpu_screen, t.gpu_upload, t.gpu_download, t.gpu_pairs, t.gpu_full_pairs);
      b.messages += fmt::format(
          "timing: scan steps (s after the scan began): devices {:.3f}, GPU stages {:.3f}, last read {:.3f}, "
          "last seeds {:.3f}\n",
          t.devices_at, t.stages_at, t.read_at, t.seeds_at);
    }
    b.text = writer->batch(batch, result, first);
    for (std::size_t q = 0; q < result.queries.size(); ++q) {
      for (const blast::SubjectHits& list : result.queries[q].hits) b.hsps += list.hsps.size();
      // blastp warns the same way and reports the query without hits.
      const std::string_view name = batch[q].unnamed_id.empty() ? batch[q].defline : batch[q].unnamed_id;
      if (global.quiet) continue;
      if (batch[q].residues.empty())
        b.messages +=
            fmt::format("warpsearch: warning: query {} ({}): empty sequence; it is reported without hits\n",
                        first + q + 1, name);
      else if (!(result.queries[q].setup.ungapped.lambda > 0))
        b.messages += fmt::format(
            "warpsearch: warning: query {} ({}): ungapped Karlin-Altschul parameters cannot be computed "
            "(no residue with a positive expected score, e.g. all X); it is reported without hits\n",
            first + q + 1, name);
    }
    return b;
  };
  const auto emit = [&](const BatchOutput& b) {
    std::fputs(b.messages.c_str(), stderr);
    out->write(b.text);
    queries += b.queries;
    hits += b.hsps;
  };
  std::uint64_t read_queries = 0;  // queries read so far
  while (more) {
    if (!query_split) {
      // One process, or the database split over the ranks (blastp_run with run.comm): rank 0 gets the hits.
      std::vector<blast::BlastpQuery> batch;
      dist::agree(comm, [&] { read_batch(batch); });
      run.gpus_done = nullptr;
      if (!more) run.gpus_done = release_gpus;  // the last query batch: no GPU work follows
      const blast::BlastpRunResult result = blast::blastp_run(batch, target, totals, run);
      // The probe's errors (--device gpu without a usable GPU) also when blastp_run had no database to
      // scan (no searchable query) and so did not call it.
      dist::agree(comm, [&] { probe_devices(); });
      if (o.timing && comm.size() > 1) {
        // Every rank's phases (rank 0's are also the batch's own timing lines): where a run's time goes.
        const blast::BlastpTimings& t = result.timings;
        const double since_start =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string line = fmt::format(
            "timing: rank {}: read {:.3f} s, seed {:.3f} s, prelim {:.3f} s, traceback {:.3f} s, batch_total "
            "{:.3f} s, since start {:.3f} s, gpu pairs {}\n",
            comm.rank(), t.read, t.seed, t.prelim, t.traceback, t.total, since_start, t.gpu_pairs);
        const std::vector<dist::Bytes> lines = comm.gather(
            std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(line.data()), line.size()));
        for (const dist::Bytes& l : lines) std::fwrite(l.data(), 1, l.size(), stderr);
      }
      if (comm.is_root()) emit(format_batch(batch, result, read_queries));
      read_queries += batch.size();
      continue;
    }
    // Query split: rounds of up to N batches; batch j of a round is searched by rank j against the whole
    // database and formatted there; rank 0 writes the round's outputs in batch order.
    std::vector<blast::BlastpQuery> mine;
    std::uint64_t mine_first = 0;
    int round = 0;
    dist::agree(comm, [&] {
      for (; round < comm.size() && more; ++round) {
        std::vector<blast::BlastpQuery> batch;
        read_batch(batch);
        const std::uint64_t first = read_queries;
        read_queries += batch.size();
        if (round == comm.rank()) {
          mine = std::move(batch);
          mine_first = first;
        }
      }
      run.gpus = probe_devices();
      run.resolve_gpus = nullptr;
    });
    std::optional<BatchOutput> own;
    std::vector<dist::Bytes> parts = dist::exchange(comm, [&] {
      if (mine.empty()) return dist::Bytes();
      blast::BlastpRunOptions whole = run;
      whole.comm = nullptr;
      BatchOutput b = format_batch(mine, blast::blastp_run(mine, target, totals, whole), mine_first);
      if (!comm.is_root()) return encode_batch_output(b);
      own = std::move(b);
      return dist::Bytes();
    });
    if (!comm.is_root()) continue;
    for (int j = 0; j < round; ++j)
      emit(j == 0 ? *own : decode_batch_output(parts[static_cast<std::size_t>(j)]));
  }
  if (!comm.is_root()) {
    if (release.valid()) release.get();
    return;
  }
  out->write(writer->footer(queries));
  out->commit();
  if (!global.quiet && reader->hyphens() > 0)  // as blastp's FASTA reader warns
    fmt::print(stderr, "warpsearch: warning: {}:{}: '-' in the query sequences ({} of them) skipped\n",
               reader->path(), reader->first_hyphen_line(), reader->hyphens());
  if (!global.quiet && totals.hyphens > 0)
    fmt::print(stderr, "warpsearch: warning: {}:{}: '-' in the subject sequences ({} of them) skipped\n",
               target, totals.first_hyphen_line, totals.hyphens);
  if (!global.quiet) {  // as blastp warns "Subject sequence contains no data"
    for (const auto& [number, defline] : totals.first_empty)
      fmt::print(stderr, "warpsearch: warning: subject {} ({}): empty sequence; it has no hits\n", number,
                 defline.empty() ? fmt::format("Subject_{}", number) : defline);
    if (totals.empty_sequences > static_cast<std::int64_t>(totals.first_empty.size()))
      fmt::print(stderr, "warpsearch: warning: {} more empty subject sequences\n",
                 totals.empty_sequences - static_cast<std::int64_t>(totals.first_empty.size()));
  }
  if (o.timing)
    fmt::print(stderr, "timing: command {:.3f} s (from reading the options to the output's commit)\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

  if (!global.quiet && o.out != "-") {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr,
               "blastp: {} quer{} vs {} subject{} ({} residues): {} HSP{} in {:.2f} s on {} thread{}{}\n",
               queries, queries == 1 ? "y" : "ies", totals.sequences, totals.sequences == 1 ? "" : "s",
               totals.length, hits, hits == 1 ? "" : "s", seconds, run.threads, run.threads == 1 ? "" : "s",
               gpu_count() == 0 ? std::string()
                                : fmt::format(" and {} GPU{}", gpu_count(), gpu_count() == 1 ? "" : "s"));
  }
  if (release.valid()) release.get();
}

}  // namespace

void register_blastp(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<BlastpCliOptions>();
  BlastpCliOptions& o = *opts;
  CLI::App* cmd = app.add_subcommand(
      "blastp", "Protein-protein BLAST (BLAST+ 2.12 blastp's options, statistics and tabular output)");
  o.global_threads_opt = app.get_option("--threads");

  auto in = cmd->add_option_group("Input query options");
  in->add_option("--query", o.query, "Input file name: protein FASTA ('-' reads stdin)")
      ->capture_default_str();

  auto general = cmd->add_option_group("General search options");
  general->add_option("--task", o.task, "Task to execute (only blastp)")->capture_default_str();
  o.db_opt =
      general->add_option("--db", o.db,
                          "Database: a BLAST+ database name, a packed warpsearch database or a protein "
                          "FASTA file (incompatible with -subject)");
  general->add_option("--dbsize", o.dbsize,
                      "Effective length of the database for the statistics (0: its actual length)");
  o.searchsp_opt = general->add_option(
      "--searchsp", o.searchsp,
      "Effective length of the search space (0: computed); given at all, E-values are Karlin-Altschul's "
      "over it, as blastp's");
  general->add_option("--out", o.out, "Output file name ('-' is stdout); never left partial on error")
      ->capture_default_str();
  general->add_option("--evalue", o.evalue, "Expectation value (E) threshold for saving hits")
      ->capture_default_str();
  general->add_option("--word_size", o.word_size, "Word size for the wordfinder algorithm (2..5)")
      ->capture_default_str();
  o.gapopen_opt =
      general->add_option("--gapopen", o.gapopen, "Cost to open a gap [default: the matrix's, BLOSUM62 11]");
  o.gapextend_opt = general->add_option("--gapextend", o.gapextend,
                                        "Cost to extend a gap [default: the matrix's, BLOSUM62 1]");
  general
      ->add_option("--matrix", o.matrix,
                   "Scoring matrix name (BLOSUM45/50/62/80/90, PAM30/70/250) or an NCBI-format matrix file")
      ->capture_default_str();
  o.threshold_opt = general->add_option(
      "--threshold", o.threshold,
      "Minimum word score such that the word is added to the BLAST lookup table [default: the matrix's, "
      "BLOSUM62 11]");
  general
      ->add_option("--comp_based_stats", o.comp_based_stats,
                   "Composition-based statistics: 0 or F: none; 1: as in NAR 29:2994-3005, 2001; 2, T or D: "
                   "score adjustment as in Bioinformatics 21:902-911, 2005, conditioned on sequence "
                   "properties; 3: unconditionally")
      ->capture_default_str();

  auto subject = cmd->add_option_group("BLAST-2-Sequences options");
  o.subject_opt = subject->add_option("--subject", o.subject,
                                      "Subject sequence(s) to search: protein FASTA (incompatible with -db)");

  auto filtering = cmd->add_option_group("Query filtering options");
  filtering->add_option("--seg", o.seg, "Filter query sequence with SEG: yes or no")->capture_default_str();
  o.soft_masking_opt = filtering->add_option(
      "--soft_masking", o.soft_masking,
      "Apply filtering locations as soft masks [false; true is accepted only without -seg]");

  auto restrict = cmd->add_option_group("Restrict search or results");
  o.max_target_seqs_opt =
      restrict
          ->add_option("--max_target_seqs", o.max_target_seqs, "Maximum number of aligned sequences to keep")
          ->capture_default_str();
  restrict->add_flag(
      "--exact_max_target_seqs", o.exact_max_target_seqs,
      "warpsearch only: keep the best -max_target_seqs subjects by E-value of the whole database "
      "(blastp keeps the best of a preliminary list of about 2N; off by default for identical "
      "output)");
  o.max_hsps_opt = restrict->add_option(
      "--max_hsps", o.max_hsps, "Set maximum number of HSPs per subject sequence to save for each query");
  restrict->add_option("--qcov_hsp_perc", o.qcov_hsp_perc, "Percent query coverage per hsp (0..100)");

  auto extension = cmd->add_option_group("Extension options");
  o.xdrop_ungap_opt = extension->add_option("--xdrop_ungap", o.xdrop_ungap,
                                            "X-dropoff value (in bits) for ungapped extensions [7]");
  o.xdrop_gap_opt = extension->add_option("--xdrop_gap", o.xdrop_gap,
                                          "X-dropoff value (in bits) for preliminary gapped extensions [15]");
  o.xdrop_gap_final_opt = extension->add_option("--xdrop_gap_final", o.xdrop_gap_final,
                                                "X-dropoff value (in bits) for final gapped alignment [25]");
  o.window_size_opt = extension->add_option(
      "--window_size", o.window_size,
      "Multiple hits window size (>= 1) [per matrix: BLOSUM45 60, BLOSUM80 25, PAM30 15, PAM70 20, else 40]");

  auto formatting = cmd->add_option_group("Formatting options");
  o.sorthits_opt = formatting->add_option(
      "--sorthits", o.sorthits,
      "Sorting option for hits (ignored with a warning for tabular formats; not supported with -outfmt 0)");
  o.sorthsps_opt = formatting->add_option(
      "--sorthsps", o.sorthsps,
      "Sorting option for HSPs (-outfmt 0: only the default 0; ignored with a warning for tabular formats)");
  o.num_descriptions_opt = formatting->add_option(
      "--num_descriptions", o.num_descriptions,
      "Number of database sequences to show one-line descriptions for (-outfmt 0; incompatible with "
      "-max_target_seqs) [500]");
  o.line_length_opt =
      formatting
          ->add_option("--line_length", o.line_length, "Line length for formatting alignments (-outfmt 0)")
          ->capture_default_str();
  o.num_alignments_opt = formatting->add_option(
      "--num_alignments", o.num_alignments,
      "Number of database sequences to show alignments for (incompatible with -max_target_seqs) [250]");
  formatting
      ->add_option(
          "--outfmt", o.outfmt,
          "Alignment view: 0 = pairwise, 5 = XML (BLAST XML, NCBI_BlastOutput.dtd), 6 = tabular, 7 = tabular "
          "with comment lines, 10 = comma-separated; "
          "6, 7 and 10 may be followed by delim=TEXT and field names (\"6 qseqid sseqid evalue\", \"7 std "
          "qlen\", \"6 delim=; std\")")
      ->capture_default_str();

  auto misc = cmd->add_option_group("Miscellaneous options");
  misc->add_flag(
      "--timing", o.timing,
      "Print where the time went (read, seed stages, preliminary, traceback; GPU kernels) on stderr");
  o.num_threads_opt = misc->add_option(
      "--num_threads", o.num_threads,
      "Number of threads (CPUs) to use in the BLAST search [default: 1, or the global --threads when given]");
  o.mt_mode_opt = misc->add_option("--mt_mode", o.mt_mode,
                                   "Multi-threading mode: 0 (split by database; needs -num_threads) [1 is "
                                   "accepted only with -num_threads 1]");
  cmd->set_version_flag("--version", "blastp: 2.12.0+ compatible (warpsearch)");

  // blastp options that exist but are not implemented: parsed (hidden from --help), refused when given.
  for (const UnsupportedOption& u : kUnsupported) {
    const std::string name = std::string("--") + u.name;
    CLI::Option* opt = u.takes_value ? cmd->add_option(name) : cmd->add_flag(name);
    opt->group("");
    o.unsupported.push_back(opt);
  }

  cmd->footer(
      "Options may be written with one dash, as in BLAST+ (-query q.fa -evalue 1e-5), or with two. Results\n"
      "(-outfmt 6/7) are blastp 2.12's, byte for byte, whatever -num_threads. Exactly one of -db and "
      "-subject:\n"
      "-subject searches the sequences of a FASTA file and computes statistics over that set (blastp's\n"
      "BLAST-2-Sequences mode). Queries are protein FASTA; a letter outside the protein alphabet is an\n"
      "error; as in blastp, an empty query is reported without hits and a record without a name is Query_N.\n"
      "With --device gpu (or auto, a global option; --gpus picks the GPUs) the seed\n"
      "stages (word hits, ungapped and preliminary gapped extension) run on the GPUs, with the same "
      "results.\n"
      "Under mpirun/srun the database (or with --mpi-split queries the query batches) is split over the\n"
      "ranks and rank 0 writes the same output (docs/MPI.md).\n"
      "Not implemented: -outfmt 1-4, 8, 9 and 11-18, -html, -remote, -parse_deflines, seqid and\n"
      "taxonomy lists, culling, -ungapped and the other options blastp -help lists but this help does not.\n"
      "Examples:\n"
      "  warpsearch blastp -query q.fa -db swissprot -outfmt 6 -evalue 1e-5 -num_threads 8 -out hits.tsv\n"
      "  warpsearch blastp -query q.fa -subject s.fa -outfmt \"7 std qlen slen\"\n"
      "  warpsearch blastp --query q.fa --db proteins.fa --outfmt 6 --matrix BLOSUM45 --max_target_seqs 50\n"
      "  warpsearch blastp -query q.fa -db nr_subset -outfmt 6 -comp_based_stats 0 -seg yes -max_hsps 1\n"
      "  warpsearch blastp -query q.fa -db uniref50 -outfmt 6 -num_threads 16 --device gpu --gpus 0,1 "
      "--timing");
  cmd->callback([opts, &global] { run_blastp(*opts, global); });
}

}  // namespace warpsearch::cli
