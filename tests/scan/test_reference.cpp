// test_reference.cpp: reference_columns()/reference_scan() (src/scan/reference.cpp) against an
// independent full-matrix form of model.hpp written here (H, E, F and origin matrices, 64-bit values),
// on random DNA/protein and tie-heavy inputs (two-letter alphabets, tandem repeats, free gaps); column
// ranges split at arbitrary points with initial/probe/end states; the semantic meaning of origins (the
// optimal global score of the box origin..end, starting with a match at the origin, is the record's
// score); precondition checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scan/model.hpp"
#include "scan/reference.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::scan {
namespace {

using Codes = std::vector<std::uint8_t>;

// ---------------------------------------------------------------------------------------------------
// Brute force: the model.hpp recurrences over full matrices.

struct Cell {
  std::int64_t v = 0;
  std::int32_t q = kNoOrigin;
  std::int32_t t = kNoOrigin;
};

struct Full {
  std::int64_t m = 0, n = 0;
  std::vector<Cell> H, E, F;  // row-major [i * n + j]
  std::vector<ColumnRecord> records;

  Cell at(const std::vector<Cell>& mat, std::int64_t i, std::int64_t j) const {
    if (i < 0 || j < 0) return Cell{};  // outside the table: 0, no origin
    return mat[static_cast<std::size_t>(i * n + j)];
  }
  // The state after column j (j = -1: before column 0).
  ColumnState state_after(std::int64_t j) const {
    ColumnState s(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      const Cell h = at(H, i, j), e = at(E, i, j);
      s[static_cast<std::size_t>(i)] =
          RowState{static_cast<std::int32_t>(h.v), static_cast<std::int32_t>(e.v), h.q, h.t, e.q, e.t};
    }
    return s;
  }
};

// A gap state (E or F) from its predecessor H and gap cell: clamp0(max(open, extend)), origin of the
// opening H on ties.
Cell gap_cell(const Cell& h_prev, const Cell& g_prev, std::int64_t open, std::int64_t extend) {
  const std::int64_t by_open = h_prev.v - open - extend;
  const std::int64_t by_ext = g_prev.v - extend;
  Cell c;
  c.v = std::max<std::int64_t>({by_open, by_ext, 0});
  if (c.v > 0) {
    const Cell& from = by_open >= by_ext ? h_prev : g_prev;
    c.q = from.q;
    c.t = from.t;
  }
  return c;
}

Full brute_force(const ScanModel& model, const Codes& q, const Codes& t) {
  Full f;
  f.m = static_cast<std::int64_t>(q.size());
  f.n = static_cast<std::int64_t>(t.size());
  const auto cells = static_cast<std::size_t>(f.m * f.n);
  f.H.assign(cells, Cell{});
  f.E.assign(cells, Cell{});
  f.F.assign(cells, Cell{});
  // Fill by anti-diagonal-agnostic order: row by row works since every dependency is up/left.
  for (std::int64_t i = 0; i < f.m; ++i) {
    for (std::int64_t j = 0; j < f.n; ++j) {
      const auto idx = static_cast<std::size_t>(i * f.n + j);
      const Cell e = gap_cell(f.at(f.H, i, j - 1), f.at(f.E, i, j - 1), model.open, model.extend);
      const Cell fc = gap_cell(f.at(f.H, i - 1, j), f.at(f.F, i - 1, j), model.open, model.extend);
      const Cell hd = f.at(f.H, i - 1, j - 1);
      Cell d;
      d.v = hd.v + model.score(q[static_cast<std::size_t>(i)], t[static_cast<std::size_t>(j)]);
      if (hd.v > 0) {
        d.q = hd.q;
        d.t = hd.t;
      } else {
        d.q = static_cast<std::int32_t>(i);
        d.t = static_cast<std::int32_t>(j);
      }
      Cell h;
      h.v = std::max<std::int64_t>({d.v, e.v, fc.v, 0});
      if (h.v > 0) {
        const Cell& from = d.v == h.v ? d : (e.v == h.v ? e : fc);
        h.q = from.q;
        h.t = from.t;
      }
      f.H[idx] = h;
      f.E[idx] = e;
      f.F[idx] = fc;
    }
  }
  f.records.assign(static_cast<std::size_t>(f.n), ColumnRecord{});
  for (std::int64_t j = 0; j < f.n; ++j) {
    ColumnRecord& r = f.records[static_cast<std::size_t>(j)];
    for (std::int64_t i = 0; i < f.m; ++i) {
      const Cell h = f.at(f.H, i, j);
      if (h.v > r.score)
        r = ColumnRecord{static_cast<std::int32_t>(h.v), static_cast<std::int32_t>(i), h.q, h.t};
    }
  }
  return f;
}

// Optimal global score of q[qs..qe] x t[ts..te] whose first column is the pair (qs, ts) (Gotoh, no
// zero floor, end gaps cost like any gap): the score of the best path from the origin to the end.
std::int64_t box_score(const ScanModel& model, const Codes& q, const Codes& t, std::int64_t qs,
                       std::int64_t qe, std::int64_t ts, std::int64_t te) {
  constexpr std::int64_t kNeg = std::numeric_limits<std::int64_t>::min() / 4;
  const std::int64_t rows = qe - qs + 1, cols = te - ts + 1;
  std::vector<std::int64_t> H(static_cast<std::size_t>(rows * cols), kNeg), E = H, F = H;
  auto id = [&](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * cols + j); };
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t s =
          model.score(q[static_cast<std::size_t>(qs + i)], t[static_cast<std::size_t>(ts + j)]);
      std::int64_t d = kNeg;
      if (i == 0 && j == 0)
        d = s;
      else if (i > 0 && j > 0)
        d = H[id(i - 1, j - 1)] + s;
      std::int64_t e = kNeg, fv = kNeg;
      if (j > 0) e = std::max(E[id(i, j - 1)] - model.extend, H[id(i, j - 1)] - model.open - model.extend);
      if (i > 0) fv = std::max(F[id(i - 1, j)] - model.extend, H[id(i - 1, j)] - model.open - model.extend);
      E[id(i, j)] = e;
      F[id(i, j)] = fv;
      H[id(i, j)] = std::max({d, e, fv});
    }
  return H[id(rows - 1, cols - 1)];
}

