// test_align_split.cpp: the distributed `warpsearch align` (src/dist/align_wire.hpp). The cell-balanced
// split of a chunk's pairs: contiguous ranges covering every pair once, each pair in the part holding the
// midpoint of its weight (cells + 1), parts within one pair of the mean, empty parts for more parts than
// pairs. Result lists round-trip exactly as messages; a truncated or overlong message is kInternal. And the
// point of it all: aligning the parts separately and concatenating gives the whole batch's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dist/align_wire.hpp"
#include "dist/bytes.hpp"
#include "testdata.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::dist {
namespace {

__extension__ typedef unsigned __int128 Wide;

// The rule of align_wire.hpp, computed directly: the part of pair i.
std::vector<int> parts_by_rule(std::span<const std::uint64_t> cells, int parts) {
  Wide total = 0;
  for (const std::uint64_t c : cells) total += c + 1;
  std::vector<int> part;
  Wide prefix = 0;
  for (const std::uint64_t c : cells) {
    const Wide w = c + 1;
    const Wide p = (2 * prefix + w) * static_cast<unsigned>(parts) / (2 * total);
    part.push_back(static_cast<int>(std::min<Wide>(p, static_cast<unsigned>(parts - 1))));
    prefix += w;
  }
  return part;
}

// Checks the invariants of bounds for these cells and returns them.
std::vector<std::uint64_t> checked_split(const std::vector<std::uint64_t>& cells, int parts) {
  const std::vector<std::uint64_t> bounds = align_split(cells, parts);
  EXPECT_EQ(bounds.size(), static_cast<std::size_t>(parts) + 1);
  if (bounds.size() != static_cast<std::size_t>(parts) + 1) return bounds;
  EXPECT_EQ(bounds.front(), 0u);
  EXPECT_EQ(bounds.back(), cells.size());
  EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end()));
  const std::vector<int> expected = parts_by_rule(cells, parts);
  std::uint64_t total = 0, heaviest = 0;
  for (const std::uint64_t c : cells) {
    total += c + 1;
    heaviest = std::max(heaviest, c + 1);
  }
  for (int p = 0; p < parts; ++p) {
    std::uint64_t weight = 0;
    for (std::uint64_t i = bounds[static_cast<std::size_t>(p)]; i < bounds[static_cast<std::size_t>(p) + 1];
         ++i) {
      EXPECT_EQ(expected[i], p) << "pair " << i;
      weight += cells[i] + 1;
    }
    // Within one pair of the mean (both ways).
    const double mean = static_cast<double>(total) / parts;
    EXPECT_LE(static_cast<double>(weight), mean + static_cast<double>(heaviest)) << "part " << p;
    EXPECT_GE(static_cast<double>(weight) + static_cast<double>(heaviest), mean) << "part " << p;
  }
  return bounds;
}

TEST(AlignSplit, OnePartHoldsEverything) {
  EXPECT_EQ(align_split(std::vector<std::uint64_t>{5, 0, 7}, 1), (std::vector<std::uint64_t>{0, 3}));
}

TEST(AlignSplit, NoPairs) {
  EXPECT_EQ(align_split(std::vector<std::uint64_t>{}, 3), (std::vector<std::uint64_t>{0, 0, 0, 0}));
}

TEST(AlignSplit, EqualPairsSplitEvenly) {
  EXPECT_EQ(checked_split(std::vector<std::uint64_t>(12, 100), 3), (std::vector<std::uint64_t>{0, 4, 8, 12}));
  // Ten pairs in four parts: 2, 3, 2, 3 (each pair where the midpoint of its weight falls).
  EXPECT_EQ(checked_split(std::vector<std::uint64_t>(10, 9), 4),
            (std::vector<std::uint64_t>{0, 2, 5, 7, 10}));
}

TEST(AlignSplit, BalancesCellsNotPairs) {
  // One pair as heavy as the eight light ones together: it is a part of its own.
  const std::vector<std::uint64_t> cells{99, 99, 99, 99, 99, 99, 99, 99, 799};
  EXPECT_EQ(checked_split(cells, 2), (std::vector<std::uint64_t>{0, 8, 9}));
  // Heavy first.
  const std::vector<std::uint64_t> heavy_first{799, 99, 99, 99, 99, 99, 99, 99, 99};
  EXPECT_EQ(checked_split(heavy_first, 2), (std::vector<std::uint64_t>{0, 1, 9}));
}

TEST(AlignSplit, MorePartsThanPairs) {
  const std::vector<std::uint64_t> bounds = checked_split({10, 20}, 5);
  std::size_t non_empty = 0;
  for (std::size_t p = 0; p + 1 < bounds.size(); ++p) non_empty += bounds[p + 1] > bounds[p] ? 1 : 0;
  EXPECT_EQ(non_empty, 2u);
  checked_split({0}, 4);
  checked_split({0, 0, 0}, 7);
}

TEST(AlignSplit, OneHugePairLeavesPartsEmpty) {
  const std::vector<std::uint64_t> bounds = checked_split({1, 1000000, 1}, 4);
  // The huge pair's midpoint is in part 2: part 1 is empty.
  EXPECT_EQ(bounds, (std::vector<std::uint64_t>{0, 1, 1, 2, 3}));
}

