// test_engine.cpp: tests of src/blast/engine (the multi-query, multithreaded, streaming blastp driver).
//
// EngineDeterminism: blastp_run over a FASTA file with subject-mode totals gives exactly blastp_search's
//   hit lists (every HSP field and edit script) for 1 and 3 threads and batch sizes from one sequence to the
//   whole file, with -max_target_seqs small enough that the preliminary selection prunes across batches.
// EnginePackedDb: the same database as FASTA and as a packed warpsearch database gives identical results.
// EngineTotals: database_totals for -db (min length 10) and -subject (max(shortest, 10)) modes.
// EngineBlastpDb: outfmt 6 of the engine against a makeblastdb database equals `blastp -db`
// (-comp_based_stats
//   0 -seg no) line for line (skipped without blastp / makeblastdb).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "blast/engine.hpp"
#include "blast/search.hpp"
#include "blast/tabular.hpp"
#include "protein_fasta.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {
namespace {

using test::read_fasta;
using test::Record;
using test::write_fasta;

// Random proteins with planted mutated copies of the queries (substitutions and short indels).
void make_data(std::mt19937& rng, std::vector<Record>& queries, std::vector<Record>& subjects) {
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  const Alphabet alpha = Alphabet::protein();
  std::uniform_int_distribution<int> pct(0, 99);
  const auto random_seq = [&](int lo, int hi) {
    std::vector<std::uint8_t> s(static_cast<std::size_t>(std::uniform_int_distribution<int>(lo, hi)(rng)));
    for (auto& c : s) c = *alpha.code(letters[static_cast<std::size_t>(pct(rng) % 20)]);
    return s;
  };
  for (int i = 0; i < 6; ++i) queries.push_back({fmt::format("q{} query {}", i, i), random_seq(80, 300)});
  for (int i = 0; i < 240; ++i) {
    if (i % 2 == 0) {
      subjects.push_back({fmt::format("r{}", i), random_seq(5, 500)});
      continue;
    }
    const Record& q = queries[static_cast<std::size_t>(i) % queries.size()];
    std::vector<std::uint8_t> m;
    for (const std::uint8_t c : q.codes) {
      const int roll = pct(rng);
      if (roll < 2) continue;
      if (roll < 4) m.push_back(static_cast<std::uint8_t>(pct(rng) % 20));
      m.push_back(pct(rng) < 15 + (i % 7) * 10 ? static_cast<std::uint8_t>(pct(rng) % 20) : c);
    }
    subjects.push_back({fmt::format("h{} planted", i), m});
  }
}

std::vector<BlastpQuery> to_queries(const std::vector<Record>& records) {
  std::vector<BlastpQuery> out;
  for (const Record& r : records) out.push_back({r.defline, r.codes});
  return out;
}

void expect_same_hits(const std::vector<SubjectHits>& a, const std::vector<SubjectHits>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].oid, b[i].oid) << what << " list " << i;
    ASSERT_EQ(a[i].hsps.size(), b[i].hsps.size()) << what << " list " << i;
    for (std::size_t k = 0; k < a[i].hsps.size(); ++k) {
      const Hsp& x = a[i].hsps[k];
      const Hsp& y = b[i].hsps[k];
      EXPECT_EQ(x.score, y.score) << what;
      EXPECT_EQ(x.q_start, y.q_start) << what;
      EXPECT_EQ(x.q_end, y.q_end) << what;
      EXPECT_EQ(x.s_start, y.s_start) << what;
      EXPECT_EQ(x.s_end, y.s_end) << what;
      EXPECT_EQ(x.evalue, y.evalue) << what;
      EXPECT_EQ(x.bit_score, y.bit_score) << what;
      EXPECT_EQ(x.script, y.script) << what;
    }
  }
}

