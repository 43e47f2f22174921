// ungapped.hpp: blastp's two-hit seeding and ungapped X-drop extension, as BLAST+ 2.12 does them
// (aa_ungapped.c: s_BlastAaWordFinder_TwoHit, s_BlastAaExtendTwoHit, s_BlastAaExtendLeft/Right;
// blast_extend.c: the diagonal table; blast_parameters.c: the bit -> raw conversions).
//
// Contents:
//   WordHit              one word hit (query offset, subject offset) as the lookup-table scanner reports it
//   UngappedParams       the raw parameters of the stage: word size, window, X-drop, cutoff score
//   ungapped_x_dropoff / gap_trigger_score / evalue_cutoff_score / blastp_ungapped_params
//                        BLAST+'s conversions from bits (or an E-value) to raw scores
//   UngappedHsp, TwoHitExtension   (two_hit.hpp) an ungapped HSP reaching the cutoff; one extension's result
//   extend_two_hit       one two-hit extension (s_BlastAaExtendTwoHit) over spans: extend_two_hit_raw
//                        (two_hit.hpp, shared with the GPU kernels) does the work
//   TwoHitFinder         the diagonal table plus the per-hit two-hit rule, one subject at a time
//   sort_ungapped_hsps   BLAST+'s order of the saved HSPs (Blast_InitHitListSortByScore)
//
// Coordinates are 0-based; an HSP covers query [query_start, query_end) and subject
// [subject_start, subject_end), both of the same length (ungapped).
//
// The two-hit rule, per hit (q, s) on diagonal d = q - s, hits arriving in ascending subject offset (the
// order among hits of one subject offset does not matter: they lie on different diagonals). Each
// diagonal keeps `last` (a subject offset) and a flag, initially "no hit" and clear:
//   - flag set (an extension happened on d): if s < last the hit is skipped (already covered); otherwise
//     last = s, flag cleared, and nothing else (the hit is a new first hit);
//   - flag clear: diff = s - last.
//       diff >= window      -> last = s (new first hit; "no hit yet" counts as far away);
//       diff < word_size    -> skipped, last unchanged (the hits overlap);
//       q - diff < 0        -> last = s (BLAST+'s check that the first hit lies in the same query; it
//                              cannot trigger for one query, kept for parity);
//       otherwise           -> extend_two_hit(first word end = last + word_size, second hit (q, s)); the
//                              HSP is saved if its score >= cutoff_score; then if the extension went right
//                              (the left part reached the first hit) last = s_last_off - (word_size - 1)
//                              and the flag is set, else last = s.
#pragma once

#include <climits>
#include <cstdint>
#include <span>
#include <vector>

#include "blast/two_hit.hpp"
#include "stats/karlin.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

// One word hit: the word at query_offset scores at least the threshold against (or equals) the word at
// subject_offset. Offsets of the word's first letter.
struct WordHit {
  std::int32_t query_offset = 0;
  std::int32_t subject_offset = 0;
  friend constexpr bool operator==(const WordHit&, const WordHit&) = default;
};

// Raw parameters of the stage (BLAST+'s BlastUngappedCutoffs + the diagonal table's window). window > 0
// (two-hit mode); word_size >= 1; x_dropoff >= 0 (an extension stops once the running score falls
// x_dropoff or more below its best); an HSP is saved when its score >= cutoff_score.
struct UngappedParams {
  int word_size = 3;      // BLAST_WORDSIZE_PROT
  int window = 40;        // BLAST_WINDOW_SIZE_PROT
  int x_dropoff = 16;     // raw; blastp_ungapped_params computes it from bits
  int cutoff_score = 41;  // raw
};

// BLAST+'s defaults in bits (blast_options.h).
inline constexpr double kUngappedXDropoffBits = 7.0;  // BLAST_UNGAPPED_X_DROPOFF_PROT
inline constexpr double kGapTriggerBits = 22.0;       // BLAST_GAP_TRIGGER_PROT

// X-drop in raw score: (int)ceil(bits * ln2 / lambda) (BlastInitialWordParametersNew, scale factor 1;
// lambda of the query's ungapped Karlin block, stats::query_ungapped_params).
int ungapped_x_dropoff(double bits, double lambda);
// Gap trigger in raw score: (int)((bits * ln2 + ln K) / lambda), truncated toward zero, with the
// query's ungapped block (BlastInitialWordParametersUpdate).
int gap_trigger_score(double bits, const stats::KarlinParams& ungapped);
// BLAST_Cutoffs with an initial score of 1: max(1, (int)ceil(ln(K * searchsp / E') / lambda)) where
// E' = max(E, 1e-297) and, when gap_decay_rate is in (0, 1), E is first multiplied by
// (1 - gap_decay_rate) (the one-HSP gap-decay divisor). Used by BLAST+ for the hit-saving cutoff
// (E-value -> score) and for ungapped searches' E = 1e-300 word cutoff.
int evalue_cutoff_score(double evalue, const stats::KarlinParams& params, std::int64_t searchsp,
                        double gap_decay_rate = 0.0);

