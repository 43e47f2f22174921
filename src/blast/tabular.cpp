// tabular.cpp: BLAST+ 2.12 blastp tabular output (-outfmt 6 / 7); rules in tabular.hpp.
//
// Contents: the field table (name, description), format parsing, the number formats, per-HSP statistics
// from the edit script (length, nident, positive, gaps, gap opens, aligned letters, BTOP) and the writer.
#include "blast/tabular.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>
#include <utility>

#include "blast/display_matrix.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {

struct FieldInfo {
  TabularField field;
  std::string_view name;
  std::string_view description;
};

// In blastp -help order; descriptions as blastp 2.12 prints them in "# Fields:" (scomname's is plural there).
constexpr std::array kFields{
    FieldInfo{TabularField::kQseqid, "qseqid", "query id"},
    FieldInfo{TabularField::kQgi, "qgi", "query gi"},
    FieldInfo{TabularField::kQacc, "qacc", "query acc."},
    FieldInfo{TabularField::kQaccver, "qaccver", "query acc.ver"},
    FieldInfo{TabularField::kQlen, "qlen", "query length"},
    FieldInfo{TabularField::kSseqid, "sseqid", "subject id"},
    FieldInfo{TabularField::kSallseqid, "sallseqid", "subject ids"},
    FieldInfo{TabularField::kSgi, "sgi", "subject gi"},
    FieldInfo{TabularField::kSallgi, "sallgi", "subject gis"},
    FieldInfo{TabularField::kSacc, "sacc", "subject acc."},
    FieldInfo{TabularField::kSaccver, "saccver", "subject acc.ver"},
    FieldInfo{TabularField::kSallacc, "sallacc", "subject accs."},
    FieldInfo{TabularField::kSlen, "slen", "subject length"},
    FieldInfo{TabularField::kQstart, "qstart", "q. start"},
    FieldInfo{TabularField::kQend, "qend", "q. end"},
    FieldInfo{TabularField::kSstart, "sstart", "s. start"},
    FieldInfo{TabularField::kSend, "send", "s. end"},
    FieldInfo{TabularField::kQseq, "qseq", "query seq"},
    FieldInfo{TabularField::kSseq, "sseq", "subject seq"},
    FieldInfo{TabularField::kEvalue, "evalue", "evalue"},
    FieldInfo{TabularField::kBitscore, "bitscore", "bit score"},
    FieldInfo{TabularField::kScore, "score", "score"},
    FieldInfo{TabularField::kLength, "length", "alignment length"},
    FieldInfo{TabularField::kPident, "pident", "% identity"},
    FieldInfo{TabularField::kNident, "nident", "identical"},
    FieldInfo{TabularField::kMismatch, "mismatch", "mismatches"},
    FieldInfo{TabularField::kPositive, "positive", "positives"},
    FieldInfo{TabularField::kGapopen, "gapopen", "gap opens"},
    FieldInfo{TabularField::kGaps, "gaps", "gaps"},
    FieldInfo{TabularField::kPpos, "ppos", "% positives"},
    FieldInfo{TabularField::kFrames, "frames", "query/sbjct frames"},
    FieldInfo{TabularField::kQframe, "qframe", "query frame"},
    FieldInfo{TabularField::kSframe, "sframe", "sbjct frame"},
    FieldInfo{TabularField::kBtop, "btop", "BTOP"},
    FieldInfo{TabularField::kStaxid, "staxid", "subject tax id"},
    FieldInfo{TabularField::kSsciname, "ssciname", "subject sci name"},
    FieldInfo{TabularField::kScomname, "scomname", "subject com names"},
    FieldInfo{TabularField::kSblastname, "sblastname", "subject blast name"},
    FieldInfo{TabularField::kSskingdom, "sskingdom", "subject super kingdom"},
    FieldInfo{TabularField::kStaxids, "staxids", "subject tax ids"},
    FieldInfo{TabularField::kSscinames, "sscinames", "subject sci names"},
    FieldInfo{TabularField::kScomnames, "scomnames", "subject com names"},
    FieldInfo{TabularField::kSblastnames, "sblastnames", "subject blast names"},
    FieldInfo{TabularField::kSskingdoms, "sskingdoms", "subject super kingdoms"},
    FieldInfo{TabularField::kStitle, "stitle", "subject title"},
    FieldInfo{TabularField::kSalltitles, "salltitles", "subject titles"},
    FieldInfo{TabularField::kSstrand, "sstrand", "subject strand"},
    FieldInfo{TabularField::kQcovs, "qcovs", "% query coverage per subject"},
    FieldInfo{TabularField::kQcovhsp, "qcovhsp", "% query coverage per hsp"},
    FieldInfo{TabularField::kQcovus, "qcovus", "% query coverage per uniq subject"},
};

