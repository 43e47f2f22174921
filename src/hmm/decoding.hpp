// Posterior decoding on striped float matrices (HMMER 3.3.2 impl_sse/decoding.c, bit for bit).
//
//   decoding:        p7_Decoding — posterior probability of each M and I cell and of the N, J, C
//                    emissions per residue, from a Forward and a Backward matrix (full mode).
//   domain_decoding: p7_DomainDecoding — per residue the cumulative expected number of domain begins
//                    (btot) and ends (etot) and the probability mocc[i] that residue i is in the core
//                    model; works with parser-mode matrices (only special-state rows are read).
//
// Both return false where HMMER returns eslERANGE: the running product of scale-factor ratios (only
// non-trivial when the Backward matrix has its own scales) overflowed to infinity. The results must
// then not be used (HMMER's callers skip the domain / sequence).
#pragma once

#include <vector>

#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"

namespace warpsearch::hmm {

/// p7_Decoding: pp = posterior decoding of fwd and bck (both full, same L and M). pp must fit_full(M, L);
/// pp may be the same object as bck (HMMER decodes into the Backward matrix in place), so bck is
/// taken non-const. Row 0 and all D cells are 0; E and B specials are 0; N, J, C are their emission
/// posteriors. Returns false on eslERANGE.
[[nodiscard]] bool decoding(const OProfile& om, const Omx& fwd, Omx& bck, Omx& pp);

namespace detail {
/// decoding on the portable vf4 lanes (tests check it equals the native path bit for bit).
[[nodiscard]] bool decoding_portable(const OProfile& om, const Omx& fwd, Omx& bck, Omx& pp);
}  // namespace detail

/// p7_DomainDecoding: fills btot[0..L], etot[0..L], mocc[0..L] (resized to at least L+1; index 0 = 0)
/// from the specials of fwd and bck (parser or full mode). Returns false on eslERANGE.
[[nodiscard]] bool domain_decoding(const OProfile& om, const Omx& fwd, const Omx& bck,
                                   std::vector<float>& btot, std::vector<float>& etot,
                                   std::vector<float>& mocc);

}  // namespace warpsearch::hmm
