// test_gapped.cpp: tests of src/blast/gapped (BLAST+ 2.12 blastp gapped extension).
//
// Contents:
//   a plain full-matrix Gotoh reference (start-anchored, end-free, BLAST's tie rules, optional restricted
//   gap rows / columns) that a half extension must equal exactly when the X-drop never triggers;
//   hand-made cases (X-drop stop, gap placement ties, pruned edge gaps, seed windows, X-drop conversion);
//   random cases with a finite X-drop (score-only and traceback agree, scripts rescore);
//   real pairs against the installed blastp 2.12 (globins all-vs-all, MMseqs queries vs DB20k).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blast/gapped.hpp"
#include "blastp_oracle.hpp"
#include "stats/karlin.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"

namespace warpsearch::blast {
namespace {
using test::have_blastp;

using Seq = std::vector<std::uint8_t>;

Seq encode(const std::string& letters) {
  Seq s;
  for (char c : letters) s.push_back(Alphabet::protein().code(c).value_or(kProteinUnknown));
  return s;
}

const ScoringMatrix& blosum62() {
  static const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  return m;
}

constexpr int kHugeX = 100000000;  // larger than any score range below: no cell is ever dropped

// ---------------------------------------------------------------------------------------------------------
// Reference: full Gotoh over (M+1) x (N+1), anchored at (0, 0), best cell = first strict maximum in row-major
// order over rows 1..M (and (0, 0) with score 0). H prefers diag, then E (vertical: gap in B, an insertion),
// then F (horizontal: gap in A, a deletion); E and F prefer extending on ties. Restricted: F only in rows
// a % 10 == 0 and E only in columns b % 10 == 0. a and b are given in consumption order.
struct RefResult {
  HalfExtension end;
  std::vector<EditRun> ops;  // in consumption order (from the anchor outwards)
};

RefResult reference_extend(const Seq& a, const Seq& b, const GappedParams& p, bool restricted) {
  const int M = static_cast<int>(a.size());
  const int N = static_cast<int>(b.size());
  const int o = p.gap_open, e = p.gap_extend, oe = o + e;
  const int kNeg = -1000000000;
  auto idx = [&](int i, int j) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(N + 1) + static_cast<std::size_t>(j);
  };
  std::vector<int> H((M + 1) * (N + 1)), E(H.size(), kNeg), F(H.size(), kNeg);
  std::vector<char> opH(H.size(), 0), extE(H.size(), 0), extF(H.size(), 0);
  auto allowE = [&](int j) { return !restricted || j % 10 == 0; };
  auto allowF = [&](int i) { return !restricted || i % 10 == 0; };
  RefResult r;
  if (M == 0 || N == 0) return r;
  H[idx(0, 0)] = 0;
  for (int j = 1; j <= N; ++j) {
    F[idx(0, j)] = -(o + j * e);
    extF[idx(0, j)] = j > 1;
    H[idx(0, j)] = F[idx(0, j)];
    opH[idx(0, j)] = 2;
  }
  int best = 0;
  for (int i = 1; i <= M; ++i) {
    for (int j = 0; j <= N; ++j) {
      if (allowE(j)) {
        const int open = H[idx(i - 1, j)] - oe, ext = E[idx(i - 1, j)] - e;
        E[idx(i, j)] = std::max(open, ext);
        extE[idx(i, j)] = ext >= open && i > 1;
      }
      if (j > 0 && allowF(i)) {
        const int open = H[idx(i, j - 1)] - oe, ext = F[idx(i, j - 1)] - e;
        F[idx(i, j)] = std::max(open, ext);
        extF[idx(i, j)] = ext >= open;
      }
      int h = j > 0 ? H[idx(i - 1, j - 1)] + blosum62().score(a[static_cast<std::size_t>(i - 1)],
                                                              b[static_cast<std::size_t>(j - 1)])
                    : kNeg;
      char op = 0;
      if (h < E[idx(i, j)]) h = E[idx(i, j)], op = 1;
      if (h < F[idx(i, j)]) h = F[idx(i, j)], op = 2;
      H[idx(i, j)] = h;
      opH[idx(i, j)] = op;
      if (h > best) {
        best = h;
        r.end = {h, i, j};
      }
    }
  }
  // Traceback from the best cell; ops collected from the far end back to the anchor.
  int i = r.end.a_length, j = r.end.b_length;
  int state = 0;  // 0: in H, 1: inside E, 2: inside F
  std::vector<EditOp> rev;
  while (i > 0 || j > 0) {
    const int op = state == 0 ? opH[idx(i, j)] : state;
    if (op == 0) {
      rev.push_back(EditOp::kSubstitution);
      --i, --j;
      state = 0;
    } else if (op == 1) {
      const bool ext = extE[idx(i, j)];
      rev.push_back(EditOp::kInsertion);
      --i;
      state = ext ? 1 : 0;
    } else {
      const bool ext = extF[idx(i, j)];
      rev.push_back(EditOp::kDeletion);
      --j;
      state = ext ? 2 : 0;
    }
  }
  for (auto it = rev.rbegin(); it != rev.rend(); ++it) {
    if (!r.ops.empty() && r.ops.back().op == *it)
      ++r.ops.back().length;
    else
      r.ops.push_back({*it, 1});
  }
  return r;
}

Seq reversed(const Seq& s) { return Seq(s.rbegin(), s.rend()); }

// Random protein over the first `letters` canonical codes; small alphabets make many ties.
Seq random_seq(std::mt19937& rng, int length, int letters) {
  std::uniform_int_distribution<int> d(0, letters - 1);
  Seq s(static_cast<std::size_t>(length));
  for (auto& c : s) c = static_cast<std::uint8_t>(d(rng));
  return s;
}

// A mutated copy: substitutions and short indels at the given rates.
Seq mutate(std::mt19937& rng, const Seq& s, double sub, double indel, int letters) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> d(0, letters - 1), len(1, 4);
  Seq out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double r = u(rng);
    if (r < indel / 2) {
      i += static_cast<std::size_t>(len(rng)) - 1;  // deletion
    } else if (r < indel) {
      for (int k = len(rng); k > 0; --k) out.push_back(static_cast<std::uint8_t>(d(rng)));
      out.push_back(s[i]);
    } else {
      out.push_back(r < indel + sub ? static_cast<std::uint8_t>(d(rng)) : s[i]);
    }
  }
  return out;
}

