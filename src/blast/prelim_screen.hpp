// prelim_screen.hpp: a screen of blastp's preliminary gapped stage (search.hpp stage 4, BLAST+ 2.12
// BLAST_GetGappedScore) for one (query, subject), header-only and __host__ __device__ (hd.hpp): it proves
// cheaply, with the CPU's own code (xdrop.hpp), that the stage finds nothing, and otherwise hands the pair
// to the CPU's preliminary_hsps.
//
// Contents:
//   kRestrictedMult, kRestrictedWorstEvalue   BLAST's constants of the restricted (approximate) alignment
//   ScreenResult, ScreenParams, ScreenCounts  the verdict, the stage's raw parameters, its counts
//   screen_params        the parameters of one query (what preliminary_stage derives; host only, search.cpp)
//   starts_restricted / restricted_inconclusive   the two rules of the restricted path, shared with
//                        search.cpp's preliminary_stage
//   screen_preliminary   the screen
//   screen_extension / ScreenStep / screen_pass / screen_split   the same screen split into independent
//                        extensions and a decision over their scores (the GPU runs one thread per
//                        extension, so a pair with many HSPs no longer costs one thread their sum)
//
// Why it is exact: preliminary_stage visits the ungapped HSPs in order and skips one only when its
// containment tree (of the gapped HSPs found so far) reports it contained. Until an extension reaches the
// cutoff nothing is found, so the tree is empty and no HSP is skipped; the restart after an inconclusive
// restricted score empties the tree again. So as long as no extension reaches the cutoff the stage runs
// exactly the screen's loop: gapped_start, preliminary_gapped_alignment (restricted as decided from the
// first HSP), the restart unrestricted on an inconclusive restricted score. If no extension ever reaches
// the cutoff, the stage returns nothing and its counts are the screen's (kEmpty); at the first extension
// that reaches it, the screen stops (kFull) and the caller runs preliminary_hsps, which recomputes
// everything. A DP that needs more column cells than the caller gave also gives kFull. An extension stops
// as soon as its score is known to reach the cutoff (preliminary_gapped_alignment_raw's stop_at): that
// lower bound decides kFull as the complete score would (a restricted score >= cutoff is conclusive), and
// a pair that holds a hit costs the screen only the start of its first such extension.
#pragma once

#include <cstdint>

#include "blast/hd.hpp"
#include "blast/two_hit.hpp"
#include "blast/xdrop.hpp"

