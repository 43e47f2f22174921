// Hit list ordering (p7_tophits_SortBySortkey / Merge and their comparator) and construction of the
// alignment display of one domain from a trace (p7_alidisplay_Create), following HMMER 3.3.2.
#include "hmm/tophits.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <utility>

#include "hmm/abc.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/trace.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

// p7_alidisplay_EncodePostProb: p in [0,1] -> '0'..'9' (bins of width 0.1 centred on the digit / 10) or
// '*' for p >= 0.95. The float is promoted to double before adding 0.05, as in C.
char encode_post_prob(float p) {
  const double q = static_cast<double>(p) + 0.05;
  if (q >= 1.0) return '*';
  return static_cast<char>(static_cast<char>(q * 10.0) + '0');
}

}  // namespace

int compare_hits(const Hit& a, const Hit& b) {
  if (a.sortkey < b.sortkey) return 1;
  if (a.sortkey > b.sortkey) return -1;
  // std::string::compare orders chars as unsigned char, as strcmp does.
  const int c = a.name.compare(b.name);
  if (c != 0) return c < 0 ? -1 : 1;
  // Forward-strand hits (iali < jali) first, then by first alignment position. Hits without domains
  // (never registered by the pipeline) compare as reverse-strand hits at position 0.
  const int64_t ia = a.dcl.empty() ? 0 : a.dcl[0].iali, ja = a.dcl.empty() ? 0 : a.dcl[0].jali;
  const int64_t ib = b.dcl.empty() ? 0 : b.dcl[0].iali, jb = b.dcl.empty() ? 0 : b.dcl[0].jali;
  const int dir1 = ia < ja ? 1 : -1;
  const int dir2 = ib < jb ? 1 : -1;
  if (dir1 != dir2) return dir2;
  if (ia > ib) return 1;
  if (ia < ib) return -1;
  // HMMER leaves the rest to qsort; we rank by database order.
  if (a.seqidx > b.seqidx) return 1;
  if (a.seqidx < b.seqidx) return -1;
  return 0;
}

Hit& TopHits::add(Hit h) {
  unsrt_.push_back(std::move(h));
  sorted_ = false;
  return unsrt_.back();
}

void TopHits::sort_by_sortkey() {
  if (sorted_ && order_.size() == unsrt_.size()) return;
  order_.resize(unsrt_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [this](std::size_t x, std::size_t y) { return compare_hits(unsrt_[x], unsrt_[y]) < 0; });
  sorted_ = true;
}

void TopHits::merge(TopHits&& other) {
  // Merging two ranked lists under a total order gives the ranking of their union.
  unsrt_.reserve(unsrt_.size() + other.unsrt_.size());
  for (Hit& h : other.unsrt_) unsrt_.push_back(std::move(h));
  other.unsrt_.clear();
  other.order_.clear();
  other.sorted_ = true;
  sorted_ = false;
  sort_by_sortkey();
}

int TopHits::max_name_length() const {
  std::size_t mx = 0;
  for (const Hit& h : unsrt_) mx = std::max(mx, h.name.size());
  return static_cast<int>(mx);
}

int TopHits::max_shown_length() const {
  std::size_t mx = 0;
  for (const Hit& h : unsrt_) mx = std::max(mx, h.acc.empty() ? h.name.size() : h.acc.size());
  return static_cast<int>(mx);
}