TEST(GappedReference, HugeXDropEqualsFullGotohBothDirections) {
  std::mt19937 rng(6001);
  const std::array<GappedParams, 3> costs = {GappedParams{11, 1, kHugeX}, GappedParams{5, 2, kHugeX},
                                             GappedParams{0, 1, kHugeX}};
  int cases = 0;
  for (const GappedParams& gp : costs) {
    for (int t = 0; t < 120; ++t) {
      const int letters = t % 3 == 0 ? 3 : (t % 3 == 1 ? 6 : 20);
      const Seq a = random_seq(rng, 1 + t % 37, letters);
      const Seq b = t % 2 ? mutate(rng, a, 0.2, 0.1, letters) : random_seq(rng, 1 + (t * 7) % 41, letters);
      if (b.empty()) continue;
      const RefResult ref = reference_extend(a, b, gp, false);
      // Forward: consumption order is sequence order.
      const HalfTraceback fwd = traceback_extend(a, b, false, blosum62(), gp);
      ASSERT_EQ(fwd.end.score, ref.end.score) << t;
      ASSERT_EQ(fwd.end.a_length, ref.end.a_length) << t;
      ASSERT_EQ(fwd.end.b_length, ref.end.b_length) << t;
      ASSERT_EQ(fwd.ops, ref.ops) << t;
      const HalfExtension so = semi_gapped_extend(a, b, false, blosum62(), gp);
      ASSERT_EQ(so.score, ref.end.score);
      ASSERT_EQ(so.a_length, ref.end.a_length);
      ASSERT_EQ(so.b_length, ref.end.b_length);
      // Reverse: the reversed sequences consumed from their ends give the same DP; the ops come out
      // left to right, i.e. reversed relative to consumption order.
      const HalfTraceback rev = traceback_extend(reversed(a), reversed(b), true, blosum62(), gp);
      ASSERT_EQ(rev.end.score, ref.end.score);
      ASSERT_EQ(rev.end.a_length, ref.end.a_length);
      ASSERT_EQ(rev.end.b_length, ref.end.b_length);
      std::vector<EditRun> rops(ref.ops.rbegin(), ref.ops.rend());
      ASSERT_EQ(rev.ops, rops);
      ++cases;
    }
  }
  EXPECT_GT(cases, 300);
}

