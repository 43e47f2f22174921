// test_stage_reference.cpp: the decomposition the GPU path of blastp relies on, on the CPU: stage_reference
// (gpu_stage.hpp: scan, two-hit, ungapped, screen) followed by preliminary_hsps for the pairs the screen
// passes on gives exactly SubjectScanner::run's preliminary HSPs for every (query, subject) and the same
// counters: kEmpty pairs have none, pairs too large to screen are passed on.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "blast/gpu_stage.hpp"
#include "blast/search.hpp"
#include "blast_random.hpp"

namespace warpsearch::blast {
namespace {

using Key = std::pair<std::uint32_t, std::uint32_t>;  // (subject, query)

bool same(const std::vector<PrelimHsp>& a, const std::vector<PrelimHsp>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i].hsp == b[i].hsp) || !(a[i].seed == b[i].seed)) return false;
  return true;
}

void check(const test::PlantedSet& set, const BlastpOptions& options, int capacity) {
  std::int64_t db_length = 0;
  for (const auto& s : set.subjects) db_length += static_cast<std::int64_t>(s.size());
  std::vector<QueryContext> contexts;
  contexts.reserve(set.queries.size());
  for (const auto& q : set.queries) {
    QueryContext c =
        QueryContext::create(q, options, db_length, static_cast<std::int64_t>(set.subjects.size()), 10);
    if (c.searchable()) contexts.push_back(std::move(c));
  }
  std::vector<const QueryContext*> ptrs;
  for (const QueryContext& c : contexts) ptrs.push_back(&c);
  const std::vector<Residues> subjects(set.subjects.begin(), set.subjects.end());

  // Expected: one query at a time, the CPU stages.
  std::map<Key, std::vector<PrelimHsp>> expected;
  SearchCounts want;
  for (std::uint32_t q = 0; q < ptrs.size(); ++q) {
    SubjectScanner scanner(*ptrs[q]);
    for (std::uint32_t s = 0; s < subjects.size(); ++s) {
      std::vector<PrelimHsp> p = scanner.run(subjects[s], want);
      if (!p.empty()) expected.emplace(Key{s, q}, std::move(p));
    }
  }

  const StageOutput out = stage_reference(ptrs, subjects, false, capacity);
  std::map<Key, std::vector<PrelimHsp>> got;
  SearchCounts have = out.counts;
  std::size_t full = 0, many = 0;
  for (const StagePair& pair : out.pairs) {
    if (pair.screen != ScreenResult::kFull) continue;
    ++full;
    many += pair.count > kStageScreenMaxHsps;
    const std::vector<UngappedHsp> hsps(out.hsps.begin() + pair.first,
                                        out.hsps.begin() + pair.first + pair.count);
    const std::vector<PrelimHsp> list =
        preliminary_hsps(*ptrs[pair.query], subjects[pair.subject], hsps, have);
    if (!list.empty()) got.emplace(Key{pair.subject, pair.query}, list);
  }
  EXPECT_GT(full, 0u);
  EXPECT_LT(full, out.pairs.size());
  EXPECT_GT(many, 0u);  // a pair with more HSPs than the GPU screens
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [key, list] : expected) {
    ASSERT_TRUE(got.contains(key)) << "subject " << key.first << " query " << key.second;
    EXPECT_TRUE(same(got.at(key), list)) << "subject " << key.first << " query " << key.second;
  }
  EXPECT_EQ(have.word_hits, want.word_hits);
  EXPECT_EQ(have.ungapped_extensions, want.ungapped_extensions);
  EXPECT_EQ(have.ungapped_saved, want.ungapped_saved);
  EXPECT_EQ(have.gapped_extensions, want.gapped_extensions);
  EXPECT_EQ(have.prelim_hsps, want.prelim_hsps);
  EXPECT_EQ(have.redone_subjects, want.redone_subjects);
}

TEST(StageReference, DecompositionEqualsSubjectScanner) {
  const test::PlantedSet set = test::planted_set(3, 8, 500);
  check(set, BlastpOptions{}, kStageScreenCapacity);
  BlastpOptions strict;
  strict.evalue = 1e-3;
  check(set, strict, kStageScreenCapacity);
}

TEST(StageReference, SmallColumnsOnlyMoveWorkToTheCpu) {
  // With 64-cell columns many DPs do not fit: the screen passes more pairs on, and the results stay the same.
  const test::PlantedSet set = test::planted_set(9, 6, 300);
  check(set, BlastpOptions{}, 64);
}

}  // namespace
}  // namespace warpsearch::blast