TEST(AlignSplit, RandomChunksFollowTheRule) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint64_t> cells(rng() % 60);
    const int shape = trial % 3;
    for (std::uint64_t& c : cells) {
      const std::uint64_t q = rng() % 500, t = rng() % 500;
      c = shape == 0 ? q * t : shape == 1 ? (rng() % 10 == 0 ? q * t * 1000 : q) : 0;
    }
    checked_split(cells, 1 + static_cast<int>(rng() % 9));
  }
}

TEST(AlignSplit, LargeCellCounts) {
  const std::uint64_t big = std::uint64_t{1} << 60;
  checked_split({big, big, big, 5}, 3);
}

TEST(AlignSplit, RejectsZeroParts) {
  try {
    align_split(std::vector<std::uint64_t>{1}, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

align::Result make_result(std::int32_t score, std::uint32_t q0, std::uint32_t q1, std::uint32_t t0,
                          std::uint32_t t1, std::string cigar, std::uint32_t matches, std::uint32_t length) {
  align::Result r;
  r.score = score;
  r.query_begin = q0;
  r.query_end = q1;
  r.target_begin = t0;
  r.target_end = t1;
  r.cigar = std::move(cigar);
  r.matches = matches;
  r.length = length;
  return r;
}

TEST(AlignWire, ResultsRoundTrip) {
  const std::uint32_t top = std::numeric_limits<std::uint32_t>::max();
  const std::vector<align::Result> results{
      make_result(0, 0, 0, 0, 0, "", 0, 0), make_result(42, 3, 17, 5, 20, "4=1X2I7=1D", 11, 15),
      make_result(-57, 0, 0, 0, 0, "12I", 0, 12),
      make_result(std::numeric_limits<std::int32_t>::min(), top, top, top, top, std::string(1000, '='), top,
                  top),
      make_result(std::numeric_limits<std::int32_t>::max(), 1, 2, 3, 4, "1=", 1, 1)};
  const Bytes message = encode_align_results(results);
  EXPECT_EQ(decode_align_results(message), results);
  EXPECT_TRUE(decode_align_results(encode_align_results({})).empty());

  // Several results written one by one read back in order.
  ByteWriter w;
  for (const align::Result& r : results) write_align_result(w, r);
  const Bytes raw = w.take();
  ByteReader in(raw);
  for (const align::Result& r : results) EXPECT_EQ(read_align_result(in), r);
  EXPECT_TRUE(in.done());
}

TEST(AlignWire, DamagedMessagesAreProtocolErrors) {
  const std::vector<align::Result> results{make_result(9, 1, 4, 2, 5, "3=", 3, 3),
                                           make_result(5, 0, 2, 0, 2, "2=", 2, 2)};
  const Bytes message = encode_align_results(results);
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, message.size() / 2, message.size() - 1}) {
    try {
      decode_align_results(std::span<const std::uint8_t>(message.data(), cut));
      FAIL() << "truncated to " << cut << " bytes: no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    }
  }
  Bytes longer = message;
  longer.push_back(0);
  try {
    decode_align_results(longer);
    FAIL() << "overlong message: no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

// globins45 paired with itself shifted by one: aligned whole, and as the parts of align_split aligned
// separately (as ranks do) and passed through messages; the concatenation is the whole batch's result.
TEST(AlignWire, PartsAlignedSeparatelyEqualTheWhole) {
  SequenceReader reader((test::source_dir() / "data" / "globins45.fa").string());
  std::vector<Sequence> seqs;
  Sequence s;
  while (reader.next(s)) seqs.push_back(s);
  ASSERT_GT(seqs.size(), 10u);
  const auto batch_of = [&](std::size_t begin, std::size_t end) {
    align::Batch batch;
    for (std::size_t i = begin; i < end; ++i)
      batch.add(seqs[i].residues, seqs[(i + 1) % seqs.size()].residues);
    return batch;
  };
  std::vector<std::uint64_t> cells;
  for (std::size_t i = 0; i < seqs.size(); ++i)
    cells.push_back(std::uint64_t{seqs[i].length()} * seqs[(i + 1) % seqs.size()].length());
  for (const align::Mode mode : {align::Mode::kLocal, align::Mode::kGlobal, align::Mode::kSemiGlobal}) {
    align::Config config;
    config.mode = mode;
    config.traceback = true;
    config.device = DeviceMode::kCpu;
    config.threads = 2;
    align::Aligner aligner(config);
    const std::vector<align::Result> whole = aligner.align(batch_of(0, seqs.size()));
    for (const int parts : {2, 3, 7, 100}) {
      const std::vector<std::uint64_t> bounds = align_split(cells, parts);
      std::vector<align::Result> joined;
      for (int p = 0; p < parts; ++p) {
        const std::size_t b = bounds[static_cast<std::size_t>(p)],
                          e = bounds[static_cast<std::size_t>(p) + 1];
        if (b == e) continue;
        const std::vector<align::Result> part =
            decode_align_results(encode_align_results(aligner.align(batch_of(b, e))));
        joined.insert(joined.end(), part.begin(), part.end());
      }
      EXPECT_EQ(joined, whole) << align::mode_name(mode) << ", " << parts << " parts";
    }
  }
}

}  // namespace
}  // namespace warpsearch::dist
