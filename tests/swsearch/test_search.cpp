// test_search.cpp: the swsearch driver (swsearch::search, include/warpsearch/swsearch.hpp) against a brute
// force built from the definitions: every query against every database sequence with
// sw::reference::pass, ranked by score (ties by database id), cut to `top`, E-values and bit scores from
// Statistics, the E-value filter, and every alignment equal to sw::reference::align_pair bit for bit
// (positives / gap opens / gaps recounted from its CIGAR here).
//   - random protein and DNA databases with empty sequences, relatives of the queries and exact
//     duplicates (ties across batch boundaries);
//   - the same results for every batch size (one sequence per batch .. everything in one), thread count,
//     FASTA vs packed database, with or without -Z and with --noalign;
//   - real proteins: DB20k records as queries against a DB20k subset; the standard queries
//     (../shared/data/sw_queries20.fasta) against a DB20k subset with parasail (sw_striped_32, open =
//     our open + extend) as the independent oracle of every database score when WARPSEARCH_HAVE_PARASAIL;
//   - Summary fields, callback order, --timing lines; bad options and inputs (kinds, file:line).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw/simd/pass.hpp"
#include "sw_test_inputs.hpp"
#include "swsearch/stats.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/db.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/gpu.hpp"
#include "warpsearch/scoring.hpp"
#include "warpsearch/swsearch.hpp"

#ifdef WARPSEARCH_HAVE_PARASAIL
#include <parasail.h>
#endif

namespace warpsearch::swsearch {
namespace detail {
// Defined in src/swsearch/search.cpp: search() on `engines` CPU engines, batches split among them as among
// GPUs (the multi-GPU path, testable without GPUs).
Summary search_with_cpu_engines(const std::string& query_path, const std::string& db_path,
                                const Options& options, const QueryCallback& on_query, std::size_t engines);
}  // namespace detail

namespace {

using sw::test::Seq;
using test::TempDir;

struct Record {
  std::string name, description;
  Seq residues;
};

std::string letters(const Seq& s, AlphabetKind kind) {
  const Alphabet a(kind);
  std::string out;
  for (const std::uint8_t c : s) out += a.symbol(c);
  return out;
}

void write_fasta(const std::string& path, const std::vector<Record>& records, AlphabetKind kind) {
  std::string text;
  for (const Record& r : records) {
    text += ">" + r.name + (r.description.empty() ? "" : " " + r.description) + "\n";
    const std::string l = letters(r.residues, kind);
    for (std::size_t i = 0; i < l.size(); i += 60) text += l.substr(i, 60) + "\n";
  }
  test::write_file(path, text);
}

std::vector<Record> read_records(const std::string& path, std::size_t max_records, std::size_t skip = 0) {
  ReaderOptions options;
  options.alphabet = AlphabetKind::kProtein;
  SequenceReader reader(path, options);
  std::vector<Record> out;
  Sequence seq;
  for (std::size_t k = 0; out.size() < max_records && reader.next(seq); ++k)
    if (k >= skip) out.push_back({seq.name, seq.description, seq.residues});
  return out;
}

std::vector<QueryResult> run(const std::string& queries, const std::string& db, const Options& options,
                             Summary* summary = nullptr) {
  std::vector<QueryResult> out;
  const Summary s = search(queries, db, options, [&](const QueryResult& r) { out.push_back(r); });
  if (summary != nullptr) *summary = s;
  return out;
}

// The CIGAR's positive pairs, gap runs and gap columns, recounted.
void count_cigar(const sw::PassModel& model, const Seq& q, const Seq& t, const align::Result& r,
                 Hit& expected) {
  std::uint32_t qi = r.query_begin, ti = r.target_begin;
  std::string number;
  for (const char ch : r.cigar) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      number += ch;
      continue;
    }
    const auto n = static_cast<std::uint32_t>(std::stoul(number));
    number.clear();
    if (ch == 'I' || ch == 'D') {
      ++expected.gap_opens;
      expected.gaps += n;
      (ch == 'I' ? qi : ti) += n;
      continue;
    }
    for (std::uint32_t k = 0; k < n; ++k, ++qi, ++ti)
      expected.positives += model.score(q[qi], t[ti]) > 0 ? 1u : 0u;
  }
}

