// Trace-to-alignment construction for hmmsearch -A (HMMER 3.3.2 p7_alidisplay_Backconvert,
// p7_tracealign_Seqs text mode, p7_tophits_Alignment, hmmsearch.c's -A block). See tracealign.hpp.
#include "hmm/tracealign.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

constexpr const char* kHmmerVersion = "3.3.2";

/// Easel's esl_abc_DigitizeSymbol / inmap lookup of a text character.
int code_of(const Abc& abc, char c) { return abc.inmap[static_cast<unsigned char>(c)]; }
/// esl_abc_CIsGap: the character maps to the gap code ('-', '.', '_').
bool char_is_gap(const Abc& abc, char c) { return code_of(abc, c) == abc.K; }
/// esl_abc_CIsResidue: canonical or degenerate residue (not gap, '*', '~' or an unmapped character).
bool char_is_residue(const Abc& abc, char c) {
  const int x = code_of(abc, c);
  return x < abc.K || (x > abc.K && x < abc.Kp - 2);
}

/// p7_alidisplay_DecodePostProb: the float a posterior character stands for. Digits are computed as HMMER
/// does: (float) digit divided by the double 10., the double quotient converted back to float.
float decode_post_prob(char pc) {
  if (pc == '0') return 0.01f;
  if (pc == '*') return 1.0f;
  if (pc == '.') return 0.0f;
  return static_cast<float>(static_cast<double>(static_cast<float>(pc - '0')) / 10.0);
}

/// p7_alidisplay_EncodePostProb: '*' when p + 0.05 >= 1 (in double), else the truncated (p + 0.05) * 10.
char encode_post_prob(float p) {
  const double q = static_cast<double>(p) + 0.05;
  if (q >= 1.0) return '*';
  return static_cast<char>(static_cast<char>(q * 10.0) + '0');
}

char to_upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
char to_lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

/// Column layout of a new alignment (map_new_msa). inscount[k], k = 0..M: the most residues any trace puts
/// between consensus columns k and k+1 (0 = N flank, M = C flank). matuse[k], k = 1..M: node k has a column.
/// matmap[k]: 1-based column of node k when matuse[k], else the last column before node k's inserts.
/// Invariant: the insert columns after node k are matmap[k]+1 .. matmap[k+1]-matuse[k+1] (1-based).
struct ColumnMap {
  std::vector<int> inscount, matuse, matmap;
  int alen = 0;
};

ColumnMap map_new_msa(const std::vector<Trace>& tr, int M, unsigned optflags) {
  const auto uM = static_cast<std::size_t>(M);
  ColumnMap cm;
  cm.inscount.assign(uM + 1, 0);
  cm.matuse.assign(uM + 1, (optflags & kAllConsensusCols) ? 1 : 0);
  cm.matuse[0] = 0;
  cm.matmap.assign(uM + 1, 0);
  std::vector<int> insnum(uM + 1);
  for (const Trace& t : tr) {
    std::fill(insnum.begin(), insnum.end(), 0);
    for (int z = 1; z < t.N; ++z) {
      const auto uz = static_cast<std::size_t>(z);
      const int kz = t.k[uz];
      if (kz < 0 || kz > M)
        throw Error(ErrorKind::kInternal, "tracealign: trace node beyond the model length");
      switch (t.st[uz]) {
        case kTI: ++insnum[static_cast<std::size_t>(kz)]; break;
        case kTN:
          if (t.st[uz - 1] == kTN) ++insnum[0];
          break;
        case kTC:
          if (t.st[uz - 1] == kTC) ++insnum[uM];
          break;
        case kTM: cm.matuse[static_cast<std::size_t>(kz)] = 1; break;
        case kTJ: throw Error(ErrorKind::kInternal, "tracealign: J state unsupported");
        case kTX: throw Error(ErrorKind::kInternal, "tracealign: core-trace X states unsupported");
        default: break;
      }
    }
    for (std::size_t k = 0; k <= uM; ++k) cm.inscount[k] = std::max(cm.inscount[k], insnum[k]);
  }
  if (optflags & kTrim) cm.inscount[0] = cm.inscount[uM] = 0;

  cm.alen = cm.inscount[0];
  for (std::size_t k = 1; k <= uM; ++k) {
    if (cm.matuse[k]) {
      cm.matmap[k] = cm.alen + 1;
      cm.alen += 1 + cm.inscount[k];
    } else {
      cm.matmap[k] = cm.alen;
      cm.alen += cm.inscount[k];
    }
  }
  return cm;
}