namespace warpsearch::blast {

class QueryContext;  // search.hpp

inline constexpr double kRestrictedMult = 0.68;         // BLAST_GetGappedScore's kRestrictedMult
inline constexpr double kRestrictedWorstEvalue = 10.0;  // RESTRICTED_ALIGNMENT_WORST_EVALUE

enum class ScreenResult : std::uint8_t { kEmpty = 0, kFull = 1 };

// The preliminary stage's raw parameters for one query.
struct ScreenParams {
  int cutoff;               // hit-saving cutoff: a gapped score >= cutoff is kept (BlastpSetup::cutoff_score)
  int restricted_cutoff;    // (int)(kRestrictedMult * cutoff)
  bool restricted_allowed;  // -evalue <= kRestrictedWorstEvalue
  int gap_open;
  int gap_extend;
  int x_dropoff;  // raw, the preliminary X-drop (BlastpSetup::gapped_x_dropoffs.preliminary)
};

// What the stage adds to SearchCounts::gapped_extensions and ::redone_subjects for one subject.
struct ScreenCounts {
  std::int32_t gapped_extensions = 0;
  std::int32_t redone = 0;
};

// The values preliminary_stage uses for `context` (search.cpp): cutoff = setup().cutoff_score,
// restricted_cutoff = (int)(kRestrictedMult * cutoff), restricted_allowed = options().evalue <=
// kRestrictedWorstEvalue, gap costs of options(), x_dropoff = setup().gapped_x_dropoffs.preliminary.
ScreenParams screen_params(const QueryContext& context);

// Whether the stage starts with restricted alignments: allowed, and the first (best) of the `count` sorted
// ungapped HSPs scores below the restricted cutoff.
WS_BLAST_HD inline bool starts_restricted(const ScreenParams& params, const UngappedHsp* hsps, int count) {
  return params.restricted_allowed && count > 0 && hsps[0].score < params.restricted_cutoff;
}

// Whether a restricted extension's score is inconclusive (in [restricted cutoff, cutoff)): the stage then
// discards the subject's gapped HSPs and restarts unrestricted.
WS_BLAST_HD inline bool restricted_inconclusive(const ScreenParams& params, bool restricted, int score) {
  return restricted && score < params.cutoff && score >= params.restricted_cutoff;
}

// The split form (what the GPU runs). Without a hit every extension is independent of the others: the
// tree of gapped HSPs stays empty, and the only state, restricted or not, is set before the loop and
// changes at most once (an inconclusive restricted score restarts the loop unrestricted; a restart never
// happens again). So a pair is screened by
//   pass 0: every HSP extended in the starting mode (screen_extension), in any order or in parallel;
//   screen_pass over those scores in HSP order: kFull at the first score reaching the cutoff, kRedo at the
//           first inconclusive one (index k), else kEmpty with count extensions;
//   pass 1 (after kRedo only): every HSP extended unrestricted; screen_pass again: kFull or kEmpty with
//           k + 1 + count extensions and one redone subject.
// Scores past the first deciding one are computed but not looked at, as the sequential loop never runs
// those extensions. screen_split runs this on one thread; it equals screen_preliminary (verdict, and the
// counts of a kEmpty pair).

// kScreenOverflow: the score screen_extension gives when the DP column was too short; it counts as
// reaching the cutoff (the pair goes to the CPU).
inline constexpr int kScreenOverflow = xdrop::kNoStop;

enum class ScreenStep : std::uint8_t { kEmpty = 0, kFull = 1, kRedo = 2 };

// One extension of the screen: hsp's gapped start, then its preliminary extension (restricted or not)
// stopped once it reaches the cutoff. Returns the score (a lower bound when >= params.cutoff) or
// kScreenOverflow.
// The screen functions take the DP column as an xdrop::FlatColumn or xdrop::RingColumn (the GPU's).
template <class Col>
WS_BLAST_HD inline int screen_extension(const std::uint8_t* query, int query_length,
                                        const std::uint8_t* subject, int subject_length,
                                        const std::int8_t* table, const UngappedHsp& hsp,
                                        const ScreenParams& params, bool restricted, Col col) {
  const SeedPoint seed =
      gapped_start_raw(query, subject, table, hsp.query_start, hsp.subject_start, hsp.length());
  GappedScore g;
  if (!preliminary_gapped_alignment_on(query, query_length, subject, subject_length, table, params.gap_open,
                                       params.gap_extend, params.x_dropoff, seed, restricted, col, &g,
                                       params.cutoff))
    return kScreenOverflow;
  return g.score;
}

// The screen for one (query, subject): `hsps` are the pair's `count` saved ungapped HSPs in
// sort_ungapped_hsps order, `table` the 32 x 32 score table (ScoringMatrix::row(0) of the context's
// scoring()), `col` the DP column (xdrop.hpp: flat or ring). Returns kEmpty when every extension the
// stage runs stays below the cutoff: preliminary_hsps then returns nothing, and *counts hold exactly what
// it adds to SearchCounts::gapped_extensions / ::redone_subjects. Returns kFull as soon as an extension
// reaches the cutoff or a DP the column cannot hold (*counts then hold the work done so far).
template <class Col>
WS_BLAST_HD inline ScreenResult screen_preliminary(const std::uint8_t* query, int query_length,
                                                   const std::uint8_t* subject, int subject_length,
                                                   const std::int8_t* table, const UngappedHsp* hsps,
                                                   int count, const ScreenParams& params, Col col,
                                                   ScreenCounts* counts) {
  ScreenCounts c;
  ScreenResult result = ScreenResult::kEmpty;
  bool restricted = starts_restricted(params, hsps, count);
  for (int i = 0; i < count; ++i) {
    ++c.gapped_extensions;
    const int score = screen_extension(query, query_length, subject, subject_length, table, hsps[i], params,
                                       restricted, col);
    if (restricted_inconclusive(params, restricted, score)) {
      ++c.redone;
      restricted = false;
      i = -1;  // the loop's ++i restarts at 0
      continue;
    }
    if (score >= params.cutoff) {
      // A preliminary HSP (the CPU's stage computes the list), or the column was too short (the CPU
      // decides).
      result = ScreenResult::kFull;
      break;
    }
  }
  *counts = c;
  return result;
}

// The sequential loop's decision over one pass's `count` scores, in HSP order (see above); *redo_at is the
// index of the inconclusive score on kRedo (only a restricted pass can give kRedo).
WS_BLAST_HD inline ScreenStep screen_pass(const int* scores, int count, const ScreenParams& params,
                                          bool restricted, int* redo_at) {
  for (int i = 0; i < count; ++i) {
    if (restricted_inconclusive(params, restricted, scores[i])) {
      *redo_at = i;
      return ScreenStep::kRedo;
    }
    if (scores[i] >= params.cutoff) return ScreenStep::kFull;
  }
  return ScreenStep::kEmpty;
}

// The split form on one thread, with `scores` room for `count` values: equals screen_preliminary.
template <class Col>
WS_BLAST_HD inline ScreenResult screen_split(const std::uint8_t* query, int query_length,
                                             const std::uint8_t* subject, int subject_length,
                                             const std::int8_t* table, const UngappedHsp* hsps, int count,
                                             const ScreenParams& params, Col col, int* scores,
                                             ScreenCounts* counts) {
  ScreenCounts c;
  const bool restricted = starts_restricted(params, hsps, count);
  for (int i = 0; i < count; ++i)
    scores[i] = screen_extension(query, query_length, subject, subject_length, table, hsps[i], params,
                                 restricted, col);
  int redo_at = 0;
  ScreenStep step = screen_pass(scores, count, params, restricted, &redo_at);
  c.gapped_extensions = count;
  if (step == ScreenStep::kRedo) {
    for (int i = 0; i < count; ++i)
      scores[i] =
          screen_extension(query, query_length, subject, subject_length, table, hsps[i], params, false, col);
    const int first_pass = redo_at + 1;
    step = screen_pass(scores, count, params, false, &redo_at);
    c.gapped_extensions = first_pass + count;
    c.redone = 1;
  }
  *counts = c;
  return step == ScreenStep::kEmpty ? ScreenResult::kEmpty : ScreenResult::kFull;
}

}  // namespace warpsearch::blast
