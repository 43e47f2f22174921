// test_traceback.cpp: kernel 2 of the scan (src/scan/traceback.hpp).
//
// Contents:
//   local_candidates()   an independent full-matrix local DP with origin tracking written from model.hpp:
//                        per-origin best column records = the scan's candidates
//   value_trace()        an independent global DP of a box with H/E/F matrices, traced from the values by
//                        the tie rule (checks trace_alignment_full, the definition)
//   banded_score()       banded global DP along a planted path (the score of long planted alignments)
//   expect_consistent()  CIGAR re-scoring, counts and lengths of an Alignment
// Suites: TracebackFull (the definition vs value_trace), TracebackPruned (trace_alignment ==
// trace_alignment_full on candidates of random and real DNA/protein, of reference_scan +
// reduce_records too, gap-heavy scoring, open = 0, gap costs too large for the 32-bit DP),
// TracebackCheckpoint (tiny max_matrix_bytes forcing block recomputation), TracebackLong (100 kbp
// planted alignment), TracebackErrors (score mismatches, bad boxes), TracebackSpeed (a genomic SSCA#1
// box in the linear regime: == full, rate printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "scan/reference.hpp"
#include "scan/sections.hpp"
#include "scan/traceback.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::scan {
namespace {

using i64 = std::int64_t;
using Seq = std::vector<std::uint8_t>;
constexpr i64 kNeg = std::numeric_limits<i64>::min() / 4;

ScanModel dna_model(int match = 5, int mismatch = -3, int open = 8, int extend = 1) {
  return ScanModel::make(ScoringMatrix::dna(match, mismatch), GapCosts{open, extend});
}
ScanModel protein_model(int open = 11, int extend = 1) {
  return ScanModel::make(ScoringMatrix::builtin("BLOSUM62"), GapCosts{open, extend});
}

// ---------------------------------------------------------------------------------------------------
// Independent local DP (model.hpp, literally): column records with origins, reduced to the best record
// of each origin, ranked by candidate_before.
std::vector<Candidate> local_candidates(const ScanModel& model, const Seq& q, const Seq& t) {
  struct Cell {
    i64 v = 0;
    std::int32_t qs = kNoOrigin;
    i64 ts = kNoOrigin;
  };
  const i64 m = static_cast<i64>(q.size()), n = static_cast<i64>(t.size());
  const i64 open = model.open, ext = model.extend;
  std::vector<Cell> h_row(static_cast<std::size_t>(m)),
      e_row(static_cast<std::size_t>(m));  // after column j-1
  std::map<std::pair<std::int32_t, i64>, Candidate> best;
  for (i64 j = 0; j < n; ++j) {
    Cell h_diag, h_up, f;  // H(i-1,j-1), H(i-1,j), F(i-1,j)
    Candidate rec;
    rec.score = 0;
    for (i64 i = 0; i < m; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      const Cell h_left = h_row[ui], e_left = e_row[ui];
      Cell e;
      {
        const i64 o = h_left.v - open - ext, x = e_left.v - ext;
        e.v = std::max<i64>({o, x, 0});
        if (e.v > 0) e = o >= x ? Cell{e.v, h_left.qs, h_left.ts} : Cell{e.v, e_left.qs, e_left.ts};
      }
      {
        const i64 o = h_up.v - open - ext, x = f.v - ext;
        const i64 v = std::max<i64>({o, x, 0});
        f = v > 0 ? (o >= x ? Cell{v, h_up.qs, h_up.ts} : Cell{v, f.qs, f.ts}) : Cell{};
      }
      Cell d{h_diag.v + model.score(q[ui], t[static_cast<std::size_t>(j)]), h_diag.qs, h_diag.ts};
      if (h_diag.v <= 0) {
        d.qs = static_cast<std::int32_t>(i);
        d.ts = j;
      }
      Cell h;
      const i64 hv = std::max<i64>({d.v, e.v, f.v, 0});
      if (hv > 0) h = hv == d.v ? d : hv == e.v ? e : f;
      h.v = hv;
      h_diag = h_left;
      h_row[ui] = h;
      e_row[ui] = e;
      h_up = h;
      if (h.v > rec.score) {
        rec.score = static_cast<std::int32_t>(h.v);
        rec.qend = static_cast<std::int32_t>(i);
        rec.qstart = h.qs;
        rec.tstart = h.ts;
      }
    }
    if (rec.score > 0) {
      rec.tend = j;
      auto [it, fresh] = best.try_emplace({rec.qstart, rec.tstart}, rec);
      if (!fresh && candidate_before(rec, it->second)) it->second = rec;
    }
  }
  std::vector<Candidate> out;
  for (const auto& kv : best) out.push_back(kv.second);
  std::sort(out.begin(), out.end(), candidate_before);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Independent global DP of a box with all three matrices, traced back from the values.
struct ValueTrace {
  i64 score = 0;
  std::string cigar;
};

std::string run_length(const std::string& ops) {  // ops in alignment order
  std::string out;
  for (std::size_t k = 0; k < ops.size();) {
    std::size_t e = k;
    while (e < ops.size() && ops[e] == ops[k]) ++e;
    out += std::to_string(e - k) + ops[k];
    k = e;
  }
  return out;
}

ValueTrace value_trace(const ScanModel& model, const Seq& q, const Seq& t) {
  const i64 m = static_cast<i64>(q.size()), n = static_cast<i64>(t.size());
  const i64 open = model.open, ext = model.extend;
  const auto idx = [n](i64 i, i64 j) { return static_cast<std::size_t>(i * (n + 1) + j); };
  std::vector<i64> H(static_cast<std::size_t>((m + 1) * (n + 1))), E(H.size(), kNeg), F(H.size(), kNeg);
  for (i64 j = 1; j <= n; ++j) H[idx(0, j)] = -(open + j * ext);
  for (i64 i = 1; i <= m; ++i) H[idx(i, 0)] = -(open + i * ext);
  const auto s = [&](i64 i, i64 j) {
    return i64{model.score(q[static_cast<std::size_t>(i - 1)], t[static_cast<std::size_t>(j - 1)])};
  };
  for (i64 i = 1; i <= m; ++i) {
    for (i64 j = 1; j <= n; ++j) {
      E[idx(i, j)] = std::max(E[idx(i, j - 1)] - ext, H[idx(i, j - 1)] - open - ext);
      F[idx(i, j)] = std::max(F[idx(i - 1, j)] - ext, H[idx(i - 1, j)] - open - ext);
      H[idx(i, j)] = std::max({H[idx(i - 1, j - 1)] + s(i, j), E[idx(i, j)], F[idx(i, j)]});
    }
  }
  ValueTrace r;
  r.score = H[idx(m, n)];
  std::string ops;
  i64 i = m, j = n;
  int st = 0;
  while (i > 0 && j > 0) {
    if (st == 0) {
      if (H[idx(i, j)] == H[idx(i - 1, j - 1)] + s(i, j)) {
        ops += q[static_cast<std::size_t>(i - 1)] == t[static_cast<std::size_t>(j - 1)] ? '=' : 'X';
        --i;
        --j;
      } else {
        st = H[idx(i, j)] == E[idx(i, j)] ? 1 : 2;
      }
    } else if (st == 1) {
      ops += 'D';
      if (E[idx(i, j)] == H[idx(i, j - 1)] - open - ext) st = 0;
      --j;
    } else {
      ops += 'I';
      if (F[idx(i, j)] == H[idx(i - 1, j)] - open - ext) st = 0;
      --i;
    }
  }
  ops.append(static_cast<std::size_t>(j), 'D');
  ops.append(static_cast<std::size_t>(i), 'I');
  std::reverse(ops.begin(), ops.end());
  r.cigar = run_length(ops);
  return r;
}

// Global DP restricted to cells with |j - i - diag(i)| <= w (diag: the planted path's offset per row).
i64 banded_score(const ScanModel& model, const Seq& q, const Seq& t, const std::vector<i64>& diag, i64 w) {
  const i64 m = static_cast<i64>(q.size()), n = static_cast<i64>(t.size());
  const i64 open = model.open, ext = model.extend;
  std::vector<i64> hp(static_cast<std::size_t>(n + 1), kNeg), hc(hp.size(), kNeg), fc(hp.size(), kNeg);
  for (i64 j = 0; j <= std::min(n, w); ++j) hp[static_cast<std::size_t>(j)] = j == 0 ? 0 : -(open + j * ext);
  i64 plo = 0, phi = std::min(n, w);
  for (i64 i = 1; i <= m; ++i) {
    const i64 lo = std::max<i64>(0, i + diag[static_cast<std::size_t>(i)] - w);
    const i64 hi = std::min<i64>(n, i + diag[static_cast<std::size_t>(i)] + w);
    for (i64 j = std::max<i64>(0, lo - 1); j <= std::min(n, hi + 1); ++j)
      hc[static_cast<std::size_t>(j)] = kNeg;
    i64 e = kNeg;
    for (i64 j = lo; j <= hi; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      const auto in_prev = [&](i64 c) { return c >= plo && c <= phi; };
      if (j == 0) {
        hc[0] = -(open + i * ext);
        fc[0] = kNeg;
        continue;
      }
      e = std::max(e - ext, hc[uj - 1] - open - ext);
      const i64 f = in_prev(j) ? std::max(fc[uj] - ext, hp[uj] - open - ext) : kNeg;
      const i64 d =
          in_prev(j - 1) ? hp[uj - 1] + model.score(q[static_cast<std::size_t>(i - 1)], t[uj - 1]) : kNeg;
      fc[uj] = f;
      hc[uj] = std::max({d, e, f});
    }
    for (i64 j = plo; j <= phi; ++j)
      if (j < lo || j > hi) fc[static_cast<std::size_t>(j)] = kNeg;
    std::swap(hp, hc);
    plo = lo;
    phi = hi;
  }
  return hp[static_cast<std::size_t>(n)];
}

// Re-scores an alignment's CIGAR on the box and checks its counts.
void expect_consistent(const ScanModel& model, const Seq& query, const Seq& target, const Candidate& c,
                       const Alignment& a) {
  i64 qi = c.qstart, tj = c.tstart, score = 0;
  std::uint32_t matches = 0, mismatches = 0, opens = 0, gap_cols = 0, length = 0;
  std::size_t k = 0;
  char prev = 0;
  while (k < a.cigar.size()) {
    std::size_t e = k;
    while (e < a.cigar.size() && a.cigar[e] >= '0' && a.cigar[e] <= '9') ++e;
    ASSERT_LT(e, a.cigar.size());
    ASSERT_GT(e, k);
    const i64 run = std::stoll(a.cigar.substr(k, e - k));
    const char op = a.cigar[e];
    ASSERT_NE(op, prev) << "adjacent runs of one op in " << a.cigar;
    ASSERT_GT(run, 0);
    for (i64 r = 0; r < run; ++r) {
      if (op == '=' || op == 'X') {
        const auto x = query[static_cast<std::size_t>(qi)], y = target[static_cast<std::size_t>(tj)];
        EXPECT_EQ(op == '=', x == y);
        score += model.score(x, y);
        ++qi;
        ++tj;
        ++(op == '=' ? matches : mismatches);
      } else {
        ASSERT_TRUE(op == 'I' || op == 'D') << op;
        ++(op == 'I' ? qi : tj);
        ++gap_cols;
      }
    }
    if (op == 'I' || op == 'D') {
      score -= model.open + run * model.extend;
      ++opens;
    }
    length += static_cast<std::uint32_t>(run);
    prev = op;
    k = e + 1;
  }
  EXPECT_EQ(qi, c.qend + 1);
  EXPECT_EQ(tj, c.tend + 1);
  EXPECT_EQ(score, c.score);
  EXPECT_EQ(a.matches, matches);
  EXPECT_EQ(a.mismatches, mismatches);
  EXPECT_EQ(a.gap_opens, opens);
  EXPECT_EQ(a.gap_columns, gap_cols);
  EXPECT_EQ(a.length, length);
  EXPECT_GT(a.cells, 0);
}

void expect_same_path(const Alignment& a, const Alignment& b, const std::string& what) {
  EXPECT_EQ(a.cigar, b.cigar) << what;
  EXPECT_EQ(a.matches, b.matches) << what;
  EXPECT_EQ(a.mismatches, b.mismatches) << what;
  EXPECT_EQ(a.gap_opens, b.gap_opens) << what;
  EXPECT_EQ(a.gap_columns, b.gap_columns) << what;
  EXPECT_EQ(a.length, b.length) << what;
}

// ---------------------------------------------------------------------------------------------------
// Random sequences.

Seq random_seq(std::mt19937_64& rng, std::size_t len, int canonical, std::uint8_t unknown,
               double unknown_rate) {
  std::uniform_int_distribution<int> res(0, canonical - 1);
  std::uniform_real_distribution<double> u(0, 1);
  Seq s(len);
  for (auto& c : s) c = u(rng) < unknown_rate ? unknown : static_cast<std::uint8_t>(res(rng));
  return s;
}

// A mutated copy: substitutions at sub_rate, indels (length 1..max_indel) at indel_rate per residue.
// diag (optional) receives, per row of the copy (1-based, index 0 = 0), the offset j - i of the source
// position the row's residue came from.
Seq mutate(std::mt19937_64& rng, const Seq& src, int canonical, double sub_rate, double indel_rate,
           int max_indel, std::vector<i64>* diag = nullptr) {
  std::uniform_int_distribution<int> res(0, canonical - 1), len(1, max_indel);
  std::uniform_real_distribution<double> u(0, 1);
  Seq out;
  if (diag) diag->assign(1, 0);
  for (std::size_t k = 0; k < src.size(); ++k) {
    const double x = u(rng);
    if (x < indel_rate / 2) {  // deletion from the copy: skip source residues
      k += static_cast<std::size_t>(len(rng)) - 1;
      continue;
    }
    if (x < indel_rate) {  // insertion into the copy
      for (int l = len(rng); l > 0; --l) {
        out.push_back(static_cast<std::uint8_t>(res(rng)));
        if (diag) diag->push_back(static_cast<i64>(k) - static_cast<i64>(out.size()));
      }
    }
    out.push_back(u(rng) < sub_rate ? static_cast<std::uint8_t>(res(rng)) : src[k]);
    if (diag) diag->push_back(static_cast<i64>(k) + 1 - static_cast<i64>(out.size()));
  }
  return out;
}

// A query/target pair with a few planted similar regions and noise around them.
std::pair<Seq, Seq> planted_pair(std::mt19937_64& rng, std::size_t tlen, int canonical, std::uint8_t unknown,
                                 double sub_rate, double indel_rate, int max_indel) {
  Seq t = random_seq(rng, tlen, canonical, unknown, 0.01);
  Seq q = random_seq(rng, tlen / 8, canonical, unknown, 0.01);
  for (int k = 0; k < 3; ++k) {
    const std::size_t a = rng() % (tlen / 2), l = tlen / 6 + rng() % (tlen / 6);
    const Seq piece(t.begin() + static_cast<std::ptrdiff_t>(a),
                    t.begin() + static_cast<std::ptrdiff_t>(a + l));
    const Seq copy = mutate(rng, piece, canonical, sub_rate, indel_rate, max_indel);
    q.insert(q.end(), copy.begin(), copy.end());
    const Seq gap = random_seq(rng, tlen / 10, canonical, unknown, 0.01);
    q.insert(q.end(), gap.begin(), gap.end());
  }
  return {q, t};
}

// Candidates to trace: the best `top` plus `spread` evenly spaced ones of the rest (weak, short ones).
std::vector<Candidate> pick(const std::vector<Candidate>& all, std::size_t top, std::size_t spread) {
  std::vector<Candidate> out(all.begin(),
                             all.begin() + static_cast<std::ptrdiff_t>(std::min(top, all.size())));
  for (std::size_t k = 1; k <= spread && top < all.size(); ++k) {
    out.push_back(all[top + (all.size() - top - 1) * k / spread]);
  }
  return out;
}

// trace_alignment (default limits and a few small ones) == trace_alignment_full == value_trace on each
// candidate; returns the total cells of the pruned runs with default limits and of the full runs.
std::pair<i64, i64> check_candidates(const ScanModel& model, const Seq& q, const Seq& t,
                                     const std::vector<Candidate>& cands, bool with_value_trace) {
  i64 pruned = 0, full = 0;
  for (const Candidate& c : cands) {
    const std::string what = "candidate score " + std::to_string(c.score) + " box [" +
                             std::to_string(c.qstart) + ".." + std::to_string(c.qend) + "]x[" +
                             std::to_string(c.tstart) + ".." + std::to_string(c.tend) + "]";
    const Alignment ref = trace_alignment_full(model, q, t, c);
    expect_consistent(model, q, t, c, ref);
    if (with_value_trace) {
      const Seq bq(q.begin() + c.qstart, q.begin() + c.qend + 1),
          bt(t.begin() + c.tstart, t.begin() + c.tend + 1);
      const ValueTrace v = value_trace(model, bq, bt);
      EXPECT_EQ(v.score, c.score) << what;
      EXPECT_EQ(v.cigar, ref.cigar) << what;
    }
    const Alignment a = trace_alignment(model, q, t, c);
    expect_same_path(a, ref, what);
    EXPECT_LE(a.cells, ref.cells) << what;
    pruned += a.cells;
    full += ref.cells;
    for (std::uint64_t limit : {std::uint64_t{1}, std::uint64_t{200}, std::uint64_t{5000}}) {
      const Alignment b = trace_alignment(model, q, t, c, TracebackLimits{limit});
      expect_same_path(b, ref, what + " limit " + std::to_string(limit));
      EXPECT_GE(b.cells, a.cells) << what;
    }
  }
  return {pruned, full};
}

// ---------------------------------------------------------------------------------------------------

TEST(TracebackFull, MatchesValueTraceOnRandomBoxes) {
  // Any box whose optimum is given as S: tiny random boxes (negative optima included), many scorings.
  std::mt19937_64 rng(11);
  const std::vector<ScanModel> models = {
      dna_model(),     dna_model(1, -1, 0, 1), dna_model(2, -3, 5, 2), dna_model(1, -4, 1, 3),
      protein_model(), protein_model(0, 1)};
  int traced = 0;
  for (const ScanModel& model : models) {
    const bool prot = model.max_score > 5;
    for (int iter = 0; iter < 600; ++iter) {
      const std::size_t m = 1 + rng() % (iter < 300 ? 8 : 40), n = 1 + rng() % (iter < 300 ? 8 : 40);
      const int canon = prot ? 20 : (iter % 3 == 0 ? 2 : 4);  // tiny alphabets: many ties
      Seq q = random_seq(rng, m, canon, prot ? kProteinUnknown : kDnaUnknown, 0.05);
      Seq t = iter % 2 ? mutate(rng, q, canon, 0.2, 0.2, 3) : random_seq(rng, n, canon, kDnaUnknown, 0.0);
      if (t.empty()) t.push_back(0);
      const ValueTrace v = value_trace(model, q, t);
      Candidate c;
      c.score = static_cast<std::int32_t>(v.score);
      c.qend = static_cast<std::int32_t>(q.size()) - 1;
      c.tend = static_cast<i64>(t.size()) - 1;
      const Alignment full = trace_alignment_full(model, q, t, c);
      ASSERT_EQ(full.cigar, v.cigar) << "m " << q.size() << " n " << t.size() << " S " << v.score;
      expect_consistent(model, q, t, c, full);
      EXPECT_EQ(full.cells, static_cast<i64>(q.size() * t.size()));
      const Alignment pruned = trace_alignment(model, q, t, c);
      expect_same_path(pruned, full, "random box");
      const Alignment ckpt = trace_alignment(model, q, t, c, TracebackLimits{1});
      expect_same_path(ckpt, full, "random box, limit 1");
      ++traced;
    }
  }
  EXPECT_EQ(traced, 3600);
}

TEST(TracebackFull, SingleCellBoxes) {
  const ScanModel model = dna_model();
  const Seq q = {0, 1, 2, 3}, t = {3, 2, 1, 0, 0};
  Candidate c;
  c.qstart = c.qend = 2;  // G
  c.tstart = c.tend = 1;  // G
  c.score = 5;
  for (const Alignment& a : {trace_alignment_full(model, q, t, c), trace_alignment(model, q, t, c)}) {
    EXPECT_EQ(a.cigar, "1=");
    EXPECT_EQ(a.matches, 1u);
    EXPECT_EQ(a.length, 1u);
  }
  c.tstart = c.tend = 0;  // G vs T: mismatch beats two gaps
  c.score = -3;
  EXPECT_EQ(trace_alignment(model, q, t, c).cigar, "1X");
  // Mismatch -20, gaps free to open: two gaps (-2) beat the mismatch; E before F, so the trace ends
  // with D (reading back), the alignment is I then D.
  const ScanModel cheap = dna_model(1, -20, 0, 1);
  c.score = -2;
  for (const Alignment& a : {trace_alignment_full(cheap, q, t, c), trace_alignment(cheap, q, t, c)}) {
    EXPECT_EQ(a.cigar, "1I1D");
    EXPECT_EQ(a.gap_opens, 2u);
    EXPECT_EQ(a.gap_columns, 2u);
    EXPECT_EQ(a.length, 2u);
    expect_consistent(cheap, q, t, c, a);
  }
}

TEST(TracebackPruned, LocalCandidatesDna) {
  std::mt19937_64 rng(21);
  const ScanModel model = dna_model();
  i64 pruned = 0, full = 0;
  std::size_t n = 0;
  for (int rep = 0; rep < 8; ++rep) {
    const auto [q, t] = planted_pair(rng, 900, rep % 4 == 3 ? 2 : 4, kDnaUnknown, 0.08, 0.03, 6);
    const auto all = local_candidates(model, q, t);
    ASSERT_FALSE(all.empty());
    const auto cands = pick(all, 12, 8);
    n += cands.size();
    const auto [p, f] = check_candidates(model, q, t, cands, rep < 2);
    pruned += p;
    full += f;
  }
  EXPECT_GE(n, 40u);
  EXPECT_LT(pruned, full);
}

TEST(TracebackPruned, ReferenceScanCandidates) {
  // The scan's own candidates (reference_scan + reduce_records) are those of the test's local DP, and
  // each traces to the same path in both versions.
  std::mt19937_64 rng(24);
  for (const ScanModel& model : {dna_model(), protein_model()}) {
    const bool prot = model.max_score > 5;
    const auto [q, t] = planted_pair(rng, 800, prot ? 20 : 4, prot ? kProteinUnknown : kDnaUnknown,
                                     prot ? 0.25 : 0.06, 0.03, 5);
    const auto records = reference_scan(model, q, t);
    const CandidateList list = reduce_records(records, 0, 1, records.size(), 3, Strand::kMinus);
    auto mine = local_candidates(model, q, t);
    for (Candidate& c : mine) {
      c.seq = 3;
      c.strand = Strand::kMinus;
    }
    ASSERT_EQ(list.items, mine);
    check_candidates(model, q, t, pick(list.items, 10, 10), false);
  }
}

TEST(TracebackPruned, LocalCandidatesProtein) {
  std::mt19937_64 rng(22);
  const ScanModel model = protein_model();
  std::size_t n = 0;
  for (int rep = 0; rep < 6; ++rep) {
    const auto [q, t] = planted_pair(rng, 700, 20, kProteinUnknown, 0.3, 0.04, 4);
    const auto cands = pick(local_candidates(model, q, t), 12, 8);
    n += cands.size();
    check_candidates(model, q, t, cands, rep == 0);
  }
  EXPECT_GE(n, 30u);
}

TEST(TracebackPruned, GapHeavyAndOpenZero) {
  // Frequent long indels with cheap gaps (open 1 / extend 1), free gap opening (open 0) and a two-letter
  // alphabet: many optimal paths, ties in every state.
  std::mt19937_64 rng(23);
  struct Case {
    ScanModel model;
    int canonical;
  };
  const std::vector<Case> cases = {{dna_model(5, -3, 1, 1), 4},
                                   {dna_model(2, -3, 0, 2), 4},
                                   {dna_model(1, -1, 0, 1), 2},
                                   {protein_model(0, 2), 20},
                                   {dna_model(5, -4, 3, 0), 4}};
  for (const Case& cs : cases) {
    for (int rep = 0; rep < 4; ++rep) {
      const auto [q, t] = planted_pair(rng, 500, cs.canonical,
                                       cs.canonical == 20 ? kProteinUnknown : kDnaUnknown, 0.05, 0.15, 8);
      const auto all = local_candidates(cs.model, q, t);
      ASSERT_FALSE(all.empty());
      const auto cands = pick(all, 8, 6);
      check_candidates(cs.model, q, t, cands, true);
      std::uint32_t gaps = 0;
      for (const Candidate& c : cands) gaps += trace_alignment(cs.model, q, t, c).gap_opens;
      if (cs.model.extend > 0) {
        EXPECT_GT(gaps, 0u);
      }
    }
  }
}

TEST(TracebackPruned, HugeGapCostsUse64Bits) {
  // Gap costs too large for the 32-bit DP (its overflow bound fails): the 64-bit DP gives the paths.
  std::mt19937_64 rng(25);
  for (const ScanModel& model : {dna_model(5, -3, 1 << 25, 1), dna_model(5, -3, 8, 1 << 25)}) {
    const auto [q, t] = planted_pair(rng, 400, 4, kDnaUnknown, 0.05, 0.0, 1);
    const auto all = local_candidates(model, q, t);
    ASSERT_FALSE(all.empty());
    check_candidates(model, q, t, pick(all, 6, 4), true);
  }
}

TEST(TracebackPruned, RealMitochondria) {
  WS_REQUIRE_TESTDATA("dna/humanMito.fa");
  WS_REQUIRE_TESTDATA("dna/mouseMito.fa");
  const auto read1 = [](const char* rel) {
    SequenceReader reader((test::testdata_dir() / rel).string(), ReaderOptions{AlphabetKind::kDna});
    Sequence s;
    EXPECT_TRUE(reader.next(s));
    return s.residues;
  };
  const Seq human = read1("dna/humanMito.fa"), mouse = read1("dna/mouseMito.fa");
  ASSERT_GT(human.size(), 16000u);
  ASSERT_GT(mouse.size(), 16000u);
  const ScanModel model = dna_model();
  // Windows over the 12S rRNA and the start of 16S (human 648.., mouse 70..): gapped real alignments.
  const Seq q(human.begin() + 600, human.begin() + 2100), t(mouse.begin(), mouse.begin() + 1700);
  const auto all = local_candidates(model, q, t);
  ASSERT_FALSE(all.empty());
  EXPECT_GT(all.front().qend - all.front().qstart, 300);  // a long real alignment
  const auto [pruned, full] = check_candidates(model, q, t, pick(all, 8, 10), false);
  EXPECT_LT(pruned, full);
  const Alignment a = trace_alignment(model, q, t, all.front());
  EXPECT_GT(a.gap_opens, 0u);
}

TEST(TracebackPruned, RealProteins) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  SequenceReader reader((test::testdata_dir() / "prot/globins45.fa").string(),
                        ReaderOptions{AlphabetKind::kProtein});
  std::vector<Seq> seqs;
  Sequence s;
  while (reader.next(s) && seqs.size() < 12) seqs.push_back(s.residues);
  ASSERT_GE(seqs.size(), 12u);
  const ScanModel model = protein_model();
  std::size_t n = 0;
  for (std::size_t a = 0; a < seqs.size(); ++a) {
    for (std::size_t b = a + 1; b < seqs.size(); b += 2) {
      const auto cands = pick(local_candidates(model, seqs[a], seqs[b]), 4, 2);
      n += cands.size();
      check_candidates(model, seqs[a], seqs[b], cands, b == a + 1);
    }
  }
  EXPECT_GE(n, 100u);
}

TEST(TracebackCheckpoint, ManyBlockSizes) {
  // A 1.5 kbp planted alignment with indels: every limit from one row per block to all rows at once.
  std::mt19937_64 rng(31);
  const ScanModel model = dna_model();
  const Seq src = random_seq(rng, 1500, 4, kDnaUnknown, 0.0);
  const Seq copy = mutate(rng, src, 4, 0.03, 0.01, 12);
  Seq q = random_seq(rng, 100, 4, kDnaUnknown, 0.0), t = random_seq(rng, 300, 4, kDnaUnknown, 0.0);
  q.insert(q.end(), copy.begin(), copy.end());
  t.insert(t.end(), src.begin(), src.end());
  const auto all = local_candidates(model, q, t);
  const Candidate c = all.front();
  ASSERT_GT(c.qend - c.qstart, 1000);
  const Alignment ref = trace_alignment_full(model, q, t, c);
  expect_consistent(model, q, t, c, ref);
  const Alignment direct = trace_alignment(model, q, t, c);
  expect_same_path(direct, ref, "direct");
  EXPECT_LT(direct.cells * 5, ref.cells);  // pruning
  i64 last_cells = -1;
  for (std::uint64_t limit : {1ull, 2ull, 25ull, 64ull, 100ull, 257ull, 1000ull, 4099ull, 20000ull, 65536ull,
                              300000ull, 1ull << 20, 1ull << 30}) {
    const Alignment a = trace_alignment(model, q, t, c, TracebackLimits{limit});
    expect_same_path(a, ref, "limit " + std::to_string(limit));
    EXPECT_GE(a.cells, direct.cells);
    EXPECT_LE(a.cells, 2 * direct.cells);  // one forward pass plus at most one recomputation
    if (limit < 20000) {
      EXPECT_GT(a.cells, direct.cells) << "limit " << limit << " should recompute blocks";
    }
    if (limit >= (1ull << 20)) {
      EXPECT_EQ(a.cells, direct.cells);
    }
    last_cells = a.cells;
  }
  EXPECT_EQ(last_cells, direct.cells);
}

TEST(TracebackLong, Planted100kbp) {
  // 100 kbp near-identical planted alignment (0.3% substitutions, indels of 1..10): pruned to a narrow
  // band; S is the banded optimum along the planted path, which trace_alignment certifies (it throws
  // unless S is the box's optimum).
  std::mt19937_64 rng(41);
  const ScanModel model = dna_model();
  const Seq t = random_seq(rng, 100000, 4, kDnaUnknown, 0.0);
  std::vector<i64> diag;
  const Seq q = mutate(rng, t, 4, 0.003, 0.0003, 10, &diag);
  Candidate c;
  c.qend = static_cast<std::int32_t>(q.size()) - 1;
  c.tend = static_cast<i64>(t.size()) - 1;
  const i64 band_score = banded_score(model, q, t, diag, 48);
  ASSERT_GT(band_score, 400000);
  c.score = static_cast<std::int32_t>(band_score);
  const Alignment a = trace_alignment(model, q, t, c);
  expect_consistent(model, q, t, c, a);
  const double area = static_cast<double>(q.size()) * static_cast<double>(t.size());
  RecordProperty("cells", std::to_string(a.cells));
  std::printf("100 kbp box: %lld cells (%.4f%% of the box), %u gap opens\n", static_cast<long long>(a.cells),
              100.0 * static_cast<double>(a.cells) / area, a.gap_opens);
  EXPECT_LT(static_cast<double>(a.cells), area / 100);
  EXPECT_GT(a.gap_opens, 5u);
  // Checkpointed with 4 MiB of pointers: the same path.
  const Alignment b = trace_alignment(model, q, t, c, TracebackLimits{4u << 20});
  expect_same_path(b, a, "4 MiB");
  EXPECT_GT(b.cells, a.cells);
  // A better score than the optimum cannot be matched.
  c.score += 1;
  EXPECT_THROW(trace_alignment(model, q, t, c), Error);
}

TEST(TracebackErrors, ScoreMismatchIsInternal) {
  std::mt19937_64 rng(51);
  const ScanModel model = dna_model();
  const auto [q, t] = planted_pair(rng, 600, 4, kDnaUnknown, 0.05, 0.02, 4);
  const auto all = local_candidates(model, q, t);
  ASSERT_GT(all.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) {
    for (const int delta : {-1000, -1, 1, 7}) {
      Candidate c = all[k];
      c.score += delta;
      for (const std::uint64_t limit : {std::uint64_t{1} << 30, std::uint64_t{64}}) {
        try {
          trace_alignment(model, q, t, c, TracebackLimits{limit});
          ADD_FAILURE() << "no error for score delta " << delta;
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::kInternal) << e.what();
        }
      }
      try {
        trace_alignment_full(model, q, t, c);
        ADD_FAILURE() << "no error for score delta " << delta;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInternal) << e.what();
      }
    }
  }
}

