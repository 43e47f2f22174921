// output.cpp: the readable report and the tabular output of swsearch (formats and conventions in output.hpp).
//
// Contents: CIGAR parsing and the walk over one alignment (checks it against the sequences, counts
// identities/positives/gaps, builds the three display rows), the report's pieces (run header, hit list,
// alignment blocks, footer) and the adapter onto blast::TabularWriter.
#include "swsearch/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "blast/tabular.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::swsearch {
namespace {

// Width of the report's target column (name and description, cut with "..." when longer).
constexpr std::size_t kTargetColumn = 50;

// Tabular fields that read the alignment (coordinates, edit script or aligned letters).
constexpr std::array kAlignmentFields{
    blast::TabularField::kQstart,   blast::TabularField::kQend,     blast::TabularField::kSstart,
    blast::TabularField::kSend,     blast::TabularField::kQseq,     blast::TabularField::kSseq,
    blast::TabularField::kLength,   blast::TabularField::kPident,   blast::TabularField::kNident,
    blast::TabularField::kMismatch, blast::TabularField::kPositive, blast::TabularField::kGapopen,
    blast::TabularField::kGaps,     blast::TabularField::kPpos,     blast::TabularField::kBtop,
    blast::TabularField::kQcovs,    blast::TabularField::kQcovhsp,
};

std::string defline(std::string_view name, std::string_view description) {
  std::string out(name);
  if (!description.empty()) {
    out += ' ';
    out += description;
  }
  return out;
}

// The defline as the report shows it: trailing blanks removed.
std::string report_defline(std::string_view name, std::string_view description) {
  std::string out = defline(name, description);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\r')) out.pop_back();
  return out;
}

// "aa" or "nt" after a length.
std::string_view unit(const ScoringMatrix& matrix) {
  return matrix.alphabet() == AlphabetKind::kProtein ? "aa" : "nt";
}

double percent(std::uint32_t part, std::uint32_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

struct CigarRun {
  char op = '=';
  std::uint32_t length = 0;
};

Error bad_alignment(const QueryResult& q, const Hit& hit, std::string_view what) {
  return Error(ErrorKind::kInternal,
               fmt::format("swsearch output: hit '{}' of query '{}': {}", hit.target_name, q.name, what));
}

// Runs of "<n><op>" with op in "=XID" and n >= 1; anything else is Error(kInternal).
std::vector<CigarRun> parse_cigar(const QueryResult& q, const Hit& hit) {
  const std::string& cigar = hit.alignment->cigar;
  std::vector<CigarRun> runs;
  std::uint64_t n = 0;
  bool digits = false;
  for (const char c : cigar) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
      digits = true;
      if (n > UINT32_MAX) throw bad_alignment(q, hit, fmt::format("CIGAR '{}': run too long", cigar));
      continue;
    }
    if ((c != '=' && c != 'X' && c != 'I' && c != 'D') || !digits || n == 0)
      throw bad_alignment(q, hit, fmt::format("malformed CIGAR '{}'", cigar));
    runs.push_back({c, static_cast<std::uint32_t>(n)});
    n = 0;
    digits = false;
  }
  if (digits) throw bad_alignment(q, hit, fmt::format("malformed CIGAR '{}'", cigar));
  return runs;
}

// One alignment walked column by column: the counts and the three rows of the display.
struct AlignmentWalk {
  std::vector<CigarRun> runs;
  std::uint32_t length = 0, matches = 0, positives = 0, gaps = 0, gap_opens = 0;
  std::string query_row, middle_row, target_row;
};

