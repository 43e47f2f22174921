// output.cpp: TSV, SAM, PAF and view text of `warpsearch scan` results (see output.hpp).
#include "scan/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch::scan {
namespace {

bool has_alignment(const Hit& hit) { return !hit.cigar.empty(); }

// SAM, PAF and the view print the alignment: a hit without one means traceback was off, a caller bug.
void require_alignment(const Hit& hit, std::string_view format) {
  if (!has_alignment(hit)) {
    throw Error(ErrorKind::kInternal,
                fmt::format("{} output needs the alignment (traceback was off)", format));
  }
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "0.00";
  return fmt::format("{:.2f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// One CIGAR operation.
struct CigarOp {
  std::uint64_t length = 0;
  char op = '=';
};

// Parses "12=1X3I": Error(kInternal) for anything else (a CIGAR comes from the traceback, never from
// the user).
std::vector<CigarOp> parse_cigar(std::string_view cigar) {
  std::vector<CigarOp> ops;
  std::uint64_t length = 0;
  bool digits = false;
  for (const char c : cigar) {
    if (c >= '0' && c <= '9') {
      length = length * 10 + static_cast<std::uint64_t>(c - '0');
      digits = true;
    } else if ((c == '=' || c == 'X' || c == 'I' || c == 'D') && digits && length > 0) {
      ops.push_back({length, c});
      length = 0;
      digits = false;
    } else {
      throw Error(ErrorKind::kInternal, fmt::format("malformed alignment CIGAR '{}'", cigar));
    }
  }
  if (digits) throw Error(ErrorKind::kInternal, fmt::format("malformed alignment CIGAR '{}'", cigar));
  return ops;
}

char complement_letter(char c, bool rna) {
  const bool lower = c >= 'a' && c <= 'z';
  const char upper = lower ? static_cast<char>(c - 'a' + 'A') : c;
  char out = upper;
  switch (upper) {
    case 'A': out = rna ? 'U' : 'T'; break;
    case 'T':
    case 'U': out = 'A'; break;
    case 'C': out = 'G'; break;
    case 'G': out = 'C'; break;
    case 'R': out = 'Y'; break;
    case 'Y': out = 'R'; break;
    case 'M': out = 'K'; break;
    case 'K': out = 'M'; break;
    case 'B': out = 'V'; break;
    case 'V': out = 'B'; break;
    case 'H': out = 'D'; break;
    case 'D': out = 'H'; break;
    default: break;  // S, W, N and anything else are their own complement
  }
  return lower ? static_cast<char>(out - 'A' + 'a') : out;
}

std::string evalue_or_dash(const Hit& hit) {
  return hit.evalue ? format_evalue(*hit.evalue) : std::string("-");
}

}  // namespace

std::optional<OutputFormat> parse_output_format(std::string_view text) {
  if (text == "tsv") return OutputFormat::kTsv;
  if (text == "sam") return OutputFormat::kSam;
  if (text == "paf") return OutputFormat::kPaf;
  if (text == "view") return OutputFormat::kView;
  return std::nullopt;
}

bool needs_traceback(OutputFormat format) { return format != OutputFormat::kTsv; }

std::string format_evalue(double evalue) {
  // BLAST+ CBlastTabularInfo (checked against blastn 2.12.0 -outfmt 6 across 1e-121..1e3): the
  // boundaries and precisions below; %.Nf/%.Ne round the same way in fmt as in printf.
  if (evalue < 1.0e-180) return "0.0";
  if (evalue < 0.0009) return fmt::format("{:.2e}", evalue);
  if (evalue < 0.1) return fmt::format("{:.3f}", evalue);
  if (evalue < 1.0) return fmt::format("{:.2f}", evalue);
  if (evalue < 10.0) return fmt::format("{:.1f}", evalue);
  return fmt::format("{:.0f}", evalue);
}

std::string identity_percent(const Hit& hit) {
  if (!has_alignment(hit)) return "*";
  return percent(hit.matches, hit.length);
}

std::uint32_t edit_distance(const Hit& hit) { return hit.mismatches + hit.gap_columns; }

std::string sam_cigar(const Hit& hit, std::uint64_t query_length) {
  require_alignment(hit, "SAM");
  // The alignment runs along the forward target; on the minus strand the query is reverse-complemented,
  // so its unaligned end (after query_end) comes first.
  const std::uint64_t head = query_length - hit.query_end;
  const std::uint64_t tail = hit.query_begin;
  const std::uint64_t left = hit.minus ? head : tail;
  const std::uint64_t right = hit.minus ? tail : head;
  std::string cigar;
  if (left > 0) cigar += fmt::format("{}H", left);
  cigar += hit.cigar;
  if (right > 0) cigar += fmt::format("{}H", right);
  return cigar;
}

std::string reverse_cigar(std::string_view cigar) {
  const std::vector<CigarOp> ops = parse_cigar(cigar);
  std::string out;
  auto it = std::back_inserter(out);
  for (auto op = ops.rbegin(); op != ops.rend(); ++op) fmt::format_to(it, "{}{}", op->length, op->op);
  return out;
}

std::string tsv_header() {
  return "query\ttarget\tstrand\tscore\tqstart\tqend\ttstart\ttend\tcigar\tidentity\tevalue\n";
}

void append_tsv(std::string& out, const QueryResult& result, const Hit& hit) {
  // BLAST tabular: 1-based inclusive; a minus-strand subject runs from its end down to its start.
  const std::uint64_t tstart = hit.minus ? hit.target_end : hit.target_begin + 1;
  const std::uint64_t tend = hit.minus ? hit.target_begin + 1 : hit.target_end;
  fmt::format_to(std::back_inserter(out), "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", result.query_name,
                 hit.target_name, hit.minus ? '-' : '+', hit.score, hit.query_begin + 1, hit.query_end,
                 tstart, tend, has_alignment(hit) ? std::string_view(hit.cigar) : std::string_view("*"),
                 identity_percent(hit), evalue_or_dash(hit));
}

std::string sam_header(std::span<const std::pair<std::string, std::uint64_t>> targets,
                       std::string_view version) {
  std::string out = "@HD\tVN:1.6\tSO:unsorted\n";
  auto it = std::back_inserter(out);
  for (const auto& [name, length] : targets) {
    if (length > 0) fmt::format_to(it, "@SQ\tSN:{}\tLN:{}\n", name, length);  // SAM needs LN >= 1
  }
  fmt::format_to(it, "@PG\tID:warpsearch\tPN:warpsearch\tVN:{}\n", version);
  return out;
}

void append_sam(std::string& out, const QueryResult& result, const Hit& hit, bool primary) {
  require_alignment(hit, "SAM");
  const unsigned flag = (hit.minus ? 16u : 0u) | (primary ? 0u : 256u);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{}\t{}\t{}\t{}\t255\t{}\t*\t0\t0\t*\t*\tAS:i:{}\tNM:i:{}", result.query_name, flag,
                 hit.target_name, hit.target_begin + 1, sam_cigar(hit, result.query_length), hit.score,
                 edit_distance(hit));
  if (hit.evalue) fmt::format_to(it, "\tZE:f:{}", format_evalue(*hit.evalue));
  out += '\n';
}

void append_paf(std::string& out, const QueryResult& result, const Hit& hit, bool primary) {
  require_alignment(hit, "PAF");
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t255\ttp:A:{}\tAS:i:{}\tcg:Z:{}",
                 result.query_name, result.query_length, hit.query_begin, hit.query_end,
                 hit.minus ? '-' : '+', hit.target_name, hit.target_length, hit.target_begin, hit.target_end,
                 hit.matches, hit.length, primary ? 'P' : 'S', hit.score, hit.cigar);
  if (hit.evalue) fmt::format_to(it, "\tZE:f:{}", format_evalue(*hit.evalue));
  out += '\n';
}

