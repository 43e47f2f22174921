// test_search.cpp: tests of src/blast/search (the blastp engine, -comp_based_stats 0) against blastp 2.12.
//
// SearchSpouge*: spouge_cutoff_score is BLAST_SpougeEtoS: E(cutoff) > e0 >= E(cutoff + 1).
// SearchBlastp*: the full -outfmt "6 std score btop" output of blastp_search + TabularWriter is compared
// line by line with `blastp -query Q -subject S -comp_based_stats 0 -seg no` (skipped without blastp):
//   - globins45 all against all (each globin as query, the whole file as subjects);
//   - the first queries of prot/mmseqs_QUERY500.fasta against the first 2000 records of
//     prot/mmseqs_DB20k.fasta (written to a temporary file).
// Each case reports the identical-line rate and checks the bar: >= 99.5 % of blastp's hits with
// E <= 1e-3 found with identical score and coordinates, <= 0.5 % extra hits (ours, E <= 1e-3, not in
// blastp's output). Differences are printed. See the comment at the end of the file for the differences
// seen and their explanation.
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
#include <vector>

#include "blast/hsp.hpp"
#include "blast/search.hpp"
#include "blast/tabular.hpp"
#include "blastp_oracle.hpp"
#include "protein_fasta.hpp"
#include "stats/blast_stats.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {
using test::have_blastp;
using test::lines_of;
using test::split_tabs;

using test::read_fasta;
using test::Record;
using test::write_fasta;

constexpr const char* kSpec = "6 std score btop";

// Identity of a hit for the bar: qid, sid, qstart, qend, sstart, send, score.
using HitKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string>;
HitKey key_of(const std::vector<std::string>& f) { return {f[0], f[1], f[6], f[7], f[8], f[9], f[12]}; }

std::string run_ours(const std::vector<Record>& queries, const std::vector<Record>& subjects,
                     const BlastpOptions& options, SearchCounts& counts) {
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
    counts.gapped_extensions += result.counts.gapped_extensions;
    counts.prelim_hsps += result.counts.prelim_hsps;
    counts.redone_subjects += result.counts.redone_subjects;
    const std::vector<TabularHit> hits = tabular_hits(result.hits);
    out += writer.query({q.defline, q.codes}, subject_seqs, hits);
  }
  return out;
}