TEST(EngineDeterminism, SameAsSingleThreadedSearchForAnyThreadsAndBatch) {
  std::mt19937 rng(61121);
  std::vector<Record> queries, subjects;
  make_data(rng, queries, subjects);
  test::TempDir dir("ws_engine");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(subjects, db, 60);

  std::vector<Residues> subject_residues;
  for (const Record& r : subjects) subject_residues.emplace_back(r.codes);
  const DatabaseTotals totals = database_totals(db, true);
  EXPECT_EQ(totals.sequences, static_cast<std::int64_t>(subjects.size()));
  EXPECT_EQ(totals.min_length, subject_set_min_length(subject_residues));

  for (const int max_targets : {500, 7}) {
    BlastpRunOptions options;
    options.search.max_target_seqs = max_targets;
    options.search.evalue = 100;  // many weak hits: the selection matters
    std::vector<std::vector<SubjectHits>> expected;
    for (const Record& q : queries)
      expected.push_back(blastp_search(q.codes, subject_residues, options.search).hits);
    std::size_t total_hits = 0;
    for (const auto& e : expected) total_hits += e.size();
    if (max_targets == 500)
      EXPECT_GT(total_hits, queries.size() * 10);  // far fewer than 500 per query: no selection limit hit
    else
      EXPECT_EQ(total_hits, queries.size() * 7);  // every query has more candidates than 7: pruning matters
    for (const unsigned threads : {1U, 3U}) {
      for (const std::size_t batch : {std::size_t{1}, std::size_t{2000}, std::size_t{1} << 24}) {
        options.threads = threads;
        options.batch_residues = batch;
        const std::vector<BlastpQuery> qs = to_queries(queries);
        const BlastpRunResult r = blastp_run(qs, db, totals, options);
        ASSERT_EQ(r.queries.size(), queries.size());
        const std::string what =
            fmt::format("max_target_seqs {} threads {} batch {}", max_targets, threads, batch);
        for (std::size_t q = 0; q < queries.size(); ++q) {
          expect_same_hits(r.queries[q].hits, expected[q], what + fmt::format(" query {}", q));
          for (const SubjectHits& h : r.queries[q].hits) {
            ASSERT_TRUE(r.subjects.contains(h.oid)) << what;
            const BlastpSubject& s = r.subjects.at(h.oid);
            EXPECT_EQ(s.defline, subjects[static_cast<std::size_t>(h.oid)].defline);
            EXPECT_EQ(s.residues, subjects[static_cast<std::size_t>(h.oid)].codes);
          }
        }
      }
    }
  }
}

// With composition-based statistics (mode 2, blastp's default) the redo runs speculatively on the pool and
// BLAST's heap is simulated per query batch: results must not depend on threads or batch size.
TEST(EngineDeterminism, CompositionBasedStatsSameForAnyThreadsAndBatch) {
  std::mt19937 rng(90210);
  std::vector<Record> queries, subjects;
  make_data(rng, queries, subjects);
  test::TempDir dir("ws_engine_cbs");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(subjects, db, 60);
  const DatabaseTotals totals = database_totals(db);
  const std::vector<BlastpQuery> qs = to_queries(queries);
  for (const int max_targets : {500, 4}) {
    BlastpRunOptions options;
    options.search.comp_based_stats = 2;
    options.search.max_target_seqs = max_targets;
    options.threads = 1;
    options.batch_residues = std::size_t{1} << 24;
    const BlastpRunResult reference = blastp_run(qs, db, totals, options);
    std::size_t hits = 0;
    for (const BlastpQueryResult& q : reference.queries) {
      hits += q.hits.size();
      ASSERT_EQ(q.adjust_rules.size(), q.hits.size());
    }
    EXPECT_GT(hits, queries.size());
    EXPECT_GT(reference.counts.composition_redone, 0);
    for (const unsigned threads : {2U, 3U}) {
      for (const std::size_t batch : {std::size_t{1}, std::size_t{3000}}) {
        options.threads = threads;
        options.batch_residues = batch;
        const BlastpRunResult r = blastp_run(qs, db, totals, options);
        for (std::size_t q = 0; q < queries.size(); ++q) {
          expect_same_hits(r.queries[q].hits, reference.queries[q].hits,
                           fmt::format("cbs 2 max_target_seqs {} threads {} batch {} query {}", max_targets,
                                       threads, batch, q));
          EXPECT_EQ(r.queries[q].adjust_rules, reference.queries[q].adjust_rules);
        }
      }
    }
  }
}

