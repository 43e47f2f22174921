// pairwise.cpp: BLAST+ 2.12 blastp's pairwise report (-outfmt 0); the rules are in pairwise.hpp.
//
// Contents: text helpers (defline cut, blank trimming, NStr::Wrap's flat-file wrapping, showalign's
// 60-column title wrapping, the CDeflineGenerator title cleanup), number formats, the per-HSP rows built
// from the edit script, and the writer.
#include "blast/pairwise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <optional>
#include <utility>

#include "blast/display_matrix.hpp"
#include "blast/tabular.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {

constexpr std::size_t kTitleWidth = 68;     // Query= / Database: wrapping and description column
constexpr std::size_t kHeadingWrap = 60;    // showalign's s_WrapOutputLine
constexpr std::size_t kMinScoreWidth = 6;   // "(Bits)"
constexpr std::size_t kMinEvalueWidth = 5;  // "Value"
constexpr std::string_view kUnnamed = "unnamed protein product";

// C isspace in the "C" locale.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string trim_left_padding(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  return s;
}

// Erases trailing characters of `set` unless that would erase everything (find_last_not_of == npos).
void strip_trailing(std::string& s, std::string_view set) {
  const std::size_t pos = s.find_last_not_of(set);
  if (pos != std::string::npos) s.erase(pos + 1);
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Named character references NStr::HtmlDecode knows: ASCII punctuation names and HTML 4.01's entities.
struct Entity {
  std::string_view name;
  std::uint32_t cp;
};
constexpr Entity kEntities[] = {
    Entity{"Tab", 9},       Entity{"NewLine", 10},  Entity{"excl", 33},      Entity{"quot", 34},
    Entity{"num", 35},      Entity{"dollar", 36},   Entity{"percnt", 37},    Entity{"amp", 38},
    Entity{"apos", 39},     Entity{"lpar", 40},     Entity{"rpar", 41},      Entity{"ast", 42},
    Entity{"plus", 43},     Entity{"comma", 44},    Entity{"period", 46},    Entity{"sol", 47},
    Entity{"colon", 58},    Entity{"semi", 59},     Entity{"lt", 60},        Entity{"equals", 61},
    Entity{"gt", 62},       Entity{"quest", 63},    Entity{"commat", 64},    Entity{"lsqb", 91},
    Entity{"bsol", 92},     Entity{"rsqb", 93},     Entity{"Hat", 94},       Entity{"lowbar", 95},
    Entity{"grave", 96},    Entity{"lcub", 123},    Entity{"verbar", 124},   Entity{"rcub", 125},
    Entity{"nbsp", 160},    Entity{"iexcl", 161},   Entity{"cent", 162},     Entity{"pound", 163},
    Entity{"curren", 164},  Entity{"yen", 165},     Entity{"brvbar", 166},   Entity{"sect", 167},
    Entity{"uml", 168},     Entity{"copy", 169},    Entity{"ordf", 170},     Entity{"laquo", 171},
    Entity{"not", 172},     Entity{"shy", 173},     Entity{"reg", 174},      Entity{"macr", 175},
    Entity{"deg", 176},     Entity{"plusmn", 177},  Entity{"sup2", 178},     Entity{"sup3", 179},
    Entity{"acute", 180},   Entity{"micro", 181},   Entity{"para", 182},     Entity{"middot", 183},
    Entity{"cedil", 184},   Entity{"sup1", 185},    Entity{"ordm", 186},     Entity{"raquo", 187},
    Entity{"frac14", 188},  Entity{"frac12", 189},  Entity{"frac34", 190},   Entity{"iquest", 191},
    Entity{"Agrave", 192},  Entity{"Aacute", 193},  Entity{"Acirc", 194},    Entity{"Atilde", 195},
    Entity{"Auml", 196},    Entity{"Aring", 197},   Entity{"AElig", 198},    Entity{"Ccedil", 199},
    Entity{"Egrave", 200},  Entity{"Eacute", 201},  Entity{"Ecirc", 202},    Entity{"Euml", 203},
    Entity{"Igrave", 204},  Entity{"Iacute", 205},  Entity{"Icirc", 206},    Entity{"Iuml", 207},
    Entity{"ETH", 208},     Entity{"Ntilde", 209},  Entity{"Ograve", 210},   Entity{"Oacute", 211},
    Entity{"Ocirc", 212},   Entity{"Otilde", 213},  Entity{"Ouml", 214},     Entity{"times", 215},
    Entity{"Oslash", 216},  Entity{"Ugrave", 217},  Entity{"Uacute", 218},   Entity{"Ucirc", 219},
    Entity{"Uuml", 220},    Entity{"Yacute", 221},  Entity{"THORN", 222},    Entity{"szlig", 223},
    Entity{"agrave", 224},  Entity{"aacute", 225},  Entity{"acirc", 226},    Entity{"atilde", 227},
    Entity{"auml", 228},    Entity{"aring", 229},   Entity{"aelig", 230},    Entity{"ccedil", 231},
    Entity{"egrave", 232},  Entity{"eacute", 233},  Entity{"ecirc", 234},    Entity{"euml", 235},
    Entity{"igrave", 236},  Entity{"iacute", 237},  Entity{"icirc", 238},    Entity{"iuml", 239},
    Entity{"eth", 240},     Entity{"ntilde", 241},  Entity{"ograve", 242},   Entity{"oacute", 243},
    Entity{"ocirc", 244},   Entity{"otilde", 245},  Entity{"ouml", 246},     Entity{"divide", 247},
    Entity{"oslash", 248},  Entity{"ugrave", 249},  Entity{"uacute", 250},   Entity{"ucirc", 251},
    Entity{"uuml", 252},    Entity{"yacute", 253},  Entity{"thorn", 254},    Entity{"yuml", 255},
    Entity{"fnof", 402},    Entity{"Alpha", 913},   Entity{"Beta", 914},     Entity{"Gamma", 915},
    Entity{"Delta", 916},   Entity{"Epsilon", 917}, Entity{"Zeta", 918},     Entity{"Eta", 919},
    Entity{"Theta", 920},   Entity{"Iota", 921},    Entity{"Kappa", 922},    Entity{"Lambda", 923},
    Entity{"Mu", 924},      Entity{"Nu", 925},      Entity{"Xi", 926},       Entity{"Omicron", 927},
    Entity{"Pi", 928},      Entity{"Rho", 929},     Entity{"Sigma", 931},    Entity{"Tau", 932},
    Entity{"Upsilon", 933}, Entity{"Phi", 934},     Entity{"Chi", 935},      Entity{"Psi", 936},
    Entity{"Omega", 937},   Entity{"alpha", 945},   Entity{"beta", 946},     Entity{"gamma", 947},
    Entity{"delta", 948},   Entity{"epsilon", 949}, Entity{"zeta", 950},     Entity{"eta", 951},
    Entity{"theta", 952},   Entity{"iota", 953},    Entity{"kappa", 954},    Entity{"lambda", 955},
    Entity{"mu", 956},      Entity{"nu", 957},      Entity{"xi", 958},       Entity{"omicron", 959},
    Entity{"pi", 960},      Entity{"rho", 961},     Entity{"sigmaf", 962},   Entity{"sigma", 963},
    Entity{"tau", 964},     Entity{"upsilon", 965}, Entity{"phi", 966},      Entity{"chi", 967},
    Entity{"psi", 968},     Entity{"omega", 969},   Entity{"thetasym", 977}, Entity{"upsih", 978},
    Entity{"piv", 982},     Entity{"bull", 8226},   Entity{"hellip", 8230},  Entity{"prime", 8242},
    Entity{"Prime", 8243},  Entity{"oline", 8254},  Entity{"frasl", 8260},   Entity{"weierp", 8472},
    Entity{"image", 8465},  Entity{"real", 8476},   Entity{"trade", 8482},   Entity{"alefsym", 8501},
    Entity{"larr", 8592},   Entity{"uarr", 8593},   Entity{"rarr", 8594},    Entity{"darr", 8595},
    Entity{"harr", 8596},   Entity{"crarr", 8629},  Entity{"lArr", 8656},    Entity{"uArr", 8657},
    Entity{"rArr", 8658},   Entity{"dArr", 8659},   Entity{"hArr", 8660},    Entity{"forall", 8704},
    Entity{"part", 8706},   Entity{"exist", 8707},  Entity{"empty", 8709},   Entity{"nabla", 8711},
    Entity{"isin", 8712},   Entity{"notin", 8713},  Entity{"ni", 8715},      Entity{"prod", 8719},
    Entity{"sum", 8721},    Entity{"minus", 8722},  Entity{"lowast", 8727},  Entity{"radic", 8730},
    Entity{"prop", 8733},   Entity{"infin", 8734},  Entity{"ang", 8736},     Entity{"and", 8743},
    Entity{"or", 8744},     Entity{"cap", 8745},    Entity{"cup", 8746},     Entity{"int", 8747},
    Entity{"there4", 8756}, Entity{"sim", 8764},    Entity{"cong", 8773},    Entity{"asymp", 8776},
    Entity{"ne", 8800},     Entity{"equiv", 8801},  Entity{"le", 8804},      Entity{"ge", 8805},
    Entity{"sub", 8834},    Entity{"sup", 8835},    Entity{"nsub", 8836},    Entity{"sube", 8838},
    Entity{"supe", 8839},   Entity{"oplus", 8853},  Entity{"otimes", 8855},  Entity{"perp", 8869},
    Entity{"sdot", 8901},   Entity{"lceil", 8968},  Entity{"rceil", 8969},   Entity{"lfloor", 8970},
    Entity{"rfloor", 8971}, Entity{"lang", 9001},   Entity{"rang", 9002},    Entity{"loz", 9674},
    Entity{"spades", 9824}, Entity{"clubs", 9827},  Entity{"hearts", 9829},  Entity{"diams", 9830},
    Entity{"OElig", 338},   Entity{"oelig", 339},   Entity{"Scaron", 352},   Entity{"scaron", 353},
    Entity{"Yuml", 376},    Entity{"circ", 710},    Entity{"tilde", 732},    Entity{"ensp", 8194},
    Entity{"emsp", 8195},   Entity{"thinsp", 8201}, Entity{"zwnj", 8204},    Entity{"zwj", 8205},
    Entity{"lrm", 8206},    Entity{"rlm", 8207},    Entity{"ndash", 8211},   Entity{"mdash", 8212},
    Entity{"lsquo", 8216},  Entity{"rsquo", 8217},  Entity{"sbquo", 8218},   Entity{"ldquo", 8220},
    Entity{"rdquo", 8221},  Entity{"bdquo", 8222},  Entity{"dagger", 8224},  Entity{"Dagger", 8225},
    Entity{"permil", 8240}, Entity{"lsaquo", 8249}, Entity{"rsaquo", 8250},  Entity{"euro", 8364}};

// The references "&name;" (kEntities), "&#N;" and "&#xH;" as UTF-8; anything else stays as written.
std::string html_decode(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '&') {
      out += s[i++];
      continue;
    }
    const std::size_t semi = s.find(';', i + 1);
    std::optional<std::uint32_t> cp;
    if (semi != std::string_view::npos) {
      const std::string_view body = s.substr(i + 1, semi - i - 1);
      if (body.size() >= 2 && body[0] == '#') {
        const bool hex = body[1] == 'x' || body[1] == 'X';
        const std::string_view digits = body.substr(hex ? 2 : 1);
        std::uint64_t v = 0;
        bool ok = !digits.empty() && digits.size() <= 8;
        for (char c : digits) {
          int d = -1;
          if (c >= '0' && c <= '9')
            d = c - '0';
          else if (hex && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
          else if (hex && c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
          if (d < 0)
            ok = false;
          else
            v = v * (hex ? 16u : 10u) + static_cast<std::uint64_t>(d);
        }
        if (ok && v > 0 && v <= 0x10FFFF) cp = static_cast<std::uint32_t>(v);
      } else {
        for (const Entity& e : kEntities)
          if (e.name == body) cp = e.cp;
      }
    }
    if (cp) {
      append_utf8(out, *cp);
      i = semi + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// x_CleanAndCompress for a protein: scans pairs of characters (previous, current) with BLAST's rules.
// BLAST reads past the end of the string for some titles of only punctuation; this scan stops there.
std::string clean_and_compress(std::string_view in) {
  while (!in.empty() && in.front() == ' ') in.remove_prefix(1);
  while (!in.empty() && in.back() == ' ') in.remove_suffix(1);
  std::string out;
  if (in.empty()) return out;
  std::size_t i = 0;
  char curr = in[i++];
  unsigned two = static_cast<unsigned char>(curr);
  auto pair = [](char a, char b) {
    return (static_cast<unsigned>(static_cast<unsigned char>(a)) << 8) | static_cast<unsigned char>(b);
  };
  while (i < in.size()) {
    char next = in[i++];
    two = ((two << 8) | static_cast<unsigned char>(next)) & 0xFFFFu;
    if (two == pair(',', ',')) {  // ",," -> ", "
      out += curr;
      next = ' ';
    } else if (two == pair(' ', ' ') || two == pair(' ', ')')) {  // keep the last blank; none before ')'
    } else if (two == pair('(', ' ')) {                           // no blank after '('
      next = curr;
      two = static_cast<unsigned char>(curr);
    } else if (two == pair(' ', ',') || two == pair(' ', ';')) {  // " ," -> ", "
      out += next;
      next = curr;
      two = static_cast<unsigned char>(curr);
    } else if (two == pair(',', ' ') || two == pair(';', ' ')) {  // ", " / "; " then skip blanks and repeats
      const char sep = curr;
      out += curr;
      out += ' ';
      while ((next == ' ' || next == sep) && i < in.size()) next = in[i++];
      if (next == ' ' || next == sep) next = 0;  // the end of the string (BLAST reads beyond)
      two = static_cast<unsigned char>(next);
    } else {
      out += curr;
    }
    curr = next;
  }
  if (static_cast<signed char>(curr) > 0 && curr != ' ')
    out += curr;  // BLAST's char test drops bytes >= 0x80
  auto replace_all = [&](std::string_view from, std::string_view to) {
    std::size_t p = 0;
    while ((p = out.find(from, p)) != std::string::npos) {
      out.replace(p, from.size(), to);
      p += to.size();
    }
  };
  replace_all(". [", " [");
  replace_all(", [", " [");
  return out;
}

// showalign's s_WrapOutputLine: past characters 60, 120, ... break after the next whitespace.
std::string wrap_heading(std::string_view title) {
  if (title.size() <= kHeadingWrap) return std::string(title);
  std::string out;
  bool wrap = false;
  for (std::size_t i = 0; i < title.size(); ++i) {
    if (i > 0 && i % kHeadingWrap == 0) wrap = true;
    out += title[i];
    if (wrap && is_space(title[i])) {
      out += '\n';
      wrap = false;
    }
  }
  return out;
}

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string karlin_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%#8.3g ", v);
  return buf;
}

int percent(int n, int d) {
  if (n == d) return 100;
  if (d <= 0) return 0;
  return std::min(99, static_cast<int>(0.5 + 100.0 * static_cast<double>(n) / static_cast<double>(d)));
}

std::string evalue_text(double e) { return trim_left_padding(format_evalue(e)); }

int digits(int v) { return static_cast<int>(std::to_string(v).size()); }

// A masked query letter ('*' stays '*').
char lower_symbol(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

struct Rows {
  std::string query, middle, subject;
  int identities = 0, positives = 0, gaps = 0;
};

Rows build_rows(const PairwiseHsp& hsp, const PairwiseQuery& q, Residues subject, const DisplayMatrix& dm) {
  const Alphabet alpha = Alphabet::protein();
  auto bad = [&] {
    return Error(ErrorKind::kInternal,
                 fmt::format("pairwise HSP q[{}, {}) s[{}, {}): edit script does not match", hsp.q_start,
                             hsp.q_end, hsp.s_start, hsp.s_end));
  };
  if (hsp.q_start < 0 || hsp.s_start < 0 || hsp.q_end > static_cast<int>(q.residues.size()) ||
      hsp.s_end > static_cast<int>(subject.size()) || hsp.q_start >= hsp.q_end || hsp.s_start >= hsp.s_end)
    throw bad();
  std::vector<bool> masked(q.residues.size(), false);
  for (const Interval& iv : q.mask)
    for (std::int64_t k = std::max<std::int64_t>(iv.begin, 0);
         k < std::min<std::int64_t>(iv.end, static_cast<std::int64_t>(masked.size())); ++k)
      masked[static_cast<std::size_t>(k)] = true;
  Rows r;
  int qi = hsp.q_start, si = hsp.s_start;
  for (const EditRun& run : hsp.script) {
    if (run.length <= 0) throw bad();
    for (int k = 0; k < run.length; ++k) {
      if (run.op != EditOp::kDeletion && qi >= hsp.q_end) throw bad();
      if (run.op != EditOp::kInsertion && si >= hsp.s_end) throw bad();
      if (run.op == EditOp::kSubstitution) {
        const auto qc = static_cast<std::size_t>(qi++);
        const char a = alpha.symbol(q.residues[qc]);
        const char b = alpha.symbol(subject[static_cast<std::size_t>(si++)]);
        r.query += masked[qc] ? lower_symbol(a) : a;
        r.subject += b;
        if (a == b) {
          ++r.identities;
          r.middle += b;
        } else if (dm.score(a, b) > 0) {
          ++r.positives;
          r.middle += '+';
        } else {
          r.middle += ' ';
        }
      } else if (run.op == EditOp::kInsertion) {
        const auto qc = static_cast<std::size_t>(qi++);
        const char a = alpha.symbol(q.residues[qc]);
        r.query += masked[qc] ? lower_symbol(a) : a;
        r.subject += '-';
        r.middle += ' ';
        ++r.gaps;
      } else {
        r.query += '-';
        r.subject += alpha.symbol(subject[static_cast<std::size_t>(si++)]);
        r.middle += ' ';
        ++r.gaps;
      }
    }
  }
  if (qi != hsp.q_end || si != hsp.s_end) throw bad();
  return r;
}

}  // namespace

std::vector<std::string> blast_wrap(std::string_view str, std::size_t width) {
  enum Score { kForced = 0, kPunct = 1, kComma = 2, kSpace = 3 };
  std::vector<std::string> lines;
  const std::size_t len = str.size();
  std::size_t pos = 0;
  while (pos < len) {
    std::size_t best_pos = std::string_view::npos;
    int best = kForced;
    std::size_t column = 0;
    std::size_t p = pos;
    if (len - pos <= width) {
      best_pos = len;  // the rest fits
    } else {
      // Candidates among the first width + 1 columns; the last one of the best kind wins.
      for (; p < len && column <= width; ++p, ++column) {
        int score = kForced;
        std::size_t score_pos = p;
        const char c = str[p];
        if (is_space(c)) {
          score = kSpace;
        } else if (c == ',' && column < width && p < len - 1) {
          score = kComma;
          ++score_pos;
        } else if (c == '-' && p < len - 1 && column < width) {
          score = kPunct;
          ++score_pos;
        }
        if (score >= best && score_pos > pos) {
          best_pos = score_pos;
          best = score;
        }
      }
      if (column <= width) best_pos = len;
    }
    lines.emplace_back(str.substr(pos, best_pos - pos));
    pos = best_pos;
    if (best == kSpace && best_pos != len)
      while (pos < len && str[pos] == ' ') ++pos;
  }
  return lines;
}

std::string blast_defline_title(std::string_view title) {
  std::string t(title);
  strip_trailing(t, ".,;~ ");
  if (t.find_first_not_of(' ') == std::string::npos) t = kUnnamed;  // empty or blanks only
  // blastp 2.12's list, in its order (observed: "MULTISPECIES:" and "TLS:" are kept).
  constexpr std::array<std::string_view, 12> kPrefixes{"MAG ",
                                                       "MAG:",
                                                       "TPA:",
                                                       "TPA_exp:",
                                                       "TPA_inf:",
                                                       "TPA_reasm:",
                                                       "TPA_asm:",
                                                       "TSA:",
                                                       "UNVERIFIED_ORG:",
                                                       "UNVERIFIED_ASMBLY:",
                                                       "UNVERIFIED_CONTAM:",
                                                       "UNVERIFIED:"};
  for (std::string_view prefix : kPrefixes) {
    if (t.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), t.begin(), [](char a, char b) {
          auto up = [](char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; };
          return up(a) == up(b);
        })) {
      t.erase(0, prefix.size());
      t.erase(0, t.find_first_not_of(' '));
    }
  }
  t.erase(0, std::min(t.size(), t.find_first_not_of(' ')));
  std::string decoded = html_decode(t);
  strip_trailing(decoded, ",;~ ");
  return clean_and_compress(decoded);
}

std::string subject_database_title(std::string_view subject_path) {
  return fmt::format("User specified sequence set (Input: {}).", subject_path);
}

PairwiseHsp pairwise_hsp(const Hsp& hsp, CompAdjustMethod method) {
  PairwiseHsp p;
  p.score = hsp.score;
  p.bits = hsp.bit_score;
  p.evalue = hsp.evalue;
  p.q_start = hsp.q_start;
  p.q_end = hsp.q_end;
  p.s_start = hsp.s_start;
  p.s_end = hsp.s_end;
  p.script = hsp.script;
  p.method = method;
  return p;
}

std::vector<PairwiseSubjectHits> pairwise_hits(const std::vector<SubjectHits>& hits,
                                               std::span<const Residues> subjects,
                                               std::span<const std::string_view> deflines,
                                               CompAdjustMethod method,
                                               std::span<const std::string_view> heading_ids) {
  std::vector<PairwiseSubjectHits> out;
  for (const SubjectHits& h : hits) {
    if (h.hsps.empty()) continue;
    const auto oid = static_cast<std::size_t>(h.oid);
    if (oid >= subjects.size() || oid >= deflines.size())
      throw Error(ErrorKind::kInternal, "pairwise hit with a bad subject index");
    PairwiseSubjectHits s;
    s.defline = deflines[oid];
    if (oid < heading_ids.size()) s.heading_id = heading_ids[oid];
    s.residues = subjects[oid];
    for (const Hsp& hsp : h.hsps) s.hsps.push_back(pairwise_hsp(hsp, method));
    out.push_back(std::move(s));
  }
  return out;
}

PairwiseWriter::PairwiseWriter(const ScoringMatrix& matrix, PairwiseOptions options)
    : matrix_(matrix), display_(std::make_shared<const DisplayMatrix>(matrix)), options_(std::move(options)) {
  const auto gapped = stats::gapped_params(matrix, options_.gaps);
  const auto gumbel = stats::gumbel_params(matrix, options_.gaps);
  if (!gapped || !gumbel)
    throw Error(ErrorKind::kUsage, fmt::format("no BLAST+ gapped statistics for {} with gap costs {}/{}",
                                               matrix.name(), options_.gaps.open, options_.gaps.extend));
  gapped_ = *gapped;
  gumbel_ = *gumbel;
}

std::string PairwiseWriter::header() const {
  std::string out =
      "BLASTP 2.12.0+\n\n\n"
      "Reference: Stephen F. Altschul, Thomas L. Madden, Alejandro A.\n"
      "Schaffer, Jinghui Zhang, Zheng Zhang, Webb Miller, and David J.\n"
      "Lipman (1997), \"Gapped BLAST and PSI-BLAST: a new generation of\n"
      "protein database search programs\", Nucleic Acids Res. 25:3389-3402.\n\n\n"
      "Reference for composition-based statistics: Alejandro A. Schaffer,\n"
      "L. Aravind, Thomas L. Madden, Sergei Shavirin, John L. Spouge, Yuri\n"
      "I. Wolf, Eugene V. Koonin, and Stephen F. Altschul (2001),\n"
      "\"Improving the accuracy of PSI-BLAST protein database searches with\n"
      "composition-based statistics and other refinements\", Nucleic Acids\n"
      "Res. 29:2994-3005.\n\n\n\n"
      "Database: ";
  for (const std::string& line : blast_wrap(options_.database_title, kTitleWidth)) out += line + '\n';
  out += fmt::format("           {} sequences; {} total letters\n\n\n\n",
                     with_commas(options_.database_sequences), with_commas(options_.database_letters));
  return out;
}

std::string PairwiseWriter::query(const PairwiseQuery& query,
                                  std::span<const PairwiseSubjectHits> hits) const {
  std::string out = "Query= ";
  const std::string_view title = trim_blanks(fasta_defline(query.defline));
  if (title.empty()) {
    out += '\n';  // an unnamed query (BlastpQuery::unnamed_id): blastp leaves out the blank line
  } else {
    for (const std::string& line : blast_wrap(title, kTitleWidth)) out += line + '\n';
    out += '\n';
  }
  fmt::format_to(std::back_inserter(out), "Length={}\n", query.residues.size());

  if (hits.empty()) {
    out += "\n\n***** No hits found *****\n\n\n\n";
  } else {
    // Description table.
    const std::size_t shown = std::max(std::min(hits.size(), options_.num_descriptions),
                                       std::min(hits.size(), options_.num_alignments));
    std::vector<std::string> titles, bits, evalues;
    std::size_t score_width = kMinScoreWidth, evalue_width = kMinEvalueWidth;
    for (const PairwiseSubjectHits& s : hits.first(shown)) {
      if (s.hsps.empty()) throw Error(ErrorKind::kInternal, "pairwise subject without HSPs");
      titles.push_back(blast_defline_title(options_.subject_mode ? fasta_defline(s.defline) : s.defline));
      bits.push_back(format_tabular_bitscore(s.hsps.front().bits));
      evalues.push_back(evalue_text(s.hsps.front().evalue));
      if (titles.size() <= options_.num_descriptions) {  // widths of the listed rows only
        score_width = std::max(score_width, bits.back().size());
        evalue_width = std::max(evalue_width, evalues.back().size());
      }
    }
    if (options_.num_descriptions > 0) {  // -num_descriptions 0: no table, not even its heading
      out += std::string(kTitleWidth + 2, ' ') + "Score" + std::string(score_width - 5, ' ') + "    E\n";
      out += "Sequences producing significant alignments:" + std::string(kTitleWidth - 43 + 1, ' ') +
             "(Bits)" + std::string(score_width - 6, ' ') + "  Value\n\n";
    }
    for (std::size_t i = 0; i < std::min(hits.size(), options_.num_descriptions); ++i) {
      std::string row =
          titles[i].size() > kTitleWidth ? titles[i].substr(0, kTitleWidth - 3) + "..." : titles[i];
      row.resize(kTitleWidth, ' ');
      out += row + "  " + bits[i] + std::string(score_width - bits[i].size(), ' ') + "  " + evalues[i] +
             std::string(evalue_width - evalues[i].size(), ' ') + '\n';
    }
    out += "\n\n";

    // Alignments.
    const DisplayMatrix& dm = *display_;
    for (std::size_t i = 0; i < std::min(hits.size(), options_.num_alignments); ++i) {
      const PairwiseSubjectHits& s = hits[i];
      if (options_.subject_mode) {
        out += "> " + wrap_heading(titles[i]);
      } else {
        if (!s.heading_id.empty() && s.defline.size() > s.heading_id.size() &&
            s.defline.starts_with(s.heading_id)) {
          out +=
              '>' + std::string(s.heading_id) + ' ' + wrap_heading(s.defline.substr(s.heading_id.size() + 1));
        } else {
          out += '>' + wrap_heading(s.defline.empty() ? std::string(kUnnamed) : std::string(s.defline));
        }
      }
      fmt::format_to(std::back_inserter(out), "\nLength={}\n\n", s.residues.size());
      for (const PairwiseHsp& hsp : s.hsps) {
        const Rows r = build_rows(hsp, query, s.residues, dm);
        const int length = static_cast<int>(r.query.size());
        std::string_view method;
        if (hsp.method == CompAdjustMethod::kCompositionBasedStats)
          method = ", Method: Composition-based stats.";
        if (hsp.method == CompAdjustMethod::kMatrixAdjust) method = ", Method: Compositional matrix adjust.";
        fmt::format_to(std::back_inserter(out), " Score = {} bits ({}),  Expect = {}{}\n",
                       format_tabular_bitscore(hsp.bits), hsp.score, evalue_text(hsp.evalue), method);
        fmt::format_to(std::back_inserter(out),
                       " Identities = {}/{} ({}%), Positives = {}/{} ({}%), Gaps = {}/{} ({}%)\n\n",
                       r.identities, length, percent(r.identities, length), r.identities + r.positives,
                       length, percent(r.identities + r.positives, length), r.gaps, length,
                       percent(r.gaps, length));
        // Start column: digits of the larger 0-based last position of the two rows + 2 (a 1-based start
        // one digit longer runs into the letters: "Sbjct  100 P  100").
        const int width = std::max(digits(hsp.q_end - 1), digits(hsp.s_end - 1)) + 2;
        int qpos = hsp.q_start, spos = hsp.s_start;  // next residue, 0-based
        for (std::size_t col = 0; col < r.query.size(); col += options_.line_length) {
          const std::size_t n = std::min(options_.line_length, r.query.size() - col);
          auto row = [&](std::string_view label, std::string_view letters, int& next) {
            const int residues = static_cast<int>(
                n - static_cast<std::size_t>(std::count(letters.begin(), letters.end(), '-')));
            std::string line(label);
            line += "  ";
            // blastp prints no coordinates for a line whose one residue is the sequence's first (0-based
            // start and end 0, as for a line without residues): seen with -line_length 1.
            if (residues > 0 && !(residues == 1 && next == 0)) {
              const std::string start = std::to_string(next + 1);
              line += start;
              if (start.size() < static_cast<std::size_t>(width))
                line += std::string(static_cast<std::size_t>(width) - start.size(), ' ');
              line += letters;
              line += "  ";
              line += std::to_string(next + residues);
            } else {
              line += std::string(static_cast<std::size_t>(width), ' ');
              line += letters;
              line += "  ";
            }
            next += residues;
            return line + '\n';
          };
          out += row("Query", std::string_view(r.query).substr(col, n), qpos);
          out += std::string(7 + static_cast<std::size_t>(width), ' ') + r.middle.substr(col, n) + '\n';
          out += row("Sbjct", std::string_view(r.subject).substr(col, n), spos);
          out += '\n';
        }
        out += '\n';
      }
    }
    out += '\n';
  }

  // Karlin blocks. A query without ungapped statistics (e.g. all X; blastp warns and searches nothing)
  // gets two blank lines instead and a search space of 0, as blastp prints.
  if (!(query.ungapped.lambda > 0)) {
    out += "\n\nEffective search space used: 0\n\n\n";
    return out;
  }
  // Without the Gumbel block (blastp with -searchsp runs without it) the lines stop after H.
  const bool gumbel = !options_.old_fsc;
  out += gumbel ? "Lambda      K        H        a         alpha\n" : "Lambda      K        H\n";
  out +=
      karlin_value(query.ungapped.lambda) + karlin_value(query.ungapped.K) + karlin_value(query.ungapped.H);
  if (gumbel) out += karlin_value(gumbel_.a_un) + karlin_value(gumbel_.alpha_un);
  out += "\n\n";
  out += gumbel ? "Gapped\nLambda      K        H        a         alpha    sigma\n"
                : "Gapped\nLambda      K        H\n";
  out += karlin_value(gapped_.lambda) + karlin_value(gapped_.K) + karlin_value(gapped_.H);
  if (gumbel) out += karlin_value(gumbel_.a) + karlin_value(gumbel_.alpha) + karlin_value(gumbel_.sigma);
  out += "\n\n";
  fmt::format_to(std::back_inserter(out), "Effective search space used: {}\n\n\n", query.search_space);
  return out;
}

std::string PairwiseWriter::footer() const {
  std::string out = "  Database: ";
  for (const std::string& line : blast_wrap(options_.database_title, kTitleWidth)) out += line + '\n';
  out += fmt::format("    Posted date:  {}\n", options_.posted_date);
  out += fmt::format("  Number of letters in database: {}\n", with_commas(options_.database_letters));
  out +=
      fmt::format("  Number of sequences in database:  {}\n\n\n\n", with_commas(options_.database_sequences));
  out += fmt::format("Matrix: {}\n", matrix_.name());
  out +=
      fmt::format("Gap Penalties: Existence: {}, Extension: {}\n", options_.gaps.open, options_.gaps.extend);
  out += fmt::format(
      "Neighboring words threshold: {}\nWindow for multiple hits: {}\n",
      options_.threshold_text.empty() ? std::to_string(options_.threshold) : options_.threshold_text,
      options_.window);
  return out;
}

}  // namespace warpsearch::blast
