// Null2 (biased composition) odds ratios of a domain (HMMER 3.3.2 impl_sse/null2.c). Both estimators
// fill row 0 of a striped matrix with per-state usage frequencies (M and I vectors, N/C/J specials) and
// then share the same finishing step: per residue x, a 4-lane float accumulation over q of
// M0q * rfv[x][q] + I0q (insert odds are implicitly 1), HMMER's horizontal sum (l0 + l1) + (l2 + l3),
// plus the N+C+J frequency; degenerate codes averaged by esl_abc_FAvgScVec. The code is a template over vf4's
// op sets (omx.hpp): SSE2 or portable lanes, identical bits. No exp/log is involved.
#include "hmm/null2.hpp"

#include <cstddef>

#include "hmm/abc.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/trace.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

inline float* vec_at(float* row, int q, int s) { return row + (q * kOmxNSCells + s) * 4; }
inline const float* vec_at(const float* row, int q, int s) { return row + (q * kOmxNSCells + s) * 4; }

/// norm = 1.0 / (float)Ld evaluated in double (C's usual conversions), stored as float.
inline float inverse_length(int Ld) {
  return static_cast<float>(1.0 / static_cast<double>(static_cast<float>(Ld)));
}

/// Scales row 0's M/I vectors and N/C/J specials by norm and computes null2[0..Kp-1] from them. With
/// has_inserts false the I vectors are all zero (null2 by trace counts inserts into M) and are neither
/// scaled nor added: acc + 0 == acc exactly for the non-negative sums here, so the bits are the same.
///
/// The residues' sums are independent chains of dependent adds, so they are computed kJam at a time
/// (the loop over q jammed): each acc[r] still adds its terms in q order, exactly as one residue at a
/// time, but the jammed chains overlap in the FP pipeline instead of waiting on each add's latency.
template <class Ops>
void finish_null2(const OProfile& om, Omx& wrk, int Ld, float* null2, bool has_inserts) {
  using V = typename Ops::V;
  constexpr int kJam = 4;
  const int Q = nqf(om.M);
  float* row0 = wrk.row(0);
  const float norm = inverse_length(Ld);
  const V sv = Ops::set1(norm);
  for (int q = 0; q < Q; ++q) {
    Ops::store(vec_at(row0, q, kOmxM), Ops::mul(Ops::load(vec_at(row0, q, kOmxM)), sv));
    if (has_inserts) Ops::store(vec_at(row0, q, kOmxI), Ops::mul(Ops::load(vec_at(row0, q, kOmxI)), sv));
  }
  wrk.x(0, kOmxN) *= norm;
  wrk.x(0, kOmxC) *= norm;
  wrk.x(0, kOmxJ) *= norm;

  const float xfactor = wrk.x(0, kOmxN) + wrk.x(0, kOmxC) + wrk.x(0, kOmxJ);
  const Abc& a = *om.abc;
  for (int x0 = 0; x0 < a.K; x0 += kJam) {
    const int n = a.K - x0 < kJam ? a.K - x0 : kJam;
    V acc[kJam];
    const float* rp[kJam];
    for (int r = 0; r < kJam; ++r) {
      acc[r] = Ops::zero();
      rp[r] = om.rfv_row(x0 + (r < n ? r : 0));  // unused chains (r >= n) repeat residue x0
    }
    for (int q = 0; q < Q; ++q) {
      const V m = Ops::load(vec_at(row0, q, kOmxM));
      for (int r = 0; r < kJam; ++r) acc[r] = Ops::add(acc[r], Ops::mul(m, Ops::load(rp[r] + q * 4)));
      if (has_inserts) {
        const V iv = Ops::load(vec_at(row0, q, kOmxI));
        for (int r = 0; r < kJam; ++r) acc[r] = Ops::add(acc[r], iv);
      }
    }
    for (int r = 0; r < n; ++r) {
      null2[x0 + r] = Ops::hsum(acc[r]);
      null2[x0 + r] += xfactor;
    }
  }
  avg_sc_vec(a, null2);
  null2[a.K] = 1.0f;       // gap
  null2[a.Kp - 2] = 1.0f;  // nonresidue '*'
  null2[a.Kp - 1] = 1.0f;  // missing data '~'
}