std::string reverse_complement_letters(std::string_view letters, bool rna) {
  std::string out(letters.size(), ' ');
  for (std::size_t i = 0; i < letters.size(); ++i)
    out[letters.size() - 1 - i] = complement_letter(letters[i], rna);
  return out;
}

void append_view_heading(std::string& out, const QueryResult& result) {
  fmt::format_to(std::back_inserter(out), "Query: {} ({} residues): {} alignment{}\n\n", result.query_name,
                 result.query_length, result.hits.size(), result.hits.size() == 1 ? "" : "s");
}

void append_view(std::string& out, const QueryResult& result, const Hit& hit, std::size_t number,
                 const ViewLetters& letters) {
  require_alignment(hit, "The view");
  // The alignment as printed: forward query against the target strand (minus: reverse complement).
  const std::vector<CigarOp> ops = parse_cigar(hit.minus ? reverse_cigar(hit.cigar) : hit.cigar);
  std::uint64_t query_columns = 0, target_columns = 0;
  for (const CigarOp& op : ops) {
    if (op.op != 'D') query_columns += op.length;
    if (op.op != 'I') target_columns += op.length;
  }
  if (hit.query_end < hit.query_begin || hit.target_end < hit.target_begin ||
      query_columns != hit.query_end - hit.query_begin ||
      target_columns != hit.target_end - hit.target_begin || letters.query.size() < hit.query_end ||
      letters.target.size() != target_columns) {
    throw Error(ErrorKind::kInternal,
                fmt::format("view of {} vs {}: the letters or CIGAR do not match the coordinates",
                            result.query_name, hit.target_name));
  }
  const std::string target_rc =
      hit.minus ? reverse_complement_letters(letters.target, letters.rna) : std::string();
  const std::string_view target_row_letters = hit.minus ? std::string_view(target_rc) : letters.target;

  auto it = std::back_inserter(out);
  fmt::format_to(it, "Alignment {}: {} vs {} ({} residues), strand {}\n", number, result.query_name,
                 hit.target_name, hit.target_length, hit.minus ? '-' : '+');
  fmt::format_to(it, "  Score = {}", hit.score);
  if (hit.bits) fmt::format_to(it, " ({:.1f} bits)", *hit.bits);
  fmt::format_to(it, ", E-value = {}\n", evalue_or_dash(hit));
  fmt::format_to(it, "  Identities = {}/{} ({}%), Gaps = {}/{} ({}%)\n\n", hit.matches, hit.length,
                 percent(hit.matches, hit.length), hit.gap_columns, hit.length,
                 percent(hit.gap_columns, hit.length));

  // Columns in print order, expanded once (an alignment is at most a few times the query length).
  std::string qrow, mrow, trow;
  qrow.reserve(hit.length);
  std::uint64_t qi = hit.query_begin;  // next query residue, 0-based
  std::uint64_t ti = 0;                // next letter of target_row_letters
  for (const CigarOp& op : ops) {
    for (std::uint64_t k = 0; k < op.length; ++k) {
      qrow += op.op == 'D' ? '-' : letters.query[qi++];
      trow += op.op == 'I' ? '-' : target_row_letters[ti++];
      mrow += op.op == '=' ? '|' : ' ';
    }
  }

  // 1-based positions: query ascending from query_begin + 1; target ascending from target_begin + 1
  // (plus) or descending from target_end (minus).
  const std::size_t width = fmt::formatted_size("{}", std::max(hit.query_end, hit.target_end));
  const std::string pad(6 + 1 + width + 1, ' ');
  std::uint64_t q_next = hit.query_begin + 1;  // position of the next query residue
  std::uint64_t t_next = hit.minus ? hit.target_end : hit.target_begin + 1;  // same for the target
  const auto step = [&](std::uint64_t p) { return hit.minus ? p - 1 : p + 1; };
  const auto back = [&](std::uint64_t p) { return hit.minus ? p + 1 : p - 1; };
  for (std::size_t begin = 0; begin < qrow.size(); begin += kViewWidth) {
    const std::size_t n = std::min(kViewWidth, qrow.size() - begin);
    const std::string_view q(qrow.data() + begin, n), m(mrow.data() + begin, n), t(trow.data() + begin, n);
    const std::uint64_t q_residues = n - static_cast<std::uint64_t>(std::count(q.begin(), q.end(), '-'));
    const std::uint64_t t_residues = n - static_cast<std::uint64_t>(std::count(t.begin(), t.end(), '-'));
    // A row without residues of a sequence shows the position before it at both ends.
    const std::uint64_t q_first = q_residues > 0 ? q_next : q_next - 1;
    const std::uint64_t q_last = q_next + q_residues - 1;
    std::uint64_t t_first = t_residues > 0 ? t_next : back(t_next);
    std::uint64_t t_last = back(t_next);
    for (std::uint64_t k = 0; k < t_residues; ++k) t_last = step(t_last);
    fmt::format_to(it, "{:<6} {:>{}} {} {}\n", "Query", q_first, width, q, q_last);
    fmt::format_to(it, "{}{}\n", pad, m);
    fmt::format_to(it, "{:<6} {:>{}} {} {}\n\n", "Target", t_first, width, t, t_last);
    q_next += q_residues;
    t_next = step(t_last);
  }
}

