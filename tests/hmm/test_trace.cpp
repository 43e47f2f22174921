// Tests of the trace bookkeeping (src/hmm/trace.hpp): HMMER's append conventions for emit-on-transition
// states, reversal of a right-to-left built path, domain indexing and the validator, on paths written
// out by hand both forwards and backwards.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hmm/common.hpp"
#include "hmm/trace.hpp"

namespace warpsearch::hmm {
namespace {

struct Step {
  TraceState s;
  int k;
  int i;
  float pp;
};

// Two domains on L = 10, M = 4:  S N N(1) B M1(2) M2(3) I2(4) M3(5) E J J(6) B M2(7) D3 M4(8) E C C(9) C(10)
// T
const std::vector<Step> kPath = {
    {kTS, 0, 0, 0.0f}, {kTN, 0, 0, 0.0f},  {kTN, 0, 1, 0.9f},   {kTB, 0, 0, 0.0f},  {kTM, 1, 2, 0.5f},
    {kTM, 2, 3, 0.6f}, {kTI, 2, 4, 0.25f}, {kTM, 3, 5, 0.7f},   {kTE, 0, 0, 0.0f},  {kTJ, 0, 0, 0.0f},
    {kTJ, 0, 6, 0.8f}, {kTB, 0, 0, 0.0f},  {kTM, 2, 7, 0.75f},  {kTD, 3, 0, 0.0f},  {kTM, 4, 8, 0.5f},
    {kTE, 0, 0, 0.0f}, {kTC, 0, 0, 0.0f},  {kTC, 0, 9, 0.125f}, {kTC, 0, 10, 1.0f}, {kTT, 0, 0, 0.0f},
};

std::vector<uint8_t> dummy_dsq(int L) {
  std::vector<uint8_t> dsq(static_cast<std::size_t>(L) + 2, 0);
  dsq.front() = kDsqSentinel;
  dsq.back() = kDsqSentinel;
  return dsq;
}

void expect_equals_path(const Trace& tr, bool with_pp) {
  ASSERT_EQ(tr.N, static_cast<int>(kPath.size()));
  for (std::size_t z = 0; z < kPath.size(); ++z) {
    EXPECT_EQ(tr.st[z], kPath[z].s) << "z=" << z;
    EXPECT_EQ(tr.k[z], kPath[z].k) << "z=" << z;
    EXPECT_EQ(tr.i[z], kPath[z].i) << "z=" << z;
    if (with_pp) {
      EXPECT_EQ(tr.pp[z], kPath[z].pp) << "z=" << z;
    }
  }
}

TEST(HmmTrace, AppendForwardKeepsConventions) {
  Trace tr(true);
  // Pass the residue index to every emit-on-transition state, as HMMER callers do; append decides.
  int last_i = 0;
  for (const Step& s : kPath) {
    const int ii = (s.s == kTN || s.s == kTC || s.s == kTJ) ? last_i + 1 : s.i;
    const float p = (s.s == kTN || s.s == kTC || s.s == kTJ) ? (s.i > 0 ? s.pp : 0.5f) : s.pp;
    tr.append_with_pp(s.s, s.k, ii, p);
    if (tr.i.back() > 0) last_i = tr.i.back();
  }
  tr.M = 4;
  tr.L = 10;
  expect_equals_path(tr, true);
  const auto dsq = dummy_dsq(10);
  EXPECT_EQ(validate_trace(tr, dsq.data(), 10), "");
}

TEST(HmmTrace, BackwardConstructionThenReverse) {
  // Build the path right to left the way HMMER's tracebacks do: i starts at L; an M/I state is appended
  // with its residue and then i decreases; an N/C/J state is appended with the current i (append keeps
  // it only when the previously appended state is the same) and i decreases after such a pair.
  std::vector<float> pp_of_residue(11, 0.0f);
  for (const Step& s : kPath)
    if (s.i > 0) pp_of_residue[static_cast<std::size_t>(s.i)] = s.pp;
  for (bool with_pp : {false, true}) {
    Trace tr(with_pp);
    int i = 10;
    for (auto it = kPath.rbegin(); it != kPath.rend(); ++it) {
      const Step& s = *it;
      const bool emits_on_transition = s.s == kTN || s.s == kTC || s.s == kTJ;
      const bool pair = emits_on_transition && tr.N > 0 && tr.st.back() == s.s;
      const int ii = (s.s == kTM || s.s == kTI || emits_on_transition) ? i : 0;
      const float p = (s.s == kTM || s.s == kTI || pair) ? pp_of_residue[static_cast<std::size_t>(i)] : 0.0f;
      if (s.s == kTM || s.s == kTI) {
        ASSERT_EQ(s.i, i);
      }
      if (with_pp)
        tr.append_with_pp(s.s, s.k, ii, p);
      else
        tr.append(s.s, s.k, ii);
      if (s.s == kTM || s.s == kTI || pair) --i;
    }
    EXPECT_EQ(i, 0);
    tr.reverse();
    tr.M = 4;
    tr.L = 10;
    expect_equals_path(tr, with_pp);
    const auto dsq = dummy_dsq(10);
    EXPECT_EQ(validate_trace(tr, dsq.data(), 10), "");
  }
}

TEST(HmmTrace, IndexDomains) {
  Trace tr(true);
  for (const Step& s : kPath) tr.append_with_pp(s.s, s.k, s.i, s.pp);
  EXPECT_EQ(tr.ndom, 0);
  EXPECT_EQ(tr.domain_count(), 2);
  tr.index();
  ASSERT_EQ(tr.ndom, 2);
  EXPECT_EQ(tr.tfrom[0], 3);
  EXPECT_EQ(tr.tto[0], 8);
  EXPECT_EQ(tr.sqfrom[0], 2);
  EXPECT_EQ(tr.sqto[0], 5);
  EXPECT_EQ(tr.hmmfrom[0], 1);
  EXPECT_EQ(tr.hmmto[0], 3);
  EXPECT_EQ(tr.tfrom[1], 11);
  EXPECT_EQ(tr.tto[1], 15);
  EXPECT_EQ(tr.sqfrom[1], 7);
  EXPECT_EQ(tr.sqto[1], 8);
  EXPECT_EQ(tr.hmmfrom[1], 2);
  EXPECT_EQ(tr.hmmto[1], 4);
  EXPECT_EQ(tr.domain_count(), 2);
  // Expected accuracy: float sum in trace order.
  float acc = 0.0f;
  for (const Step& s : kPath) acc += s.pp;
  EXPECT_EQ(tr.expected_accuracy(), acc);
  tr.reuse();
  EXPECT_EQ(tr.N, 0);
  EXPECT_EQ(tr.ndom, 0);
  EXPECT_TRUE(tr.has_pp);
}

TEST(HmmTrace, ValidatorRejectsBrokenPaths) {
  const auto dsq = dummy_dsq(10);
  auto build = [](const std::vector<Step>& path) {
    Trace tr(true);
    for (const Step& s : path) tr.append_with_pp(s.s, s.k, s.i, s.pp);
    tr.M = 4;
    tr.L = 10;
    return tr;
  };
  {
    auto p = kPath;
    p[5].k = 3;  // M2 -> M3 jump: k progression broken
    EXPECT_NE(validate_trace(build(p), dsq.data(), 10), "");
  }
  {
    auto p = kPath;
    p.erase(p.begin() + 18);  // drop C(10): residue 10 unaccounted
    EXPECT_NE(validate_trace(build(p), dsq.data(), 10), "");
  }
  {
    auto p = kPath;
    p[13] = {kTI, 2, 0, 0.0f};  // M2 -> I2 without a residue
    EXPECT_NE(validate_trace(build(p), dsq.data(), 10), "");
  }
  {
    auto p = kPath;
    p[4].k = 5;  // B -> M5 beyond M=4 (then k continues past M)
    EXPECT_NE(validate_trace(build(p), dsq.data(), 10), "");
  }
  {
    auto p = kPath;
    p[3] = {kTE, 0, 0, 0.0f};  // N -> E
    EXPECT_NE(validate_trace(build(p), dsq.data(), 10), "");
  }
  EXPECT_EQ(validate_trace(build(kPath), dsq.data(), 10), "");
}

}  // namespace
}  // namespace warpsearch::hmm