// Walks hit.alignment over the query and the target residues, checking every invariant of output.hpp.
AlignmentWalk walk_alignment(const QueryResult& q, const Hit& hit, const ScoringMatrix& matrix) {
  const align::Result& a = *hit.alignment;
  const std::span<const std::uint8_t> query(q.residues);
  const std::span<const std::uint8_t> target(hit.target_residues);
  if (target.size() != hit.target_length)
    throw bad_alignment(
        q, hit,
        fmt::format("{} target residues kept for a target of length {}", target.size(), hit.target_length));
  if (a.query_begin > a.query_end || a.query_end > query.size() || a.target_begin > a.target_end ||
      a.target_end > target.size())
    throw bad_alignment(
        q, hit,
        fmt::format("ranges q[{}, {}) t[{}, {}) outside the sequences ({} and {} residues)", a.query_begin,
                    a.query_end, a.target_begin, a.target_end, query.size(), target.size()));
  AlignmentWalk w;
  if (a.empty() && a.cigar.empty()) return w;  // a local alignment of score 0
  w.runs = parse_cigar(q, hit);
  const Alphabet alphabet(matrix.alphabet());
  std::size_t qi = a.query_begin, ti = a.target_begin;
  for (const CigarRun& run : w.runs) {
    if (run.op == 'I' || run.op == 'D') {
      w.gaps += run.length;
      ++w.gap_opens;
    }
    for (std::uint32_t k = 0; k < run.length; ++k) {
      ++w.length;
      if (run.op != 'D' && qi >= a.query_end) throw bad_alignment(q, hit, "CIGAR runs past the query range");
      if (run.op != 'I' && ti >= a.target_end)
        throw bad_alignment(q, hit, "CIGAR runs past the target range");
      if (run.op == 'I') {
        w.query_row += alphabet.symbol(query[qi++]);
        w.middle_row += ' ';
        w.target_row += '-';
      } else if (run.op == 'D') {
        w.query_row += '-';
        w.middle_row += ' ';
        w.target_row += alphabet.symbol(target[ti++]);
      } else {
        const std::uint8_t x = query[qi++], y = target[ti++];
        if ((x == y) != (run.op == '='))
          throw bad_alignment(
              q, hit, fmt::format("CIGAR '{}' at column {} disagrees with the residues", run.op, w.length));
        const bool positive = matrix.score(x, y) > 0;
        w.matches += x == y ? 1u : 0u;
        w.positives += positive ? 1u : 0u;
        w.query_row += alphabet.symbol(x);
        w.middle_row += x == y ? ':' : positive ? '.' : ' ';
        w.target_row += alphabet.symbol(y);
      }
    }
  }
  if (qi != a.query_end || ti != a.target_end)
    throw bad_alignment(q, hit, "CIGAR ends before the end of the aligned ranges");
  if (w.matches != a.matches || w.length != a.length)
    throw bad_alignment(q, hit,
                        fmt::format("alignment says {} matches in {} columns, its CIGAR {} in {}", a.matches,
                                    a.length, w.matches, w.length));
  return w;
}

// "Query  65 QKAP...HI 124" rows of width line_width, with the middle line between them.
void append_display(std::string& out, const align::Result& a, const AlignmentWalk& w,
                    std::size_t line_width) {
  auto it = std::back_inserter(out);
  const std::size_t digits = fmt::formatted_size("{}", std::max(a.query_end, a.target_end));
  const std::size_t label = std::string_view("Target").size();
  // Next residue (0-based) of each sequence; a row's start is its first residue, its end the last one
  // before the row's end (1-based); a row of gaps only shows the last residue before it on both sides.
  std::size_t qnext = a.query_begin, tnext = a.target_begin;
  for (std::size_t col = 0; col < w.query_row.size(); col += line_width) {
    const std::size_t n = std::min(line_width, w.query_row.size() - col);
    const std::string_view qrow = std::string_view(w.query_row).substr(col, n);
    const std::string_view mrow = std::string_view(w.middle_row).substr(col, n);
    const std::string_view trow = std::string_view(w.target_row).substr(col, n);
    const auto row = [&](std::string_view name, std::string_view letters, std::size_t& next) {
      const std::size_t residues =
          n - static_cast<std::size_t>(std::count(letters.begin(), letters.end(), '-'));
      const std::size_t first = residues > 0 ? next + 1 : next;
      next += residues;
      fmt::format_to(it, "{:<{}} {:>{}} {} {}\n", name, label, first, digits, letters, next);
    };
    if (col > 0) out += '\n';
    row("Query", qrow, qnext);
    fmt::format_to(it, "{:{}}{}\n", "", label + digits + 2, mrow);
    row("Target", trow, tnext);
  }
}

}  // namespace

struct OutputWriter::Impl {
  OutputSettings settings;
  std::optional<blast::TabularWriter> tabular;

  std::string report_header() const;
  std::string report_query(const QueryResult& result) const;
  std::string report_footer(const Summary& summary) const;
  std::string tabular_query(const QueryResult& result) const;
};