ResultFormatter::ResultFormatter(OutputFormat format, std::string version)
    : format_(format), version_(std::move(version)) {}

std::string ResultFormatter::header(const QueryResult* first) const {
  switch (format_) {
    case OutputFormat::kTsv: return tsv_header();
    case OutputFormat::kSam:
      return sam_header(first ? std::span<const std::pair<std::string, std::uint64_t>>(first->targets)
                              : std::span<const std::pair<std::string, std::uint64_t>>(),
                        version_);
    case OutputFormat::kPaf:
    case OutputFormat::kView: return {};
  }
  return {};
}

std::string ResultFormatter::format(const QueryResult& result, std::span<const ViewLetters> letters) {
  std::string out;
  if (!header_written_) {
    out = header(&result);
    header_written_ = true;
  }
  if (format_ == OutputFormat::kView) {
    if (letters.size() < result.hits.size()) {
      throw Error(ErrorKind::kInternal, fmt::format("view of {}: letters for {} of {} hits",
                                                    result.query_name, letters.size(), result.hits.size()));
    }
    append_view_heading(out, result);
  }
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    const Hit& hit = result.hits[i];
    switch (format_) {
      case OutputFormat::kTsv: append_tsv(out, result, hit); break;
      case OutputFormat::kSam: append_sam(out, result, hit, i == 0); break;
      case OutputFormat::kPaf: append_paf(out, result, hit, i == 0); break;
      case OutputFormat::kView: append_view(out, result, hit, i + 1, letters[i]); break;
    }
  }
  return out;
}

std::string ResultFormatter::finish() {
  if (header_written_) return {};
  header_written_ = true;
  return header(nullptr);
}

}  // namespace warpsearch::scan