/// Residue symbol of trace position z of sequence sq (get_dsq_z).
char residue_sym(const FauxSeq& sq, const Trace& t, std::size_t z, const Abc& abc) {
  const auto i = static_cast<std::size_t>(t.i[z]);
  if (i >= sq.dsq.size()) throw Error(ErrorKind::kInternal, "tracealign: trace residue beyond its sequence");
  const int x = sq.dsq[i];
  if (x >= abc.Kp) throw Error(ErrorKind::kInternal, "tracealign: sequence code outside the alphabet");
  return abc.sym[static_cast<std::size_t>(x)];
}

/// Whether an insert state at node k is written (p7_TRIM drops I0 and IM).
bool insert_kept(unsigned optflags, int k, int M) { return !(optflags & kTrim) || (k != 0 && k != M); }

/// make_text_msa: fills msa.aseq. Text columns are 0-based: node k's column is matmap[k]-1, and apos
/// always points at the next free insert column.
void make_text_rows(const std::vector<FauxSeq>& sq, const std::vector<Trace>& tr, const ColumnMap& cm, int M,
                    unsigned optflags, const Abc& abc, TextMsa& msa) {
  const auto alen = static_cast<std::size_t>(cm.alen);
  const auto uM = static_cast<std::size_t>(M);
  msa.aseq.assign(sq.size(), std::string(alen, '.'));
  for (std::size_t idx = 0; idx < sq.size(); ++idx) {
    std::string& row = msa.aseq[idx];
    for (std::size_t k = 1; k <= uM; ++k)
      if (cm.matuse[k]) row[static_cast<std::size_t>(cm.matmap[k] - 1)] = '-';
    const Trace& t = tr[idx];
    std::size_t apos = 0;
    for (int zi = 0; zi < t.N; ++zi) {
      const auto z = static_cast<std::size_t>(zi);
      const auto k = static_cast<std::size_t>(t.k[z]);
      switch (t.st[z]) {
        case kTM:
          row[static_cast<std::size_t>(cm.matmap[k] - 1)] = to_upper(residue_sym(sq[idx], t, z, abc));
          apos = static_cast<std::size_t>(cm.matmap[k]);
          break;
        case kTD:
          // A node whose column was collapsed (all deletes) must not overwrite the previous column.
          if (cm.matuse[k]) row[static_cast<std::size_t>(cm.matmap[k] - 1)] = '-';
          apos = static_cast<std::size_t>(cm.matmap[k]);
          break;
        case kTI:
          if (insert_kept(optflags, t.k[z], M)) row[apos++] = to_lower(residue_sym(sq[idx], t, z, abc));
          break;
        case kTN:
        case kTC:
          if (!(optflags & kTrim) && t.i[z] > 0) row[apos++] = to_lower(residue_sym(sq[idx], t, z, abc));
          break;
        case kTE: apos = static_cast<std::size_t>(cm.matmap[uM]); break;
        default: break;
      }
    }
  }
}

/// annotate_rf: 'x' on consensus columns, '.' elsewhere.
void annotate_rf(const ColumnMap& cm, int M, TextMsa& msa) {
  msa.rf.assign(static_cast<std::size_t>(cm.alen), '.');
  for (std::size_t k = 1; k <= static_cast<std::size_t>(M); ++k)
    if (cm.matuse[k]) msa.rf[static_cast<std::size_t>(cm.matmap[k] - 1)] = 'x';
}

/// annotate_posterior_probability: per-row PP lines (for traces with posteriors) and PP_cons, the mean
/// match posterior of each consensus column: a double sum of the float pp values divided by the count,
/// converted to float before encoding (EncodePostProb takes a float).
void annotate_pp(const std::vector<Trace>& tr, const ColumnMap& cm, int M, unsigned optflags, TextMsa& msa) {
  if (std::none_of(tr.begin(), tr.end(), [](const Trace& t) { return t.has_pp; })) return;
  const auto alen = static_cast<std::size_t>(cm.alen);
  std::vector<int> nmatch(alen, 0);
  std::vector<double> totp(alen, 0.0);
  msa.pp.assign(tr.size(), std::string());
  for (std::size_t idx = 0; idx < tr.size(); ++idx) {
    const Trace& t = tr[idx];
    if (!t.has_pp) continue;
    std::string& row = msa.pp[idx];
    row.assign(alen, '.');
    std::size_t apos = 0;
    for (int zi = 0; zi < t.N; ++zi) {
      const auto z = static_cast<std::size_t>(zi);
      const auto k = static_cast<std::size_t>(t.k[z]);
      switch (t.st[z]) {
        case kTM: {
          const auto col = static_cast<std::size_t>(cm.matmap[k] - 1);
          row[col] = encode_post_prob(t.pp[z]);
          totp[col] += static_cast<double>(t.pp[z]);
          ++nmatch[col];
          apos = static_cast<std::size_t>(cm.matmap[k]);
          break;
        }
        case kTD: apos = static_cast<std::size_t>(cm.matmap[k]); break;
        case kTI:
          if (insert_kept(optflags, t.k[z], M)) row[apos++] = encode_post_prob(t.pp[z]);
          break;
        case kTN:
        case kTC:
          if (!(optflags & kTrim) && t.i[z] > 0) row[apos++] = encode_post_prob(t.pp[z]);
          break;
        case kTE: apos = static_cast<std::size_t>(cm.matmap[static_cast<std::size_t>(M)]); break;
        default: break;
      }
    }
  }
  msa.pp_cons.assign(alen, '.');
  for (std::size_t apos = 0; apos < alen; ++apos)
    if (nmatch[apos] > 0)
      msa.pp_cons[apos] =
          encode_post_prob(static_cast<float>(totp[apos] / static_cast<double>(nmatch[apos])));
}

