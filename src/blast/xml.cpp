// xml.cpp: XmlWriter (xml.hpp), blastp's -outfmt 5.
#include "blast/xml.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "blast/display_matrix.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast {
namespace {

// The reference blastp 2.12 prints (CReference::eGappedBlast), escaped: "&auml;" is part of the text.
constexpr std::string_view kReference =
    "Stephen F. Altschul, Thomas L. Madden, Alejandro A. Sch&amp;auml;ffer, Jinghui Zhang, Zheng Zhang, Webb "
    "Miller, and David J. Lipman (1997), &quot;Gapped BLAST and PSI-BLAST: a new generation of protein "
    "database search programs&quot;, Nucleic Acids Res. 25:3389-3402.";

// One "  <tag>text</tag>\n" line at the given indent (text already escaped).
void element(std::string& out, int indent, std::string_view tag, std::string_view text) {
  out.append(static_cast<std::size_t>(indent), ' ');
  fmt::format_to(std::back_inserter(out), "<{}>{}</{}>\n", tag, text, tag);
}

// The UTF-8 sequence starting at text[i] (a byte >= 0x80): its length and code point, or 0 when the bytes
// there are not UTF-8.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& cp) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t n = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (d & 0x3Fu);
  }
  return n;
}

// The value blastp stores for a bit score or an E-value: printed with 6 significant digits, read back.
double six_digits(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return std::strtod(buffer, nullptr);
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '&': out += "&amp;"; continue;
      case '<': out += "&lt;"; continue;
      case '>': out += "&gt;"; continue;
      case '"': out += "&quot;"; continue;
      case '\'': out += "&apos;"; continue;
      default: break;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // blastp's writer stores text as Latin-1: a UTF-8 letter of U+0080..U+00FF becomes its byte. (blastp
    // stops with an error on other characters; they are written as character references here.)
    char32_t cp = 0;
    if (const std::size_t n = utf8_sequence(text, i, cp); n > 0) {
      if (cp <= 0xFF)
        out += static_cast<char>(static_cast<unsigned char>(cp));
      else
        fmt::format_to(std::back_inserter(out), "&#x{:X};", static_cast<std::uint32_t>(cp));
      i += n - 1;
      continue;
    }
    out += static_cast<char>(c);  // not UTF-8: the byte as it is (Latin-1)
  }
  return out;
}

std::string xml_double(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.15g", value);
  return buffer;
}

XmlWriter::XmlWriter(const ScoringMatrix& matrix, XmlOptions options)
    : matrix_(matrix),
      display_(std::make_shared<const DisplayMatrix>(matrix)),
      options_(std::move(options)) {}

std::string XmlWriter::header(std::string_view first_defline, std::size_t first_length) const {
  std::string out =
      "<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE BlastOutput PUBLIC \"-//NCBI//NCBI BlastOutput/EN\" "
      "\"http://www.ncbi.nlm.nih.gov/dtd/NCBI_BlastOutput.dtd\">\n"
      "<BlastOutput>\n";
  element(out, 2, "BlastOutput_program", "blastp");
  element(out, 2, "BlastOutput_version", "BLASTP 2.12.0+");
  element(out, 2, "BlastOutput_reference", kReference);
  element(out, 2, "BlastOutput_db", options_.subject_mode ? std::string() : xml_escape(options_.database));
  element(out, 2, "BlastOutput_query-ID", "Query_1");
  const std::string_view def = trim_right(fasta_defline(first_defline));
  element(out, 2, "BlastOutput_query-def", def.empty() ? "unnamed protein product" : xml_escape(def));
  element(out, 2, "BlastOutput_query-len", std::to_string(first_length));
  out += "  <BlastOutput_param>\n    <Parameters>\n";
  element(out, 6, "Parameters_matrix", xml_escape(matrix_.name()));
  element(out, 6, "Parameters_expect", xml_double(options_.evalue));
  element(out, 6, "Parameters_gap-open", std::to_string(options_.gaps.open));
  element(out, 6, "Parameters_gap-extend", std::to_string(options_.gaps.extend));
  element(out, 6, "Parameters_filter", options_.seg ? "L;" : "F");
  out += "    </Parameters>\n  </BlastOutput_param>\n<BlastOutput_iterations>\n";
  return out;
}