// ---------------------------------------------------------------------------------------------------
// Inputs.

struct Scoring {
  std::string name;
  ScanModel model;
};

ScanModel custom_model(int match, int mismatch, int open, int extend) {
  ScanModel m;
  for (int a = 0; a < kMaxCodes; ++a)
    for (int b = 0; b < kMaxCodes; ++b)
      m.table[a * kMaxCodes + b] = static_cast<std::int8_t>(a == b ? match : mismatch);
  m.open = open;
  m.extend = extend;
  m.max_score = match;
  return m;
}

std::vector<Scoring> dna_scorings() {
  const ScoringMatrix ssca = ScoringMatrix::dna(5, -3);
  const ScoringMatrix unit = ScoringMatrix::dna(1, -1);
  const ScoringMatrix blastn = ScoringMatrix::dna(2, -3);
  return {
      {"ssca 5/-3 8/1", ScanModel::make(ssca, GapCosts{8, 1})},
      {"ssca 5/-3 0/1", ScanModel::make(ssca, GapCosts{0, 1})},
      {"unit 1/-1 0/1", ScanModel::make(unit, GapCosts{0, 1})},
      {"unit 1/-1 1/0", ScanModel::make(unit, GapCosts{1, 0})},
      {"unit 1/-1 0/0", ScanModel::make(unit, GapCosts{0, 0})},
      {"blastn 2/-3 5/2", ScanModel::make(blastn, GapCosts{5, 2})},
      {"custom 2/-1 1/1", custom_model(2, -1, 1, 1)},
      {"custom 2/-2 0/2", custom_model(2, -2, 0, 2)},
  };
}

std::vector<Scoring> protein_scorings() {
  const ScoringMatrix b62 = ScoringMatrix::builtin("BLOSUM62");
  const ScoringMatrix p30 = ScoringMatrix::builtin("PAM30");
  return {
      {"BLOSUM62 11/1", ScanModel::make(b62, GapCosts{11, 1})},
      {"BLOSUM62 0/1", ScanModel::make(b62, GapCosts{0, 1})},
      {"BLOSUM62 3/0", ScanModel::make(b62, GapCosts{3, 0})},
      {"PAM30 9/1", ScanModel::make(p30, GapCosts{9, 1})},
  };
}