OutputWriter::OutputWriter(OutputSettings settings) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.settings = std::move(settings);
  if (m.settings.line_width == 0) throw Error(ErrorKind::kUsage, "output line width must be at least 1");
  std::string_view spec = m.settings.format;
  const std::size_t first = spec.find_first_not_of(" \t");
  spec = first == std::string_view::npos ? std::string_view()
                                         : spec.substr(first, spec.find_last_not_of(" \t") + 1 - first);
  if (spec.empty() || spec == "0") return;  // the report
  blast::TabularFormat format;
  try {
    format = blast::parse_tabular_format(spec);
  } catch (const Error& e) {
    throw Error(ErrorKind::kUsage,
                fmt::format("--outfmt: {} (swsearch's formats: 0 = report, 6, 7 and 10 = tabular "
                            "with optional field names)",
                            e.message()));
  }
  if (!m.settings.alignments) {
    for (const blast::TabularField f : format.fields) {
      if (std::find(kAlignmentFields.begin(), kAlignmentFields.end(), f) != kAlignmentFields.end())
        throw Error(
            ErrorKind::kUsage,
            fmt::format("--outfmt field '{}' needs the alignments, which --noalign turns off (fields "
                        "without alignments: qseqid sseqid qlen slen evalue bitscore score stitle ...)",
                        blast::field_name(f)));
    }
  }
  blast::TabularOptions options;
  options.database_label = m.settings.database_label;
  options.subject_mode = false;  // stitle / salltitles: the whole defline
  options.program = fmt::format("warpsearch swsearch {}", kVersion);
  options.processed_by = "warpsearch swsearch";
  m.tabular.emplace(std::move(format), m.settings.matrix, std::move(options));
}

OutputWriter::~OutputWriter() = default;
OutputWriter::OutputWriter(OutputWriter&&) noexcept = default;
OutputWriter& OutputWriter::operator=(OutputWriter&&) noexcept = default;

bool OutputWriter::tabular() const { return impl_->tabular.has_value(); }

std::string OutputWriter::header() const { return tabular() ? std::string() : impl_->report_header(); }

std::string OutputWriter::query(const QueryResult& result) const {
  return tabular() ? impl_->tabular_query(result) : impl_->report_query(result);
}

std::string OutputWriter::footer(const Summary& summary) const {
  return tabular() ? impl_->tabular->footer(summary.queries) : impl_->report_footer(summary);
}

std::string OutputWriter::Impl::report_header() const {
  const OutputSettings& s = settings;
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "warpsearch swsearch {}: exhaustive Smith-Waterman search\n", kVersion);
  fmt::format_to(it, "Query:      {}\nDatabase:   {}\n", s.query_label, s.database_label);
  fmt::format_to(it, "Scoring:    {}, gap open {}, extend {} (a gap of k residues costs {} + {}*k)\n",
                 s.matrix.name(), s.gaps.open, s.gaps.extend, s.gaps.open, s.gaps.extend);
  if (!s.statistics.empty()) fmt::format_to(it, "Statistics: {}\n", s.statistics);
  fmt::format_to(it, "Reporting:  the best {} hit{} per query with E-value <= {}{}\n", s.top,
                 s.top == 1 ? "" : "s", s.evalue, s.alignments ? "" : " (no alignments)");
  return out;
}

std::string OutputWriter::Impl::report_query(const QueryResult& result) const {
  const OutputSettings& s = settings;
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\nQuery: {}\nLength: {} {}\n\n", report_defline(result.name, result.description),
                 result.residues.size(), unit(s.matrix));
  if (result.hits.empty()) {
    fmt::format_to(it, "No hits with E-value <= {}.\n", s.evalue);
    return out;
  }
  fmt::format_to(it, "{} hit{}:\n", result.hits.size(), result.hits.size() == 1 ? "" : "s");
  // The hit list: rank, target (cut to the column), length, score, bits, E-value.
  const std::size_t rank_width = std::max<std::size_t>(1, fmt::formatted_size("{}", result.hits.size()));
  fmt::format_to(it, "{:>{}}  {:<{}}  {:>7}  {:>6}  {:>7}  {:>9}\n", "#", rank_width, "Target", kTargetColumn,
                 "Length", "Score", "Bits", "E-value");
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    const Hit& hit = result.hits[i];
    std::string title = report_defline(hit.target_name, hit.target_description);
    if (title.size() > kTargetColumn) title = title.substr(0, kTargetColumn - 3) + "...";
    fmt::format_to(it, "{:>{}}  {:<{}}  {:>7}  {:>6}  {:>7.1f}  {:>9}\n", i + 1, rank_width, title,
                   kTargetColumn, hit.target_length, hit.score, hit.bits,
                   blast::format_tabular_evalue(hit.evalue));
  }
  if (!s.alignments) return out;
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    const Hit& hit = result.hits[i];
    if (!hit.alignment) throw bad_alignment(result, hit, "no alignment although alignments are on");
    const align::Result& a = *hit.alignment;
    if (a.score != hit.score)
      throw bad_alignment(result, hit, fmt::format("alignment score {} != hit score {}", a.score, hit.score));
    const AlignmentWalk w = walk_alignment(result, hit, s.matrix);
    fmt::format_to(it, "\n>>{} {} ({} {})\n", i + 1, report_defline(hit.target_name, hit.target_description),
                   hit.target_length, unit(s.matrix));
    fmt::format_to(it, "Score: {}  Bits: {:.1f}  E-value: {}\n", hit.score, hit.bits,
                   blast::format_tabular_evalue(hit.evalue));
    if (w.length == 0) {
      out += "Empty alignment (score 0).\n";
      continue;
    }
    fmt::format_to(it, "Identities: {}/{} ({:.1f}%)  Positives: {}/{} ({:.1f}%)  Gaps: {}/{} ({:.1f}%)\n",
                   w.matches, w.length, percent(w.matches, w.length), w.positives, w.length,
                   percent(w.positives, w.length), w.gaps, w.length, percent(w.gaps, w.length));
    fmt::format_to(it, "Query {}-{}, target {}-{}  CIGAR: {}\n\n", a.query_begin + 1, a.query_end,
                   a.target_begin + 1, a.target_end, a.cigar);
    append_display(out, a, w, s.line_width);
  }
  return out;
}