// The parameters blastp derives for one query (BlastInitialWordParametersNew/Update, one context):
//   x_dropoff = ungapped_x_dropoff(x_dropoff_bits, ungapped.lambda);
//   gapped search:   cutoff = min(gap_trigger, cutoff_score_max);
//   ungapped search: cutoff = min(evalue_cutoff_score(1e-300, ungapped, min(subject_length,
//                    query_length) * subject_length, 0.5), gap_trigger, cutoff_score_max)
// where gap_trigger = gap_trigger_score(gap_trigger_bits, ungapped) and cutoff_score_max is the hit-saving
// stage's cutoff for the requested E-value (BlastHitSavingParametersUpdate: evalue_cutoff_score of the
// E-value over the effective search space, or the Spouge cutoff for gapped searches; INT_MAX: no cap).
// For ungapped searches the E = 1e-300 term exceeds the gap trigger for realistic lengths, so both
// forms agree in practice; subject_length only matters there.
UngappedParams blastp_ungapped_params(const stats::KarlinParams& ungapped, bool gapped_search,
                                      int query_length, int subject_length, int cutoff_score_max = INT_MAX,
                                      double x_dropoff_bits = kUngappedXDropoffBits,
                                      double gap_trigger_bits = kGapTriggerBits);

// The two-hit extension over spans (extend_two_hit_raw in two_hit.hpp, which documents the rules; one
// implementation for the CPU and the GPU): `table` is the 32 x 32 score table (ScoringMatrix::row(0)),
// query/subject hold codes < 32.
TwoHitExtension extend_two_hit(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                               const std::int8_t* table, std::int32_t s_first_end, std::int32_t s_second,
                               std::int32_t q_second, int x_dropoff, int word_size);

// Counts of one subject (BLAST+'s BlastUngappedStats increments).
struct UngappedCounts {
  std::int64_t hits = 0;      // word hits seen
  std::int64_t extended = 0;  // two-hit extensions performed
  std::int64_t saved = 0;     // HSPs saved (score >= cutoff)
};

// The two-hit word finder for one query, reused over many subjects (one per thread). Like BLAST+ it
// keeps one diagonal table of 2^k >= query_length + window entries (diagonal q - s masked) whose
// entries hold offsets shifted by a running offset: after each subject the offset grows by the subject's
// length + window, so no entry left by an earlier subject is within the window (a fresh state per
// subject, without clearing); when the offset reaches offset_limit (BLAST+: INT32_MAX / 4) the table is
// cleared instead. Masked diagonals that share an entry never interact (their hits are >= window apart
// in subject offset), so results equal those of an unbounded per-subject table.
class TwoHitFinder {
 public:
  // `query` (codes < 32) must outlive the finder; the matrix's table is copied.
  TwoHitFinder(std::span<const std::uint8_t> query, const ScoringMatrix& matrix, const UngappedParams& params,
               std::int32_t offset_limit = INT32_MAX / 4);

  const UngappedParams& params() const { return params_; }

  // One subject, its hits in ascending subject offset: appends the saved HSPs to `out` in the order they
  // were found (BLAST+ then sorts them: sort_ungapped_hsps).
  UngappedCounts run(std::span<const std::uint8_t> subject, std::span<const WordHit> hits,
                     std::vector<UngappedHsp>& out);

  // The same, streaming: begin_subject, then hit() for each word hit in ascending subject offset, then
  // end_subject (which advances the diagonal offset). `subject` must stay alive until end_subject.
  void begin_subject(std::span<const std::uint8_t> subject, std::vector<UngappedHsp>& out);
  void hit(std::int32_t query_offset, std::int32_t subject_offset) {
    ++counts_.hits;
    Diag& d = diags_[static_cast<std::uint32_t>(query_offset - subject_offset) & mask_];
    const std::int32_t shifted = subject_offset + offset_;
    if (d.flag) {
      if (shifted < d.last_hit) return;  // inside the last extension
      d.last_hit = shifted;
      d.flag = false;
      return;
    }
    const std::int32_t diff = shifted - d.last_hit;
    if (diff >= params_.window) {
      d.last_hit = shifted;
      return;
    }
    if (diff < params_.word_size) return;  // overlaps the first hit: ignored, first hit kept
    if (query_offset - diff < 0) {
      d.last_hit = shifted;
      return;
    }
    extend(d, query_offset, subject_offset, subject_offset - diff);
  }
  UngappedCounts end_subject();

 private:
  struct Diag {
    std::int32_t last_hit = 0;  // subject offset + offset_ of the last hit (or extension end)
    bool flag = false;          // an extension just happened on this diagonal
  };
  void extend(Diag& d, std::int32_t query_offset, std::int32_t subject_offset, std::int32_t first_hit);
  void clear();

  std::span<const std::uint8_t> query_;
  alignas(64) std::int8_t table_[kMaxCodes * kMaxCodes];
  UngappedParams params_;
  std::int32_t offset_limit_;
  std::vector<Diag> diags_;
  std::uint32_t mask_ = 0;
  std::int32_t offset_ = 0;
  std::span<const std::uint8_t> subject_;
  std::vector<UngappedHsp>* out_ = nullptr;
  UngappedCounts counts_;
};

// BLAST+'s order of saved HSPs (score_compare_match, via qsort): score descending, then subject start
// ascending, length descending, query start ascending; HSPs equal in all four keep their order (glibc's
// qsort is a stable merge sort for these sizes).
void sort_ungapped_hsps(std::vector<UngappedHsp>& hsps);

}  // namespace warpsearch::blast