const FieldInfo& info(TabularField field) {
  for (const FieldInfo& f : kFields)
    if (f.field == field) return f;
  throw Error(ErrorKind::kInternal, "tabular field without a table entry");
}

constexpr std::array kStd{TabularField::kQaccver, TabularField::kSaccver,  TabularField::kPident,
                          TabularField::kLength,  TabularField::kMismatch, TabularField::kGapopen,
                          TabularField::kQstart,  TabularField::kQend,     TabularField::kSstart,
                          TabularField::kSend,    TabularField::kEvalue,   TabularField::kBitscore};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<std::string_view> split_blanks(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) ++i;
    std::size_t j = i;
    while (j < text.size() && !is_blank(text[j])) ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

// Coverage percentage: (int)(x + 0.5) below 99 %, truncated from 99 % on.
int coverage_percent(int covered, int length) {
  if (length <= 0) return 0;
  double x = 100.0 * static_cast<double>(covered) / static_cast<double>(length);
  if (x < 99) x += 0.5;
  return static_cast<int>(x);
}

// Query residues covered by the union of [q_start, q_end) over the given HSPs.
int union_coverage(std::vector<std::pair<int, int>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  int covered = 0, end = -1;
  for (const auto& [b, e] : ranges) {
    const int start = std::max(b, end);
    if (e > start) covered += e - start;
    end = std::max(end, e);
  }
  return covered;
}

}  // namespace

std::string_view defline_id(std::string_view defline) {
  std::size_t i = 0;
  while (i < defline.size() && is_blank(defline[i])) ++i;
  std::size_t j = i;
  while (j < defline.size() && !is_blank(defline[j])) ++j;
  return defline.substr(i, j - i);
}

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

HspStats hsp_stats(const TabularHsp& hsp, Residues query, Residues subject, const ScoringMatrix& matrix,
                   const DisplayMatrix* display) {
  const Alphabet alpha(matrix.alphabet());
  HspStats st;
  std::size_t qi = static_cast<std::size_t>(hsp.q_start);
  std::size_t si = static_cast<std::size_t>(hsp.s_start);
  int identities = 0;
  auto flush = [&] {
    if (identities > 0) st.btop += std::to_string(identities);
    identities = 0;
  };
  auto bad = [&] {
    return Error(ErrorKind::kInternal,
                 fmt::format("tabular HSP q[{}, {}) s[{}, {}): edit script does not match", hsp.q_start,
                             hsp.q_end, hsp.s_start, hsp.s_end));
  };
  if (hsp.q_start < 0 || hsp.s_start < 0 || hsp.q_end > static_cast<int>(query.size()) ||
      hsp.s_end > static_cast<int>(subject.size()))
    throw bad();
  for (const EditRun& run : hsp.script) {
    if (run.length <= 0) throw bad();
    if (run.op != EditOp::kSubstitution) {
      st.gaps += run.length;
      ++st.gap_opens;
    }
    for (int k = 0; k < run.length; ++k) {
      ++st.length;
      if (run.op != EditOp::kDeletion && qi >= static_cast<std::size_t>(hsp.q_end)) throw bad();
      if (run.op != EditOp::kInsertion && si >= static_cast<std::size_t>(hsp.s_end)) throw bad();
      if (run.op == EditOp::kSubstitution) {
        const std::uint8_t a = query[qi++], b = subject[si++];
        st.qseq += alpha.symbol(a);
        st.sseq += alpha.symbol(b);
        if (display != nullptr ? display->positive(alpha.symbol(a), alpha.symbol(b)) : matrix.score(a, b) > 0)
          ++st.positive;
        if (a == b) {
          ++st.nident;
          ++identities;
        } else {
          flush();
          st.btop += alpha.symbol(a);
          st.btop += alpha.symbol(b);
        }
      } else if (run.op == EditOp::kInsertion) {
        flush();
        st.qseq += alpha.symbol(query[qi]);
        st.sseq += '-';
        st.btop += alpha.symbol(query[qi++]);
        st.btop += '-';
      } else {
        flush();
        st.qseq += '-';
        st.sseq += alpha.symbol(subject[si]);
        st.btop += '-';
        st.btop += alpha.symbol(subject[si++]);
      }
    }
  }
  flush();
  if (qi != static_cast<std::size_t>(hsp.q_end) || si != static_cast<std::size_t>(hsp.s_end)) throw bad();
  return st;
}