TEST(TracebackErrors, BoxOutsideSequences) {
  const ScanModel model = dna_model();
  const Seq q = {0, 1, 2}, t = {0, 1, 2};
  Candidate c;
  c.score = 15;
  c.qend = 3;  // past the query
  c.tend = 2;
  EXPECT_THROW(trace_alignment(model, q, t, c), Error);
  EXPECT_THROW(trace_alignment_full(model, q, t, c), Error);
  c.qend = 2;
  c.tstart = 2;
  c.tend = 1;  // empty target range
  EXPECT_THROW(trace_alignment(model, q, t, c), Error);
  c.tstart = 0;
  c.tend = 2;
  EXPECT_EQ(trace_alignment(model, q, t, c).cigar, "3=");
}

TEST(TracebackGenomic, LinearRegimeBox) {
  // SSCA#1 scoring on genomic DNA is in the linear (global-like) regime: the top candidate of a 4 kbp
  // chrX window against a 6 kbp window elsewhere spans most of the box and pruning removes little.
  // trace_alignment must give the full-matrix path; its rate (cells/s) is printed.
  WS_REQUIRE_TESTDATA("dna/ce2_chrX.fa");
  SequenceReader reader((test::testdata_dir() / "dna/ce2_chrX.fa").string(),
                        ReaderOptions{AlphabetKind::kDna});
  Sequence chr;
  ASSERT_TRUE(reader.next(chr));
  ASSERT_GT(chr.residues.size(), 6000000u);
  const Seq q(chr.residues.begin() + 1000000, chr.residues.begin() + 1004000),
      t(chr.residues.begin() + 5000000, chr.residues.begin() + 5006000);
  const ScanModel model = dna_model();
  const auto records = reference_scan(model, q, t);
  const CandidateList list = reduce_records(records, 0, 1, records.size(), 0, Strand::kPlus);
  ASSERT_FALSE(list.items.empty());
  const Candidate c = list.items.front();
  const i64 area = i64{c.qend - c.qstart + 1} * (c.tend - c.tstart + 1);
  EXPECT_GT(area, i64{4000} * 6000 / 2);  // the linear regime: a box of most of the windows
  // Speed is measured by benchmarks (bench/bench_scan.cpp), not here: this checks the fast path's result.
  const Alignment a = trace_alignment(model, q, t, c);
  EXPECT_GT(a.cells * 2, area);  // pruning is ineffective here
  const Alignment ref = trace_alignment_full(model, q, t, c);
  expect_same_path(a, ref, "genomic box");
  expect_consistent(model, q, t, c, a);
  // Checkpointed (several blocks, recomputation): the same path.
  const Alignment b = trace_alignment(model, q, t, c, TracebackLimits{std::uint64_t{2} << 20});
  expect_same_path(b, ref, "genomic box, 2 MiB");
  EXPECT_GT(b.cells, a.cells);
}

}  // namespace
}  // namespace warpsearch::scan
