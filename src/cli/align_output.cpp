// align_output.cpp: TSV, SAM and PAF records of `warpsearch align` results (see align_output.hpp).
#include "cli/align_output.hpp"

#include <fmt/format.h>

#include <iterator>

#include "warpsearch/error.hpp"

namespace warpsearch::cli {
namespace {

// A non-empty Result without a CIGAR means traceback was off: a caller bug, not bad input.
void require_cigar(const align::Result& r, std::string_view format) {
  if (!r.empty() && r.cigar.empty()) {
    throw Error(ErrorKind::kInternal,
                fmt::format("{} output needs the alignment (traceback was off)", format));
  }
}

std::string_view or_star(std::string_view text) { return text.empty() ? std::string_view("*") : text; }

}  // namespace

std::optional<AlignFormat> parse_align_format(std::string_view text) {
  if (text == "tsv") return AlignFormat::kTsv;
  if (text == "sam") return AlignFormat::kSam;
  if (text == "paf") return AlignFormat::kPaf;
  return std::nullopt;
}

std::string identity_percent(const align::Result& r) {
  if (r.length == 0) return "0.00";
  return fmt::format("{:.2f}", 100.0 * static_cast<double>(r.matches) / static_cast<double>(r.length));
}

std::uint32_t edit_distance(const align::Result& r) { return r.length - r.matches; }

std::string sam_cigar(const align::Result& r, std::uint64_t query_length) {
  if (r.empty()) return "*";
  std::string cigar;
  if (r.query_begin > 0) cigar += fmt::format("{}S", r.query_begin);
  cigar += r.cigar;
  if (query_length > r.query_end) cigar += fmt::format("{}S", query_length - r.query_end);
  return cigar;
}

std::string tsv_header(bool with_cigar) {
  return with_cigar ? "query\ttarget\tscore\tqstart\tqend\ttstart\ttend\tcigar\tidentity\talnlen\n"
                    : "query\ttarget\tscore\tqstart\tqend\ttstart\ttend\n";
}

void append_tsv(std::string& out, const PairView& pair, const align::Result& r, bool with_cigar) {
  auto it = std::back_inserter(out);
  if (r.empty()) {  // BLAST-style 1-based inclusive coordinates have no value for "nothing": 0 0 0 0
    fmt::format_to(it, "{}\t{}\t{}\t0\t0\t0\t0", pair.query_name, pair.target_name, r.score);
  } else {
    fmt::format_to(it, "{}\t{}\t{}\t{}\t{}\t{}\t{}", pair.query_name, pair.target_name, r.score,
                   r.query_begin + std::uint64_t{1}, r.query_end, r.target_begin + std::uint64_t{1},
                   r.target_end);
  }
  if (with_cigar) {
    require_cigar(r, "TSV --cigar");
    fmt::format_to(it, "\t{}\t{}\t{}", or_star(r.cigar), identity_percent(r), r.length);
  }
  out += '\n';
}

std::string sam_header(std::span<const SamReference> references, std::string_view version) {
  std::string out = "@HD\tVN:1.6\tSO:unsorted\n";
  auto it = std::back_inserter(out);
  for (const SamReference& ref : references) fmt::format_to(it, "@SQ\tSN:{}\tLN:{}\n", ref.name, ref.length);
  fmt::format_to(it, "@PG\tID:warpsearch\tPN:warpsearch\tVN:{}\n", version);
  return out;
}

void append_sam(std::string& out, const PairView& pair, const align::Result& r) {
  require_cigar(r, "SAM");
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{}\t", or_star(pair.query_name));
  if (r.empty()) {
    // Unmapped, but placed on its target (SAM 1.6 section 1.4: an unmapped segment may carry a
    // coordinate) so that the pair stays identifiable.
    fmt::format_to(it, "4\t{}\t1\t0\t*", or_star(pair.target_name));
  } else {
    fmt::format_to(it, "0\t{}\t{}\t255\t{}", or_star(pair.target_name), r.target_begin + std::uint64_t{1},
                   sam_cigar(r, pair.query_length));
  }
  out += "\t*\t0\t0\t";
  if (pair.query_letters.empty()) {
    out += '*';
  } else {
    // SEQ allows letters, '=' and '.'; a protein stop '*' inside a sequence is written as X.
    for (const char c : pair.query_letters) out += c == '*' ? 'X' : c;
  }
  fmt::format_to(it, "\t{}\tAS:i:{}", or_star(pair.query_quality), r.score);
  if (!r.empty()) fmt::format_to(it, "\tNM:i:{}", edit_distance(r));
  out += '\n';
}

void append_paf(std::string& out, const PairView& pair, const align::Result& r) {
  require_cigar(r, "PAF");
  auto it = std::back_inserter(out);
  if (r.empty()) {
    fmt::format_to(it, "{}\t{}\t0\t0\t*\t{}\t{}\t0\t0\t0\t0\t0\tAS:i:{}\n", pair.query_name,
                   pair.query_length, pair.target_name, pair.target_length, r.score);
    return;
  }
  fmt::format_to(it, "{}\t{}\t{}\t{}\t+\t{}\t{}\t{}\t{}\t{}\t{}\t255\tAS:i:{}\tcg:Z:{}\n", pair.query_name,
                 pair.query_length, r.query_begin, r.query_end, pair.target_name, pair.target_length,
                 r.target_begin, r.target_end, r.matches, r.length, r.score, r.cigar);
}

}  // namespace warpsearch::cli
