// test_sw_wire.cpp: swsearch hits as MPI messages (src/dist/sw_wire.hpp). Real hits of a search of three
// globins against globins45 (with alignments: coordinates, CIGAR, target residues, counts; and without)
// round-trip field by field, several in one message; a truncated message is a protocol error (kInternal).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "dist/bytes.hpp"
#include "dist/sw_wire.hpp"
#include "testdata.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/swsearch.hpp"

namespace warpsearch::dist {
namespace {

std::vector<swsearch::Hit> globin_hits(bool alignments) {
  const std::string db = (test::source_dir() / "data" / "globins45.fa").string();
  swsearch::Options options;
  options.alignments = alignments;
  options.threads = 2;
  options.top = 20;
  std::vector<swsearch::Hit> hits;
  swsearch::search(db, db, options, [&](const swsearch::QueryResult& q) {
    if (hits.size() < 60) hits.insert(hits.end(), q.hits.begin(), q.hits.end());
  });
  return hits;
}

void expect_same(const swsearch::Hit& a, const swsearch::Hit& b) {
  EXPECT_EQ(a.target_id, b.target_id);
  EXPECT_EQ(a.target_name, b.target_name);
  EXPECT_EQ(a.target_description, b.target_description);
  EXPECT_EQ(a.target_length, b.target_length);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.bits), std::bit_cast<std::uint64_t>(b.bits));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.evalue), std::bit_cast<std::uint64_t>(b.evalue));
  EXPECT_EQ(a.alignment, b.alignment);
  EXPECT_EQ(a.target_residues, b.target_residues);
  EXPECT_EQ(a.positives, b.positives);
  EXPECT_EQ(a.gap_opens, b.gap_opens);
  EXPECT_EQ(a.gaps, b.gaps);
}

TEST(SwWire, RealHitsRoundTrip) {
  for (const bool alignments : {true, false}) {
    const std::vector<swsearch::Hit> hits = globin_hits(alignments);
    ASSERT_GE(hits.size(), 40u);
    bool gapped = false;
    for (const swsearch::Hit& h : hits) {
      EXPECT_EQ(h.alignment.has_value(), alignments);
      gapped = gapped || h.gaps > 0;
    }
    EXPECT_EQ(gapped, alignments);  // some alignments have gaps (none are computed without alignments)
    ByteWriter w;
    for (const swsearch::Hit& h : hits) write_sw_hit(w, h);
    const Bytes message = w.take();
    ByteReader r(message);
    for (const swsearch::Hit& h : hits) expect_same(h, read_sw_hit(r));
    r.expect_done();
  }
}

TEST(SwWire, TruncatedHitIsAProtocolError) {
  const std::vector<swsearch::Hit> hits = globin_hits(true);
  ASSERT_FALSE(hits.empty());
  ByteWriter w;
  write_sw_hit(w, hits.front());
  Bytes message = w.take();
  message.resize(message.size() - 3);
  ByteReader r(message);
  try {
    read_sw_hit(r);
    FAIL() << "a truncated hit was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

}  // namespace
}  // namespace warpsearch::dist
