// gapped.hpp: BLAST+ 2.12 blastp gapped extension, reproduced exactly (scores, end points, tie-breaking).
//
// Contents:
//   GappedParams / XDropoffs / blastp_xdropoffs   gap costs and X-drop limits in raw score units, with the
//                        bits -> raw conversion of BLAST_ExtensionParametersNew (15 and 25 bits by default).
//   SeedPoint, HalfExtension, GappedScore   (xdrop.hpp) the result records
//   gapped_start, traceback_offsets    where a gapped extension starts: the middle of the best
//                        11-residue window of an ungapped HSP (BlastGetStartForGappedAlignment), and the
//                        variant the traceback stage uses for HSPs without a start (BlastGetOffsets...).
//   semi_gapped_extend   one half of the score-only X-drop extension (Blast_SemiGappedAlign, or
//                        s_RestrictedGappedAlign when restricted) with BLAST's dynamic band.
//   preliminary_gapped_alignment   both halves from a seed (s_BlastProtGappedAlignment): score and ends.
//   traceback_extend     one half with traceback (ALIGN_EX), ops in left-to-right order.
//   gapped_alignment_with_traceback  both halves with traceback (BLAST_GappedAlignmentWithTraceback):
//                        edit script, ends and score, leading/trailing gaps pruned as BLAST does; also over
//                        an IntScoreTable (32-bit scores: the composition redo's matrix at scale 32).
//   btop, script_score   BLAST's BTOP string of an alignment, and a plain rescoring of an edit script.
//
// The DP itself (score-only, restricted and traceback variants, one implementation) is xdrop.hpp's
// header-only __host__ __device__ code, which the GPU kernels run too.
//
// Conventions: sequences are digital protein codes (alphabet.hpp) scored with ScoringMatrix::score();
// coordinates are 0-based, ends exclusive. A gap of length k costs open + k * extend (BLAST's convention).
//
// What one half-extension computes (the DP BLAST runs, stated precisely): rows a = 0..M consume residues of
// A, columns b = 0..N residues of B, moving away from the seed. Cell (0, 0) scores 0; Gotoh's recurrences
// H = max(diag, E, F), E(a+1, b) = max(H(a, b) - open - extend, E(a, b) - extend) (vertical: gap in B),
// F likewise along a row (gap in A); row 0 holds F only, column 0 E only. A cell whose H falls more than
// X below the best H seen so far (rows in order, columns left to right) is dropped: its H becomes -inf
// for the next row; a dropped first cell of a row moves the band start right, and a row whose last cell
// survives grows the band along its row gap while that gap stays within X (then one more -inf cell).
// The result is the best H (0 when nothing beats the empty extension) at the FIRST cell reaching it in
// row-major order. With X larger than any score range, no cell is dropped and this is exactly the best
// start-anchored, end-free Gotoh alignment of A against B.
// Tie rules of the traceback (ALIGN_EX): H prefers diag over E over F on equal values; E and F prefer
// extending a gap to opening one on equal values; the traceback starts at the best cell above.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blast/xdrop.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/scoring.hpp"