std::string XmlWriter::query(const XmlQuery& q, std::span<const XmlSubjectHits> hits) const {
  const Alphabet alpha = Alphabet::protein();
  const DisplayMatrix& display = *display_;
  const std::string query_id = fmt::format("Query_{}", q.number);
  const std::string_view def_text = trim_right(fasta_defline(q.defline));
  const std::string def = def_text.empty() ? "unnamed protein product" : xml_escape(def_text);
  std::string out = "<Iteration>\n";
  element(out, 2, "Iteration_iter-num", std::to_string(q.number));
  element(out, 2, "Iteration_query-ID", query_id);
  element(out, 2, "Iteration_query-def", def);
  element(out, 2, "Iteration_query-len", std::to_string(q.residues.size()));
  out += "<Iteration_hits>\n";
  // Masked query positions (Hsp_qseq shows X there).
  std::vector<bool> masked(q.residues.size(), false);
  for (const Interval& iv : q.mask)
    for (std::int64_t k = std::max<std::int64_t>(iv.begin, 0);
         k < iv.end && k < static_cast<std::int64_t>(masked.size()); ++k)
      masked[static_cast<std::size_t>(k)] = true;
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const XmlSubjectHits& hit = hits[h];
    out += "<Hit>\n";
    element(out, 2, "Hit_num", std::to_string(h + 1));
    element(out, 2, "Hit_id", xml_escape(hit.subject.id));
    element(out, 2, "Hit_def", hit.subject.def.empty() ? "No definition line" : xml_escape(hit.subject.def));
    element(out, 2, "Hit_accession", xml_escape(hit.subject.accession));
    element(out, 2, "Hit_len", std::to_string(hit.subject.residues.size()));
    out += "  <Hit_hsps>\n";
    for (std::size_t k = 0; k < hit.hsps.size(); ++k) {
      const TabularHsp& hsp = hit.hsps[k];
      const HspStats st = hsp_stats(hsp, q.residues, hit.subject.residues, matrix_, &display);
      // The midline and the masked query line, column by column.
      std::string midline(st.qseq.size(), ' ');
      std::string qseq = st.qseq;
      std::size_t qi = static_cast<std::size_t>(hsp.q_start);
      for (std::size_t c = 0; c < st.qseq.size(); ++c) {
        const char a = st.qseq[c], b = st.sseq[c];
        if (a == b)
          midline[c] = a;
        else if (a != '-' && b != '-' && display.positive(a, b))
          midline[c] = '+';
        if (a != '-') {
          if (masked[qi]) qseq[c] = alpha.symbol(kProteinUnknown);
          ++qi;
        }
      }
      out += "    <Hsp>\n";
      element(out, 6, "Hsp_num", std::to_string(k + 1));
      element(out, 6, "Hsp_bit-score", xml_double(six_digits(hsp.bits)));
      element(out, 6, "Hsp_score", std::to_string(hsp.score));
      // blastp stores E-values below 1e-180 as 0 (checked: 6.3e-182 prints 0, 4.6e-179 prints itself).
      element(out, 6, "Hsp_evalue", xml_double(hsp.evalue < 1.0e-180 ? 0.0 : six_digits(hsp.evalue)));
      element(out, 6, "Hsp_query-from", std::to_string(hsp.q_start + 1));
      element(out, 6, "Hsp_query-to", std::to_string(hsp.q_end));
      element(out, 6, "Hsp_hit-from", std::to_string(hsp.s_start + 1));
      element(out, 6, "Hsp_hit-to", std::to_string(hsp.s_end));
      element(out, 6, "Hsp_query-frame", "0");
      element(out, 6, "Hsp_hit-frame", "0");
      element(out, 6, "Hsp_identity", std::to_string(st.nident));
      element(out, 6, "Hsp_positive", std::to_string(st.positive));
      element(out, 6, "Hsp_gaps", std::to_string(st.gaps));
      element(out, 6, "Hsp_align-len", std::to_string(st.length));
      element(out, 6, "Hsp_qseq", qseq);
      element(out, 6, "Hsp_hseq", st.sseq);
      element(out, 6, "Hsp_midline", midline);
      out += "    </Hsp>\n";
    }
    out += "  </Hit_hsps>\n</Hit>\n";
  }
  out += "</Iteration_hits>\n  <Iteration_stat>\n    <Statistics>\n";
  const bool empty = q.residues.empty();  // blastp: no statistics ("Sequence contains no data")
  element(out, 6, "Statistics_db-num",
          std::to_string(options_.subject_mode ? 0 : options_.database_sequences));
  element(out, 6, "Statistics_db-len", std::to_string(options_.subject_mode ? 0 : options_.database_letters));
  element(out, 6, "Statistics_hsp-len", std::to_string(empty ? 0 : q.length_adjustment));
  element(out, 6, "Statistics_eff-space", xml_double(empty ? 0.0 : static_cast<double>(q.search_space)));
  element(out, 6, "Statistics_kappa", xml_double(empty ? -1.0 : q.gapped.K));
  element(out, 6, "Statistics_lambda", xml_double(empty ? -1.0 : q.gapped.lambda));
  element(out, 6, "Statistics_entropy", xml_double(empty ? -1.0 : q.gapped.H));
  out += "    </Statistics>\n  </Iteration_stat>\n";
  if (empty) {
    const std::string who = fmt::format("{} {}", query_id, def);
    element(out, 2, "Iteration_message",
            fmt::format("{}:  {}: Sequence contains no data  No hits found", who, who));
  } else if (hits.empty()) {
    element(out, 2, "Iteration_message", "No hits found");
  }
  out += "</Iteration>\n";
  return out;
}

std::string XmlWriter::footer() const { return "</BlastOutput_iterations>\n</BlastOutput>\n\n"; }

}  // namespace warpsearch::blast