// -exact_max_target_seqs: no preliminary cut, so the N reported subjects are the best N by E-value (then
// score, then BLAST's oid order) of all subjects: the first N lists of an unlimited run.
TEST(EngineExactMaxTargetSeqs, BestNOfTheWholeDatabase) {
  std::mt19937 rng(5150);
  std::vector<Record> queries, subjects;
  make_data(rng, queries, subjects);
  test::TempDir dir("ws_engine_exact");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(subjects, db, 60);
  const DatabaseTotals totals = database_totals(db);
  const std::vector<BlastpQuery> qs = to_queries(queries);
  for (const int cbs : {0, 2}) {
    BlastpRunOptions all;
    all.threads = 2;
    all.search.evalue = 100;
    all.search.comp_based_stats = cbs;
    all.search.max_target_seqs = 100000;
    const BlastpRunResult unlimited = blastp_run(qs, db, totals, all);
    BlastpRunOptions exact = all;
    exact.search.max_target_seqs = 2;
    exact.search.exact_max_target_seqs = true;
    const BlastpRunResult best = blastp_run(qs, db, totals, exact);
    for (std::size_t q = 0; q < queries.size(); ++q) {
      std::vector<SubjectHits> expected = unlimited.queries[q].hits;
      ASSERT_GT(expected.size(), 2U);
      expected.resize(2);
      expect_same_hits(best.queries[q].hits, expected, fmt::format("cbs {} query {}", cbs, q));
    }
  }
}

// Query splitting (split.hpp): a 20,000-residue query, which BLAST+ searches in the chunks [0, 10051) and
// [9951, 20000), against mutated copies of windows across the chunk boundary and random subjects:
// blastp_run gives blastp_search's hit lists (-comp_based_stats 0 on 1 thread with one-subject batches, 2 on
// 3 threads with one batch), alone and after short queries in its BLAST batch (which cut it elsewhere;
// blastp_search is then compared for the short queries, which lie in the first chunk whole).
TEST(EngineQuerySplitting, LongQuerySameAsSingleQuerySearch) {
  std::mt19937 rng(4242);
  const Alphabet alpha = Alphabet::protein();
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::uniform_int_distribution<int> pct(0, 99);
  const auto random_seq = [&](std::size_t n) {
    std::vector<std::uint8_t> r(n);
    for (auto& c : r) c = *alpha.code(letters[static_cast<std::size_t>(pct(rng) % 20)]);
    return r;
  };
  const std::vector<std::uint8_t> query = random_seq(20000);
  std::vector<Record> subjects;
  for (int i = 0; i < 45; ++i) {
    if (i % 3 == 0) {
      subjects.push_back({fmt::format("r{}", i), random_seq(200 + static_cast<std::size_t>(i) * 7)});
      continue;
    }
    const std::size_t from = 9800 + static_cast<std::size_t>(i) * 5;
    const std::size_t to = std::min<std::size_t>(from + 150 + static_cast<std::size_t>(i) * 4, query.size());
    std::vector<std::uint8_t> m;
    for (std::size_t k = from; k < to; ++k) {
      const int roll = pct(rng);
      if (roll < 1) continue;
      m.push_back(pct(rng) < 20 + (i % 5) * 8 ? static_cast<std::uint8_t>(pct(rng) % 20) : query[k]);
    }
    subjects.push_back({fmt::format("h{} window {}-{}", i, from, to), m});
  }
  test::TempDir dir("ws_engine_split");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(subjects, db, 60);
  std::vector<Residues> subject_residues;
  for (const Record& r : subjects) subject_residues.emplace_back(r.codes);
  const DatabaseTotals totals = database_totals(db, true);

  // Short queries before it in its batch (4 x 2,000 residues: L = 28,000, chunks [0, 14051) and
  // [13951, 28000)): the long query is then cut at 5951 instead.
  std::vector<BlastpQuery> with_short;
  for (int i = 0; i < 4; ++i) with_short.push_back({fmt::format("s{}", i), random_seq(2000)});
  with_short.push_back({"long", query});
  // (-comp_based_stats, threads, batch residues)
  const std::tuple<int, unsigned, std::size_t> runs[] = {{0, 1, 1}, {2, 3, std::size_t{1} << 24}};
  for (const auto& [cbs, threads, batch] : runs) {
    BlastpRunOptions options;
    options.search.comp_based_stats = cbs;
    options.search.evalue = 100;
    options.threads = threads;
    options.batch_residues = batch;
    const std::string what = fmt::format("cbs {} threads {} batch {}", cbs, threads, batch);
    const BlastpResult expected = blastp_search(query, subject_residues, options.search);
    bool across = false;  // some reported HSP spans the overlap of the two chunks
    for (const SubjectHits& h : expected.hits)
      for (const Hsp& x : h.hsps) across = across || (x.q_start < 9951 && x.q_end > 10051);
    EXPECT_TRUE(across) << what;
    EXPECT_GE(expected.hits.size(), 20u) << what;
    const BlastpRunResult r = blastp_run(std::vector<BlastpQuery>{{"long", query}}, db, totals, options);
    expect_same_hits(r.queries[0].hits, expected.hits, what);
    const BlastpRunResult r5 = blastp_run(with_short, db, totals, options);
    for (std::size_t q = 0; q < 4; ++q)
      expect_same_hits(r5.queries[q].hits,
                       blastp_search(with_short[q].residues, subject_residues, options.search).hits,
                       what + fmt::format(" short query {}", q));
    EXPECT_FALSE(r5.queries[4].hits.empty()) << what;
  }
}

