// seg.hpp: SEG low-complexity masking of protein queries, exactly as BLAST+ 2.12 applies it for
// `blastp -seg yes` (core/blast_seg.c: SeqBufferSeg with SegParametersNewAa's defaults; core/blast_filter.c:
// BlastSetUp_Filter, BlastSeqLocCombine, BlastSetUp_MaskQuery) and as `segmasker` (same code, same
// defaults) reports it.
//
// Contents:
//   SegParams     window / locut / hicut (blastp's and segmasker's defaults 12 / 2.2 / 2.5)
//   Interval      a half-open residue range [begin, end)
//   seg_segments  the raw segment list of SeqBufferSeg, as `segmasker -outfmt interval` prints it
//   seg_mask      the residues blastp masks: the union of the segments as sorted, disjoint, non-adjacent runs
//   apply_mask    overwrite masked residues with X (what BLAST+ does to its working copy of the query)
//   detail::      the numeric tables, exposed for bit-for-bit tests against libblast's own
//
// The algorithm (Wootton & Federhen; BLAST+'s variant, reproduced decision for decision):
//   - Residues: only the 20 canonical amino acids (codes 0..19) are counted. Every other code (B, J, Z, O,
//     U, X, *) is "bogus": it occupies a window position but enters no count. Lower/upper case does not
//     exist at this level (codes are case-free), so lowercase input is segged like uppercase.
//   - Trigger entropies: for every window of `window` residues fully inside the sequence, the Shannon
//     entropy (bits) of the counts of its canonical residues, sum over the counts in descending order of
//     c * ln(c / t) / ln 2, then |sum / t| with t = number of canonical residues (0 when t = 0). When t == 10
//     BLAST+ takes ln(c / 10) from a table of 8-digit constants instead of calling log (kept, it changes
//     last bits). A window with more than 2 bogus residues (maxbogus) has no entropy (never triggers and
//     stops extensions). Window w starting at s is recorded at position s + (window + 1) / 2 - 1.
//   - Scan left to right; a position with entropy <= locut triggers a segment: it extends left (not
//     below the first position after the previous segment's resume point) and right while entropies are
//     defined and <= hicut, and the segment spans the windows of those positions.
//   - Trim: among all sub-ranges of the segment at most 50 (maxtrim) residues shorter, longest first and
//     leftmost first, keep the first one with the smallest log-probability
//        ln P = ln(20! / (prod over groups of equal counts g! * zeros!)) + ln(len! / prod c!) - len * ln 20
//     (counts in descending order, len includes bogus residues; ln n! from BLAST+'s table of values
//     rounded to 6 decimals for n <= 10000, Stirling beyond; the initial best is 1.0, so a range whose
//     ln P >= 1 keeps the untrimmed segment).
//   - If the trim cut the whole trigger window off the left, the cut-off left part is segged again on its
//     own (recursively); BLAST+ keeps only the LAST segment that recursion finds (its list splicing drops
//     the others) and it precedes the current segment in the list.
//   - Resume the scan after min(last extended position, trimmed end + (window + 1) / 2 - 1).
//   Segments may overlap or touch; segmasker prints them unmerged. blastp (overlaps = TRUE, then
//   BlastSeqLocCombine) masks their union, which is what seg_mask returns.
//
// How blastp uses the mask (checked against the installed blastp 2.12):
//   - Only the query is segged (subjects are never segged; a database may carry its own masks).
//   - BlastSetUp_MaskQuery keeps an unmasked copy of the query and replaces the masked residues of the
//     working copy with X. That X-ed query is used for EVERYTHING that scores: the lookup table (which
//     also only indexes words lying entirely inside the unmasked stretches, BLAST_ComplementMaskLocations),
//     ungapped and gapped extension, traceback scores and composition-based statistics. E.g. a 19-residue
//     poly-Q run aligned to itself scores 19 * BLOSUM62(X, Q) = -19 instead of 19 * 5.
//   - The unmasked copy is used only to count identities and positives (Blast_HSPGetNumIdentities-
//     AndPositives): a masked query residue equal to the subject residue still counts as an identity.
//   - Output: outfmt 6/7 qseq shows the unmasked residues in upper case; outfmt 0 shows the masked query
//     residues in lower case (and the middle line compares the unmasked letters).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace warpsearch::blast {

struct SegParams {
  // As blastp's -seg "window locut hicut" treats them (BlastSetUp_Filter): a value <= 0 keeps the default;
  // then hicut is raised to locut when below it (s_SegParametersCheck).
  int window = 12;     // trigger window length
  double locut = 2.2;  // trigger entropy (bits)
  double hicut = 2.5;  // extension entropy (bits)
};

// Half-open residue range [begin, end), 0-based. segmasker prints begin " - " end - 1.
struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

// The segments of SeqBufferSeg (overlaps = FALSE) in BLAST+'s list order: the order of discovery, a
// segment recovered by left recursion directly before the segment whose trim exposed it. Segments may
// overlap or touch and are not sorted in general. Empty when the sequence is shorter than the window.
std::vector<Interval> seg_segments(std::span<const std::uint8_t> protein_codes, const SegParams& params = {});

// The residues blastp -seg yes masks: the union of seg_segments(), as sorted, disjoint, non-adjacent runs.
// (BLAST+'s own list after BlastSeqLocCombine covers the same residues; it may split a run where two
// segments touch, which changes nothing downstream.)
std::vector<Interval> seg_mask(std::span<const std::uint8_t> protein_codes, const SegParams& params = {});

// Sets every residue inside the intervals to X (kProteinUnknown). Intervals must lie inside codes.
void apply_mask(std::span<std::uint8_t> protein_codes, std::span<const Interval> intervals);

namespace detail {
// ln n! as SEG uses it: BLAST+'s table (values rounded to 6 decimals) for n <= 10000, Stirling beyond.
double seg_ln_factorial(std::int64_t n);
// ln(k / 10), k = 0..10, as SEG's table for windows of ten canonical residues holds it (0 for k = 0 and 10).
double seg_ln_tenth(int k);
}  // namespace detail

}  // namespace warpsearch::blast
