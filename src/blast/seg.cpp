// seg.cpp: SEG low-complexity segments and masks as BLAST+ 2.12 computes them (see seg.hpp for the rules).
//
// Contents: the ln n! table, the window composition (counts kept as a descending "state" vector, the
// order in which BLAST+ sums its floating-point terms), trigger entropies, the trim, the recursive
// segment scan, and the public seg_segments / seg_mask / apply_mask.
//
// Floating point is reproduced operation by operation (same operands, same order, no contraction), since
// entropies are compared with locut/hicut and log-probabilities with each other: a changed last bit can
// move a segment end.
#include "blast/seg.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {

constexpr int kCanonical = 20;  // residues counted by SEG: codes 0..19; every other code is "bogus"
constexpr int kMaxBogus = 2;    // a trigger window with more bogus residues has no entropy
constexpr int kMaxTrim = 50;    // the trim considers sub-ranges at most this much shorter
constexpr double kLn2 = 0.69314718055994530941723212145818;  // NCBIMATH_LN2
constexpr double kLn20 = 2.9957322735539909;                 // BLAST+'s ln 20 for the protein alphabet
// ln(k / 10) for k = 0..10 with the (short, partly inexact) constants BLAST+ uses for windows of exactly ten
// canonical residues; index 0 and 10 are 0.
constexpr std::array<double, 11> kLnTenths = {0.0,         -2.30258509,  -1.60943791,  -1.203982804,
                                              -0.91629073, -0.6931478,   -0.510825623, -0.356674944,
                                              -0.22314355, -0.105360515, 0.0};
constexpr int kLnFactTable = 10001;          // BLAST+ tabulates ln n! for n < 10001 ...
constexpr double kHalfLn2Pi = 0.9189385332;  // ... and uses Stirling with this constant beyond

// ln n! rounded to 6 decimals, as BLAST+'s literal table holds it: the exact value (long double lgamma)
// printed with 6 decimals and parsed back, which yields the same double as the C literal.
const std::array<double, kLnFactTable>& ln_fact_table() {
  static const std::array<double, kLnFactTable> table = [] {
    std::array<double, kLnFactTable> t{};
    std::array<char, 64> buf{};
    for (int n = 0; n < kLnFactTable; ++n) {
      const long double exact = n < 2 ? 0.0L : std::lgammal(static_cast<long double>(n) + 1.0L);
      const auto printed =
          std::to_chars(buf.data(), buf.data() + buf.size(), exact, std::chars_format::fixed, 6);
      double value = 0;
      const auto parsed = std::from_chars(buf.data(), printed.ptr, value);
      if (printed.ec != std::errc{} || parsed.ec != std::errc{})
        throw Error(ErrorKind::kInternal, "ln n! table");
      t[static_cast<std::size_t>(n)] = value;
    }
    return t;
  }();
  return table;
}

double ln_fact(std::int64_t n) {
  if (n < kLnFactTable) return ln_fact_table()[static_cast<std::size_t>(n)];
  const double x = static_cast<double>(n);
  const double a = (x + 0.5) * std::log(x);
  const double b = a - x;
  return b + kHalfLn2Pi;
}

// Composition of a window: per-residue counts, the bogus count, and `state`, the nonzero counts in
// descending order followed by zeros (state[kCanonical] stays 0 as a terminator). Adding a residue bumps
// the FIRST state entry equal to its old count, removing one lowers the LAST entry equal to its old count,
// which keeps state sorted.
class Composition {
 public:
  void add(std::uint8_t code) {
    if (code >= kCanonical) {
      ++bogus_;
      return;
    }
    ++canonical_;
    const int old = counts_[code]++;
    std::size_t k = 0;
    while (state_[k] != old) ++k;
    ++state_[k];
  }
  void remove(std::uint8_t code) {
    if (code >= kCanonical) {
      --bogus_;
      return;
    }
    --canonical_;
    const int old = counts_[code]--;
    std::size_t k = 0;
    while (!(state_[k] == old && state_[k + 1] < old)) ++k;
    --state_[k];
  }
  int bogus() const { return bogus_; }
  int canonical() const { return canonical_; }
  const std::array<int, kCanonical + 1>& state() const { return state_; }