AliDisplay make_alidisplay(const Trace& tr, int which, const AliModel& model, std::string_view sqname,
                           std::string_view sqacc, std::string_view sqdesc, const Dsq& dsq, int64_t L) {
  // Locate the displayed piece z1..z2 of the trace: from the first to the last match state of domain
  // `which` (a local alignment display starts and ends with M).
  int z1 = 0, z2 = 0;
  if (tr.ndom > 0) {
    for (z1 = tr.tfrom[static_cast<std::size_t>(which)]; z1 < tr.N; z1++)
      if (tr.st[static_cast<std::size_t>(z1)] == kTM) break;
    if (z1 == tr.N) throw Error(ErrorKind::kInternal, "alignment display: no match state in domain");
    for (z2 = tr.tto[static_cast<std::size_t>(which)]; z2 >= 0; z2--)
      if (tr.st[static_cast<std::size_t>(z2)] == kTM) break;
    if (z2 == -1) throw Error(ErrorKind::kInternal, "alignment display: no match state in domain");
  } else {
    for (z1 = 0; which >= 0 && z1 < tr.N; z1++)
      if (tr.st[static_cast<std::size_t>(z1)] == kTB) which--;
    if (z1 == tr.N) throw Error(ErrorKind::kInternal, "alignment display: no such domain in trace");
    for (; z1 < tr.N; z1++)
      if (tr.st[static_cast<std::size_t>(z1)] == kTM) break;
    if (z1 == tr.N) throw Error(ErrorKind::kInternal, "alignment display: no match state in domain");
    for (z2 = z1; z2 < tr.N; z2++)
      if (tr.st[static_cast<std::size_t>(z2)] == kTE) break;
    for (; z2 >= 0; z2--)
      if (tr.st[static_cast<std::size_t>(z2)] == kTM) break;
    if (z2 == -1) throw Error(ErrorKind::kInternal, "alignment display: no match state in domain");
  }

  const Abc& abc = *model.abc;
  const std::size_t n = static_cast<std::size_t>(z2 - z1 + 1);
  AliDisplay ad;
  ad.hmmname = model.name;
  ad.hmmacc = model.acc;
  ad.hmmdesc = model.desc;
  ad.sqname = sqname;
  ad.sqacc = sqacc;
  ad.sqdesc = sqdesc;
  ad.hmmfrom = tr.k[static_cast<std::size_t>(z1)];
  ad.hmmto = tr.k[static_cast<std::size_t>(z2)];
  ad.M = model.M;
  ad.sqfrom = tr.i[static_cast<std::size_t>(z1)];
  ad.sqto = tr.i[static_cast<std::size_t>(z2)];
  ad.L = L;
  ad.N = static_cast<int>(n);

  // Optional annotation lines; HMMER never fills mmline here (its allocation is commented out).
  const bool has_rf = !model.rf.empty();
  const bool has_cs = !model.cs.empty();
  if (has_rf) ad.rfline.resize(n);
  if (has_cs) ad.csline.resize(n);
  if (tr.has_pp) ad.ppline.resize(n);
  ad.model.resize(n);
  ad.mline.resize(n);
  ad.aseq.resize(n);

  for (std::size_t z = static_cast<std::size_t>(z1); z <= static_cast<std::size_t>(z2); z++) {
    const std::size_t c = z - static_cast<std::size_t>(z1);
    const int s = tr.st[z];
    const int k = tr.k[z];
    const std::size_t ks = static_cast<std::size_t>(k);
    if (has_rf) ad.rfline[c] = (s == kTI) ? '.' : model.rf[ks];
    if (has_cs) ad.csline[c] = (s == kTI) ? '.' : model.cs[ks];
    if (tr.has_pp) ad.ppline[c] = (s == kTD) ? '.' : encode_post_prob(tr.pp[z]);

    const int x = dsq[static_cast<std::size_t>(tr.i[z])];
    switch (s) {
      case kTM: {
        const char cons = model.consensus[ks];
        ad.model[c] = cons;
        if (x == abc.inmap[static_cast<unsigned char>(cons)])
          ad.mline[c] = cons;
        else if (model.match_odds(k, x) > 1.0f)  // odds ratio > 1: positive score
          ad.mline[c] = '+';
        else
          ad.mline[c] = ' ';
        ad.aseq[c] =
            static_cast<char>(std::toupper(static_cast<unsigned char>(abc.sym[static_cast<std::size_t>(x)])));
        break;
      }
      case kTI:
        ad.model[c] = '.';
        ad.mline[c] = ' ';
        ad.aseq[c] =
            static_cast<char>(std::tolower(static_cast<unsigned char>(abc.sym[static_cast<std::size_t>(x)])));
        break;
      case kTD:
        ad.model[c] = model.consensus[ks];
        ad.mline[c] = ' ';
        ad.aseq[c] = '-';
        break;
      default: throw Error(ErrorKind::kInternal, "alignment display: invalid state in trace: not M, D, I");
    }
  }
  return ad;
}

AliDisplay make_alidisplay(const Trace& tr, int which, const OProfile& om, std::string_view sqname,
                           std::string_view sqacc, std::string_view sqdesc, const Dsq& dsq, int64_t L) {
  AliModel m;
  m.name = om.name;
  m.acc = om.acc;
  m.desc = om.desc;
  m.M = om.M;
  m.rf = om.rf;
  m.cs = om.cs;
  m.consensus = om.consensus;
  m.abc = om.abc;
  // p7_oprofile_FGetEmission: the striped Forward match odds ratio.
  m.match_odds = [&om](int k, int x) { return om.fwd_match(x, k); };
  return make_alidisplay(tr, which, m, sqname, sqacc, sqdesc, dsq, L);
}

}  // namespace warpsearch::hmm