std::string run_blastp(const std::string& q_path, const std::string& s_path, const std::string& args,
                       const std::string& out_path) {
  const std::string cmd = "blastp -query " + q_path + " -subject " + s_path +
                          " -comp_based_stats 0 -num_threads 1 " + args + " -outfmt '" + kSpec + "' > " +
                          out_path + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// blastp_args must say the same as options (-seg, -evalue, -max_target_seqs, -max_hsps, ...).
// Returns the engine's counts summed over the queries.
SearchCounts compare(const std::vector<Record>& queries, const std::vector<Record>& subjects,
                     const std::string& name, const BlastpOptions& options = {},
                     const std::string& blastp_args = "-seg no") {
  test::TempDir dir("ws_search");
  const std::string q_path = (dir.path() / "q.fa").string();
  const std::string s_path = (dir.path() / "s.fa").string();
  write_fasta(queries, q_path);
  write_fasta(subjects, s_path);
  SearchCounts counts;
  const std::vector<std::string> expected =
      lines_of(run_blastp(q_path, s_path, blastp_args, (dir.path() / "out").string()));
  const std::vector<std::string> actual = lines_of(run_ours(queries, subjects, options, counts));

  // Lines are also compared with pident taken out, to tell a pident formatting difference (see the note at
  // the end of the file; fixed in tabular.cpp, so none is expected) from a different hit.
  const auto without_pident = [](const std::string& line) {
    std::vector<std::string> f = split_tabs(line);
    if (f.size() > 2) f[2].clear();
    std::string out;
    for (const std::string& x : f) out += x + '\t';
    return out;
  };
  std::multiset<std::string> exp_set, act_set, exp_loose, act_loose;
  std::map<std::string, double> act_pident;
  for (const std::string& l : expected) exp_set.insert(l), exp_loose.insert(without_pident(l));
  for (const std::string& l : actual) {
    act_set.insert(l), act_loose.insert(without_pident(l));
    act_pident[without_pident(l)] = std::stod(split_tabs(l)[2]);
  }
  std::size_t identical = 0, pident_only = 0;
  for (const std::string& l : expected) {
    if (act_set.count(l)) {
      ++identical;
    } else if (act_loose.count(without_pident(l))) {
      ++pident_only;
      ADD_FAILURE() << "pident differs: blastp " << l << " ours " << act_pident[without_pident(l)];
    }
  }
  std::size_t same_order = 0;
  for (std::size_t i = 0; i < std::min(expected.size(), actual.size()); ++i)
    same_order += without_pident(expected[i]) == without_pident(actual[i]) ? 1U : 0U;

  std::set<HitKey> exp_keys, act_keys;
  std::size_t exp_sig = 0, found_sig = 0, act_sig = 0, extra_sig = 0;
  for (const std::string& l : actual) act_keys.insert(key_of(split_tabs(l)));
  for (const std::string& l : expected) {
    const auto f = split_tabs(l);
    exp_keys.insert(key_of(f));
    if (std::stod(f[10]) <= 1e-3) {
      ++exp_sig;
      if (act_keys.count(key_of(f))) ++found_sig;
    }
  }
  for (const std::string& l : actual) {
    const auto f = split_tabs(l);
    if (std::stod(f[10]) <= 1e-3) {
      ++act_sig;
      if (!exp_keys.count(key_of(f))) ++extra_sig;
    }
  }
  for (const std::string& l : expected)
    if (!act_loose.count(without_pident(l))) ADD_FAILURE() << name << " missing/different (blastp): " << l;
  for (const std::string& l : actual)
    if (!exp_loose.count(without_pident(l))) ADD_FAILURE() << name << " extra/different (ours):   " << l;

  const double identical_rate =
      expected.empty() ? 1.0 : static_cast<double>(identical) / static_cast<double>(expected.size());
  const double found_rate =
      exp_sig == 0 ? 1.0 : static_cast<double>(found_sig) / static_cast<double>(exp_sig);
  const double extra_rate =
      act_sig == 0 ? 0.0 : static_cast<double>(extra_sig) / static_cast<double>(act_sig);
  std::printf(
      "%s: blastp %zu lines, ours %zu; identical %zu (%.3f %%), + pident last digit only %zu, same position "
      "%zu; E<=1e-3: blastp %zu, found %zu (%.3f %%), ours %zu, extra %zu (%.3f %%)\n",
      name.c_str(), expected.size(), actual.size(), identical, 100 * identical_rate, pident_only, same_order,
      exp_sig, found_sig, 100 * found_rate, act_sig, extra_sig, 100 * extra_rate);
  EXPECT_GT(expected.size(), 0U);
  EXPECT_EQ(identical + pident_only, expected.size());
  EXPECT_EQ(expected.size(), actual.size());
  std::printf(
      "  gapped extensions %lld, preliminary HSPs %lld, subjects redone after a restricted alignment %lld\n",
      static_cast<long long>(counts.gapped_extensions), static_cast<long long>(counts.prelim_hsps),
      static_cast<long long>(counts.redone_subjects));
  EXPECT_GE(found_rate, 0.995);
  EXPECT_LE(extra_rate, 0.005);
  return counts;
}

TEST(SearchSpouge, CutoffIsTheBisectionBoundary) {
  const ScoringMatrix m = ScoringMatrix::builtin("BLOSUM62");
  const auto calc = EvalueCalculator::create(m, GapCosts{11, 1}, 150, 300000, 1000);
  const auto gumbel = stats::gumbel_params(m, GapCosts{11, 1});
  ASSERT_TRUE(calc && gumbel);
  for (const double e0 : {10.0, 1.0, 1e-3, 1e-10}) {
    for (const int n : {50, 200, 1000}) {
      const int c = spouge_cutoff_score(e0, calc->gapped(), *gumbel, 150, n, 300000);
      EXPECT_GT(spouge_evalue(c, calc->gapped(), *gumbel, 150, n, 300000), e0) << e0 << " " << n;
      EXPECT_LE(spouge_evalue(c + 1, calc->gapped(), *gumbel, 150, n, 300000), e0) << e0 << " " << n;
    }
  }
}

// Random proteins (fixed seed) with planted homologs: each subject is either random or a query fragment with
// substitutions and short indels; rare letters (U, O, B, Z, J, X) are sprinkled in to exercise BLAST's score
// table (U as C, O as X) and the lookup / statistics rules for them.
std::vector<Record> random_records(std::mt19937& rng, std::size_t n, int min_len, int max_len,
                                   const std::string& tag) {
  const Alphabet alpha = Alphabet::protein();
  const std::string common = "ACDEFGHIKLMNPQRSTVWY", rare = "UOBZJX";
  std::vector<Record> out;
  for (std::size_t i = 0; i < n; ++i) {
    Record r{tag + std::to_string(i), {}};
    const int len = std::uniform_int_distribution<int>(min_len, max_len)(rng);
    for (int k = 0; k < len; ++k) {
      const bool is_rare = std::uniform_int_distribution<int>(0, 99)(rng) == 0;
      const std::string& set = is_rare ? rare : common;
      r.codes.push_back(*alpha.code(set[std::uniform_int_distribution<std::size_t>(0, set.size() - 1)(rng)]));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::uint8_t> mutate(std::mt19937& rng, const std::vector<std::uint8_t>& src,
                                 int percent_changed) {
  std::vector<std::uint8_t> out;
  const int start = std::uniform_int_distribution<int>(0, static_cast<int>(src.size()) / 3)(rng);
  const int end = std::uniform_int_distribution<int>(2 * static_cast<int>(src.size()) / 3,
                                                     static_cast<int>(src.size()))(rng);
  std::uniform_int_distribution<int> pct(0, 99);
  for (int k = start; k < end; ++k) {
    const int roll = pct(rng);
    if (roll < 2) continue;                                                 // deletion
    if (roll < 4) out.push_back(static_cast<std::uint8_t>(pct(rng) % 20));  // insertion
    out.push_back(pct(rng) < percent_changed ? static_cast<std::uint8_t>(pct(rng) % 20)
                                             : src[static_cast<std::size_t>(k)]);
  }
  return out;
}

TEST(SearchBlastp, RandomWithPlantedHomologs) {
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  std::mt19937 rng(20261121);
  const std::vector<Record> queries = random_records(rng, 8, 60, 400, "q");
  std::vector<Record> subjects = random_records(rng, 150, 5, 600, "r");
  for (std::size_t i = 0; i < 150; ++i) {
    const Record& q = queries[i % queries.size()];
    subjects.push_back({fmt::format("h{}", i), mutate(rng, q.codes, 20 + static_cast<int>(i % 6) * 10)});
  }
  std::shuffle(subjects.begin(), subjects.end(), rng);
  compare(queries, subjects, "random + planted");
  BlastpOptions seg;
  seg.seg = true;
  compare(queries, subjects, "random + planted, seg yes", seg, "-seg yes");
}

TEST(SearchBlastp, Globins45AllAgainstAll) {
  WS_REQUIRE_TESTDATA("prot/globins45.fa");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const auto globins = read_fasta((test::testdata_dir() / "prot/globins45.fa").string(), 1000);
  compare(globins, globins, "globins45");
}

TEST(SearchBlastp, QueriesAgainstDb2000) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const auto queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 40);
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 2000);
  compare(queries, db, "query500[0:40] vs DB20k[0:2000]");
}

// Options: SEG on the query, a large -evalue (restricted alignment off, many weak hits), a strict one,
// -max_target_seqs / -max_hsps limits.
TEST(SearchBlastp, Options) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blastp()) GTEST_SKIP() << "blastp not installed";
  const auto queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 60);
  const std::vector<Record> q(queries.begin() + 40, queries.end());
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 1000);
  BlastpOptions seg;
  seg.seg = true;
  compare(q, db, "seg yes", seg, "-seg yes");
  BlastpOptions loose;
  loose.evalue = 1000;
  compare({q.begin(), q.begin() + 8}, db, "evalue 1000 (8 queries)", loose, "-seg no -evalue 1000");
  BlastpOptions strict;
  strict.evalue = 1e-5;
  compare(q, db, "evalue 1e-5", strict, "-seg no -evalue 1e-5");
  BlastpOptions limits;
  limits.max_target_seqs = 3;
  limits.max_hsps = 1;
  compare(q, db, "max_target_seqs 3 max_hsps 1", limits, "-seg no -max_target_seqs 3 -max_hsps 1");
}

}  // namespace
}  // namespace warpsearch::blast

// Differences seen (blastp 2.12.0+, 2026-11-21; all cases above, plus a 20-query -evalue 1000 run over
// DB20k[0:1000], 10625 lines):
//   - None in hits, coordinates, scores, E-values, bit scores, BTOP or order. Every line was identical except
//     one pident whose exact value is a decimal tie: 51 / 320 = 15.9375, blastp prints 15.937, TabularWriter
//     15.938 (tr|A0A078GHK1 vs tr|A0A149WYN5, one of QUERY500's queries 41-60, -evalue 1000). blastp
//     evidently computes nident / length * 100 (its rounding error lands just below the tie) where
//     tabular.cpp computed 100.0 * nident / length (exactly the tie; printf rounds half to even). Fixed in
//     tabular.cpp (nident / length * 100, also for ppos); compare() now fails on any pident difference.
// Two rules had to be found by comparison and are recorded in search.hpp: the hit-saving cutoff's subject
// length n = max(shortest subject, 10), and BLAST's interval tree (its inexact containment test) in both
// gapped stages. In the 40-query case: n = the true shortest length (7) with the tree: 4 of blastp's 868
// lines missing; n = 7 with a plain containment scan: 11 missing, 1 extra; both rules as now: identical.
