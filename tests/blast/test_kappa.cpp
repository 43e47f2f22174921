// test_kappa.cpp: blastp with composition-based statistics (src/blast/kappa, through blastp_search)
// against BLAST+ 2.12.
//
// KappaHeap.*: finish_composition_redo's simulation of BLAST's BlastCompo_Heap and early termination is
//   compared with BLAST's own heap functions (libcomposition_adjustment.so, loaded with libblast.so) on
//   synthetic batches with many ties and small -max_target_seqs (so that heaps fill and lists are skipped):
//   same final lists in the same order, and the redo callback called for exactly the lists BLAST redoes.
// KappaBlastp.*: the full -outfmt "6 std score btop" output of blastp_search + TabularWriter, line by line,
//   against `blastp -query Q -subject S -comp_based_stats N` (skipped without blastp):
//   - globins45 all against all, modes 2 and 1;
//   - queries of prot/mmseqs_QUERY500.fasta against records of prot/mmseqs_DB20k.fasta, modes 2 and 1;
//   - options: -seg yes (SEG-masked queries, the near-identity test that decides the subject's SEG),
//     -max_target_seqs 1 -max_hsps 1 (heaps fill: early termination), -evalue 1e-5 and 100.
//   Each case prints the identical-line rate and checks the bar (>= 99.5 % of blastp's hits with
//   E <= 1e-3 found with identical score and coordinates, <= 0.5 % extra); every line is expected to be
//   identical and each difference is reported as a failure. See the note at the end of the file.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "blast/hsp.hpp"
#include "blast/kappa.hpp"
#include "blast/search.hpp"
#include "blast/tabular.hpp"
#include "blastp_oracle.hpp"
#include "libblast.hpp"
#include "protein_fasta.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {
using test::have_blastp;
using test::lines_of;
using test::split_tabs;

// ---------------------------------------------------------------------------------------------------
// The heap oracle.

struct CHeap {  // BlastCompo_Heap (compo_heap.h)
  int n;
  int capacity;
  int heapThreshold;
  double ecutoff;
  double worstEvalue;
  void* array;
  void* heapArray;
};

struct HeapOracle {
  int (*would_insert)(CHeap*, double, int, int);
  int (*insert)(CHeap*, void*, double, int, int, void**);
  int (*initialize)(CHeap*, int, double);
  void (*release)(CHeap*);
  void* (*pop)(CHeap*);
  int (*early_termination)(double, CHeap*, int);
};

const HeapOracle* heap_oracle() {
  static const HeapOracle* loaded = []() -> const HeapOracle* {
    void* h = test::open_libblast();
    if (h == nullptr) return nullptr;
    static HeapOracle o;
    bool ok = true;
    const auto load = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(h, name));
      ok = ok && f != nullptr;
    };
    load(o.would_insert, "BlastCompo_HeapWouldInsert");
    load(o.insert, "BlastCompo_HeapInsert");
    load(o.initialize, "BlastCompo_HeapInitialize");
    load(o.release, "BlastCompo_HeapRelease");
    load(o.pop, "BlastCompo_HeapPop");
    load(o.early_termination, "BlastCompo_EarlyTermination");
    return ok ? &o : nullptr;
  }();
  return loaded;
}

// One synthetic list: its preliminary best E-value and what its redo returns.
struct SyntheticList {
  SubjectHits prelim;
  SubjectRedo redo;
};

SubjectHits hits_of(int oid, const std::vector<Hsp>& hsps) {
  SubjectHits h;
  h.oid = oid;
  h.hsps = hsps;
  return h;
}

// The lists BLAST reports for a batch, computed with BLAST's heap functions; `redone` counts the redo calls
// BLAST makes (lists not skipped by early termination).
std::vector<std::vector<SubjectHits>> oracle_finish(const std::vector<std::vector<SyntheticList>>& batch,
                                                    const BlastpOptions& options, std::size_t& redone) {
  const HeapOracle* o = heap_oracle();
  std::vector<CHeap> heaps(batch.size());
  for (CHeap& h : heaps) EXPECT_EQ(o->initialize(&h, options.max_target_seqs, kCompoHeapEvalueCutoff), 0);
  redone = 0;
  std::vector<std::vector<SubjectHits>> out(batch.size());
  for (std::size_t q = 0; q < batch.size(); ++q) {
    for (const SyntheticList& l : batch[q]) {
      if (o->early_termination(l.prelim.best_evalue(), heaps.data(), static_cast<int>(heaps.size())))
        continue;
      ++redone;
      if (l.redo.hsps.empty() || !(l.redo.best_evalue <= options.evalue)) continue;
      if (!o->would_insert(&heaps[q], l.redo.best_evalue, l.redo.best_score, l.prelim.oid)) continue;
      void* discarded = nullptr;
      EXPECT_EQ(o->insert(&heaps[q], const_cast<SyntheticList*>(&l), l.redo.best_evalue, l.redo.best_score,
                          l.prelim.oid, &discarded),
                0);
    }
    while (void* p = o->pop(&heaps[q])) {
      const auto* l = static_cast<const SyntheticList*>(p);
      out[q].push_back(hits_of(l->prelim.oid, l->redo.hsps));
    }
    o->release(&heaps[q]);
    for (SubjectHits& l : out[q]) trim_to_max_hsps(l.hsps, options.max_hsps);
    select_hit_lists(out[q], static_cast<std::size_t>(options.max_target_seqs));
  }
  return out;
}