TEST(EngineLimits, QueryLongerThanTheDiagonalLimitIsAnInputError) {
  test::TempDir dir("ws_engine_limits");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta({{"s", std::vector<std::uint8_t>(50, 0)}}, db);
  std::vector<BlastpQuery> qs{{"huge query", std::vector<std::uint8_t>((std::size_t{1} << 24) + 1, 0)}};
  try {
    blastp_run(qs, db, database_totals(db), BlastpRunOptions{});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(e.message().find("huge"), std::string::npos) << e.message();
  }
}

TEST(EnginePackedDb, SameResultsAsFasta) {
  std::mt19937 rng(77);
  std::vector<Record> queries, subjects;
  make_data(rng, queries, subjects);
  test::TempDir dir("ws_engine_db");
  const std::string fasta = (dir.path() / "db.fa").string();
  write_fasta(subjects, fasta, 60);
  const std::string packed = (dir.path() / "packed").string();
  make_db(fasta, packed);
  const DatabaseTotals t_fasta = database_totals(fasta);
  const DatabaseTotals t_packed = database_totals(packed);
  EXPECT_EQ(t_fasta.length, t_packed.length);
  EXPECT_EQ(t_fasta.sequences, t_packed.sequences);
  EXPECT_EQ(t_fasta.min_length, 10);
  EXPECT_EQ(t_packed.min_length, 10);
  BlastpRunOptions options;
  options.threads = 2;
  const std::vector<BlastpQuery> qs = to_queries(queries);
  const BlastpRunResult a = blastp_run(qs, fasta, t_fasta, options);
  // A packed database is read by id into contiguous batches, decoded in parallel shares: one batch, batches
  // of one sequence, batches of a few; and with resolve_gpus (called once, no GPUs: the CPU path with
  // GPU-sized batches read ahead).
  for (const std::size_t batch : {std::size_t{1} << 24, std::size_t{1}, std::size_t{700}, std::size_t{0}}) {
    BlastpRunOptions o = options;
    int resolved = 0;
    if (batch == 0) {
      o.resolve_gpus = [&resolved] {
        ++resolved;
        return std::vector<int>{};
      };
      o.gpu_batch_residues = 900;
    } else {
      o.batch_residues = batch;
    }
    const BlastpRunResult b = blastp_run(qs, packed, t_packed, o);
    if (batch == 0) {
      EXPECT_EQ(resolved, 1);
    }
    std::size_t hits = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      expect_same_hits(a.queries[q].hits, b.queries[q].hits, fmt::format("batch {} query {}", batch, q));
      hits += a.queries[q].hits.size();
    }
    EXPECT_GT(hits, 0U);
    for (const auto& [oid, s] : a.subjects) {
      EXPECT_EQ(s.defline, b.subjects.at(oid).defline);
      EXPECT_EQ(s.residues, b.subjects.at(oid).residues);
    }
  }
}

// An error in a late record while the reader thread reads ahead: the run fails with the record's line.
TEST(EngineLimits, BadSubjectReadAheadIsAnInputErrorWithItsLine) {
  std::mt19937 rng(5);
  std::vector<Record> queries, subjects;
  make_data(rng, queries, subjects);
  test::TempDir dir("ws_engine_bad");
  const std::string db = (dir.path() / "db.fa").string();
  write_fasta(subjects, db, 1000);                          // one line per record
  const DatabaseTotals totals = database_totals(db, true);  // of the good records: the bad one is read late
  {
    std::ofstream f(db, std::ios::app);
    f << ">bad\nMKV1LA\n";
  }
  const std::string line = fmt::format("db.fa:{}", 2 * subjects.size() + 2);
  for (const std::size_t batch : {std::size_t{1}, std::size_t{1} << 24}) {
    BlastpRunOptions options;
    options.batch_residues = batch;
    options.resolve_gpus = [] { return std::vector<int>{}; };
    options.gpu_batch_residues = batch;
    try {
      blastp_run(to_queries(queries), db, totals, options);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kFormat) << e.what();
      EXPECT_NE(std::string(e.what()).find(line), std::string::npos)
          << e.what() << " (expected " << line << ")";
    }
  }
}