TEST(GappedReference, RestrictedHugeXDropEqualsGotohWithGapRowsAndColumns) {
  std::mt19937 rng(6002);
  const GappedParams gp{11, 1, kHugeX};
  int differs = 0;
  for (int t = 0; t < 150; ++t) {
    const int letters = t % 2 ? 20 : 4;
    const Seq a = random_seq(rng, 5 + t % 60, letters);
    const Seq b = mutate(rng, a, 0.15, 0.08, letters);
    if (b.empty()) continue;
    const RefResult ref = reference_extend(a, b, gp, true);
    const HalfExtension r = semi_gapped_extend(a, b, false, blosum62(), gp, true);
    ASSERT_EQ(r.score, ref.end.score) << t;
    ASSERT_EQ(r.a_length, ref.end.a_length) << t;
    ASSERT_EQ(r.b_length, ref.end.b_length) << t;
    const HalfExtension rr = semi_gapped_extend(reversed(a), reversed(b), true, blosum62(), gp, true);
    ASSERT_EQ(rr.score, ref.end.score) << t;
    differs += semi_gapped_extend(a, b, false, blosum62(), gp).score != r.score;
  }
  EXPECT_GT(differs, 10);  // the restriction matters on these inputs
}

// ---------------------------------------------------------------------------------------------------------
// Hand-made cases.

TEST(GappedHand, XDropStopsInsideALowScoringStretch) {
  // W/W = 11, P/F = -4: after WWWWW (55) the PPPP/FFFF stretch drops 16. X is raised to open + extend (12),
  // so X = 12 stops there; X = 20 crosses it to 55 - 16 + 55 = 94.
  const Seq a = encode("WWWWWPPPPWWWWW"), b = encode("WWWWWFFFFWWWWW");
  const HalfExtension stop = semi_gapped_extend(a, b, false, blosum62(), {11, 1, 3});
  EXPECT_EQ(stop.score, 55);
  EXPECT_EQ(stop.a_length, 5);
  EXPECT_EQ(stop.b_length, 5);
  const HalfExtension cross = semi_gapped_extend(a, b, false, blosum62(), {11, 1, 20});
  EXPECT_EQ(cross.score, 94);
  EXPECT_EQ(cross.a_length, 14);
  EXPECT_EQ(cross.b_length, 14);
  const HalfTraceback tb = traceback_extend(a, b, false, blosum62(), {11, 1, 20});
  EXPECT_EQ(tb.ops, (std::vector<EditRun>{{EditOp::kSubstitution, 14}}));
  // Nothing positive: the empty extension.
  const HalfExtension none = semi_gapped_extend(encode("PPP"), encode("WWW"), false, blosum62(), {11, 1, 20});
  EXPECT_EQ(none.score, 0);
  EXPECT_EQ(none.a_length, 0);
  EXPECT_EQ(none.b_length, 0);
}