// Synthetic batches: preliminary lists in BLAST's order (best prelim E first), redo results with E-values
// and scores drawn from small sets (ties in E-value, score and both), some lists redone to nothing or above
// -evalue, and strong lists early so that heaps fill.
std::vector<std::vector<SyntheticList>> synthetic_batch(std::mt19937& rng, int queries, int lists) {
  const std::vector<double> evalues = {0.0,   1e-200, 1e-190,    1e-50, 1e-20, 1e-5, 0.001, 0.002, 0.0021,
                                       0.005, 0.01,   0.0100001, 0.5,   3,     9.99, 10,    12};
  std::uniform_int_distribution<std::size_t> pick(0, evalues.size() - 1);
  std::uniform_int_distribution<int> score(30, 34), pct(0, 99), nhsps(1, 3);
  std::vector<std::vector<SyntheticList>> batch(static_cast<std::size_t>(queries));
  for (auto& q : batch) {
    std::vector<int> oids(static_cast<std::size_t>(lists));
    for (int i = 0; i < lists; ++i) oids[static_cast<std::size_t>(i)] = i * 3 + pct(rng) % 3;
    std::shuffle(oids.begin(), oids.end(), rng);
    for (int i = 0; i < lists; ++i) {
      SyntheticList l;
      // Preliminary E-values rise along the list (BLAST's order); strong ones first.
      const double prelim_e = i < lists / 3 ? 1e-10 * (i + 1) : 0.001 * i;
      Hsp p;
      p.score = 40;
      p.evalue = prelim_e;
      l.prelim = hits_of(oids[static_cast<std::size_t>(i)], {p});
      const int roll = pct(rng);
      if (roll >= 5) {
        const double e = roll < 40 && i < lists / 3 ? evalues[pick(rng) % 8] : evalues[pick(rng)];
        const int s = score(rng);
        for (int k = 0, n = nhsps(rng); k < n; ++k) {
          Hsp h;
          h.score = s / 32 - k;
          h.evalue = e * (k + 1);
          h.q_start = k;
          l.redo.hsps.push_back(h);
        }
        l.redo.best_evalue = e;
        l.redo.best_score = s;
      }
      q.push_back(std::move(l));
    }
  }
  return batch;
}

TEST(KappaHeap, FinishEqualsBlastHeap) {
  if (heap_oracle() == nullptr) GTEST_SKIP() << "libblast.so (BLAST+ 2.12) not loadable";
  std::mt19937 rng(2026);
  std::size_t skipped_total = 0;
  for (int round = 0; round < 400; ++round) {
    const int queries = 1 + round % 3;
    const int lists = 5 + (round * 7) % 60;
    auto batch = synthetic_batch(rng, queries, lists);
    BlastpOptions options;
    options.max_target_seqs = 1 + round % 6;
    options.max_hsps = round % 4 == 0 ? 1 : 0;
    options.evalue = round % 5 == 0 ? 1.0 : 10.0;
    std::size_t redone = 0;
    const auto want = oracle_finish(batch, options, redone);
    std::vector<RedoQueryInput> inputs;
    std::vector<std::vector<SubjectHits>> prelim(batch.size());
    std::size_t calls = 0;
    for (std::size_t q = 0; q < batch.size(); ++q) {
      for (const SyntheticList& l : batch[q]) prelim[q].push_back(l.prelim);
      inputs.push_back({prelim[q], [&, q](std::size_t i) {
                          ++calls;
                          return batch[q][i].redo;
                        }});
    }
    const auto got = finish_composition_redo(inputs, options);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(calls, redone) << round;
    for (std::size_t q = 0; q < got.size(); ++q) {
      ASSERT_EQ(got[q].hits.size(), want[q].size()) << round << " " << q;
      ASSERT_EQ(got[q].rules.size(), want[q].size()) << round << " " << q;
      for (std::size_t i = 0; i < got[q].hits.size(); ++i) {
        EXPECT_EQ(got[q].hits[i].oid, want[q][i].oid) << round << " " << q << " " << i;
        EXPECT_EQ(got[q].hits[i].hsps, want[q][i].hsps) << round << " " << q << " " << i;
        EXPECT_EQ(got[q].rules[i].size(), got[q].hits[i].hsps.size());
      }
    }
    std::size_t total = 0;
    for (const auto& q : batch) total += q.size();
    skipped_total += total - redone;
  }
  // Early termination happened (the heaps filled) in these batches.
  EXPECT_GT(skipped_total, 100U);
}

