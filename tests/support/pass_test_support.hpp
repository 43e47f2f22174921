// pass_test_support.hpp: a batch of GPU pass jobs with their reference end points, for the CUDA pass
// tests (emulated and on a device); the sequence inputs come from sw_test_inputs.hpp.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sw/gpu_engine.hpp"
#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw_test_inputs.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::sw::gpu::test {

using namespace warpsearch::sw::test;  // NOLINT: the shared inputs, unqualified in the GPU tests

// A batch of passes under one model with their reference end points. Sequences are owned here; jobs()
// points into them (stable: sequences are stored in a vector of vectors that is only appended to
// before jobs() is called).
class JobSet {
 public:
  explicit JobSet(const PassModel& model) : model_(model) {}

  // Adds the pass over (q, t), or over their reversals when reversed (job reads them backwards).
  void add(Seq q, Seq t, bool reversed, std::string label) {
    Seq rq(q.rbegin(), q.rend()), rt(t.rbegin(), t.rend());
    expected_.push_back(reversed ? reference::pass(model_, rq, rt) : reference::pass(model_, q, t));
    labels_.push_back(std::move(label));
    reversed_.push_back(reversed);
    seqs_.push_back(std::move(q));
    seqs_.push_back(std::move(t));
    cells_ += static_cast<std::uint64_t>(seqs_[seqs_.size() - 2].size()) * seqs_.back().size();
  }
  // known_scores: local mode jobs with a positive reference score get it as PassJob::score (the engine
  // then only looks for its first cell and stops early).
  std::vector<PassJob> jobs(bool known_scores = false) const {
    std::vector<PassJob> out;
    for (std::size_t k = 0; k < size(); ++k) {
      const Seq& q = seqs_[2 * k];
      const Seq& t = seqs_[2 * k + 1];
      const bool known = known_scores && model_.mode == Mode::kLocal && expected_[k].score > 0;
      out.push_back({q.data(), static_cast<std::uint32_t>(q.size()), t.data(),
                     static_cast<std::uint32_t>(t.size()), reversed_[k], known ? expected_[k].score : 0});
    }
    return out;
  }
  std::size_t size() const { return expected_.size(); }
  const PassModel& model() const { return model_; }
  const std::vector<EndPoint>& expected() const { return expected_; }
  std::uint64_t cells() const { return cells_; }

  // Compares results (in job order) with the reference; reports the first few differences. Returns the
  // number of differences.
  std::size_t compare(std::span<const EndPoint> got, const std::string& context) const {
    std::size_t failures = 0;
    for (std::size_t k = 0; k < size(); ++k) {
      if (got[k] == expected_[k]) continue;
      if (++failures <= 8)
        ADD_FAILURE() << context << ": " << labels_[k] << " (" << mode_label(model_.mode) << ", m "
                      << seqs_[2 * k].size() << ", n " << seqs_[2 * k + 1].size()
                      << (reversed_[k] ? ", reversed" : "") << "): got " << describe(got[k]) << ", reference "
                      << describe(expected_[k]);
    }
    return failures;
  }

 private:
  PassModel model_;
  std::vector<Seq> seqs_;
  std::vector<EndPoint> expected_;
  std::vector<std::string> labels_;
  std::vector<bool> reversed_;
  std::uint64_t cells_ = 0;
};

// The Aligner's start-finding passes for `pairs` random protein pairs (query 20..20+qspan-1, target
// 100..100+tspan-1 residues; every other target holds a mutated copy of its query): for each pair with
// a positive local score, the reversed prefixes up to the forward end cell (BLOSUM62 11/1, local).
inline JobSet reverse_prefix_set(std::mt19937_64& rng, int pairs, std::size_t qspan, std::size_t tspan) {
  const Alphabet prot = Alphabet::protein();
  const PassModel model = PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, Mode::kLocal);
  JobSet set(model);
  for (int p = 0; p < pairs; ++p) {
    const Seq q = random_seq(rng, 20 + rng() % qspan, prot);
    Seq t = random_seq(rng, 100 + rng() % tspan, prot);
    if (p % 2 == 0) {
      const Seq rel = mutate(rng, q, prot, 25, 3);
      t.insert(t.begin() + static_cast<std::ptrdiff_t>(rng() % (t.size() + 1)), rel.begin(), rel.end());
    }
    const EndPoint fwd = reference::pass(model, q, t);
    if (fwd.score <= 0) continue;
    set.add(Seq(q.begin(), q.begin() + fwd.qend + 1), Seq(t.begin(), t.begin() + fwd.tend + 1), true,
            "prefix pair " + std::to_string(p));
  }
  return set;
}