/// rejustify_insertions_text: in each insertion of more than one column between nodes k and k+1
/// (k = 0..M-1), the first half of a row's residues (rounded down) stay left-justified and the rest move
/// to the right end; the N-terminal flank (k = 0) is entirely right-justified. PP characters move with
/// their residues. The C-terminal flank (k = M) is left as is.
void rejustify_insertions(const Abc& abc, const ColumnMap& cm, int M, TextMsa& msa) {
  for (std::size_t idx = 0; idx < msa.aseq.size(); ++idx) {
    std::string& row = msa.aseq[idx];
    std::string* pp = (!msa.pp.empty() && !msa.pp[idx].empty()) ? &msa.pp[idx] : nullptr;
    for (std::size_t k = 0; k < static_cast<std::size_t>(M); ++k) {
      if (cm.inscount[k] <= 1) continue;
      const int lo = cm.matmap[k];                         // first insert column, 0-based
      const int hi = cm.matmap[k + 1] - cm.matuse[k + 1];  // one past the last insert column, 0-based
      int nins = 0;
      for (int apos = lo; apos < hi; ++apos)
        if (char_is_residue(abc, row[static_cast<std::size_t>(apos)])) ++nins;
      nins = (k == 0) ? 0 : nins / 2;
      int opos = hi - 1;
      int npos = hi - 1;
      while (opos >= lo + nins) {
        if (char_is_gap(abc, row[static_cast<std::size_t>(opos)])) {
          --opos;
        } else {
          row[static_cast<std::size_t>(npos)] = row[static_cast<std::size_t>(opos)];
          if (pp) (*pp)[static_cast<std::size_t>(npos)] = (*pp)[static_cast<std::size_t>(opos)];
          --npos;
          --opos;
        }
      }
      while (npos >= lo + nins) {
        row[static_cast<std::size_t>(npos)] = '.';
        if (pp) (*pp)[static_cast<std::size_t>(npos)] = '.';
        --npos;
      }
    }
  }
}

}  // namespace

void backconvert(const AliDisplay& ad, const Abc& abc, FauxSeq& sq, Trace& tr) {
  const auto N = static_cast<std::size_t>(ad.N);
  if (ad.N < 0 || ad.model.size() != N || ad.aseq.size() != N ||
      (!ad.ppline.empty() && ad.ppline.size() != N))
    throw Error(ErrorKind::kInternal, "backconvert: alignment display lines differ in length (" + ad.sqname +
                                          "/" + ad.hmmname + ")");
  int64_t subL = 0;
  for (char c : ad.aseq)
    if (!char_is_gap(abc, c)) ++subL;

  const bool with_pp = !ad.ppline.empty();
  tr = Trace(with_pp);
  sq.dsq.assign(static_cast<std::size_t>(subL) + 2, kDsqSentinel);
  auto add = [&](TraceState s, int k, int i, float p) {
    if (with_pp)
      tr.append_with_pp(s, k, i, p);
    else
      tr.append(s, k, i);
  };
  add(kTS, 0, 0, 0.0f);
  add(kTN, 0, 0, 0.0f);
  add(kTB, 0, 0, 0.0f);
  // Local alignments start with a match state, so k starts one before hmmfrom and the first M reaches it.
  int k = ad.hmmfrom - 1;
  int i = 1;
  for (std::size_t a = 0; a < N; ++a) {
    TraceState s;
    if (!char_is_gap(abc, ad.model[a])) {
      ++k;
      s = char_is_gap(abc, ad.aseq[a]) ? kTD : kTM;
    } else {
      s = kTI;
    }
    add(s, k, i, with_pp ? decode_post_prob(ad.ppline[a]) : 0.0f);
    if (s != kTD) {
      const int x = code_of(abc, ad.aseq[a]);
      if (x >= abc.Kp)
        throw Error(ErrorKind::kInternal, std::string("backconvert: character '") + ad.aseq[a] +
                                              "' of the aligned sequence is not in the alphabet");
      sq.dsq[static_cast<std::size_t>(i)] = static_cast<uint8_t>(x);
      ++i;
    }
  }
  add(kTE, 0, 0, 0.0f);
  add(kTC, 0, 0, 0.0f);
  add(kTT, 0, 0, 0.0f);

  if (tr.N != ad.N + 6 || k != ad.hmmto || i != subL + 1)
    throw Error(ErrorKind::kInternal, "backconvert: display of " + ad.sqname + "/" + ad.hmmname +
                                          " does not match its model or sequence coordinates");

  sq.name = ad.sqname + "/" + std::to_string(ad.sqfrom) + "-" + std::to_string(ad.sqto);
  sq.desc = "[subseq from] " + (ad.sqdesc.empty() ? ad.sqname : ad.sqdesc);
  sq.acc = ad.sqacc;
  sq.n = subL;
  tr.M = ad.M;
  tr.L = static_cast<int>(ad.L);
}