TEST(KappaHeap, QueryBatchesCloseAt10000Residues) {
  const std::vector<std::size_t> none;
  EXPECT_EQ(blastp_query_batches(none), std::vector<std::size_t>({0}));
  const std::vector<std::size_t> lengths = {4000, 5999, 1, 1, 12000, 300, 9700, 5};
  // 4000 + 5999 + 1 = 10000 closes the first batch; 1 + 12000; 300 + 9700; 5.
  EXPECT_EQ(blastp_query_batches(lengths), std::vector<std::size_t>({0, 3, 5, 7, 8}));
}

// ---------------------------------------------------------------------------------------------------
// End to end against blastp.

using test::read_fasta;
using test::Record;
using test::write_fasta;

constexpr const char* kSpec = "6 std score btop";

using HitKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string>;
HitKey key_of(const std::vector<std::string>& f) { return {f[0], f[1], f[6], f[7], f[8], f[9], f[12]}; }

// The method suffix blastp's pairwise report prints for an HSP scored with a matrix of this rule.
std::string method_of(compo::MatrixAdjustRule rule) {
  if (rule == compo::MatrixAdjustRule::kDontAdjust) return "";
  return rule == compo::MatrixAdjustRule::kScaleOldMatrix ? "Composition-based stats."
                                                          : "Compositional matrix adjust.";
}

std::string run_ours(const std::vector<Record>& queries, const std::vector<Record>& subjects,
                     const BlastpOptions& options, SearchCounts& counts,
                     std::vector<std::string>* methods = nullptr) {
  std::vector<Residues> subject_residues;
  std::vector<TabularSequence> subject_seqs;
  for (const Record& r : subjects) {
    subject_residues.emplace_back(r.codes);
    subject_seqs.push_back({r.defline, r.codes});
  }
  const TabularWriter writer(parse_tabular_format(kSpec), ScoringMatrix::builtin("BLOSUM62"),
                             TabularOptions{"", true});
  std::string out;
  for (const Record& q : queries) {
    const BlastpResult result = blastp_search(q.codes, subject_residues, options);
    counts.composition_redone += result.counts.composition_redone;
    EXPECT_EQ(result.adjust_rules.size(), result.hits.size());
    if (methods != nullptr)
      for (const auto& list : result.adjust_rules)
        for (const compo::MatrixAdjustRule r : list) methods->push_back(method_of(r));
    out += writer.query({q.defline, q.codes}, subject_seqs, tabular_hits(result.hits));
  }
  return out;
}