TEST(GappedHand, EqualScoreGapPlacementGoesNearestTheSeed) {
  // W AAA WWW vs W AA WWW: one query A must be an insertion; the three placements all score 40. Walking
  // back from the far end, the diagonal wins ties, so the gap lands next to the seed: right after the
  // first W in a forward half, right before the last W in a reverse half.
  const GappedParams gp{11, 1, 30};
  const HalfTraceback fwd = traceback_extend(encode("WAAAWWW"), encode("WAAWWW"), false, blosum62(), gp);
  EXPECT_EQ(fwd.end.score, 40);
  EXPECT_EQ(fwd.ops, (std::vector<EditRun>{
                         {EditOp::kSubstitution, 1}, {EditOp::kInsertion, 1}, {EditOp::kSubstitution, 5}}));
  const HalfTraceback rev = traceback_extend(encode("WWWAAAW"), encode("WWWAAW"), true, blosum62(), gp);
  EXPECT_EQ(rev.end.score, 40);
  EXPECT_EQ(rev.ops, (std::vector<EditRun>{
                         {EditOp::kSubstitution, 5}, {EditOp::kInsertion, 1}, {EditOp::kSubstitution, 1}}));
  // The deletion counterpart: the subject's extra A also goes next to the seed. (Ties between an insertion
  // and a deletion at one cell are checked against the reference on small alphabets, where they abound.)
  const HalfTraceback del = traceback_extend(encode("WAAWWW"), encode("WAAAWWW"), false, blosum62(), gp);
  EXPECT_EQ(del.ops, (std::vector<EditRun>{
                         {EditOp::kSubstitution, 1}, {EditOp::kDeletion, 1}, {EditOp::kSubstitution, 5}}));
}

TEST(GappedHand, LeadingGapIsPrunedAndItsCostAddedBack) {
  // Seed (0, 0) is P/W: the reverse half finds nothing (score 0); the forward half aligns WWWWWW after
  // skipping the subject's A: 66 - 12 = 54 beats the ungapped -3 + 55 = 52. The leading deletion is pruned
  // as BLAST prunes it: score 66, subject start moved past the A.
  const Seq q = encode("PWWWWWW"), s = encode("WAWWWWWW");
  const GappedParams gp{11, 1, 38};
  const GappedScore prelim = preliminary_gapped_alignment(q, s, blosum62(), gp, {0, 0});
  EXPECT_EQ(prelim, (GappedScore{54, 1, 7, 1, 8}));
  const GappedAlignment aln = gapped_alignment_with_traceback(q, s, blosum62(), gp, {0, 0});
  EXPECT_EQ(aln.score, 66);
  EXPECT_EQ(aln.q_start, 1);
  EXPECT_EQ(aln.q_end, 7);
  EXPECT_EQ(aln.s_start, 2);
  EXPECT_EQ(aln.s_end, 8);
  EXPECT_EQ(aln.script, (std::vector<EditRun>{{EditOp::kSubstitution, 6}}));
  EXPECT_EQ(btop(aln, q, s), "6");
  EXPECT_EQ(script_score(q, s, blosum62(), gp, aln.q_start, aln.s_start, aln.script), aln.score);
}

TEST(GappedHand, TwoHalvesJoinAtTheSeed) {
  // Identical sequences around the seed: one substitution run; the seed pair belongs to the reverse half.
  const Seq q = encode("MKVLAAGIVGHW"), s = encode("MKVLAAGIVGHW");
  const GappedParams gp{11, 1, 38};
  const GappedAlignment aln = gapped_alignment_with_traceback(q, s, blosum62(), gp, {5, 5});
  EXPECT_EQ(aln.q_start, 0);
  EXPECT_EQ(aln.q_end, 12);
  EXPECT_EQ(aln.script, (std::vector<EditRun>{{EditOp::kSubstitution, 12}}));
  EXPECT_EQ(btop(aln, q, s), "12");
  const GappedScore prelim = preliminary_gapped_alignment(q, s, blosum62(), gp, {5, 5});
  EXPECT_EQ(prelim.score, aln.score);
  // A deletion right after the seed and a mismatch: BTOP shows "-X" for a subject residue against a gap.
  const Seq s2 = encode("MKVLAAWGIVGHF");
  const GappedAlignment g = gapped_alignment_with_traceback(q, s2, blosum62(), gp, {5, 5});
  EXPECT_EQ(btop(g, q, s2), "6-W5WF");
  EXPECT_EQ(g.score, script_score(q, s2, blosum62(), gp, g.q_start, g.s_start, g.script));
}

