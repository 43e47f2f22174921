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
//
// Why it is exact: preliminary_stage visits the ungapped HSPs in order and skips one only when its
// containment tree (of the gapped HSPs found so far) reports it contained. Until an extension reaches the
// cutoff nothing is found, so the tree is empty and no HSP is skipped; the restart after an inconclusive
// restricted score empties the tree again. So as long as no extension reaches the cutoff the stage runs
// exactly the screen's loop: gapped_start, preliminary_gapped_alignment (restricted as decided from the
// first HSP), the restart unrestricted on an inconclusive restricted score. If no extension ever reaches
// the cutoff, the stage returns nothing and its counts are the screen's (kEmpty); at the first extension
// that reaches it, the screen stops (kFull) and the caller runs preliminary_hsps, which recomputes
// everything. A DP that needs more column cells than the caller gave also gives kFull.
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

// The screen for one (query, subject): `hsps` are the pair's `count` saved ungapped HSPs in
// sort_ungapped_hsps order, `table` the 32 x 32 score table (ScoringMatrix::row(0) of the context's
// scoring()), `col` a DP column of `capacity` cells (xdrop.hpp). Returns kEmpty when every extension the
// stage runs stays below the cutoff: preliminary_hsps then returns nothing, and *counts hold exactly what
// it adds to SearchCounts::gapped_extensions / ::redone_subjects. Returns kFull as soon as an extension
// reaches the cutoff or a DP needs more than `capacity` cells (*counts then hold the work done so far).
WS_BLAST_HD inline ScreenResult screen_preliminary(const std::uint8_t* query, int query_length,
                                                   const std::uint8_t* subject, int subject_length,
                                                   const std::int8_t* table, const UngappedHsp* hsps,
                                                   int count, const ScreenParams& params, XdropCell* col,
                                                   int capacity, ScreenCounts* counts) {
  ScreenCounts c;
  ScreenResult result = ScreenResult::kEmpty;
  bool restricted = starts_restricted(params, hsps, count);
  for (int i = 0; i < count; ++i) {
    const UngappedHsp& u = hsps[i];
    ++c.gapped_extensions;
    const SeedPoint seed =
        gapped_start_raw(query, subject, table, u.query_start, u.subject_start, u.length());
    GappedScore g;
    if (!preliminary_gapped_alignment_raw(query, query_length, subject, subject_length, table,
                                          params.gap_open, params.gap_extend, params.x_dropoff, seed,
                                          restricted, col, capacity, &g)) {
      result = ScreenResult::kFull;  // the column is too short: the CPU decides
      break;
    }
    if (restricted_inconclusive(params, restricted, g.score)) {
      ++c.redone;
      restricted = false;
      i = -1;  // the loop's ++i restarts at 0
      continue;
    }
    if (g.score >= params.cutoff) {
      result = ScreenResult::kFull;  // a preliminary HSP: the CPU's stage computes the list
      break;
    }
  }
  *counts = c;
  return result;
}

}  // namespace warpsearch::blast
