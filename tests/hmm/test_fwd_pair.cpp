// Tests of the grouped Forward parser (hmm/fwd_pair.hpp): every op set available here gives, for each
// target of each group (2 or 4), forward_parser's score bit for bit (the profile configured for that target's
// length), over model lengths on both sides of the M = 100 switch, pairs of equal and very different
// lengths (so one target ends while the other runs on), random and planted sequences (planted copies make
// E exceed 1e4 and rescale rows, in one target or both), length 1, the odd last target and the errors.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <iostream>
#include <random>
#include <span>
#include <string>
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
  for (FwdPairIsa isa : {FwdPairIsa::kPortable, FwdPairIsa::kSse2, FwdPairIsa::kAvx2, FwdPairIsa::kPortable4,
                         FwdPairIsa::kAvx512})
    if (fwd_pair_isa_supported(isa)) v.push_back(isa);
  return v;
}

const char* isa_name(FwdPairIsa isa) { return fwd_pair_isa_name(isa); }

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
  int compared = 0, rescaled_targets = 0, mixed_groups = 0;
  for (int M : {1, 3, 17, 64, 99, 100, 101, 257, 611}) {
    hmmtest::ConfiguredModel m = hmmtest::random_configured_model(static_cast<uint32_t>(77 + M), M, 400);
    // Consecutive targets form the groups (2 or 4): equal and very different lengths side by side, so that
    // targets end while others run on, and sequence kinds that rescale in some targets of a group only.
    const std::vector<int> lengths = {1,  1,  1,  300, 300, 1,  150,  150, 700,
                                      90, 33, 34, 500, 2,   64, 1200, 5,   800};
    std::vector<Dsq> seqs;
    std::vector<float> want;
    std::vector<bool> rescaled;
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      for (int kind = 0; kind < 3; ++kind) {
        const int L = lengths[k];
        seqs.push_back(make_seq(rng, m.hmm, L, (kind + static_cast<int>(k)) % 3));
        bool r = false;
        want.push_back(single_score(m.om, seqs.back(), L, &r));
        rescaled.push_back(r);
        rescaled_targets += r ? 1 : 0;
      }
    }
    std::vector<FwdPairTarget> targets;
    for (const Dsq& d : seqs)
      targets.push_back(fwd_pair_target(m.om, d.data(), static_cast<int>(d.size()) - 2));
    for (std::size_t k = 0; k + 1 < rescaled.size(); k += 2)
      mixed_groups += rescaled[k] != rescaled[k + 1] ? 1 : 0;
    for (FwdPairIsa isa : isas()) {
      const std::size_t K = static_cast<std::size_t>(fwd_group_size(isa));
      FwdPairScratch ws;
      for (std::size_t k = 0; k + K <= targets.size(); k += K) {
        float score[4];
        bool ok[4];
        forward_parser_group(m.om, std::span<const FwdPairTarget>(targets).subspan(k, K), ws,
                             std::span<float>(score, K), std::span<bool>(ok, K), isa);
        for (std::size_t t = 0; t < K; ++t) {
          ASSERT_TRUE(ok[t]) << isa_name(isa) << " M=" << M;
          EXPECT_EQ(bits(score[t]), bits(want[k + t]))
              << isa_name(isa) << " M=" << M << " target " << k + t << " L=" << targets[k + t].L << ": "
              << score[t] << " vs " << want[k + t];
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(rescaled_targets, 40);
  EXPECT_GT(mixed_groups, 10);  // pairs where only one target's rows are rescaled
  EXPECT_GT(compared, 1000);
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
    const FwdPairTarget tg[4] = {t, t, t, t};  // the same target in every place of the group
    const float want = single_score(m.om, d, L);
    for (FwdPairIsa isa : isas()) {
      const std::size_t K = static_cast<std::size_t>(fwd_group_size(isa));
      float score[4];
      bool ok[4];
      forward_parser_group(m.om, std::span<const FwdPairTarget>(tg, K), ws, std::span<float>(score, K),
                           std::span<bool>(ok, K), isa);
      for (std::size_t k = 0; k < K; ++k) {
        EXPECT_TRUE(ok[k]);
        EXPECT_EQ(bits(score[k]), bits(want)) << isa_name(isa);
      }
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
    if (fwd_group_size(isa) == 2) {
      float score[2];
      bool ok[2];
      forward_parser_group(m.om, tg, ws, score, ok, isa);
      EXPECT_FALSE(ok[0]);
      EXPECT_TRUE(ok[1]);
      EXPECT_EQ(bits(score[1]), bits(single_score(m.om, d, 100)));
    }
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
  // A group of the wrong size for its op set.
  float score[4];
  bool ok[4];
  EXPECT_THROW(
      forward_parser_group(m.om, std::span<const FwdPairTarget>(targets).subspan(0, 3), ws,
                           std::span<float>(score, 3), std::span<bool>(ok, 3), FwdPairIsa::kPortable4),
      Error);
}

TEST(HmmFwdPair, TheOpSetsThisCpuHas) {
  // Portable lanes always; what else ran above (printed for the log; AVX2 / AVX-512F need such a CPU).
  std::string names;
  for (FwdPairIsa isa : isas()) names += std::string(isa_name(isa)) + " ";
  std::cout << "[ INFO     ] op sets tested: " << names << "(default " << isa_name(fwd_pair_best_isa())
            << ")\n";
  EXPECT_TRUE(fwd_pair_isa_supported(FwdPairIsa::kPortable));
  EXPECT_TRUE(fwd_pair_isa_supported(FwdPairIsa::kPortable4));
  EXPECT_EQ(fwd_group_size(FwdPairIsa::kAvx512), 4);
  EXPECT_EQ(fwd_group_size(FwdPairIsa::kAvx2), 2);
}

}  // namespace
}  // namespace warpsearch::hmm