TEST(GappedHand, SeedWindowRules) {
  const ScoringMatrix& m = blosum62();
  // Short HSP: the middle pair.
  const Seq q = encode("AAAAAAAAAWWWWWWWWWWWAAAAAAAA"), s = q;
  EXPECT_EQ(gapped_start(q, s, m, 3, 3, 7), (SeedPoint{6, 6}));
  EXPECT_EQ(gapped_start(q, s, m, 0, 0, 11), (SeedPoint{5, 5}));
  // The 11 Ws (positions 9..19) are the best window: its middle pair, position 14.
  EXPECT_EQ(gapped_start(q, s, m, 0, 0, static_cast<int>(q.size())), (SeedPoint{14, 14}));
  // Subject on another diagonal.
  const Seq s2 = encode("KK" + std::string("AAAAAAAAAWWWWWWWWWWWAAAAAAAA"));
  EXPECT_EQ(gapped_start(q, s2, m, 0, 2, static_cast<int>(q.size())), (SeedPoint{14, 16}));
  // No positive window: the HSP's first pair.
  const Seq bad = encode("PPPPPPPPPPPPPPP"), w = encode("WWWWWWWWWWWWWWW");
  EXPECT_EQ(gapped_start(bad, w, m, 1, 1, 14), (SeedPoint{1, 1}));
  // Traceback-stage variant: the window END, or the last window's middle, or nothing.
  EXPECT_EQ(traceback_offsets(q, s, m, 0, 28, 0, 28), (SeedPoint{19, 19}));
  EXPECT_EQ(traceback_offsets(q, s, m, 2, 9, 2, 9), (SeedPoint{5, 5}));
  EXPECT_EQ(traceback_offsets(bad, w, m, 0, 15, 0, 15), std::nullopt);
  const Seq tail_q = encode("PPPPPPPPPPPPPPPWWWWWWWWWWW"), tail_s = encode("WWWWWWWWWWWWWWWWWWWWWWWWWW");
  // Windows over min(length) = 15 pairs of P/W are negative; the last 11 pairs (all W/W) are positive.
  EXPECT_EQ(traceback_offsets(tail_q, tail_s, m, 0, 26, 0, 15), (SeedPoint{21, 10}));
}

TEST(GappedHand, XDropConversionMatchesBlastDefaults) {
  // BLOSUM62 11/1: gapped lambda 0.267 -> 15 bits = 38, 25 bits = 64 raw (blastp's documented values).
  const auto x = blastp_xdropoffs(blosum62(), {11, 1});
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->preliminary, 38);
  EXPECT_EQ(x->traceback, 64);
  EXPECT_EQ(xdrop_bits_to_raw(15, 0.267), 38);
  const auto pam30 = blastp_xdropoffs(ScoringMatrix::builtin("PAM30"), {9, 1});
  ASSERT_TRUE(pam30.has_value());
  EXPECT_GE(pam30->traceback, pam30->preliminary);
  EXPECT_FALSE(blastp_xdropoffs(blosum62(), {3, 3}).has_value());
}

// ---------------------------------------------------------------------------------------------------------
// Random cases with a finite X-drop: the band matters; score-only and traceback must agree exactly.