// The brute-force expectation of search() for these records.
std::vector<QueryResult> brute_force(const std::vector<Record>& queries, const std::vector<Record>& db,
                                     const Options& options) {
  const sw::PassModel model = sw::PassModel::make(options.matrix, options.gaps, sw::Mode::kLocal);
  const Statistics stats = Statistics::make(options.matrix, options.gaps);
  SearchSpace space{db.size(), 0};
  for (const Record& r : db) space.residues += r.residues.size();
  if (options.Z) space.sequences = *options.Z;
  std::vector<QueryResult> out;
  for (const Record& q : queries) {
    std::vector<std::pair<std::int32_t, std::size_t>> ranked;
    for (std::size_t k = 0; k < db.size(); ++k) {
      const std::int32_t s =
          db[k].residues.empty() ? 0 : sw::reference::pass(model, q.residues, db[k].residues).score;
      if (s > 0) ranked.emplace_back(s, k);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (ranked.size() > options.top) ranked.resize(options.top);
    QueryResult r{q.name, q.description, q.residues, {}};
    for (const auto& [score, k] : ranked) {
      const auto qlen = static_cast<std::uint32_t>(q.residues.size());
      const auto tlen = static_cast<std::uint32_t>(db[k].residues.size());
      Hit h;
      h.target_id = k;
      h.target_name = db[k].name;
      h.target_description = db[k].description;
      h.target_length = tlen;
      h.score = score;
      h.bits = stats.bits(score, qlen, tlen);
      h.evalue = stats.evalue(score, qlen, tlen, space);
      if (!(h.evalue <= options.evalue)) continue;
      if (options.alignments) {
        h.alignment = sw::reference::align_pair(model, q.residues, db[k].residues, true);
        count_cigar(model, q.residues, db[k].residues, *h.alignment, h);
      }
      r.hits.push_back(h);
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Field by field, with the first difference named.
void expect_same(const std::vector<QueryResult>& got, const std::vector<QueryResult>& want,
                 const std::string& label) {
  SCOPED_TRACE(label);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t q = 0; q < got.size(); ++q) {
    SCOPED_TRACE("query " + want[q].name);
    EXPECT_EQ(got[q].name, want[q].name);
    EXPECT_EQ(got[q].description, want[q].description);
    EXPECT_EQ(got[q].residues, want[q].residues);
    ASSERT_EQ(got[q].hits.size(), want[q].hits.size());
    for (std::size_t k = 0; k < got[q].hits.size(); ++k) {
      const Hit &a = got[q].hits[k], &b = want[q].hits[k];
      SCOPED_TRACE("hit " + std::to_string(k) + " " + b.target_name);
      ASSERT_EQ(a.target_id, b.target_id);
      EXPECT_EQ(a.target_name, b.target_name);
      EXPECT_EQ(a.target_description, b.target_description);
      EXPECT_EQ(a.target_length, b.target_length);
      EXPECT_EQ(a.score, b.score);
      EXPECT_EQ(a.bits, b.bits);
      EXPECT_EQ(a.evalue, b.evalue);
      ASSERT_EQ(a.alignment.has_value(), b.alignment.has_value());
      if (a.alignment) {
        EXPECT_EQ(*a.alignment, *b.alignment);
      }
      EXPECT_EQ(a.positives, b.positives);
      EXPECT_EQ(a.gap_opens, b.gap_opens);
      EXPECT_EQ(a.gaps, b.gaps);
    }
  }
}

// Random database: unrelated sequences, relatives of the queries, empty sequences, exact duplicates.
std::vector<Record> random_db(std::mt19937_64& rng, const std::vector<Record>& queries,
                              const Alphabet& alphabet, std::size_t n, std::size_t max_len) {
  std::vector<Record> db;
  std::uniform_int_distribution<std::size_t> len(1, max_len), pick(0, queries.size() - 1);
  for (std::size_t k = 0; k < n; ++k) {
    Record r{"t" + std::to_string(k), k % 3 == 0 ? "" : "description of t" + std::to_string(k), {}};
    if (k % 17 == 5) {
      r.residues.clear();  // empty sequence
    } else if (k % 5 == 0) {
      r.residues = sw::test::mutate(rng, queries[pick(rng)].residues, alphabet, 25, 6);
    } else if (k % 11 == 3 && k > 20) {
      r.residues = db[k - 20].residues;  // duplicate of an earlier sequence: ties
    } else {
      r.residues = sw::test::random_seq(rng, len(rng), alphabet);
    }
    db.push_back(std::move(r));
  }
  return db;
}

std::vector<Record> random_queries(std::mt19937_64& rng, const Alphabet& alphabet, std::size_t n) {
  std::vector<Record> q;
  std::uniform_int_distribution<std::size_t> len(1, 150);
  for (std::size_t k = 0; k < n; ++k)
    q.push_back({fmt::format("q{}", k), fmt::format("query {}", k),
                 sw::test::random_seq(rng, k == 0 ? 1 : len(rng), alphabet)});
  return q;
}

TEST(SwsearchSearch, RandomProteinEqualsBruteForceForEveryBatchSizeAndThreadCount) {
  std::mt19937_64 rng(0x5e01);
  const Alphabet alphabet = Alphabet::protein();
  const std::vector<Record> queries = random_queries(rng, alphabet, 4);
  std::vector<Record> db = random_db(rng, queries, alphabet, 160, 180);
  // A tie group larger than `top`, spread over the database: the lowest ids must win.
  for (const std::size_t k : {150u, 90u, 30u, 120u, 60u, 10u})
    db[k].residues = sw::test::mutate(rng, queries[1].residues, alphabet, 0, 0);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.top = 5;
  options.evalue = 1e300;  // keep every candidate: the E-value is tested separately below
  const std::vector<QueryResult> want = brute_force(queries, db, options);
  ASSERT_EQ(want[1].hits.size(), 5u);
  EXPECT_EQ(want[1].hits[0].target_id, 10u);
  EXPECT_EQ(want[1].hits[4].target_id, 120u);
  std::uint64_t residues = 0;
  for (const Record& r : db) residues += r.residues.size();
  for (const std::uint64_t batch : {std::uint64_t{1}, std::uint64_t{700}, std::uint64_t{0}}) {
    for (const unsigned threads : {1u, 2u}) {
      options.batch_residues = batch;
      options.threads = threads;
      Summary summary;
      const std::vector<QueryResult> got = run(dir / "q.fa", dir / "db.fa", options, &summary);
      expect_same(got, want, "batch " + std::to_string(batch) + " threads " + std::to_string(threads));
      EXPECT_EQ(summary.queries, queries.size());
      EXPECT_EQ(summary.db_sequences, db.size());
      EXPECT_EQ(summary.db_residues, residues);
      std::uint64_t cells = 0;
      for (const Record& q : queries) cells += q.residues.size() * residues;
      EXPECT_EQ(summary.cells, cells);
      EXPECT_EQ(summary.overflow_rescored, 0u);
      // A sequence joins the current batch when the batch is empty or stays within the limit.
      std::uint64_t expected_batches = 0, in_batch = 0, limit = batch == 0 ? residues : batch;
      for (std::size_t k = 0; k < db.size(); ++k) {
        const std::uint64_t len = db[k].residues.size();
        if (k == 0 || in_batch + len > limit) {
          ++expected_batches;
          in_batch = 0;
        }
        in_batch += len;
      }
      EXPECT_EQ(summary.batches, expected_batches);
      EXPECT_GT(summary.batches, batch == 0 ? 0u : 10u);
      ASSERT_EQ(summary.engines.size(), 1u);
      EXPECT_NE(summary.engines[0].find("CPU, " + std::to_string(threads) + " thread"), std::string::npos);
    }
  }
}

// The multi-engine path (each batch split among engines by residues, as among GPUs) gives the same hits,
// also when a batch has fewer sequences than engines.
TEST(SwsearchSearch, SeveralEnginesEqualBruteForce) {
  std::mt19937_64 rng(0x5e06);
  const Alphabet alphabet = Alphabet::protein();
  const std::vector<Record> queries = random_queries(rng, alphabet, 3);
  const std::vector<Record> db = random_db(rng, queries, alphabet, 90, 160);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.top = 7;
  options.evalue = 1e300;
  options.threads = 2;
  const std::vector<QueryResult> want = brute_force(queries, db, options);
  for (const std::uint64_t batch : {std::uint64_t{1}, std::uint64_t{400}, std::uint64_t{0}}) {
    for (const std::size_t engines : {std::size_t{2}, std::size_t{3}}) {
      options.batch_residues = batch;
      std::vector<QueryResult> got;
      const Summary summary = detail::search_with_cpu_engines(
          dir / "q.fa", dir / "db.fa", options, [&](const QueryResult& r) { got.push_back(r); }, engines);
      expect_same(got, want, "batch " + std::to_string(batch) + " engines " + std::to_string(engines));
      EXPECT_EQ(summary.engines.size(), engines);
      EXPECT_EQ(summary.db_sequences, db.size());
    }
  }
}

TEST(SwsearchSearch, EvalueFilterZAndNoAlign) {
  std::mt19937_64 rng(0x5e02);
  const Alphabet alphabet = Alphabet::protein();
  const std::vector<Record> queries = random_queries(rng, alphabet, 3);
  const std::vector<Record> db = random_db(rng, queries, alphabet, 120, 200);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.top = 30;
  options.evalue = 1.0;
  options.batch_residues = 2000;
  std::vector<QueryResult> want = brute_force(queries, db, options);
  expect_same(run(dir / "q.fa", dir / "db.fa", options), want, "E 1");
  // The filter cuts something and keeps something (the relatives), so it is really exercised.
  std::size_t kept = 0;
  for (const QueryResult& r : want) kept += r.hits.size();
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 3u * options.top);
  for (const QueryResult& r : want)
    for (const Hit& h : r.hits) EXPECT_LE(h.evalue, 1.0);
  options.Z = 1000000;
  want = brute_force(queries, db, options);
  expect_same(run(dir / "q.fa", dir / "db.fa", options), want, "Z 10^6");
  options.alignments = false;
  want = brute_force(queries, db, options);
  const std::vector<QueryResult> got = run(dir / "q.fa", dir / "db.fa", options);
  expect_same(got, want, "noalign");
  for (const QueryResult& r : got)
    for (const Hit& h : r.hits) EXPECT_FALSE(h.alignment.has_value());
}

TEST(SwsearchSearch, RandomDnaEqualsBruteForce) {
  std::mt19937_64 rng(0x5e03);
  const Alphabet alphabet = Alphabet::dna();
  const std::vector<Record> queries = random_queries(rng, alphabet, 3);
  const std::vector<Record> db = random_db(rng, queries, alphabet, 100, 300);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kDna);
  write_fasta(dir / "db.fa", db, AlphabetKind::kDna);
  Options options;
  options.matrix = ScoringMatrix::dna(5, -4);
  options.gaps = GapCosts{12, 4};
  options.top = 8;
  options.evalue = 1e300;
  options.batch_residues = 3000;
  expect_same(run(dir / "q.fa", dir / "db.fa", options), brute_force(queries, db, options), "dna +5/-4 12/4");
  // A protein matrix on DNA inputs (and the reverse) is refused.
  options.matrix = ScoringMatrix::builtin("BLOSUM62");
  options.gaps = GapCosts{11, 1};
  try {
    run(dir / "q.fa", dir / "db.fa", options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
  }
}

TEST(SwsearchSearch, PackedDatabaseGivesTheFastaResults) {
  std::mt19937_64 rng(0x5e04);
  const Alphabet alphabet = Alphabet::protein();
  const std::vector<Record> queries = random_queries(rng, alphabet, 2);
  std::vector<Record> db = random_db(rng, queries, alphabet, 80, 150);
  for (Record& r : db)
    if (r.residues.empty()) r.residues.push_back(0);  // make_db refuses zero-length records
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  make_db(dir / "db.fa", dir / "packed");
  Options options;
  options.top = 10;
  options.evalue = 1e300;
  options.batch_residues = 1500;
  const std::vector<QueryResult> want = brute_force(queries, db, options);
  expect_same(run(dir / "q.fa", dir / "db.fa", options), want, "fasta");
  expect_same(run(dir / "q.fa", dir / "packed", options), want, "packed");
}

TEST(SwsearchSearch, RealProteinsEqualBruteForce) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::string path = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const std::vector<Record> db = read_records(path, 150);
  // Queries: three database records (their own sequence is the best hit) and one from outside the subset.
  std::vector<Record> queries{db[3], db[77], db[140]};
  queries.push_back(read_records(path, 1, 5000).at(0));
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.top = 12;
  options.threads = 2;
  options.batch_residues = 10000;
  const std::vector<QueryResult> want = brute_force(queries, db, options);
  const std::vector<QueryResult> got = run(dir / "q.fa", dir / "db.fa", options);
  expect_same(got, want, "DB20k");
  ASSERT_FALSE(got[0].hits.empty());
  EXPECT_EQ(got[0].hits[0].target_id, 3u);
  EXPECT_EQ(got[0].hits[0].alignment->cigar, std::to_string(db[3].residues.size()) + "=");
}

// Every database score of the standard queries against a DB20k subset from parasail: the reported hits
// must be exactly parasail's top scores (ties by id) with E-value <= 10.
TEST(SwsearchSearch, StandardQueriesAgainstParasail) {
#ifndef WARPSEARCH_HAVE_PARASAIL
  GTEST_SKIP() << "built without parasail";
#else
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  const std::filesystem::path queries_path =
      test::source_dir() / ".." / "shared" / "data" / "sw_queries20.fasta";
  if (!std::filesystem::exists(queries_path)) GTEST_SKIP() << queries_path << " not found";
  std::vector<Record> all_queries = read_records(queries_path.string(), 20);
  std::sort(all_queries.begin(), all_queries.end(),
            [](const Record& a, const Record& b) { return a.residues.size() < b.residues.size(); });
  const std::vector<Record> queries(all_queries.begin(), all_queries.begin() + 3);  // 144, 189, 222 aa
  const std::vector<Record> db =
      read_records((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 1500);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.top = 25;
  options.threads = 2;
  const std::vector<QueryResult> got = run(dir / "q.fa", dir / "db.fa", options);
  // parasail over our own table (open = ours + extend).
  const ScoringMatrix& m = options.matrix;
  const std::string symbols(Alphabet(m.alphabet()).symbols());
  parasail_matrix_t* pm = parasail_matrix_create(symbols.c_str(), 0, 0);
  for (int a = 0; a < m.size(); ++a)
    for (int b = 0; b < m.size(); ++b)
      parasail_matrix_set_value(pm, a, b,
                                m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
  const Statistics stats = Statistics::make(options.matrix, options.gaps);
  SearchSpace space{db.size(), 0};
  for (const Record& r : db) space.residues += r.residues.size();
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::string ql = letters(queries[q].residues, AlphabetKind::kProtein);
    std::vector<std::pair<int, std::size_t>> ranked;
    for (std::size_t k = 0; k < db.size(); ++k) {
      const std::string tl = letters(db[k].residues, AlphabetKind::kProtein);
      parasail_result_t* r = parasail_sw_striped_32(
          ql.c_str(), static_cast<int>(ql.size()), tl.c_str(), static_cast<int>(tl.size()),
          options.gaps.open + options.gaps.extend, options.gaps.extend, pm);
      if (r->score > 0) ranked.emplace_back(r->score, k);
      parasail_result_free(r);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    ranked.resize(std::min<std::size_t>(ranked.size(), options.top));
    std::vector<std::pair<int, std::size_t>> expected;
    for (const auto& [score, k] : ranked)
      if (stats.evalue(score, static_cast<std::uint32_t>(ql.size()),
                       static_cast<std::uint32_t>(db[k].residues.size()), space) <= options.evalue)
        expected.emplace_back(score, k);
    std::vector<std::pair<int, std::size_t>> reported;
    for (const Hit& h : got[q].hits) {
      reported.emplace_back(h.score, h.target_id);
      EXPECT_EQ(h.alignment->score, h.score);
    }
    EXPECT_EQ(reported, expected) << queries[q].name;
    EXPECT_FALSE(expected.empty()) << queries[q].name;
  }
  parasail_matrix_free(pm);
#endif
}

TEST(SwsearchSearch, CallbackOrderAndTimingLines) {
  std::mt19937_64 rng(0x5e05);
  const std::vector<Record> queries = random_queries(rng, Alphabet::protein(), 5);
  const std::vector<Record> db = random_db(rng, queries, Alphabet::protein(), 40, 100);
  TempDir dir;
  write_fasta(dir / "q.fa", queries, AlphabetKind::kProtein);
  write_fasta(dir / "db.fa", db, AlphabetKind::kProtein);
  Options options;
  options.timing = true;
  options.batch_residues = 1000;
  testing::internal::CaptureStderr();
  const std::vector<QueryResult> got = run(dir / "q.fa", dir / "db.fa", options);
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(got.size(), queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q) EXPECT_EQ(got[q].name, queries[q].name);
  EXPECT_NE(err.find("swsearch timing: batch 1:"), std::string::npos) << err;
  EXPECT_NE(err.find("swsearch timing: query 5 (q4,"), std::string::npos) << err;
  EXPECT_NE(err.find("GCUPS"), std::string::npos) << err;
}

ErrorKind error_kind(const std::string& queries, const std::string& db, const Options& options,
                     std::string* what = nullptr) {
  try {
    run(queries, db, options);
  } catch (const Error& e) {
    if (what != nullptr) *what = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::kInternal;
}

TEST(SwsearchSearch, BadOptionsAndInputs) {
  TempDir dir;
  test::write_file(dir / "q.fa", ">q1\nMKVLAAGIVGLLLAW\n");
  test::write_file(dir / "db.fa", ">t1 one\nMKVLAAGIVALLLAW\n>t2\nPPPPPPPP\n");
  test::write_file(dir / "empty.fa", "");
  test::write_file(dir / "emptyq.fa", ">q1\nMKVLA\n>q2 nothing here\n\n>q3\nMKV\n");
  test::write_file(dir / "bad.fa", ">q1\nMKV1LA\n");
  Options ok;
  EXPECT_EQ(run(dir / "q.fa", dir / "db.fa", ok).at(0).hits.at(0).target_name, "t1");

  Options o = ok;
  o.top = 0;
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o = ok;
  o.evalue = 0;
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o.evalue = std::nan("");
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o = ok;
  o.gaps = GapCosts{-1, 1};
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o.gaps = GapCosts{0, 0};
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o = ok;
  o.Z = 0;
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  o = ok;
  o.gpus = {0, 0};
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kUsage);
  if (!gpu_support_compiled()) {
    o.gpus = {0};
    EXPECT_EQ(error_kind(dir / "q.fa", dir / "db.fa", o), ErrorKind::kGpu);
  }

  std::string what;
  EXPECT_EQ(error_kind(dir / "missing.fa", dir / "db.fa", ok), ErrorKind::kIo);
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "missing.fa", ok), ErrorKind::kIo);
  EXPECT_EQ(error_kind(dir / "empty.fa", dir / "db.fa", ok, &what), ErrorKind::kInput);
  EXPECT_EQ(error_kind(dir / "q.fa", dir / "empty.fa", ok, &what), ErrorKind::kInput);
  EXPECT_NE(what.find("empty.fa"), std::string::npos) << what;
  EXPECT_EQ(error_kind(dir / "emptyq.fa", dir / "db.fa", ok, &what), ErrorKind::kInput);
  EXPECT_NE(what.find("emptyq.fa:3:"), std::string::npos) << what;
  EXPECT_NE(what.find("q2"), std::string::npos) << what;
  EXPECT_EQ(error_kind(dir / "bad.fa", dir / "db.fa", ok), ErrorKind::kFormat);
  // A malformed database record after valid ones: an error, and no query was reported.
  test::write_file(dir / "baddb.fa", ">t1\nMKVLAAGIVALLLAW\n>t2\nMK;V\n");
  std::size_t reported = 0;
  EXPECT_THROW(search(dir / "q.fa", dir / "baddb.fa", ok, [&](const QueryResult&) { ++reported; }), Error);
  EXPECT_EQ(reported, 0u);
}

}  // namespace
}  // namespace warpsearch::swsearch