// blastp_args must say the same as options (-seg, -evalue, -max_target_seqs, -max_hsps); the mode is
// taken from options.
void compare(const std::vector<Record>& queries, const std::vector<Record>& subjects, const std::string& name,
             const BlastpOptions& options, const std::string& blastp_args) {
  test::TempDir dir("ws_kappa");
  const std::string q_path = (dir.path() / "q.fa").string();
  const std::string s_path = (dir.path() / "s.fa").string();
  const std::string out_path = (dir.path() / "out").string();
  write_fasta(queries, q_path);
  write_fasta(subjects, s_path);
  const std::string cmd = fmt::format(
      "blastp -query {} -subject {} -comp_based_stats {} -num_threads 1 {} -outfmt '{}' > {} 2>/dev/null",
      q_path, s_path, options.comp_based_stats, blastp_args, kSpec, out_path);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<std::string> expected = lines_of(ss.str());
  SearchCounts counts;
  const std::vector<std::string> actual = lines_of(run_ours(queries, subjects, options, counts));

  const std::multiset<std::string> exp_set(expected.begin(), expected.end()),
      act_set(actual.begin(), actual.end());
  std::size_t identical = 0;
  for (const std::string& l : expected) identical += act_set.count(l) != 0 ? 1U : 0U;
  std::size_t same_order = 0;
  for (std::size_t i = 0; i < std::min(expected.size(), actual.size()); ++i)
    same_order += expected[i] == actual[i] ? 1U : 0U;
  std::set<HitKey> exp_keys, act_keys;
  std::size_t exp_sig = 0, found_sig = 0, act_sig = 0, extra_sig = 0;
  for (const std::string& l : actual) act_keys.insert(key_of(split_tabs(l)));
  for (const std::string& l : expected) {
    const auto f = split_tabs(l);
    exp_keys.insert(key_of(f));
    if (std::stod(f[10]) <= 1e-3) {
      ++exp_sig;
      if (act_keys.count(key_of(f)) != 0) ++found_sig;
    }
  }
  for (const std::string& l : actual) {
    const auto f = split_tabs(l);
    if (std::stod(f[10]) <= 1e-3) {
      ++act_sig;
      if (exp_keys.count(key_of(f)) == 0) ++extra_sig;
    }
  }
  for (const std::string& l : expected)
    if (act_set.count(l) == 0) ADD_FAILURE() << name << " missing/different (blastp): " << l;
  for (const std::string& l : actual)
    if (exp_set.count(l) == 0) ADD_FAILURE() << name << " extra/different (ours):   " << l;
  const double found_rate =
      exp_sig == 0 ? 1.0 : static_cast<double>(found_sig) / static_cast<double>(exp_sig);
  const double extra_rate =
      act_sig == 0 ? 0.0 : static_cast<double>(extra_sig) / static_cast<double>(act_sig);
  std::printf(
      "%s: blastp %zu lines, ours %zu; identical %zu (%.3f %%), same position %zu; E<=1e-3: blastp %zu, "
      "found %zu "
      "(%.3f %%), ours %zu, extra %zu (%.3f %%); subjects redone %lld\n",
      name.c_str(), expected.size(), actual.size(), identical,
      expected.empty() ? 100.0
                       : 100.0 * static_cast<double>(identical) / static_cast<double>(expected.size()),
      same_order, exp_sig, found_sig, 100 * found_rate, act_sig, extra_sig, 100 * extra_rate,
      static_cast<long long>(counts.composition_redone));
  EXPECT_GT(expected.size(), 0U);
  EXPECT_EQ(same_order, expected.size());
  EXPECT_EQ(expected.size(), actual.size());
  EXPECT_GE(found_rate, 0.995);
  EXPECT_LE(extra_rate, 0.005);
}

BlastpOptions mode(int cbs) {
  BlastpOptions o;
  o.comp_based_stats = cbs;
  return o;
}

TEST(KappaBlastp, Globins45AllAgainstAll) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const auto globins = read_fasta((test::testdata_dir() / "prot/globins45.fa").string(), 1000);
  compare(globins, globins, "globins45, mode 2", mode(2), "-seg no");
  compare(globins, globins, "globins45, mode 1", mode(1), "-seg no");
}

TEST(KappaBlastp, QueriesAgainstDb) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const std::string qp = (test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string();
  const std::string dp = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const auto db = read_fasta(dp, 2000);
  compare(read_fasta(qp, 25), db, "query500[0:25] vs DB20k[0:2000], mode 2", mode(2), "-seg no");
  compare(read_fasta(qp, 15, 30), db, "query500[30:45] vs DB20k[0:2000], mode 1", mode(1), "-seg no");
}

TEST(KappaBlastp, Options) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const std::string qp = (test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string();
  const std::string dp = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const auto db = read_fasta(dp, 2000);
  // SEG: query 26 (E1CC35) has two near copies in DB20k[0:2000] whose near-identity (95.9 % with the masked
  // query) lies between the 2026 toolkit's threshold (0.95) and 2.12's (0.96): 2.12 SEG-masks the subjects.
  BlastpOptions seg = mode(2);
  seg.seg = true;
  compare(read_fasta(qp, 12, 20), db, "query500[20:32] seg yes, mode 2", seg, "-seg yes");
  BlastpOptions limits = mode(2);
  limits.max_target_seqs = 1;
  limits.max_hsps = 1;
  compare(read_fasta(qp, 15, 50), db, "max_target_seqs 1 max_hsps 1, mode 2", limits,
          "-seg no -max_target_seqs 1 -max_hsps 1");
  BlastpOptions strict = mode(2);
  strict.evalue = 1e-5;
  compare(read_fasta(qp, 12, 70), db, "evalue 1e-5, mode 2", strict, "-seg no -evalue 1e-5");
  BlastpOptions loose = mode(1);
  loose.evalue = 100;
  compare(read_fasta(qp, 3, 90), db, "evalue 100, mode 1", loose, "-seg no -evalue 100");
  compare(read_fasta(qp, 6, 94), db, "mode 3 (unconditional adjustment)", mode(3), "-seg no");
}