std::string_view field_name(TabularField field) { return info(field).name; }
std::string_view field_description(TabularField field) { return info(field).description; }

std::string supported_tabular_fields() {
  std::string out = "std";
  for (const FieldInfo& f : kFields) {
    out += ' ';
    out += f.name;
  }
  return out;
}

TabularFormat parse_tabular_format(std::string_view spec) {
  const std::vector<std::string_view> words = split_blanks(spec);
  if (words.empty() || (words[0] != "6" && words[0] != "7" && words[0] != "10"))
    throw Error(
        ErrorKind::kUsage,
        fmt::format("unsupported -outfmt '{}': only tabular formats 6, 7 and 10 are implemented", spec));
  TabularFormat format;
  format.outfmt = words[0] == "6" ? 6 : words[0] == "7" ? 7 : 10;
  if (format.outfmt == 10) format.delimiter = ",";
  std::size_t first_field = 1;
  constexpr std::string_view kDelim = "delim=";
  if (words.size() > 1 && words[1].substr(0, kDelim.size()) == kDelim) {
    if (words[1].size() > kDelim.size()) format.delimiter = std::string(words[1].substr(kDelim.size()));
    first_field = 2;
  }
  // blastp keeps the first occurrence of a field (also one that "std" repeats).
  auto add = [&](TabularField f) {
    if (std::find(format.fields.begin(), format.fields.end(), f) == format.fields.end())
      format.fields.push_back(f);
  };
  for (std::size_t i = first_field; i < words.size(); ++i) {
    if (words[i].substr(0, kDelim.size()) == kDelim)
      throw Error(ErrorKind::kUsage,
                  fmt::format("-outfmt '{}': {} must come right after the format number", spec, words[i]));
    if (words[i] == "std") {
      for (TabularField f : kStd) add(f);
      continue;
    }
    const auto it =
        std::find_if(kFields.begin(), kFields.end(), [&](const FieldInfo& f) { return f.name == words[i]; });
    if (it == kFields.end())
      throw Error(ErrorKind::kUsage, fmt::format("unsupported -outfmt field '{}'; supported fields: {}",
                                                 words[i], supported_tabular_fields()));
    add(it->field);
  }
  if (format.fields.empty()) format.fields.assign(kStd.begin(), kStd.end());
  return format;
}

std::string format_tabular_evalue(double evalue) {
  if (evalue < 1.0e-180) return "0.0";
  if (evalue < 0.0009) return fmt::format("{:.2e}", evalue);
  if (evalue < 0.1) return fmt::format("{:.3f}", evalue);
  if (evalue < 1.0) return fmt::format("{:.2f}", evalue);
  if (evalue < 10.0) return fmt::format("{:.1f}", evalue);
  return fmt::format("{:.0f}", evalue);
}