// Random sequence over `letters` codes, optionally as a mutated tandem repeat of a short motif.
Codes random_codes(std::mt19937_64& rng, std::size_t len, const std::vector<std::uint8_t>& letters,
                   bool repeat) {
  std::uniform_int_distribution<std::size_t> pick(0, letters.size() - 1);
  Codes s(len);
  if (!repeat) {
    for (auto& c : s) c = letters[pick(rng)];
    return s;
  }
  Codes motif(1 + rng() % 4);
  for (auto& c : motif) c = letters[pick(rng)];
  for (std::size_t k = 0; k < len; ++k) s[k] = rng() % 10 == 0 ? letters[pick(rng)] : motif[k % motif.size()];
  return s;
}

std::vector<std::uint8_t> range_codes(int count) {
  std::vector<std::uint8_t> v;
  for (int c = 0; c < count; ++c) v.push_back(static_cast<std::uint8_t>(c));
  return v;
}

// Letter sets: 2-letter (ties), ACGT, ACGT+N, 20 amino acids, 2 amino acids, all 27 protein codes.
struct Case {
  std::string what;
  ScanModel model;
  Codes q, t;
};

std::vector<Case> random_cases(std::uint64_t seed, int count, std::size_t max_len) {
  std::mt19937_64 rng(seed);
  const auto dna = dna_scorings();
  const auto prot = protein_scorings();
  const std::vector<std::vector<std::uint8_t>> dna_sets = {{0, 1}, range_codes(4), {0, 1, 2, 3, 14}};
  const std::vector<std::vector<std::uint8_t>> prot_sets = {{0, 9}, range_codes(20), range_codes(27)};
  std::vector<Case> cases;
  for (int k = 0; k < count; ++k) {
    const bool is_dna = rng() % 3 != 0;
    const auto& scorings = is_dna ? dna : prot;
    const auto& sets = is_dna ? dna_sets : prot_sets;
    const Scoring& sc = scorings[rng() % scorings.size()];
    const auto& letters = sets[rng() % sets.size()];
    const std::size_t m = 1 + rng() % max_len, n = 1 + rng() % max_len;
    const bool rq = rng() % 3 == 0, rt = rng() % 3 == 0;
    Case c{sc.name + " letters " + std::to_string(letters.size()) + (rq ? " qrep" : "") + (rt ? " trep" : ""),
           sc.model, random_codes(rng, m, letters, rq), random_codes(rng, n, letters, rt)};
    // Plant a (mutated) copy of a query piece into the target now and then: long positive paths.
    if (rng() % 2 == 0 && m > 4 && n > 4) {
      const std::size_t len = std::min(m, n) / 2 + 1;
      const std::size_t qs = rng() % (m - len + 1), ts = rng() % (n - len + 1);
      for (std::size_t x = 0; x < len; ++x)
        if (rng() % 8 != 0) c.t[ts + x] = c.q[qs + x];
      c.what += " planted";
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string show(const ColumnRecord& r) {
  return std::to_string(r.score) + "@" + std::to_string(r.qend) + " from (" + std::to_string(r.qstart) + "," +
         std::to_string(r.tstart) + ")";
}

std::int64_t len(const Codes& s) { return static_cast<std::int64_t>(s.size()); }

// ---------------------------------------------------------------------------------------------------

TEST(ReferenceScan, MatchesBruteForceOnRandomInputs) {
  for (const Case& c : random_cases(11, 400, 48)) {
    const Full full = brute_force(c.model, c.q, c.t);
    const std::vector<ColumnRecord> got = reference_scan(c.model, c.q, c.t);
    ASSERT_EQ(got.size(), c.t.size());
    for (std::size_t j = 0; j < got.size(); ++j)
      ASSERT_EQ(got[j], full.records[j])
          << c.what << " m=" << c.q.size() << " n=" << c.t.size() << " column " << j << ": got "
          << show(got[j]) << " want " << show(full.records[j]);
  }
}

TEST(ReferenceScan, MatchesBruteForceOnLongerTieHeavyInputs) {
  // Two-letter sequences with free gaps and repeats: the densest ties for every rule.
  std::mt19937_64 rng(5);
  const std::vector<ScanModel> models = {custom_model(1, -1, 0, 0), custom_model(1, -1, 0, 1),
                                         custom_model(2, -1, 1, 1), custom_model(1, 0, 1, 0),
                                         ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1})};
  for (int k = 0; k < 40; ++k) {
    const ScanModel& model = models[static_cast<std::size_t>(k) % models.size()];
    const Codes q = random_codes(rng, 60 + rng() % 100, {0, 1}, k % 2 == 0);
    const Codes t = random_codes(rng, 100 + rng() % 200, {0, 1}, k % 4 < 2);
    const Full full = brute_force(model, q, t);
    ASSERT_EQ(reference_scan(model, q, t), full.records) << "case " << k;
  }
}

TEST(ReferenceScan, StatesMatchBruteForceAfterEveryColumn) {
  // The end state after column j (every H, E and origin, zeros canonical) is the brute-force column.
  for (const Case& c : random_cases(12, 60, 30)) {
    const Full full = brute_force(c.model, c.q, c.t);
    for (std::int64_t j = 0; j < len(c.t); ++j) {
      ColumnState end;
      std::vector<ColumnRecord> recs(static_cast<std::size_t>(j + 1));
      reference_columns(c.model, c.q, c.t, 0, 0, j + 1, nullptr, recs, nullptr, &end);
      ASSERT_EQ(end, full.state_after(j)) << c.what << " after column " << j;
    }
  }
}

TEST(ReferenceScan, OriginsStartOptimalPathsToTheRecord) {
  // Semantic check independent of the recurrences' form: the best global alignment of the box from
  // the origin (starting with the pair at the origin) to the record's cell scores exactly the record.
  std::size_t checked = 0;
  for (const Case& c : random_cases(13, 150, 40)) {
    const std::vector<ColumnRecord> recs = reference_scan(c.model, c.q, c.t);
    for (std::size_t j = 0; j < recs.size(); ++j) {
      const ColumnRecord& r = recs[j];
      if (r.score == 0) {
        EXPECT_EQ(r, ColumnRecord{}) << c.what;
        continue;
      }
      ASSERT_GE(r.qstart, 0);
      ASSERT_LE(r.qstart, r.qend);
      ASSERT_GE(r.tstart, 0);
      ASSERT_LE(r.tstart, static_cast<std::int32_t>(j));
      ASSERT_EQ(box_score(c.model, c.q, c.t, r.qstart, r.qend, r.tstart, static_cast<std::int64_t>(j)),
                r.score)
          << c.what << " column " << j << " record " << show(r);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(ReferenceColumns, SplitRangesWithStatesEqualOneShot) {
  std::mt19937_64 rng(21);
  for (const Case& c : random_cases(14, 120, 60)) {
    const Full full = brute_force(c.model, c.q, c.t);
    const std::int64_t n = len(c.t);
    // Chained pieces at random cut points reproduce every record.
    std::vector<std::int64_t> cuts{0, n};
    for (int k = 0; k < 4; ++k)
      cuts.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1)));
    std::sort(cuts.begin(), cuts.end());
    std::vector<ColumnRecord> chained(static_cast<std::size_t>(n));
    ColumnState state;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      ColumnState next;
      reference_columns(c.model, c.q, c.t, cuts[k], cuts[k], cuts[k + 1], k == 0 ? nullptr : &state,
                        std::span<ColumnRecord>(chained).subspan(static_cast<std::size_t>(cuts[k])), nullptr,
                        &next);
      ASSERT_EQ(next, full.state_after(cuts[k + 1] - 1)) << c.what << " piece " << k;
      state = std::move(next);
    }
    ASSERT_EQ(chained, full.records) << c.what;

    // A task start <= own_begin <= end from the true state before `start`: probe, end and records.
    for (int k = 0; k < 6; ++k) {
      std::int64_t a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
      std::int64_t b = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
      std::int64_t e = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
      std::int64_t v[3] = {a, b, e};
      std::sort(v, v + 3);
      a = v[0], b = v[1], e = v[2];
      const ColumnState initial = full.state_after(a - 1);
      std::vector<ColumnRecord> recs(static_cast<std::size_t>(e - b) + 1, ColumnRecord{-7, -7, -7, -7});
      ColumnState probe{RowState{-5, -5, -5, -5, -5, -5}}, end;
      reference_columns(c.model, c.q, c.t, a, b, e, a == 0 && k % 2 == 0 ? nullptr : &initial, recs, &probe,
                        &end);
      if (b > a)
        ASSERT_EQ(probe, full.state_after(b - 1)) << c.what << " [" << a << "," << b << "," << e << ")";
      else
        ASSERT_EQ(probe, (ColumnState{RowState{-5, -5, -5, -5, -5, -5}}))
            << "probe written with own_begin == start";
      ASSERT_EQ(end, full.state_after(e - 1)) << c.what << " [" << a << "," << b << "," << e << ")";
      for (std::int64_t j = b; j < e; ++j)
        ASSERT_EQ(recs[static_cast<std::size_t>(j - b)], full.records[static_cast<std::size_t>(j)]);
      ASSERT_EQ(recs.back(), (ColumnRecord{-7, -7, -7, -7})) << "wrote past end - own_begin records";
    }
  }
}

