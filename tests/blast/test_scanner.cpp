// test_scanner.cpp: GroupScanner (src/blast/scanner) against SubjectScanner, one query at a time: for every
// query of a group and every subject, the preliminary HSPs (score, ranges, E-value, seed) and the counts
// summed over the group must be identical. Random queries of mixed lengths (including ones shorter than a
// word, and low-complexity ones that SEG masks), planted homologs, SEG off and on, real UniProt proteins.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "blast/scanner.hpp"
#include "blast/search.hpp"
#include "protein_fasta.hpp"
#include "testdata.hpp"
#include "warpsearch/alphabet.hpp"

namespace warpsearch::blast {
namespace {

using Seq = std::vector<std::uint8_t>;

Seq random_seq(std::mt19937& rng, int lo, int hi) {
  const std::string letters = "ACDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWYX";
  const Alphabet alpha = Alphabet::protein();
  Seq s(static_cast<std::size_t>(std::uniform_int_distribution<int>(lo, hi)(rng)));
  for (auto& c : s)
    c = *alpha.code(letters[std::uniform_int_distribution<std::size_t>(0, letters.size() - 1)(rng)]);
  return s;
}

Seq mutated(std::mt19937& rng, const Seq& src) {
  std::uniform_int_distribution<int> pct(0, 99);
  Seq out;
  for (const std::uint8_t c : src) {
    const int roll = pct(rng);
    if (roll < 2) continue;
    if (roll < 4) out.push_back(static_cast<std::uint8_t>(pct(rng) % 20));
    out.push_back(pct(rng) < 35 ? static_cast<std::uint8_t>(pct(rng) % 20) : c);
  }
  return out;
}

void compare_group(const std::vector<Seq>& queries, const std::vector<Seq>& subjects, bool seg) {
  BlastpOptions options;
  options.seg = seg;
  options.evalue = 1000;  // many weak HSPs
  std::int64_t db_length = 0;
  for (const Seq& s : subjects) db_length += static_cast<std::int64_t>(s.size());
  std::vector<QueryContext> contexts;
  contexts.reserve(queries.size());
  for (const Seq& q : queries)
    contexts.push_back(
        QueryContext::create(q, options, db_length, static_cast<std::int64_t>(subjects.size()), 10));
  std::vector<const QueryContext*> searchable;
  for (const QueryContext& c : contexts)
    if (c.searchable()) searchable.push_back(&c);
  ASSERT_GT(searchable.size(), 1U);

  GroupScanner group(searchable);
  std::vector<SubjectScanner> singles;
  singles.reserve(searchable.size());
  for (const QueryContext* c : searchable) singles.emplace_back(*c);
  SearchCounts group_counts, single_counts;
  std::vector<std::pair<std::uint32_t, std::vector<PrelimHsp>>> out;
  std::size_t total = 0;
  for (std::size_t si = 0; si < subjects.size(); ++si) {
    group.run(subjects[si], group_counts, out);
    std::size_t k = 0;
    for (std::uint32_t q = 0; q < searchable.size(); ++q) {
      const std::vector<PrelimHsp> expected = singles[q].run(subjects[si], single_counts);
      if (expected.empty()) continue;
      ASSERT_LT(k, out.size()) << "subject " << si << " query " << q;
      ASSERT_EQ(out[k].first, q) << "subject " << si;
      const std::vector<PrelimHsp>& actual = out[k].second;
      ASSERT_EQ(actual.size(), expected.size()) << "subject " << si << " query " << q;
      for (std::size_t h = 0; h < actual.size(); ++h) {
        EXPECT_EQ(actual[h].hsp.score, expected[h].hsp.score);
        EXPECT_EQ(actual[h].hsp.q_start, expected[h].hsp.q_start);
        EXPECT_EQ(actual[h].hsp.q_end, expected[h].hsp.q_end);
        EXPECT_EQ(actual[h].hsp.s_start, expected[h].hsp.s_start);
        EXPECT_EQ(actual[h].hsp.s_end, expected[h].hsp.s_end);
        EXPECT_EQ(actual[h].hsp.evalue, expected[h].hsp.evalue);
        EXPECT_EQ(actual[h].seed, expected[h].seed);
      }
      total += actual.size();
      ++k;
    }
    EXPECT_EQ(k, out.size()) << "subject " << si << ": group reports a query alone reports nothing for";
  }
  EXPECT_GT(total, 50U);
  EXPECT_EQ(group_counts.word_hits, single_counts.word_hits);
  EXPECT_EQ(group_counts.ungapped_extensions, single_counts.ungapped_extensions);
  EXPECT_EQ(group_counts.ungapped_saved, single_counts.ungapped_saved);
  EXPECT_EQ(group_counts.gapped_extensions, single_counts.gapped_extensions);
  EXPECT_EQ(group_counts.prelim_hsps, single_counts.prelim_hsps);
}

TEST(GroupScanner, SameAsOneQueryAtATimeRandom) {
  std::mt19937 rng(4242);
  std::vector<Seq> queries;
  for (int i = 0; i < 12; ++i) queries.push_back(random_seq(rng, i == 0 ? 2 : 20, i % 4 == 0 ? 900 : 250));
  Seq low(120, *Alphabet::protein().code('Q'));  // low complexity: SEG masks it
  for (std::size_t i = 0; i < low.size(); i += 7) low[i] = *Alphabet::protein().code('P');
  queries.push_back(low);
  std::vector<Seq> subjects;
  for (int i = 0; i < 160; ++i)
    subjects.push_back(i % 2 ? mutated(rng, queries[static_cast<std::size_t>(i) % queries.size()])
                             : random_seq(rng, 5, 700));
  for (const bool seg : {false, true}) compare_group(queries, subjects, seg);
}

TEST(GroupScanner, SameAsOneQueryAtATimeUniProt) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  std::vector<Seq> records;
  for (test::Record& r : test::read_fasta((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), 400))
    records.push_back(std::move(r.codes));
  const std::vector<Seq> queries(records.begin(), records.begin() + 10);
  const std::vector<Seq> subjects(records.begin() + 10, records.end());
  compare_group(queries, subjects, false);
}

}  // namespace
}  // namespace warpsearch::blast