std::string format_tabular_bitscore(double bits) {
  if (bits > 99999) return fmt::format("{:5.3e}", bits);
  if (bits > 99.9) return fmt::format("{:3d}", static_cast<long>(bits));
  return fmt::format("{:4.1f}", bits);
}

std::string subject_database_label(std::string_view subject_path) {
  return fmt::format("User specified sequence set (Input: {})", subject_path);
}

std::string_view fasta_defline(std::string_view defline) {
  for (std::size_t i = 0; i < defline.size(); ++i)
    if (static_cast<unsigned char>(defline[i]) < 0x20) return defline.substr(0, i);
  return defline;
}

TabularWriter::TabularWriter(TabularFormat format, const ScoringMatrix& matrix, TabularOptions options)
    : format_(std::move(format)),
      matrix_(matrix),
      display_(matrix.alphabet() == AlphabetKind::kProtein ? std::make_shared<const DisplayMatrix>(matrix)
                                                           : nullptr),
      options_(std::move(options)) {}

std::string TabularWriter::query(const TabularSequence& query, std::span<const TabularSequence> subjects,
                                 std::span<const TabularHit> hits) const {
  std::string out;
  auto it = std::back_inserter(out);
  if (format_.outfmt == 7) {
    fmt::format_to(it, "# {}\n# Query: {}\n# Database: {}\n", options_.program,
                   trim_right(fasta_defline(query.defline)), options_.database_label);
    if (!hits.empty()) {
      out += "# Fields: ";
      for (std::size_t i = 0; i < format_.fields.size(); ++i) {
        if (i > 0) out += ", ";
        out += field_description(format_.fields[i]);
      }
      out += '\n';
    }
    fmt::format_to(it, "# {} hits found\n", hits.size());
  }
  const bool need_qcovs =
      std::find(format_.fields.begin(), format_.fields.end(), TabularField::kQcovs) != format_.fields.end();
  const std::string_view qid =
      defline_id(query.defline).empty() ? query.unnamed_id : defline_id(query.defline);
  const int qlen = static_cast<int>(query.residues.size());
  for (const TabularHit& hit : hits) {
    if (hit.subject >= subjects.size())
      throw Error(ErrorKind::kInternal, "tabular hit with a bad subject index");
    const TabularSequence& subject = subjects[hit.subject];
    const TabularHsp& hsp = hit.hsp;
    const HspStats st = hsp_stats(hsp, query.residues, subject.residues, matrix_, display_.get());
    std::string_view sid = defline_id(subject.defline);
    std::string_view all_sid = sid;
    if (sid.empty() && !subject.unnamed_id.empty()) {
      sid = "unnamed";
      all_sid = subject.unnamed_id;
    }
    int qcovs = 0;
    if (need_qcovs) {
      std::vector<std::pair<int, int>> ranges;
      for (const TabularHit& other : hits)
        if (other.subject == hit.subject) ranges.emplace_back(other.hsp.q_start, other.hsp.q_end);
      qcovs = coverage_percent(union_coverage(std::move(ranges)), qlen);
    }
    for (std::size_t i = 0; i < format_.fields.size(); ++i) {
      if (i > 0) out += format_.delimiter;
      switch (format_.fields[i]) {
        case TabularField::kQseqid:
        case TabularField::kQacc:
        case TabularField::kQaccver: out += qid; break;
        case TabularField::kSseqid: out += subject.ids ? std::string_view(subject.ids->seqid) : sid; break;
        case TabularField::kSallseqid:
          out += subject.ids ? std::string_view(subject.ids->all_seqids) : all_sid;
          break;
        case TabularField::kSacc: out += subject.ids ? std::string_view(subject.ids->acc) : sid; break;
        case TabularField::kSaccver: out += subject.ids ? std::string_view(subject.ids->accver) : sid; break;
        case TabularField::kSallacc:
          out += subject.ids ? std::string_view(subject.ids->all_accs) : all_sid;
          break;
        case TabularField::kQgi:
        case TabularField::kSgi:
        case TabularField::kSallgi: out += '0'; break;
        case TabularField::kQlen: fmt::format_to(it, "{}", qlen); break;
        case TabularField::kSlen: fmt::format_to(it, "{}", subject.residues.size()); break;
        case TabularField::kQstart: fmt::format_to(it, "{}", hsp.q_start + 1); break;
        case TabularField::kQend: fmt::format_to(it, "{}", hsp.q_end); break;
        case TabularField::kSstart: fmt::format_to(it, "{}", hsp.s_start + 1); break;
        case TabularField::kSend: fmt::format_to(it, "{}", hsp.s_end); break;
        case TabularField::kQseq: out += st.qseq; break;
        case TabularField::kSseq: out += st.sseq; break;
        case TabularField::kEvalue: out += format_tabular_evalue(hsp.evalue); break;
        case TabularField::kBitscore: out += format_tabular_bitscore(hsp.bits); break;
        case TabularField::kScore: fmt::format_to(it, "{}", hsp.score); break;
        case TabularField::kLength: fmt::format_to(it, "{}", st.length); break;
        case TabularField::kPident:
          // blastp computes nident / length first, then * 100 (100.0 * nident / length rounds differently on
          // exact ties such as 51/320).
          fmt::format_to(
              it, "{:.3f}",
              static_cast<double>(st.nident) / static_cast<double>(std::max(st.length, 1)) * 100.0);
          break;
        case TabularField::kNident: fmt::format_to(it, "{}", st.nident); break;
        case TabularField::kMismatch: fmt::format_to(it, "{}", st.length - st.nident - st.gaps); break;
        case TabularField::kPositive: fmt::format_to(it, "{}", st.positive); break;
        case TabularField::kGapopen: fmt::format_to(it, "{}", st.gap_opens); break;
        case TabularField::kGaps: fmt::format_to(it, "{}", st.gaps); break;
        case TabularField::kPpos:
          fmt::format_to(
              it, "{:.2f}",
              static_cast<double>(st.positive) / static_cast<double>(std::max(st.length, 1)) * 100.0);
          break;
        case TabularField::kFrames: out += "1/1"; break;
        case TabularField::kQframe:
        case TabularField::kSframe: out += '1'; break;
        case TabularField::kBtop: out += st.btop; break;
        case TabularField::kStitle:
        case TabularField::kSalltitles:
          // -subject: N/A; a BLAST database without -parse_seqids keeps the defline as written (trailing
          // blanks included), one with them the title.
          if (options_.subject_mode) {
            out += "N/A";
          } else if (subject.ids != nullptr) {
            out += format_.fields[i] == TabularField::kStitle ? subject.ids->title : subject.ids->all_titles;
          } else {
            out += subject.defline;
          }
          break;
        case TabularField::kStaxids:
          out += options_.subject_mode ? "N/A" : "0";
          break;  // a database: taxid 0
        case TabularField::kStaxid:
        case TabularField::kSsciname:
        case TabularField::kScomname:
        case TabularField::kSblastname:
        case TabularField::kSskingdom:
        case TabularField::kSscinames:
        case TabularField::kScomnames:
        case TabularField::kSblastnames:
        case TabularField::kSskingdoms:
        case TabularField::kSstrand:
        case TabularField::kQcovus: out += "N/A"; break;
        case TabularField::kQcovs: fmt::format_to(it, "{}", qcovs); break;
        case TabularField::kQcovhsp:
          fmt::format_to(it, "{}", coverage_percent(hsp.q_end - hsp.q_start, qlen));
          break;
      }
    }
    out += '\n';
  }
  return out;
}

std::string TabularWriter::footer(std::size_t queries) const {
  if (format_.outfmt != 7) return {};
  return fmt::format("# {} processed {} queries\n", options_.processed_by, queries);
}

}  // namespace warpsearch::blast