TextMsa tracealign_seqs(const std::vector<FauxSeq>& sq, const std::vector<Trace>& tr, int M,
                        unsigned optflags, const Abc& abc) {
  if (sq.size() != tr.size() || M < 1)
    throw Error(ErrorKind::kInternal, "tracealign_seqs: needs one trace per sequence and a model length");
  const ColumnMap cm = map_new_msa(tr, M, optflags);
  TextMsa msa;
  msa.alen = cm.alen;
  make_text_rows(sq, tr, cm, M, optflags, abc, msa);
  annotate_rf(cm, M, msa);
  annotate_pp(tr, cm, M, optflags, msa);
  rejustify_insertions(abc, cm, M, msa);
  for (const FauxSeq& s : sq) {
    msa.sqname.push_back(s.name);
    msa.sqacc.push_back(s.acc);
    msa.sqdesc.push_back(s.desc);
  }
  return msa;
}

std::optional<TextMsa> tophits_alignment(const std::vector<const Hit*>& ranked, const Abc& abc,
                                         unsigned optflags) {
  std::vector<FauxSeq> sq;
  std::vector<Trace> tr;
  int M = 0;
  for (const Hit* h : ranked) {
    if (!(h->flags & kIsIncluded)) continue;
    for (const Domain& d : h->dcl) {
      if (!d.is_included) continue;
      if (M == 0) M = d.ad.M;
      sq.emplace_back();
      tr.emplace_back();
      backconvert(d.ad, abc, sq.back(), tr.back());
    }
  }
  if (sq.empty()) return std::nullopt;
  return tracealign_seqs(sq, tr, M, optflags, abc);
}

namespace {

std::optional<HitsAlignment> finish(std::optional<TextMsa> msa, const AlignmentQuery& query, int textw) {
  if (!msa) return std::nullopt;
  msa->name = std::string(query.name);
  msa->acc = std::string(query.acc);
  msa->desc = std::string(query.desc);
  msa->au = std::string(query.program) + " (HMMER " + kHmmerVersion + ")";
  HitsAlignment out;
  out.nseq = msa->nseq();
  out.text = write_stockholm(*msa, textw > 0 ? MsaLayout::kStockholm : MsaLayout::kPfam);
  return out;
}

const Abc& query_abc(const AlignmentQuery& query) {
  if (query.abc == nullptr) throw Error(ErrorKind::kInternal, "stockholm_alignment: query alphabet not set");
  return *query.abc;
}

}  // namespace

std::optional<HitsAlignment> stockholm_alignment(const TopHits& th, const AlignmentQuery& query, int textw) {
  if (!th.is_sorted()) throw Error(ErrorKind::kInternal, "stockholm_alignment: hits must be sorted first");
  std::vector<const Hit*> ranked;
  ranked.reserve(th.size());
  for (std::size_t h = 0; h < th.size(); ++h) ranked.push_back(&th.hit(h));
  return finish(tophits_alignment(ranked, query_abc(query), kAllConsensusCols), query, textw);
}

std::optional<HitsAlignment> stockholm_alignment(const std::vector<Hit>& ranked, const AlignmentQuery& query,
                                                 int textw) {
  std::vector<const Hit*> ptrs;
  ptrs.reserve(ranked.size());
  for (const Hit& h : ranked) ptrs.push_back(&h);
  return finish(tophits_alignment(ptrs, query_abc(query), kAllConsensusCols), query, textw);
}

std::string alignment_saved_line(const std::optional<HitsAlignment>& ali, std::string_view path) {
  if (!ali) return "# No hits satisfy inclusion thresholds; no alignment saved\n";
  return "# Alignment of " + std::to_string(ali->nseq) +
         " hits satisfying inclusion thresholds saved to: " + std::string(path) + "\n";
}

}  // namespace warpsearch::hmm