// The ", Method: ..." of every HSP in blastp's pairwise report (-outfmt 0, same HSP order as -outfmt 6)
// equals the rule kappa.cpp reports: mode 1 scales the old matrix; mode 2 adjusts it unless the conditional
// test says otherwise (long-vs-short pairs of distant compositions: 47 of the 224 HSPs here).
TEST(KappaBlastp, MethodsMatchPairwiseReport) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const auto queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 25);
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 2000);
  test::TempDir dir("ws_kappa_methods");
  const std::string s_path = (dir.path() / "s.fa").string();
  write_fasta(db, s_path);
  for (const int cbs : {2, 1}) {
    // Mode 1 scores everything with the scaled old matrix: a few queries suffice.
    const std::vector<Record> q(queries.begin(), queries.begin() + (cbs == 2 ? 25 : 5));
    const std::string q_path = (dir.path() / "q.fa").string();
    write_fasta(q, q_path);
    const std::string out_path = (dir.path() / "out").string();
    const std::string cmd =
        fmt::format("blastp -query {} -subject {} -comp_based_stats {} -seg no -outfmt 0 > {} 2>/dev/null",
                    q_path, s_path, cbs, out_path);
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(out_path);
    std::vector<std::string> want;
    std::string line;
    const std::string key = "Method: ";
    while (std::getline(in, line)) {
      if (line.rfind(" Score = ", 0) != 0) continue;
      const std::size_t at = line.find(key);
      want.push_back(at == std::string::npos ? "" : line.substr(at + key.size()));
    }
    std::vector<std::string> got;
    SearchCounts counts;
    run_ours(q, db, mode(cbs), counts, &got);
    EXPECT_FALSE(got.empty());
    EXPECT_EQ(got, want) << "mode " << cbs;
    if (cbs == 2) {
      // Both rules occur.
      EXPECT_NE(std::count(want.begin(), want.end(), "Composition-based stats."), 0);
      EXPECT_NE(std::count(want.begin(), want.end(), "Compositional matrix adjust."), 0);
    }
  }
}

// A matrix without BLAST+'s frequency data (a file, even one with BLOSUM62's scores) and an unknown mode are
// usage errors; the plain engine accepts the file.
TEST(KappaBlastp, UsageErrors) {
  test::TempDir dir("ws_kappa_matrix");
  const std::string path = (dir.path() / "MYMATRIX").string();
  {
    const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
    const Alphabet alpha = Alphabet::protein();
    std::ofstream out(path);
    out << ' ';
    for (int b = 0; b < alpha.size(); ++b) out << ' ' << alpha.symbol(static_cast<std::uint8_t>(b));
    out << '\n';
    for (int a = 0; a < alpha.size(); ++a) {
      out << alpha.symbol(static_cast<std::uint8_t>(a));
      for (int b = 0; b < alpha.size(); ++b)
        out << ' ' << m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
      out << '\n';
    }
  }
  std::vector<std::uint8_t> q;
  for (int i = 0; i < 60; ++i) q.push_back(static_cast<std::uint8_t>((i * 7) % 20));
  const std::vector<Residues> subjects = {Residues(q)};
  BlastpOptions o = mode(0);
  o.matrix = path;
  EXPECT_EQ(blastp_search(q, subjects, o).hits.size(), 1U);
  o.comp_based_stats = 2;
  EXPECT_THROW(blastp_search(q, subjects, o), Error);
  o = mode(4);
  EXPECT_THROW(blastp_search(q, subjects, o), Error);
  o = mode(3);
  EXPECT_EQ(blastp_search(q, subjects, o).hits.size(), 1U);
}

}  // namespace
}  // namespace warpsearch::blast

// Differences seen (blastp 2.12.0+, 2026-11-22): none, on the cases above and on larger runs against all
// 20000 records of DB20k: mode 2 on all 500 queries of QUERY500 (31148 lines identical, in order), mode 1
// on queries 0-150 (10007 lines) and with -seg yes on 400-500 (7352), mode 3 on 100-160 (4053), mode 2 with
// -seg yes on 300-400 (6736), -max_target_seqs 1 (148), 3 (mode 1, 478), 5 with -max_hsps 2 (783) and 2000
// (729), -evalue 1e-10 (3328) and 100 (1844).
// One rule had to be found by comparison (kappa.cpp): s_TestNearIdentical's threshold is 0.96 in 2.12
// (0.95 in the 2026 sources); with 0.95 the -seg yes case above loses 2 lines (E1CC35's near copies).