TEST(GappedBand, ScoreOnlyAndTracebackAgreeAndScriptsRescore) {
  std::mt19937 rng(6003);
  int cut = 0, merged_at_seed = 0;
  for (int t = 0; t < 300; ++t) {
    const int letters = t % 4 == 0 ? 5 : 20;
    const Seq q = random_seq(rng, 30 + t % 200, letters);
    Seq s = mutate(rng, q, 0.3, 0.05, letters);
    if (s.size() < 2) continue;
    const GappedParams gp{t % 5 == 0 ? 5 : 11, t % 5 == 0 ? 2 : 1, 10 + t % 60};
    const SeedPoint seed{static_cast<int>(q.size()) / 2,
                         std::min(static_cast<int>(s.size()) - 1, static_cast<int>(q.size()) / 2)};
    const GappedScore pre = preliminary_gapped_alignment(q, s, blosum62(), gp, seed);
    const GappedAlignment aln = gapped_alignment_with_traceback(q, s, blosum62(), gp, seed);
    // Same recurrences and X in both stages; pruning can only raise the traceback score.
    ASSERT_GE(aln.score, pre.score) << t;
    if (aln.score == pre.score) {
      ASSERT_EQ(aln.q_start, pre.q_start);
      ASSERT_EQ(aln.q_end, pre.q_end);
      ASSERT_EQ(aln.s_start, pre.s_start);
      ASSERT_EQ(aln.s_end, pre.s_end);
    }
    // The script rescores to the score, except that BLAST merges a gap ending the reverse half with a gap
    // of the same kind starting the forward half into one run while keeping the halves' score sum (two
    // openings): then the script scores exactly one gap opening more.
    const int rescored = script_score(q, s, blosum62(), gp, aln.q_start, aln.s_start, aln.script);
    ASSERT_TRUE(rescored == aln.score || rescored == aln.score + gp.gap_open) << t;
    merged_at_seed += rescored != aln.score;
    int ql = 0, sl = 0;
    for (const EditRun& r : aln.script) {
      ql += r.op != EditOp::kDeletion ? r.length : 0;
      sl += r.op != EditOp::kInsertion ? r.length : 0;
    }
    ASSERT_EQ(ql, aln.q_end - aln.q_start);
    ASSERT_EQ(sl, aln.s_end - aln.s_start);
    // A huge X can only do at least as well as each half.
    const GappedScore full =
        preliminary_gapped_alignment(q, s, blosum62(), {gp.gap_open, gp.gap_extend, kHugeX}, seed);
    ASSERT_GE(full.score, pre.score);
    cut += full.score > pre.score;
  }
  EXPECT_GT(cut, 5);  // the X-drop did stop some extensions early
  EXPECT_GT(merged_at_seed, 0);
}

// ---------------------------------------------------------------------------------------------------------
// Real pairs against blastp 2.12.

struct Fasta {
  std::vector<std::string> names;
  std::vector<std::string> letters;
  std::map<std::string, std::size_t> index;
};

Fasta read_fasta(const std::string& path, std::size_t max_records = static_cast<std::size_t>(-1)) {
  Fasta f;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '>') {
      if (f.names.size() == max_records) break;
      std::istringstream hs(line.substr(1));
      std::string name;
      hs >> name;
      f.index[name] = f.names.size();
      f.names.push_back(name);
      f.letters.emplace_back();
    } else if (!f.names.empty()) {
      for (char c : line)
        if (!std::isspace(static_cast<unsigned char>(c)))
          f.letters.back() += static_cast<char>(std::toupper(c));
    }
  }
  return f;
}

struct BlastHsp {
  std::string q, s;
  int qstart, qend, sstart, send, score;
  std::string btop;
};

std::vector<BlastHsp> run_blastp(const std::string& query_fa, const std::string& subject_fa,
                                 const std::string& out, const std::string& extra) {
  const std::string cmd = "blastp -query " + query_fa + " -subject " + subject_fa +
                          " -comp_based_stats 0 -seg no -num_threads 1 " + extra +
                          " -outfmt '6 qseqid sseqid qstart qend sstart send score btop' > " + out +
                          " 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  std::vector<BlastHsp> hsps;
  std::ifstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    BlastHsp h;
    ls >> h.q >> h.s >> h.qstart >> h.qend >> h.sstart >> h.send >> h.score >> h.btop;
    hsps.push_back(h);
  }
  return hsps;
}

