// pass_test_support.hpp: a batch of GPU pass jobs with their reference end points, for the CUDA pass
// tests (emulated and on a device); the sequence inputs come from sw_test_inputs.hpp.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sw/gpu_engine.hpp"
#include "sw/model.hpp"
#include "sw/reference.hpp"
#include "sw_test_inputs.hpp"

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
  std::vector<PassJob> jobs() const {
    std::vector<PassJob> out;
    for (std::size_t k = 0; k < size(); ++k) {
      const Seq& q = seqs_[2 * k];
      const Seq& t = seqs_[2 * k + 1];
      out.push_back({q.data(), static_cast<std::uint32_t>(q.size()), t.data(),
                     static_cast<std::uint32_t>(t.size()), reversed_[k]});
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

}  // namespace warpsearch::sw::gpu::test