 private:
  std::array<int, kCanonical> counts_{};
  std::array<int, kCanonical + 1> state_{};
  int bogus_ = 0;
  int canonical_ = 0;
};

// Entropy in bits of the canonical residues of a window (s_Entropy): terms summed in state order.
double entropy(const Composition& comp) {
  const int total = comp.canonical();
  if (total == 0) return 0.0;
  const auto& state = comp.state();
  const double t = static_cast<double>(total);
  double ent = 0.0;
  for (std::size_t k = 0; state[k] != 0; ++k) {
    const double c = static_cast<double>(state[k]);
    const double ln = total == 10 ? kLnTenths[static_cast<std::size_t>(state[k])] : std::log(c / t);
    const double term = c * ln;
    ent += term / kLn2;
  }
  return std::fabs(ent / t);
}

// ln of the probability of the window's complexity state (s_GetProb): ln of the number of compositions
// with the same state (groups of equal counts, then the absent residues), plus ln of the number of
// sequences with this composition, minus len ln 20. `len` counts bogus residues too.
double log_probability(const Composition& comp, std::int64_t len) {
  const auto& state = comp.state();
  double compositions = ln_fact(kCanonical);
  if (state[0] != 0) {
    int absent = kCanonical;
    std::size_t k = 0;
    while (k < static_cast<std::size_t>(kCanonical) && state[k] != 0) {
      std::size_t group = 1;
      while (k + group < static_cast<std::size_t>(kCanonical) && state[k + group] == state[k]) ++group;
      compositions -= ln_fact(static_cast<std::int64_t>(group));
      absent -= static_cast<int>(group);
      k += group;
    }
    if (absent > 0) compositions -= ln_fact(absent);
  }
  double sequences = ln_fact(len);
  for (std::size_t k = 0; state[k] != 0; ++k) sequences -= ln_fact(state[k]);
  const double all = static_cast<double>(len) * kLn20;
  const double sum = compositions + sequences;
  return sum - all;
}

struct Resolved {
  std::int64_t window = 12;
  double locut = 2.2;
  double hicut = 2.5;
  int max_bogus = kMaxBogus;
  std::int64_t downset = 5;  // trigger position of a window = its start + downset
  std::int64_t upset = 7;    // window - downset
};

Resolved resolve(const SegParams& params) {
  Resolved r;
  if (params.window > 0) r.window = params.window;
  if (params.locut > 0.0) r.locut = params.locut;
  if (params.hicut > 0.0) r.hicut = params.hicut;
  if (r.locut > r.hicut) r.hicut = r.locut;
  r.max_bogus = static_cast<int>(std::min<std::int64_t>(kMaxBogus, r.window));
  r.downset = (r.window + 1) / 2 - 1;
  r.upset = r.window - r.downset;
  return r;
}

// The sub-range of seq[0, n) to keep (s_Trim): lengths n down to max(1, n - kMaxTrim) + 1, starts left to
// right; strictly smaller log-probability wins, starting from 1.0 with the whole range. Returns [first,
// last].
std::pair<std::int64_t, std::int64_t> trim(const std::uint8_t* seq, std::int64_t n) {
  const std::int64_t min_len = std::max<std::int64_t>(1, n - kMaxTrim);
  double best = 1.0;
  std::int64_t first = 0;
  std::int64_t last = n - 1;
  for (std::int64_t len = n; len > min_len; --len) {
    Composition comp;
    for (std::int64_t k = 0; k < len; ++k) comp.add(seq[k]);
    for (std::int64_t start = 0;; ++start) {
      const double p = log_probability(comp, len);
      if (p < best) {
        best = p;
        first = start;
        last = start + len - 1;
      }
      if (start + len >= n) break;
      comp.remove(seq[start]);
      comp.add(seq[start + len]);
    }
  }
  return {first, last};
}