template <class Ops>
void by_expectation(const OProfile& om, Omx& pp, float* null2) {
  const int Q = nqf(om.M);
  const int Ld = pp.L;
  if (om.abc == nullptr) throw Error(ErrorKind::kInternal, "null2: profile has no alphabet");
  if (pp.validR <= Ld || pp.allocQ4 < Q)
    throw Error(ErrorKind::kInternal, "null2: posterior matrix too small");
  // Row 0 <- row 1 (all three states, as HMMER's memcpy), then + rows 2..Ld in order (M and I only).
  float* row0 = pp.row(0);
  const float* row1 = pp.row(1);
  for (int f = 0; f < Q * kOmxNSCells * 4; ++f) row0[f] = row1[f];
  pp.x(0, kOmxN) = pp.x(1, kOmxN);
  pp.x(0, kOmxC) = pp.x(1, kOmxC);
  pp.x(0, kOmxJ) = pp.x(1, kOmxJ);
  for (int i = 2; i <= Ld; ++i) {
    const float* rowi = pp.row(i);
    for (int q = 0; q < Q; ++q) {
      Ops::store(vec_at(row0, q, kOmxM),
                 Ops::add(Ops::load(vec_at(rowi, q, kOmxM)), Ops::load(vec_at(row0, q, kOmxM))));
      Ops::store(vec_at(row0, q, kOmxI),
                 Ops::add(Ops::load(vec_at(rowi, q, kOmxI)), Ops::load(vec_at(row0, q, kOmxI))));
    }
    pp.x(0, kOmxN) += pp.x(i, kOmxN);
    pp.x(0, kOmxC) += pp.x(i, kOmxC);
    pp.x(0, kOmxJ) += pp.x(i, kOmxJ);
  }
  finish_null2<Ops>(om, pp, Ld, null2, true);
}

template <class Ops>
void by_trace(const OProfile& om, const Trace& tr, int zstart, int zend, Omx& wrk, float* null2) {
  const int Q = nqf(om.M);
  if (om.abc == nullptr) throw Error(ErrorKind::kInternal, "null2: profile has no alphabet");
  if (wrk.validR < 1 || wrk.allocXR < 1 || wrk.allocQ4 < Q)
    throw Error(ErrorKind::kInternal, "null2: work matrix too small");
  float* row0 = wrk.row(0);
  for (int q = 0; q < Q; ++q) Ops::store(vec_at(row0, q, kOmxM), Ops::zero());
  wrk.x(0, kOmxN) = 0.0f;
  wrk.x(0, kOmxC) = 0.0f;
  wrk.x(0, kOmxJ) = 0.0f;

  int Ld = 0;
  for (int z = zstart; z <= zend; ++z) {
    const std::size_t zz = static_cast<std::size_t>(z);
    if (tr.i[zz] == 0) continue;  // silent (or first of an N/C/J run)
    ++Ld;
    const int k = tr.k[zz];
    if (k > 0) {
      // M or I: HMMER counts both into the M cell of node k (the I vector stays 0).
      row0[((k - 1) % Q * kOmxNSCells + kOmxM) * 4 + (k - 1) / Q] += 1.0f;
    } else {
      switch (tr.st[zz]) {
        case kTN: wrk.x(0, kOmxN) += 1.0f; break;
        case kTC: wrk.x(0, kOmxC) += 1.0f; break;
        case kTJ: wrk.x(0, kOmxJ) += 1.0f; break;
        default: break;
      }
    }
  }
  finish_null2<Ops>(om, wrk, Ld, null2, false);
}

}  // namespace

void null2_by_expectation(const OProfile& om, Omx& pp, float* null2) {
  by_expectation<vf4::Native>(om, pp, null2);
}
void null2_by_expectation_portable(const OProfile& om, Omx& pp, float* null2) {
  by_expectation<vf4::Portable>(om, pp, null2);
}
void null2_by_trace(const OProfile& om, const Trace& tr, int zstart, int zend, Omx& wrk, float* null2) {
  by_trace<vf4::Native>(om, tr, zstart, zend, wrk, null2);
}
void null2_by_trace_portable(const OProfile& om, const Trace& tr, int zstart, int zend, Omx& wrk,
                             float* null2) {
  by_trace<vf4::Portable>(om, tr, zstart, zend, wrk, null2);
}

}  // namespace warpsearch::hmm
