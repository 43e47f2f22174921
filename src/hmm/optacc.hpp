// Optimal accuracy alignment on striped posterior-probability matrices (HMMER 3.3.2 impl_sse/optacc.c):
// the DP maximizing the summed posterior probability of the aligned residues over paths that use only
// transitions of nonzero probability, and its traceback into a Trace with per-residue posteriors.
#pragma once

namespace warpsearch::hmm {

struct OProfile;
struct Omx;
struct Trace;

/// p7_OptimalAccuracy. pp is a full posterior decoding matrix (decoding()) of pp.L residues; ox (full
/// matrix, grown by the caller to at least om.M x pp.L) receives the OA DP: ox.M = om.M, ox.L = pp.L,
/// row 0 of M/D/I = -inf, specials of row 0 E=-inf N=0 J=-inf B=0 C=-inf. Per row, in 4-lane float
/// SIMD on HMMER's striped layout:
///   M(i,k) = max over {B(i-1), M(i-1,k-1), I(i-1,k-1), D(i-1,k-1)} restricted to nonzero transitions
///            (masked sources contribute 0, not -inf, exactly as HMMER's _mm_and_ps masks) + pp M(i,k)
///   I(i,k) = max over {M(i-1,k), I(i-1,k)} likewise + pp I(i,k);  D(i,k) = max {M(i,k-1), D(i,k-1)}
///   E = max of all M and D; J, C, N, B from the xf-transition-is-zero tests and the pp specials.
/// Returns the expected accuracy ox C(L) (HMMER's *ret_e).
float optimal_accuracy(const OProfile& om, const Omx& pp, Omx& ox);

/// optimal_accuracy with the portable lane operations instead of SSE2 (identical results; for tests).
float optimal_accuracy_portable(const OProfile& om, const Omx& pp, Omx& ox);

/// p7_OATrace. tr must be empty and have has_pp (else Error kInternal); appended with HMMER's tie rules
/// (M over I over D over B into M; M over D into D; M over I into I; E wins ties against C and J loops;
/// J wins ties against N into B; into E, the first M of the q-major scan at >= max beats later M, D needs
/// > max), pp taken from the posterior matrix, then reversed. tr.M = om.M, tr.L = ox.L; not indexed.
void oa_trace(const OProfile& om, const Omx& pp, const Omx& ox, Trace& tr);

}  // namespace warpsearch::hmm