std::string OutputWriter::Impl::report_footer(const Summary& summary) const {
  return fmt::format("\n{} quer{} searched against {} database sequence{} ({} residues).\n", summary.queries,
                     summary.queries == 1 ? "y" : "ies", summary.db_sequences,
                     summary.db_sequences == 1 ? "" : "s", summary.db_residues);
}

std::string OutputWriter::Impl::tabular_query(const QueryResult& result) const {
  const std::string query_defline = defline(result.name, result.description);
  // The subjects' deflines and residues, one per hit (TabularWriter reads both through views).
  std::vector<std::string> deflines;
  std::vector<std::vector<std::uint8_t>> stand_ins;  // only for hits without alignments (see below)
  deflines.reserve(result.hits.size());
  stand_ins.reserve(result.hits.size());
  std::vector<blast::TabularSequence> subjects;
  std::vector<blast::TabularHit> hits;
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    const Hit& hit = result.hits[i];
    deflines.push_back(defline(hit.target_name, hit.target_description));
    blast::TabularHit th;
    th.subject = i;
    th.hsp.score = hit.score;
    th.hsp.bits = hit.bits;
    th.hsp.evalue = hit.evalue;
    std::span<const std::uint8_t> residues(hit.target_residues);
    if (settings.alignments) {
      if (!hit.alignment) throw bad_alignment(result, hit, "no alignment although alignments are on");
      const align::Result& a = *hit.alignment;
      if (a.score != hit.score)
        throw bad_alignment(result, hit,
                            fmt::format("alignment score {} != hit score {}", a.score, hit.score));
      const AlignmentWalk w = walk_alignment(result, hit, settings.matrix);
      th.hsp.q_start = static_cast<int>(a.query_begin);
      th.hsp.q_end = static_cast<int>(a.query_end);
      th.hsp.s_start = static_cast<int>(a.target_begin);
      th.hsp.s_end = static_cast<int>(a.target_end);
      for (const CigarRun& run : w.runs) {
        const blast::EditOp op = run.op == 'I'   ? blast::EditOp::kInsertion
                                 : run.op == 'D' ? blast::EditOp::kDeletion
                                                 : blast::EditOp::kSubstitution;
        if (!th.hsp.script.empty() && th.hsp.script.back().op == op)
          th.hsp.script.back().length +=
              static_cast<int>(run.length);  // '=' and 'X' runs: one substitution run
        else
          th.hsp.script.push_back({op, static_cast<int>(run.length)});
      }
    } else if (residues.size() != hit.target_length) {
      // Without alignments the writer reads only the subject's length (slen): the fields that read residues
      // or the edit script were refused in the constructor. A hit that kept no residues gets a stand-in of
      // its length (unknown codes, never printed).
      stand_ins.emplace_back(hit.target_length, Alphabet(settings.matrix.alphabet()).unknown());
      residues = stand_ins.back();
    }
    subjects.push_back({deflines.back(), residues});
    hits.push_back(std::move(th));
  }
  // subjects[i].defline views deflines[i]: deflines was reserved, so it never reallocated above.
  return tabular->query({query_defline, result.residues}, subjects, hits);
}

}  // namespace warpsearch::swsearch