TEST(EngineTotals, DbAndSubjectModes) {
  test::TempDir dir("ws_engine_totals");
  const std::string path = (dir.path() / "s.fa").string();
  {
    std::ofstream out(path);
    out << ">a\nMKVLAAGIVGLLLAAA\n>b desc\nMKVLAAGIVGLLLAAAGGGGSSSSWWWW\n";
  }
  const DatabaseTotals db = database_totals(path);
  EXPECT_EQ(db.length, 16 + 28);
  EXPECT_EQ(db.sequences, 2);
  EXPECT_EQ(db.min_length, 10);
  EXPECT_EQ(database_totals(path, true).min_length, 16);
  {
    std::ofstream out(path);
    out << ">a\nMKV\n";
  }
  EXPECT_EQ(database_totals(path, true).min_length, 10);
}

bool have_blast_tools() {
  return std::system("blastp -version > /dev/null 2>&1") == 0 &&
         std::system("makeblastdb -version > /dev/null 2>&1") == 0;
}

TEST(EngineBlastpDb, Outfmt6SameAsBlastpDb) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  if (!have_blast_tools()) GTEST_SKIP() << "blastp / makeblastdb not installed";
  const auto queries = read_fasta((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), 12);
  const auto db = read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 1500);
  test::TempDir dir("ws_engine_blastdb");
  const std::string q_path = (dir.path() / "q.fa").string();
  const std::string db_path = (dir.path() / "db.fa").string();
  write_fasta(queries, q_path, 60);
  write_fasta(db, db_path, 60);
  const std::string blast_db = (dir.path() / "blastdb").string();
  const std::string out_path = (dir.path() / "blastp.tsv").string();
  const std::string make =
      "makeblastdb -dbtype prot -in " + db_path + " -out " + blast_db + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0);
  for (const int cbs : {0, 2}) {
    const std::string cmd = "blastp -query " + q_path + " -db " + blast_db + " -comp_based_stats " +
                            std::to_string(cbs) + " -seg no -num_threads 1 -outfmt 6 > " + out_path +
                            " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::stringstream expected;
    expected << std::ifstream(out_path).rdbuf();

    BlastpRunOptions options;
    options.threads = 2;
    options.batch_residues = 100000;
    options.search.comp_based_stats = cbs;
    const std::vector<BlastpQuery> qs = to_queries(queries);
    const TabularWriter writer(parse_tabular_format("6"), ScoringMatrix::builtin("BLOSUM62"),
                               TabularOptions{blast_db, false});
    // The database as the FASTA file it was made from, and as the BLAST+ database itself.
    for (const std::string& path : {db_path, blast_db}) {
      const DatabaseTotals totals = database_totals(path);
      EXPECT_EQ(totals.min_length, 10);
      EXPECT_EQ(totals.sequences, 1500);
      const BlastpRunResult r = blastp_run(qs, path, totals, options);
      std::string actual;
      for (std::size_t q = 0; q < queries.size(); ++q) {
        std::vector<TabularSequence> subjects;
        std::vector<TabularHit> hits;
        for (const SubjectHits& list : r.queries[q].hits) {
          const BlastpSubject& s = r.subjects.at(list.oid);
          subjects.push_back({s.defline, s.residues});
          SubjectHits one = list;
          one.oid = static_cast<int>(subjects.size() - 1);
          for (TabularHit& h : tabular_hits({one})) hits.push_back(std::move(h));
        }
        actual += writer.query({queries[q].defline, queries[q].codes}, subjects, hits);
      }
      EXPECT_FALSE(actual.empty());
      EXPECT_EQ(actual, expected.str()) << path << " -comp_based_stats " << cbs;
    }
  }
}

}  // namespace
}  // namespace warpsearch::blast