// Which edge cases edge_case_sets() makes: protein codes a = 0, a_step, ... against c = 0, c_step, ...
// as 1 x 1 pairs, and pairs of every length 1, 1 + len_step, ... up to max_len.
struct EdgeSpan {
  std::uint64_t seed;
  std::uint8_t a_step, c_step;
  std::size_t max_len, len_step;
};

// The edge-case pass sets of one mode, shared by the emulated and the GPU pass tests: BLOSUM62 11/1
// protein pairs and +1/-1 0/1 DNA pairs: single residues, all-mismatch pairs (no positive cell),
// identical, X-/N-masked and all-unknown pairs, repeats, poly-A and period-3 pairs, some of them as
// reversed passes.
inline std::pair<JobSet, JobSet> edge_case_sets(Mode mode, const EdgeSpan& span) {
  const Alphabet prot = Alphabet::protein();
  const Alphabet dna = Alphabet::dna();
  std::mt19937_64 rng(span.seed);
  JobSet b62(PassModel::make(ScoringMatrix::builtin("BLOSUM62"), {11, 1}, mode));
  JobSet d11(PassModel::make(ScoringMatrix::dna(1, -1), {0, 1}, mode));
  for (std::uint8_t a = 0; a < kProteinCodes; a = static_cast<std::uint8_t>(a + span.a_step))
    for (std::uint8_t c = 0; c < kProteinCodes; c = static_cast<std::uint8_t>(c + span.c_step))
      b62.add(Seq{a}, Seq{c}, false, "1 x 1");
  for (const auto& [q, t] : {std::pair{"AAAA", "CCCCCC"}, std::pair{"A", "C"}, std::pair{"GGGG", "T"}})
    d11.add(encode(q, dna), encode(t, dna), false, std::string("all mismatch ") + q);
  b62.add(encode("W", prot), encode("P", prot), false, "W/P");
  for (std::size_t len = 1; len <= span.max_len; len += span.len_step) {
    const Seq p = random_seq(rng, len, prot);
    const Seq d = random_seq(rng, len, dna);
    Seq xs = p, ns = d;
    for (std::size_t i = 0; i < len; i += 3) xs[i] = kProteinUnknown;
    for (std::size_t i = 0; i < len; i += 2) ns[i] = kDnaUnknown;
    b62.add(p, p, false, "identical " + std::to_string(len));
    b62.add(xs, p, len % 2 == 0, "X-masked " + std::to_string(len));
    b62.add(Seq(len, kProteinUnknown), p, false, "all X " + std::to_string(len));
    d11.add(d, d, len % 3 == 0, "identical dna " + std::to_string(len));
    d11.add(ns, d, false, "N-masked dna " + std::to_string(len));
    d11.add(Seq(len, kDnaUnknown), Seq(len + 3, kDnaUnknown), false, "all N " + std::to_string(len));
  }
  const char* repeats[][2] = {{"AC", "ACACACACACACAC"},
                              {"ACACACACACACAC", "AC"},
                              {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA"},
                              {"ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT", "ACGTACGTACGT"},
                              {"GATTACA", "GATTACAGATTACAGATTACA"},
                              {"AAAACAAAAC", "CAAAACAAAACAAAA"}};
  for (const auto& r : repeats) {
    d11.add(encode(r[0], dna), encode(r[1], dna), false, std::string("dna repeat ") + r[0]);
    d11.add(encode(r[0], dna), encode(r[1], dna), true, std::string("dna repeat reversed ") + r[0]);
    b62.add(encode(r[0], prot), encode(r[1], prot), false, std::string("protein repeat ") + r[0]);
  }
  b62.add(Seq(257, 0), Seq(300, 0), false, "poly-A 257 x 300");
  b62.add(Seq(600, 0), Seq(1000, 0), true, "poly-A 600 x 1000 reversed");
  Seq period(200), period_t(333);
  for (std::size_t i = 0; i < period.size(); ++i) period[i] = static_cast<std::uint8_t>(i % 3);
  for (std::size_t i = 0; i < period_t.size(); ++i) period_t[i] = static_cast<std::uint8_t>(i % 3);
  b62.add(period, period_t, false, "period-3 200 x 333");
  d11.add(period_t, period, true, "period-3 333 x 200 reversed");
  return {std::move(b62), std::move(d11)};
}

}  // namespace warpsearch::sw::gpu::test
