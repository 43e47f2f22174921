// Stockholm writer for TextMsa, reproducing Easel 0.48's stockholm_write byte for byte (see stockholm.hpp).
#include "hmm/stockholm.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <unordered_set>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

/// printf("%-*s", width, s): s, then spaces up to width (never truncates; width <= 0 pads nothing).
void append_left(std::string& out, std::string_view s, int64_t width) {
  out += s;
  if (static_cast<int64_t>(s.size()) < width) out.append(static_cast<std::size_t>(width) - s.size(), ' ');
}

/// printf("%0*d", width, v) for v >= 0.
void append_zero_padded(std::string& out, int v, int width) {
  const std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width)
    out.append(static_cast<std::size_t>(width) - digits.size(), '0');
  out += digits;
}

/// esl_msa_CheckUniqueNames: true when no sequence name repeats.
bool names_unique(const TextMsa& msa) {
  std::unordered_set<std::string_view> seen;
  for (const std::string& s : msa.sqname)
    if (!seen.insert(s).second) return false;
  return true;
}

bool any_nonempty(const std::vector<std::string>& v) {
  return std::any_of(v.begin(), v.end(), [](const std::string& s) { return !s.empty(); });
}

void check_shape(const TextMsa& msa) {
  const std::size_t n = msa.sqname.size();
  const auto alen = static_cast<std::size_t>(msa.alen);
  bool ok = msa.alen >= 0 && msa.sqacc.size() == n && msa.sqdesc.size() == n && msa.aseq.size() == n &&
            (msa.pp.empty() || msa.pp.size() == n) && (msa.pp_cons.empty() || msa.pp_cons.size() == alen) &&
            (msa.rf.empty() || msa.rf.size() == alen);
  for (std::size_t i = 0; ok && i < n; ++i) {
    ok = msa.aseq[i].size() == alen && (msa.pp.empty() || msa.pp[i].empty() || msa.pp[i].size() == alen);
  }
  if (!ok)
    throw Error(ErrorKind::kInternal, "write_stockholm: alignment rows and annotation lines differ in shape");
}

}  // namespace

std::string write_stockholm(const TextMsa& msa, MsaLayout layout) {
  // eslMSAFILE_PFAM writes the whole width as one block; Easel passes cpl = alen (0 for an empty alignment,
  // which then writes no block at all).
  if (layout == MsaLayout::kPfam) return write_stockholm(msa, msa.alen > 0 ? msa.alen : int64_t{1});
  return write_stockholm(msa, int64_t{200});
}

std::string write_stockholm(const TextMsa& msa, int64_t cpl) {
  if (cpl < 1) throw Error(ErrorKind::kInternal, "write_stockholm: columns per line must be positive");
  check_shape(msa);
  const int nseq = msa.nseq();

  // Names must be unique in Stockholm; Easel prefixes "<i>|" (i zero-padded to the digits of nseq) when
  // they are not. uniqwidth counts those digits plus the '|'.
  const bool make_unique = !names_unique(msa);
  int uniqwidth = 0;
  if (make_unique) {
    for (int t = nseq; t != 0; t /= 10) ++uniqwidth;
    ++uniqwidth;
  }

  // Left margin (inclusive of its last space): the widest of "<name> ", "#=GC <tag> ", "#=GR <name> <tag> ".
  int64_t maxname = 0;
  for (const std::string& s : msa.sqname) maxname = std::max(maxname, static_cast<int64_t>(s.size()));
  const int64_t maxgf = 2;  // only the two-letter ID/AC/DE/AU tags
  int64_t maxgc = 0;
  if (!msa.rf.empty()) maxgc = std::max<int64_t>(maxgc, 2);
  if (!msa.pp_cons.empty()) maxgc = std::max<int64_t>(maxgc, 7);
  const bool has_pp = !msa.pp.empty();
  const int64_t maxgr = has_pp ? 2 : 0;
  int64_t margin = uniqwidth + maxname + 1;
  if (maxgc > 0 && maxgc + 6 > margin) margin = maxgc + 6;
  if (maxgr > 0 && uniqwidth + maxname + maxgr + 7 > margin) margin = uniqwidth + maxname + maxgr + 7;

  std::string out;
  out += "# STOCKHOLM 1.0\n";
  if (make_unique) out += "# WARNING: seq names have been made unique by adding a prefix of \"<seq#>|\"\n";

  auto gf = [&](std::string_view tag, const std::string& value) {
    if (value.empty()) return;
    out += "#=GF ";
    append_left(out, tag, maxgf);
    out += ' ';
    out += value;
    out += '\n';
  };
  gf("ID", msa.name);
  gf("AC", msa.acc);
  gf("DE", msa.desc);
  gf("AU", msa.au);
  out += '\n';

  // "#=GS <name> <tag> <value>" for each sequence with a value, then a blank line; the section exists only
  // when some sequence has the annotation (Easel allocates sqacc/sqdesc on the first non-empty value).
  auto gs_section = [&](std::string_view tag, const std::vector<std::string>& values) {
    if (!any_nonempty(values)) return;
    for (int i = 0; i < nseq; ++i) {
      const std::string& v = values[static_cast<std::size_t>(i)];
      if (v.empty()) continue;
      out += "#=GS ";
      if (make_unique) {
        append_zero_padded(out, i, uniqwidth - 1);
        out += '|';
      }
      append_left(out, msa.sqname[static_cast<std::size_t>(i)], maxname);
      out += ' ';
      out += tag;
      out += ' ';
      out += v;
      out += '\n';
    }
    out += '\n';
  };
  gs_section("AC", msa.sqacc);
  gs_section("DE", msa.sqdesc);

  // Alignment blocks of cpl columns; a blank line separates blocks.
  for (int64_t currpos = 0; currpos < msa.alen; currpos += cpl) {
    const auto pos = static_cast<std::size_t>(currpos);
    const auto acpl = static_cast<std::size_t>(std::min(cpl, msa.alen - currpos));
    if (currpos > 0) out += '\n';
    for (int i = 0; i < nseq; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      if (make_unique) {
        append_zero_padded(out, i, uniqwidth - 1);
        out += '|';
        append_left(out, msa.sqname[ui], margin - uniqwidth - 1);
      } else {
        append_left(out, msa.sqname[ui], margin - 1);
      }
      out += ' ';
      out.append(msa.aseq[ui], pos, acpl);
      out += '\n';
      if (has_pp && !msa.pp[ui].empty()) {
        out += "#=GR ";
        if (make_unique) {
          append_zero_padded(out, i, uniqwidth - 1);
          out += '|';
        }
        append_left(out, msa.sqname[ui], maxname);
        out += ' ';
        append_left(out, "PP", margin - maxname - uniqwidth - 7);
        out += ' ';
        out.append(msa.pp[ui], pos, acpl);
        out += '\n';
      }
    }
    auto gc = [&](std::string_view tag, const std::string& line) {
      if (line.empty()) return;
      out += "#=GC ";
      append_left(out, tag, margin - 6);
      out += ' ';
      out.append(line, pos, acpl);
      out += '\n';
    };
    gc("PP_cons", msa.pp_cons);
    gc("RF", msa.rf);
  }
  out += "//\n";
  return out;
}

}  // namespace warpsearch::hmm