// Segments of seq[0, n) (s_SegSeq), in discovery order, shifted by offset.
void seg_range(const std::uint8_t* seq, std::int64_t n, std::int64_t offset, const Resolved& p,
               std::vector<Interval>& out) {
  if (p.window > n) return;
  constexpr double kNone = -1.0;  // no entropy (too many bogus residues, or no window here)
  std::vector<double> h(static_cast<std::size_t>(n), kNone);
  const std::int64_t first = p.downset;
  const std::int64_t last = n - p.upset;
  {
    Composition comp;
    for (std::int64_t k = 0; k < p.window; ++k) comp.add(seq[k]);
    for (std::int64_t i = first; i <= last; ++i) {
      h[static_cast<std::size_t>(i)] = comp.bogus() > p.max_bogus ? kNone : entropy(comp);
      if (i < last) {
        comp.remove(seq[i - p.downset]);
        comp.add(seq[i - p.downset + p.window]);
      }
    }
  }
  const auto at = [&h](std::int64_t i) { return h[static_cast<std::size_t>(i)]; };
  std::int64_t low_limit = first;
  for (std::int64_t i = first; i <= last; ++i) {
    if (!(at(i) <= p.locut && at(i) != kNone)) continue;
    // Extend over positions with an entropy not above hicut.
    std::int64_t lo = i;
    while (lo >= low_limit && at(lo) != kNone && !(at(lo) > p.hicut)) --lo;
    ++lo;
    std::int64_t hi = i;
    while (hi <= last && at(hi) != kNone && !(at(hi) > p.hicut)) ++hi;
    --hi;
    const std::int64_t left = lo - p.downset;
    const std::int64_t right = hi + p.upset - 1;
    const auto [keep_first, keep_last] = trim(seq + left, right - left + 1);
    const std::int64_t seg_begin = left + keep_first;
    const std::int64_t seg_last = left + keep_last;
    if (i + p.upset - 1 < seg_begin) {
      // The trim removed the whole trigger window: seg the removed left part on its own. BLAST+ splices
      // only the head of that call's list (its last segment) into ours.
      std::vector<Interval> sub;
      seg_range(seq + left, seg_begin - left, offset + left, p, sub);
      if (!sub.empty()) out.push_back(sub.back());
    }
    out.push_back(Interval{offset + seg_begin, offset + seg_last + 1});
    i = std::min(hi, seg_last + p.downset);
    low_limit = i + 1;
  }
}

}  // namespace

namespace detail {
double seg_ln_factorial(std::int64_t n) { return ln_fact(n); }
double seg_ln_tenth(int k) { return kLnTenths.at(static_cast<std::size_t>(k)); }
}  // namespace detail

std::vector<Interval> seg_segments(std::span<const std::uint8_t> protein_codes, const SegParams& params) {
  std::vector<Interval> out;
  seg_range(protein_codes.data(), static_cast<std::int64_t>(protein_codes.size()), 0, resolve(params), out);
  return out;
}

std::vector<Interval> seg_mask(std::span<const std::uint8_t> protein_codes, const SegParams& params) {
  std::vector<Interval> segs = seg_segments(protein_codes, params);
  std::sort(segs.begin(), segs.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> runs;
  for (const Interval& s : segs) {
    if (!runs.empty() && s.begin <= runs.back().end) {
      runs.back().end = std::max(runs.back().end, s.end);
    } else {
      runs.push_back(s);
    }
  }
  return runs;
}

void apply_mask(std::span<std::uint8_t> protein_codes, std::span<const Interval> intervals) {
  const auto size = static_cast<std::int64_t>(protein_codes.size());
  for (const Interval& iv : intervals) {
    if (iv.begin < 0 || iv.begin > iv.end || iv.end > size) {
      throw Error(ErrorKind::kInternal, "apply_mask: interval [" + std::to_string(iv.begin) + ", " +
                                            std::to_string(iv.end) + ") outside a sequence of length " +
                                            std::to_string(size));
    }
    std::fill(protein_codes.begin() + iv.begin, protein_codes.begin() + iv.end, kProteinUnknown);
  }
}

}  // namespace warpsearch::blast
