// Tests of the two-target Forward parser (hmm/fwd_pair.hpp): every op set available here gives, for each
// target of each pair, forward_parser's score bit for bit (the profile configured for that target's
// length), over model lengths on both sides of the M = 100 switch, pairs of equal and very different
// lengths (so one target ends while the other runs on), random and planted sequences (planted copies make
// E exceed 1e4 and rescale rows, in one target or both), length 1, the odd last target and the errors.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "h2_support.hpp"
#include "hmm/abc.hpp"
#include "hmm/fwd_pair.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm_test_support.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {
namespace {

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

std::vector<FwdPairIsa> isas() {
  std::vector<FwdPairIsa> v;
  for (FwdPairIsa isa : {FwdPairIsa::kPortable, FwdPairIsa::kSse2, FwdPairIsa::kAvx2})
    if (fwd_pair_isa_supported(isa)) v.push_back(isa);
  return v;
}

const char* isa_name(FwdPairIsa isa) {
  switch (isa) {
    case FwdPairIsa::kPortable: return "portable";
    case FwdPairIsa::kSse2: return "sse2";
    case FwdPairIsa::kAvx2: return "avx2";
  }
  return "?";
}

// forward_parser with om configured for L (as the pipeline's reconfig_length); *rescaled: whether a row
// was rescaled (the matrix's totscale is not 0).
float single_score(OProfile om, const Dsq& dsq, int L, bool* rescaled = nullptr) {
  reconfig_length(om, L);
  Omx ox = make_omx(om.M, L, false);
  const float sc = forward_parser(dsq, L, om, ox);
  if (rescaled != nullptr) *rescaled = ox.totscale != 0.0f;
  return sc;
}

Dsq make_seq(std::mt19937& rng, const Hmm& hmm, int L, int kind) {
  switch (kind) {
    case 0: return h2test::random_dsq(rng, L, *hmm.abc, 0.02);
    case 1: return h2test::planted_dsq(rng, hmm, L, 1 + L / 120);
    default: return h2test::planted_dsq(rng, hmm, L, 1 + L / 40);  // many copies: frequent rescaling
  }
}

TEST(HmmFwdPair, EqualsForwardParserBitForBit) {
  const FlushToZeroScope ftz;
  std::mt19937 rng(2026);
  int compared = 0, rescaled_targets = 0, one_rescaled = 0;
  for (int M : {1, 3, 17, 64, 99, 100, 101, 257, 611}) {
    hmmtest::ConfiguredModel m = hmmtest::random_configured_model(static_cast<uint32_t>(77 + M), M, 400);
    const std::vector<std::pair<int, int>> lengths = {{1, 1},    {1, 300}, {300, 1}, {150, 150},
                                                      {700, 90}, {33, 34}, {500, 2}, {64, 1200}};
    for (const auto& [L0, L1] : lengths) {
      for (int kind0 = 0; kind0 < 3; ++kind0) {
        const int kind1 = (kind0 + 1 + (L0 % 2)) % 3;
        const Dsq d0 = make_seq(rng, m.hmm, L0, kind0);
        const Dsq d1 = make_seq(rng, m.hmm, L1, kind1);
        bool r0 = false, r1 = false;
        const float want0 = single_score(m.om, d0, L0, &r0), want1 = single_score(m.om, d1, L1, &r1);
        rescaled_targets += (r0 ? 1 : 0) + (r1 ? 1 : 0);
        if (r0 != r1) ++one_rescaled;
        const FwdPairTarget tg[2] = {fwd_pair_target(m.om, d0.data(), L0),
                                     fwd_pair_target(m.om, d1.data(), L1)};
        for (FwdPairIsa isa : isas()) {
          FwdPairScratch ws;
          float score[2];
          bool ok[2];
          forward_parser_pair(m.om, tg, ws, score, ok, isa);
          ASSERT_TRUE(ok[0] && ok[1]) << isa_name(isa) << " M=" << M;
          EXPECT_EQ(bits(score[0]), bits(want0)) << isa_name(isa) << " M=" << M << " L=" << L0 << "/" << L1
                                                 << " kind " << kind0 << ": " << score[0] << " vs " << want0;
          EXPECT_EQ(bits(score[1]), bits(want1)) << isa_name(isa) << " M=" << M << " L=" << L0 << "/" << L1
                                                 << " kind " << kind1 << ": " << score[1] << " vs " << want1;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(rescaled_targets, 20);
  EXPECT_GT(one_rescaled, 10);  // pairs where only one target's rows are rescaled
  EXPECT_GT(compared, 200);
}

TEST(HmmFwdPair, ScoresOfManyTargetsAndTheOddLastOne) {
  const FlushToZeroScope ftz;
  std::mt19937 rng(9);
  for (int M : {40, 180}) {
    hmmtest::ConfiguredModel m = hmmtest::random_configured_model(static_cast<uint32_t>(5 + M), M, 400);
    std::vector<Dsq> seqs;
    std::vector<int> lens;
    for (int k = 0; k < 7; ++k) {
      const int L = 1 + static_cast<int>(rng() % 900);
      seqs.push_back(make_seq(rng, m.hmm, L, k % 3));
      lens.push_back(L);
    }
    std::vector<FwdPairTarget> targets;
    for (std::size_t k = 0; k < seqs.size(); ++k)
      targets.push_back(fwd_pair_target(m.om, seqs[k].data(), lens[k]));
    for (FwdPairIsa isa : isas()) {
      std::vector<float> scores(targets.size());
      FwdPairScratch ws;
      Omx fallback = make_omx(M, 1, false);
      forward_parser_scores(m.om, targets, scores, ws, fallback, isa);
      for (std::size_t k = 0; k < seqs.size(); ++k)
        EXPECT_EQ(bits(scores[k]), bits(single_score(m.om, seqs[k], lens[k])))
            << isa_name(isa) << " target " << k;
    }
  }
}

TEST(HmmFwdPair, ScratchReusedAcrossModelsAndSelfPairs) {
  const FlushToZeroScope ftz;
  std::mt19937 rng(4);
  FwdPairScratch ws;  // one scratch row for every model below (grows, never shrinks)
  for (int M : {500, 20, 130}) {
    hmmtest::ConfiguredModel m = hmmtest::random_configured_model(static_cast<uint32_t>(M), M, 400);
    const int L = 250;
    const Dsq d = make_seq(rng, m.hmm, L, 1);
    const FwdPairTarget t = fwd_pair_target(m.om, d.data(), L);
    const FwdPairTarget tg[2] = {t, t};  // the same target in both halves
    const float want = single_score(m.om, d, L);
    for (FwdPairIsa isa : isas()) {
      float score[2];
      bool ok[2];
      forward_parser_pair(m.om, tg, ws, score, ok, isa);
      EXPECT_TRUE(ok[0] && ok[1]);
      EXPECT_EQ(bits(score[0]), bits(want)) << isa_name(isa);
      EXPECT_EQ(bits(score[1]), bits(want)) << isa_name(isa);
    }
  }
}

TEST(HmmFwdPair, EmptyTargetIsLeftToForwardParser) {
  const FlushToZeroScope ftz;
  std::mt19937 rng(1);
  hmmtest::ConfiguredModel m = hmmtest::random_configured_model(3, 30, 100);
  const Dsq d = h2test::random_dsq(rng, 100, *m.hmm.abc);
  const FwdPairTarget tg[2] = {fwd_pair_target(m.om, d.data(), 0), fwd_pair_target(m.om, d.data(), 100)};
  for (FwdPairIsa isa : isas()) {
    FwdPairScratch ws;
    float score[2];
    bool ok[2];
    forward_parser_pair(m.om, tg, ws, score, ok, isa);
    EXPECT_FALSE(ok[0]);
    EXPECT_TRUE(ok[1]);
    EXPECT_EQ(bits(score[1]), bits(single_score(m.om, d, 100)));
    // The scores loop asks forward_parser for the empty one: its -infinity.
    std::vector<float> scores(2);
    Omx fallback = make_omx(30, 1, false);
    forward_parser_scores(m.om, tg, scores, ws, fallback, isa);
    EXPECT_EQ(bits(scores[0]), bits(single_score(m.om, d, 0)));
  }
}

TEST(HmmFwdPair, MismatchedScoreCountIsAnInternalError) {
  hmmtest::ConfiguredModel m = hmmtest::random_configured_model(3, 30, 100);
  std::vector<FwdPairTarget> targets(3);
  std::vector<float> scores(2);
  FwdPairScratch ws;
  Omx fallback = make_omx(30, 1, false);
  EXPECT_THROW(forward_parser_scores(m.om, targets, scores, ws, fallback), Error);
}

}  // namespace
}  // namespace warpsearch::hmm
