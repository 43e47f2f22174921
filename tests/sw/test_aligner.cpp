// test_aligner.cpp: the align:: API on the CPU: results equal the reference pipeline pair by pair,
// batches complete in order through futures and callbacks, output is independent of thread count,
// and errors travel through the future instead of crashing the worker threads.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <vector>

#include "sw/reference.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::align {
namespace {

Batch random_batch(std::mt19937& rng, std::size_t pairs, int alpha, std::size_t max_len) {
  Batch b;
  for (std::size_t k = 0; k < pairs; ++k) {
    std::vector<std::uint8_t> q(1 + rng() % max_len), t(1 + rng() % max_len);
    for (auto& c : q) c = static_cast<std::uint8_t>(rng() % alpha);
    for (auto& c : t) c = static_cast<std::uint8_t>(rng() % alpha);
    if (k % 3 == 0) {  // plant a shared segment so alignments are non-trivial
      const std::size_t n = std::min(q.size(), t.size()) / 2;
      std::copy_n(q.begin(), n, t.begin() + static_cast<std::ptrdiff_t>(t.size() - n));
    }
    b.add(q, t);
  }
  return b;
}

Config cpu_config(Mode mode, unsigned threads) {
  Config c;
  c.mode = mode;
  c.traceback = true;
  c.device = DeviceMode::kCpu;
  c.threads = threads;
  return c;
}

TEST(Aligner, EqualsReferencePipelineInEveryMode) {
  std::mt19937 rng(3);
  for (Mode mode : {Mode::kLocal, Mode::kGlobal, Mode::kSemiGlobal}) {
    const Config cfg = cpu_config(mode, 2);
    Batch batch = random_batch(rng, 150, 20, 300);
    const sw::PassModel model = sw::PassModel::make(cfg.matrix, cfg.gaps, cfg.mode);
    std::vector<Result> expected;
    for (std::size_t k = 0; k < batch.size(); ++k)
      expected.push_back(sw::reference::align_pair(model, batch.query(k), batch.target(k), true));
    Aligner aligner(cfg);
    EXPECT_FALSE(aligner.uses_gpu());
    const std::vector<Result> got = aligner.align(std::move(batch));
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      EXPECT_EQ(got[k], expected[k]) << mode_name(mode) << " pair " << k;
  }
}

TEST(Aligner, DnaScoringAndTextInput) {
  Config cfg = cpu_config(Mode::kLocal, 1);
  cfg.matrix = ScoringMatrix::dna(2, -3);
  cfg.gaps = {5, 2};
  Batch b;
  b.add_text("ACGTACGTNNACGT", "TTACGTACGTAAACGTTT", AlphabetKind::kDna);
  Aligner aligner(cfg);
  const std::vector<Result> r = aligner.align(std::move(b));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].score, 18);  // ACGTACGT (+16), NN vs AA (-6), ACGT (+8)
  EXPECT_EQ(r[0].cigar, "8=2X4=");
  EXPECT_EQ(r[0].query_begin, 0u);
  EXPECT_EQ(r[0].target_begin, 2u);
}

TEST(Aligner, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(5);
  const Batch batch = random_batch(rng, 400, 20, 200);
  Aligner one(cpu_config(Mode::kLocal, 1)), two(cpu_config(Mode::kLocal, 2));
  EXPECT_EQ(one.align(batch), two.align(batch));
}

TEST(Aligner, ManyBatchesInFlightCompleteInOrder) {
  std::mt19937 rng(9);
  Aligner aligner(cpu_config(Mode::kLocal, 2));
  std::vector<Batch> batches;
  std::vector<std::future<std::vector<Result>>> futures;
  for (int i = 0; i < 8; ++i) batches.push_back(random_batch(rng, 1 + rng() % 40, 20, 120));
  for (const Batch& b : batches) futures.push_back(aligner.submit(b));
  std::vector<int> order;
  std::mutex m;
  for (int i = 0; i < 4; ++i)
    aligner.submit(batches[static_cast<std::size_t>(i)],
                   [&, i](std::vector<Result>&& r, std::exception_ptr e) {
                     EXPECT_FALSE(e);
                     EXPECT_EQ(r.size(), batches[static_cast<std::size_t>(i)].size());
                     std::lock_guard lock(m);
                     order.push_back(i);
                   });
  for (std::size_t i = 0; i < futures.size(); ++i) EXPECT_EQ(futures[i].get().size(), batches[i].size());
  aligner.align(Batch{});  // a barrier: everything before it has completed
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Aligner, ErrorsArriveThroughTheFuture) {
  Aligner aligner(cpu_config(Mode::kLocal, 2));
  Batch bad;
  bad.add_text("ACDE", "");
  auto f = aligner.submit(std::move(bad));
  try {
    f.get();
    FAIL() << "an empty target must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
  }
  // The aligner stays usable.
  Batch good;
  good.add_text("ACDE", "ACDE");
  EXPECT_EQ(aligner.align(std::move(good)).at(0).score, 4 + 9 + 6 + 5);
}

TEST(Aligner, StatsCountBatchesCellsAndTime) {
  std::mt19937 rng(77);
  Aligner aligner(cpu_config(Mode::kLocal, 2));
  EXPECT_EQ(aligner.stats().batches, 0u);
  Batch a = random_batch(rng, 40, 20, 90), b = random_batch(rng, 30, 20, 90);
  const std::uint64_t cells = a.cells() + b.cells();
  std::uint64_t reverse = 0;  // the reverse passes' extents of the pairs with a positive score
  auto fa = aligner.submit(std::move(a));
  auto fb = aligner.submit(std::move(b));
  for (auto* f : {&fa, &fb})
    for (const Result& r : f->get())
      if (r.score > 0) reverse += std::uint64_t{r.query_end} * r.target_end;
  const Aligner::Stats s = aligner.stats();
  EXPECT_EQ(s.batches, 2u);
  EXPECT_EQ(s.forward_cells, cells);
  EXPECT_EQ(s.reverse_cells, reverse);
  EXPECT_GT(s.pass_s, 0.0);
  EXPECT_EQ(s.launches, 0u);  // CPU: no GPU launches
}

TEST(Aligner, RejectsBadConfiguration) {
  Config c;
  c.gaps = {0, 0};
  EXPECT_THROW(Aligner{c}, Error);
  Batch b;
  const std::vector<std::uint8_t> bad_codes{40};
  EXPECT_THROW(b.add(bad_codes, bad_codes), Error);
}

TEST(Aligner, ModeNamesRoundTrip) {
  for (Mode m : {Mode::kLocal, Mode::kGlobal, Mode::kSemiGlobal}) EXPECT_EQ(parse_mode(mode_name(m)), m);
  EXPECT_FALSE(parse_mode("banded"));
}

}  // namespace
}  // namespace warpsearch::align