namespace warpsearch::blast {

using Residues = std::span<const std::uint8_t>;

// Gap costs and X-drop in raw score units. The extensions use max(x_dropoff, gap_open + gap_extend),
// as BLAST does.
struct GappedParams {
  int gap_open = 11;
  int gap_extend = 1;
  int x_dropoff = 0;
};

// BLAST's bits -> raw conversion of an X-drop: (int)(bits * ln 2 / lambda), truncated.
int xdrop_bits_to_raw(double bits, double lambda);

struct XDropoffs {
  int preliminary = 0;  // gap_x_dropoff
  int traceback = 0;    // gap_x_dropoff_final: never below the preliminary value
};

// blastp's X-drops (-xdrop_gap 15, -xdrop_gap_final 25 bits by default) converted with the gapped lambda of
// (matrix, gaps) (stats::gapped_params). nullopt when BLAST+ tabulates no gapped parameters for them.
std::optional<XDropoffs> blastp_xdropoffs(const ScoringMatrix& matrix, GapCosts gaps,
                                          double preliminary_bits = 15, double final_bits = 25);

// BlastGetStartForGappedAlignment for the ungapped HSP query[q_start, q_start + length) ~
// subject[s_start, s_start + length): for length <= 11 the middle pair (offset length / 2); otherwise the
// window of 11 pairs with the highest score (the first one on ties, windows scanned left to right) gives
// its middle pair (window end - 5) when that score is positive, else the HSP's first pair.
SeedPoint gapped_start(Residues query, Residues subject, const ScoringMatrix& matrix, int q_start,
                       int s_start, int length);

// BlastGetOffsetsForGappedAlignment, used by the traceback stage for an HSP that has no start yet: HSP
// query[q_start, q_end) ~ subject[s_start, s_end). For q_end - q_start <= 11 the pair at offset
// (q_end - q_start) / 2; else the END of the best 11-window (first on ties) over min(query, subject) length
// when its score is positive; else, if the last 11 pairs of the HSP score positive, (q_end - 5, s_end - 5);
// else nullopt (BLAST drops the HSP).
std::optional<SeedPoint> traceback_offsets(Residues query, Residues subject, const ScoringMatrix& matrix,
                                           int q_start, int q_end, int s_start, int s_end);

// Score-only half extension of a against b. Forward: consumes a[0], a[1], ... and b[0], b[1], ...;
// reverse: consumes a[size-1], a[size-2], ... and b likewise. restricted selects BLAST's approximate
// s_RestrictedGappedAlign (gaps may open only in rows / columns that are multiples of 10; blastp uses it
// in the preliminary stage for a query whose first ungapped HSP scores below 0.68 * cutoff when
// -evalue <= 10).
HalfExtension semi_gapped_extend(Residues a, Residues b, bool reverse, const ScoringMatrix& matrix,
                                 const GappedParams& params, bool restricted = false);

// Preliminary (score-only) gapped alignment of s_BlastProtGappedAlignment from a seed: the reverse half
// covers query[0, seed.q] ~ subject[.., seed.s] (seed pair included), the forward half what follows.
// For a subject of >= 90000 residues the subject range is cut as AdjustSubjectRange does. The work is
// preliminary_gapped_alignment_raw's (xdrop.hpp, shared with the GPU kernels).
GappedScore preliminary_gapped_alignment(Residues query, Residues subject, const ScoringMatrix& matrix,
                                         const GappedParams& params, SeedPoint seed, bool restricted = false);

// Edit operations, named as BLAST names them: an insertion aligns a query residue with a gap (eGapAlignIns),
// a deletion a subject residue with a gap (eGapAlignDel).
enum class EditOp : std::uint8_t { kSubstitution = 0, kInsertion = 1, kDeletion = 2 };
struct EditRun {
  EditOp op = EditOp::kSubstitution;
  int length = 0;
  friend bool operator==(const EditRun&, const EditRun&) = default;
};

// One half extension with traceback (ALIGN_EX): the half's result and its ops as runs in alignment order
// from left to right (for a reverse half: from the far end to the seed; forward: from the seed on).
struct HalfTraceback {
  HalfExtension end;
  std::vector<EditRun> ops;
};
HalfTraceback traceback_extend(Residues a, Residues b, bool reverse, const ScoringMatrix& matrix,
                               const GappedParams& params);

struct GappedAlignment {
  int score = 0;
  int q_start = 0, q_end = 0;
  int s_start = 0, s_end = 0;
  std::vector<EditRun> script;  // runs of equal ops, left to right
  friend bool operator==(const GappedAlignment&, const GappedAlignment&) = default;
};

// BLAST_GappedAlignmentWithTraceback (non-OOF) from a seed, after the traceback stage's AdjustSubjectRange:
// the reverse half includes the seed pair, the scripts are joined (merging the two runs at the seed when
// their ops agree), and leading / trailing gap runs are pruned with their cost added back to the score.
GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const ScoringMatrix& matrix,
                                                const GappedParams& params, SeedPoint seed);

// A score table with 32-bit scores, for matrices that do not fit ScoringMatrix's 8 bits (the composition-
// adjusted matrix at scale 32): score of codes a and b at [a * kMaxCodes + b].
using IntScoreTable = std::array<int, kMaxCodes * kMaxCodes>;

// The same alignment (same DP, band and tie rules: one implementation) scored with `table`, over the whole
// sequences: no AdjustSubjectRange, as in the composition redo (Blast_RedoOneMatch calls
// BLAST_GappedAlignmentWithTraceback directly). For subjects of < 90000 residues it equals the overload
// above with the table's scores.
GappedAlignment gapped_alignment_with_traceback(Residues query, Residues subject, const IntScoreTable& table,
                                                const GappedParams& params, SeedPoint seed);

// BLAST's BTOP string: identity runs as counts, other pairs as query letter then subject letter ('-' for a
// gap). Letters are upper-case protein symbols.
std::string btop(const GappedAlignment& alignment, Residues query, Residues subject);

// Score of an edit script laid from (q_start, s_start): matrix scores of the aligned pairs minus
// open + k * extend for every gap run of length k.
int script_score(Residues query, Residues subject, const ScoringMatrix& matrix, const GappedParams& params,
                 int q_start, int s_start, std::span<const EditRun> script);

}  // namespace warpsearch::blast