TEST(ReferenceColumns, ZeroStartStateIsALowerBoundThatConverges) {
  // Pass 1 of the sections: from the zero state at `start`, the probe never exceeds the true state,
  // and on random DNA under SSCA#1 scoring it equals the true state after a few hundred columns.
  std::mt19937_64 rng(31);
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes q = random_codes(rng, 80, range_codes(4), false);
  const Codes t = random_codes(rng, 1500, range_codes(4), false);
  const Full full = brute_force(model, q, t);
  for (std::int64_t start : {100, 500, 900}) {
    for (std::int64_t overlap : {1, 5, 400}) {
      const std::int64_t own = start + overlap;
      ColumnState probe, end;
      std::vector<ColumnRecord> recs(static_cast<std::size_t>(len(t) - own));
      reference_columns(model, q, t, start, own, len(t), nullptr, recs, &probe, &end);
      const ColumnState truth = full.state_after(own - 1);
      for (std::size_t i = 0; i < truth.size(); ++i) {
        EXPECT_LE(probe[i].h, truth[i].h);
        EXPECT_LE(probe[i].e, truth[i].e);
      }
      if (overlap == 400) {
        EXPECT_EQ(probe, truth) << "start " << start;
        EXPECT_EQ(end, full.state_after(len(t) - 1));
      }
    }
  }
}