// The seed for a blastp HSP, derived as BLAST derives it where we can: BLAST extends the ungapped HSP with
// the highest score first and then skips ungapped HSPs inside the result, so we take the best-scoring
// ungapped segment (maximal subarray, first on ties) over the diagonals the alignment uses, restricted to its
// query range, and apply BLAST's 11-residue window rule (gapped_start). The real ungapped HSP comes from a
// word hit and an ungapped X-drop extension, so it can differ from this segment (see the report below).
SeedPoint derive_seed(const Seq& q, const Seq& s, const BlastHsp& h) {
  int qi = h.qstart - 1, si = h.sstart - 1;
  std::vector<int> diagonals;
  for (std::size_t k = 0; k < h.btop.size();) {
    if (std::isdigit(static_cast<unsigned char>(h.btop[k]))) {
      int n = 0;
      while (k < h.btop.size() && std::isdigit(static_cast<unsigned char>(h.btop[k])))
        n = n * 10 + (h.btop[k++] - '0');
      diagonals.push_back(si - qi);
      qi += n, si += n;
    } else {
      const char a = h.btop[k], b = h.btop[k + 1];
      k += 2;
      if (a != '-' && b != '-') diagonals.push_back(si - qi);
      qi += a != '-';
      si += b != '-';
    }
  }
  std::sort(diagonals.begin(), diagonals.end());
  diagonals.erase(std::unique(diagonals.begin(), diagonals.end()), diagonals.end());
  // Segments as an ungapped X-drop extension finds them: from each start, extend right until the running
  // score falls more than kUngappedX below its best (blastp's 7 bits with the ungapped lambda: 16 raw).
  constexpr int kUngappedX = 16;
  int best = -1, best_q = 0, best_len = 0, best_d = 0;
  for (int d : diagonals) {
    const int lo = std::max(h.qstart - 1, -d), hi = std::min(h.qend, static_cast<int>(s.size()) - d);
    for (int start = lo; start < hi; ++start) {
      int run = 0, top = 0, top_len = 0;
      for (int i = start; i < static_cast<int>(q.size()) && i + d < static_cast<int>(s.size()); ++i) {
        run += blosum62().score(q[static_cast<std::size_t>(i)], s[static_cast<std::size_t>(i + d)]);
        if (run > top) top = run, top_len = i - start + 1;
        if (run < top - kUngappedX) break;
      }
      if (top > best) best = top, best_q = start, best_len = top_len, best_d = d;
    }
  }
  return gapped_start(q, s, blosum62(), best_q, best_q + best_d, best_len);
}

struct MatchStats {
  int total = 0, exact = 0;
  int seed_explained = 0;  // mismatches that another seed on blastp's path reproduces exactly
};

// The aligned (substitution) pairs of a blastp HSP, from its BTOP.
std::vector<SeedPoint> path_pairs(const BlastHsp& h) {
  std::vector<SeedPoint> pairs;
  int qi = h.qstart - 1, si = h.sstart - 1;
  for (std::size_t k = 0; k < h.btop.size();) {
    if (std::isdigit(static_cast<unsigned char>(h.btop[k]))) {
      int n = 0;
      while (k < h.btop.size() && std::isdigit(static_cast<unsigned char>(h.btop[k])))
        n = n * 10 + (h.btop[k++] - '0');
      for (int i = 0; i < n; ++i) pairs.push_back({qi++, si++});
    } else {
      const char a = h.btop[k], b = h.btop[k + 1];
      k += 2;
      if (a != '-' && b != '-') pairs.push_back({qi, si});
      qi += a != '-';
      si += b != '-';
    }
  }
  return pairs;
}

