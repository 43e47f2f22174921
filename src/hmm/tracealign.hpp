// Multiple alignments built from traces, as HMMER 3.3.2 builds the hmmsearch -A output: each included
// domain's alignment display is converted back into a faux subsequence and trace
// (p7_alidisplay_Backconvert), the traces are laid out on shared columns (p7_tracealign_Seqs, text mode:
// upper case residues and '-' in consensus columns, lower case residues and '.' in insert columns,
// insertions split half left / half right, #=GR PP, #=GC PP_cons and RF), and the result is written in
// Stockholm format (stockholm.hpp). Contents: FauxSeq, backconvert, tracealign_seqs, tophits_alignment,
// HitsAlignment and stockholm_alignment (the whole -A record of one query), alignment_saved_line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/abc.hpp"
#include "hmm/common.hpp"
#include "hmm/stockholm.hpp"
#include "hmm/tophits.hpp"
#include "hmm/trace.hpp"

namespace warpsearch::hmm {

/// Option flags of tracealign_seqs (p7_ALL_CONSENSUS_COLS, p7_TRIM; p7_DIGITIZE is not offered: only the
/// text-mode alignment that HMMER writes is built).
inline constexpr unsigned kAllConsensusCols = 1u << 1;  // a column for every node 1..M, even if all deletes
inline constexpr unsigned kTrim = 1u << 2;              // drop residues of N/C (and I0, IM) flanks

/// A (sub)sequence to align: Easel digital codes with sentinels at [0] and [n+1], and the name,
/// accession and description the alignment shows for it (empty when absent).
struct FauxSeq {
  std::string name;
  std::string acc;
  std::string desc;
  Dsq dsq;
  int64_t n = 0;
};

/// p7_alidisplay_Backconvert: the aligned part of `ad` as a subsequence (named "<sqname>/<sqfrom>-<sqto>",
/// description "[subseq from] <sqdesc or sqname>", accession sqacc) and a trace S N B (M|D|I)... E C T
/// over it. Model positions count from ad.hmmfrom; a column is M when ad.model is not a gap character,
/// D when additionally ad.aseq is a gap, I otherwise. The trace has posteriors decoded from ad.ppline
/// (p7_alidisplay_DecodePostProb) when ad.ppline is non-empty. Residues are digitized with `abc`.
/// Throws Error(kInternal) when the display is inconsistent (does not end at hmmto, bad characters).
void backconvert(const AliDisplay& ad, const Abc& abc, FauxSeq& sq, Trace& tr);

/// p7_tracealign_Seqs in text mode (hmm == NULL: no MM line) for profile traces tr[i] of sequences
/// sq[i] aligned to a model of length M. Traces with J states are rejected (as HMMER, which dies on them),
/// as are core-trace X states. Sequence names/accessions/descriptions are copied from sq.
TextMsa tracealign_seqs(const std::vector<FauxSeq>& sq, const std::vector<Trace>& tr, int M,
                        unsigned optflags, const Abc& abc);

/// p7_tophits_Alignment: the alignment of every included domain (Domain::is_included) of every included
/// hit (kIsIncluded), in the order given (rank order) and dcl order within a hit. M is taken from the
/// first such domain's display. Returns std::nullopt when there is no included domain (HMMER's eslFAIL).
std::optional<TextMsa> tophits_alignment(const std::vector<const Hit*>& ranked, const Abc& abc,
                                         unsigned optflags);

/// What hmmsearch needs to name the alignment: the query's name, accession and description (empty when
/// absent) and its alphabet; `program` is the #=GF AU author's program name.
struct AlignmentQuery {
  std::string_view name;
  std::string_view acc;
  std::string_view desc;
  const Abc* abc = nullptr;
  std::string_view program = "hmmsearch";
};

/// The -A output of one query: the Stockholm record text and its number of sequences (included domains).
struct HitsAlignment {
  std::string text;
  int nseq = 0;
};

/// hmmsearch's -A output for one query (hmmsearch.c): p7_tophits_Alignment with p7_ALL_CONSENSUS_COLS,
/// #=GF ID/AC/DE from the query, AU "<program> (HMMER 3.3.2)", written with eslMSAFILE_STOCKHOLM when
/// textw > 0, else eslMSAFILE_PFAM (--notextw). `th` must be sorted and thresholded. Returns std::nullopt
/// when no domain is included (hmmsearch then writes nothing to the -A file for this query).
std::optional<HitsAlignment> stockholm_alignment(const TopHits& th, const AlignmentQuery& query, int textw);

/// The same for hits already in rank order.
std::optional<HitsAlignment> stockholm_alignment(const std::vector<Hit>& ranked, const AlignmentQuery& query,
                                                 int textw);

/// The line hmmsearch writes to its main output after a query's "//" when -A is given:
/// "# Alignment of <nseq> hits satisfying inclusion thresholds saved to: <path>\n", or
/// "# No hits satisfy inclusion thresholds; no alignment saved\n" when `ali` is empty.
std::string alignment_saved_line(const std::optional<HitsAlignment>& ali, std::string_view path);

}  // namespace warpsearch::hmm