TEST(ReferenceScan, EdgeShapes) {
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes acgt = {0, 1, 2, 3};
  // Empty query: every column scores 0.
  EXPECT_EQ(reference_scan(model, Codes{}, acgt), std::vector<ColumnRecord>(4));
  EXPECT_TRUE(reference_scan(model, acgt, Codes{}).empty());
  // Exact match: diagonal scores 5, 10, 15, 20 from origin (0, 0).
  const std::vector<ColumnRecord> got = reference_scan(model, acgt, acgt);
  EXPECT_EQ(got, (std::vector<ColumnRecord>{{5, 0, 0, 0}, {10, 1, 0, 0}, {15, 2, 0, 0}, {20, 3, 0, 0}}));
  // Empty range with an initial state: the end state is the initial state.
  ColumnState init(4, RowState{3, 1, 0, 0, 0, 0});
  ColumnState end;
  std::vector<ColumnRecord> none;
  reference_columns(model, acgt, acgt, 2, 2, 2, &init, none, nullptr, &end);
  EXPECT_EQ(end, init);
}

TEST(ReferenceColumns, RejectsViolatedPreconditions) {
  const ScanModel model = ScanModel::make(ScoringMatrix::dna(5, -3), GapCosts{8, 1});
  const Codes q = {0, 1, 2}, t = {0, 1, 2, 3, 0};
  std::vector<ColumnRecord> recs(5);
  auto expect_internal = [&](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInternal) << what;
    }
  };
  expect_internal([&] { reference_columns(model, q, t, -1, 0, 3, nullptr, recs, nullptr, nullptr); },
                  "start < 0");
  expect_internal([&] { reference_columns(model, q, t, 2, 1, 3, nullptr, recs, nullptr, nullptr); },
                  "start > own");
  expect_internal([&] { reference_columns(model, q, t, 0, 4, 3, nullptr, recs, nullptr, nullptr); },
                  "own > end");
  expect_internal([&] { reference_columns(model, q, t, 0, 0, 6, nullptr, recs, nullptr, nullptr); },
                  "end > n");
  expect_internal(
      [&] { reference_columns(model, q, t, 0, 1, 5, nullptr, std::span(recs).first(3), nullptr, nullptr); },
      "records too short");
  const ColumnState wrong(2);
  expect_internal([&] { reference_columns(model, q, t, 1, 1, 5, &wrong, recs, nullptr, nullptr); },
                  "initial rows");
  const Codes bad_t = {0, 40};
  expect_internal([&] { reference_columns(model, q, bad_t, 0, 0, 2, nullptr, recs, nullptr, nullptr); },
                  "target code");
  ScanModel negative = model;
  negative.extend = -1;
  expect_internal([&] { reference_columns(negative, q, t, 0, 0, 5, nullptr, recs, nullptr, nullptr); },
                  "gap < 0");
}

}  // namespace
}  // namespace warpsearch::scan