MatchStats compare_with_blastp(const Fasta& qf, const Fasta& sf, const std::vector<BlastHsp>& hsps,
                               const GappedParams& gp, std::string* first_mismatches) {
  MatchStats st;
  for (const BlastHsp& h : hsps) {
    const Seq q = encode(qf.letters.at(qf.index.at(h.q)));
    const Seq s = encode(sf.letters.at(sf.index.at(h.s)));
    const SeedPoint seed = derive_seed(q, s, h);
    const GappedAlignment aln = gapped_alignment_with_traceback(q, s, blosum62(), gp, seed);
    const std::string ours = btop(aln, q, s);
    ++st.total;
    const bool same = aln.q_start + 1 == h.qstart && aln.q_end == h.qend && aln.s_start + 1 == h.sstart &&
                      aln.s_end == h.send && aln.score == h.score && ours == h.btop;
    st.exact += same;
    if (!same) {
      // Is the difference only the seed? Try pairs of blastp's own path (every 4th, stopping at the first
      // that reproduces blastp's HSP exactly).
      const std::vector<SeedPoint> path = path_pairs(h);
      for (std::size_t i = 0; i < path.size(); i += 4) {
        const GappedAlignment alt = gapped_alignment_with_traceback(q, s, blosum62(), gp, path[i]);
        if (alt.q_start + 1 == h.qstart && alt.q_end == h.qend && alt.s_start + 1 == h.sstart &&
            alt.s_end == h.send && alt.score == h.score && btop(alt, q, s) == h.btop) {
          ++st.seed_explained;
          break;
        }
      }
    }
    if (!same && first_mismatches->size() < 2000) {
      *first_mismatches +=
          h.q + " " + h.s + " blast " + std::to_string(h.qstart) + "-" + std::to_string(h.qend) + "/" +
          std::to_string(h.sstart) + "-" + std::to_string(h.send) + " " + std::to_string(h.score) + " ours " +
          std::to_string(aln.q_start + 1) + "-" + std::to_string(aln.q_end) + "/" +
          std::to_string(aln.s_start + 1) + "-" + std::to_string(aln.s_end) + " " +
          std::to_string(aln.score) + " seed " + std::to_string(seed.q) + "," + std::to_string(seed.s) + "\n";
    }
  }
  return st;
}

TEST(GappedBlastp, GlobinsAllAgainstAllMatchBlastp) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const std::string fa = (test::testdata_dir() / "prot/globins45.fa").string();
  test::TempDir dir("gapped_globins");
  const std::vector<BlastHsp> hsps = run_blastp(fa, fa, dir / "out.tsv", "");
  ASSERT_GT(hsps.size(), 1000u);
  const Fasta f = read_fasta(fa);
  const auto x = blastp_xdropoffs(blosum62(), {11, 1});
  ASSERT_TRUE(x.has_value());
  std::string mismatches;
  const MatchStats st = compare_with_blastp(f, f, hsps, {11, 1, x->traceback}, &mismatches);
  std::printf(
      "[globins] %d of %d HSPs identical to blastp (coordinates, score, BTOP); %d of the others "
      "reproduced from another seed on blastp's path\n",
      st.exact, st.total, st.seed_explained);
  // Mismatches come from derive_seed picking another seed than BLAST's ungapped stage did (then ties
  // break differently or the X-drop band differs); the extension itself must reproduce every HSP.
  EXPECT_GE(st.exact * 100, st.total * 97) << mismatches;
  EXPECT_EQ(st.exact + st.seed_explained, st.total) << mismatches;
}

TEST(GappedBlastp, MmseqsQueriesAgainstDb20kMatchBlastp) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const std::string qpath = (test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string();
  const std::string dbpath = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  test::TempDir dir("gapped_mmseqs");
  const Fasta qf = read_fasta(qpath, 8);
  {
    std::ofstream out(dir / "q.fa");
    for (std::size_t i = 0; i < qf.names.size(); ++i)
      out << '>' << qf.names[i] << '\n' << qf.letters[i] << '\n';
  }
  const std::vector<BlastHsp> hsps = run_blastp(dir / "q.fa", dbpath, dir / "out.tsv", "-evalue 1e-5");
  ASSERT_GT(hsps.size(), 200u);
  const Fasta sf = read_fasta(dbpath);
  const auto x = blastp_xdropoffs(blosum62(), {11, 1});
  std::string mismatches;
  const MatchStats st = compare_with_blastp(qf, sf, hsps, {11, 1, x->traceback}, &mismatches);
  std::printf(
      "[mmseqs] %d of %d HSPs identical to blastp (coordinates, score, BTOP); %d of the others "
      "reproduced from another seed on blastp's path\n",
      st.exact, st.total, st.seed_explained);
  EXPECT_GE(st.exact * 100, st.total * 90) << mismatches;
  EXPECT_EQ(st.exact + st.seed_explained, st.total) << mismatches;
}

}  // namespace
}  // namespace warpsearch::blast
