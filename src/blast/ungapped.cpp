// ungapped.cpp: blastp's two-hit seeding and ungapped X-drop extension (ungapped.hpp has the rules).
//
// Contents: the bit -> raw conversions (blast_parameters.c), extend_two_hit (the span form of
// two_hit.hpp's extend_two_hit_raw, s_BlastAaExtendTwoHit), TwoHitFinder's diagonal table (blast_extend.c)
// and extension bookkeeping (s_BlastAaWordFinder_TwoHit), sort_ungapped_hsps.
#include "blast/ungapped.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "warpsearch/error.hpp"

namespace warpsearch::blast {

namespace {

// BLAST+'s NCBIMATH_LN2 is ln 2 to more digits than a double holds: the same double.
constexpr double kLn2 = std::numbers::ln2;

}  // namespace

int ungapped_x_dropoff(double bits, double lambda) {
  return static_cast<int>(std::ceil(bits * kLn2 / lambda));
}

int gap_trigger_score(double bits, const stats::KarlinParams& ungapped) {
  return static_cast<int>((bits * kLn2 + std::log(ungapped.K)) / ungapped.lambda);
}

int evalue_cutoff_score(double evalue, const stats::KarlinParams& params, std::int64_t searchsp,
                        double gap_decay_rate) {
  // BLAST_Cutoffs(S = 1, E, kbp, searchsp, dodecay = gap_decay_rate given) + BlastKarlinEtoS_simple.
  int s = 1;
  double e = evalue;
  if (e > 0.0) {
    if (gap_decay_rate > 0.0 && gap_decay_rate < 1.0) e *= (1.0 - gap_decay_rate);  // divisor for 1 HSP
    e = std::max(e, 1.0e-297);
    const int es =
        static_cast<int>(std::ceil(std::log(params.K * static_cast<double>(searchsp) / e) / params.lambda));
    s = std::max(s, es);
  }
  return s;
}

UngappedParams blastp_ungapped_params(const stats::KarlinParams& ungapped, bool gapped_search,
                                      int query_length, int subject_length, int cutoff_score_max,
                                      double x_dropoff_bits, double gap_trigger_bits) {
  UngappedParams p;
  p.x_dropoff = ungapped_x_dropoff(x_dropoff_bits, ungapped.lambda);
  const int trigger = gap_trigger_score(gap_trigger_bits, ungapped);
  int cutoff = trigger;
  if (!gapped_search) {
    // CUTOFF_E_BLASTP over min(subject, query) * subject, with the gap decay rate of ungapped blastp's
    // sum statistics (BLAST_GAP_DECAY_RATE 0.5); then the "compatibility" min with the gap trigger.
    const std::int64_t searchsp =
        static_cast<std::int64_t>(std::min(subject_length, query_length)) * subject_length;
    cutoff = std::min(evalue_cutoff_score(1e-300, ungapped, searchsp, 0.5), trigger);
  }
  p.cutoff_score = std::min(cutoff, cutoff_score_max);
  return p;
}

TwoHitExtension extend_two_hit(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                               const std::int8_t* table, std::int32_t s_first_end, std::int32_t s_second,
                               std::int32_t q_second, int x_dropoff, int word_size) {
  return extend_two_hit_raw(query.data(), static_cast<std::int32_t>(query.size()), subject.data(),
                            static_cast<std::int32_t>(subject.size()), table, s_first_end, s_second, q_second,
                            x_dropoff, word_size);
}

TwoHitFinder::TwoHitFinder(std::span<const std::uint8_t> query, const ScoringMatrix& matrix,
                           const UngappedParams& params, std::int32_t offset_limit)
    : query_(query), params_(params), offset_limit_(offset_limit) {
  if (params.window <= 0 || params.word_size <= 0 || params.x_dropoff < 0) {
    throw Error(ErrorKind::kUsage, "two-hit parameters need window > 0, word size > 0, X-drop >= 0");
  }
  std::memcpy(table_, matrix.row(0), sizeof(table_));
  // A power of two >= query length + window (s_BlastDiagTableNew); entries start at 0 with offset =
  // window, i.e. "last hit" window letters before the subject start.
  const auto need = static_cast<std::uint32_t>(query.size()) + static_cast<std::uint32_t>(params.window);
  const std::uint32_t length = std::bit_ceil(std::max<std::uint32_t>(need, 1));
  diags_.assign(length, Diag{});
  mask_ = length - 1;
  offset_ = params.window;
}

void TwoHitFinder::clear() {
  // s_BlastDiagClear
  offset_ = params_.window;
  for (Diag& d : diags_) d = Diag{-params_.window, false};
}

void TwoHitFinder::begin_subject(std::span<const std::uint8_t> subject, std::vector<UngappedHsp>& out) {
  subject_ = subject;
  out_ = &out;
  counts_ = {};
}

UngappedCounts TwoHitFinder::end_subject() {
  // Blast_ExtendWordExit
  if (offset_ >= offset_limit_) {
    clear();
  } else {
    offset_ += static_cast<std::int32_t>(subject_.size()) + params_.window;
  }
  out_ = nullptr;
  return counts_;
}

void TwoHitFinder::extend(Diag& d, std::int32_t query_offset, std::int32_t subject_offset,
                          std::int32_t first_hit) {
  const TwoHitExtension e =
      extend_two_hit_raw(query_.data(), static_cast<std::int32_t>(query_.size()), subject_.data(),
                         static_cast<std::int32_t>(subject_.size()), table_, first_hit + params_.word_size,
                         subject_offset, query_offset, params_.x_dropoff, params_.word_size);
  ++counts_.extended;
  if (e.score >= params_.cutoff_score) {
    ++counts_.saved;
    out_->push_back(UngappedHsp{e.score, e.query_start, e.query_start + e.length, e.subject_start,
                                e.subject_start + e.length, query_offset, subject_offset});
  }
  if (e.right_extended) {
    d.flag = true;
    d.last_hit = e.subject_last - (params_.word_size - 1) + offset_;
  } else {
    d.last_hit = subject_offset + offset_;
  }
}

UngappedCounts TwoHitFinder::run(std::span<const std::uint8_t> subject, std::span<const WordHit> hits,
                                 std::vector<UngappedHsp>& out) {
  begin_subject(subject, out);
  for (const WordHit& h : hits) hit(h.query_offset, h.subject_offset);
  return end_subject();
}

void sort_ungapped_hsps(std::vector<UngappedHsp>& hsps) {
  std::stable_sort(hsps.begin(), hsps.end(), [](const UngappedHsp& a, const UngappedHsp& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.subject_start != b.subject_start) return a.subject_start < b.subject_start;
    if (a.length() != b.length()) return a.length() > b.length();
    return a.query_start < b.query_start;
  });
}

}  // namespace warpsearch::blast
