// Posterior decoding on striped float matrices: HMMER 3.3.2 impl_sse/decoding.c (p7_Decoding,
// p7_DomainDecoding) with the same float operations in the same order.
//
// Invariant used by both: with Forward values F(i) scaled by the product of Forward scale factors up to
// row i and Backward values B(i) scaled by the Backward factors from row i on, F(i)*B(i)*scaleproduct is
// the posterior, where scaleproduct starts at 1/B_N(0) (the total, in Backward's scaling) and, when the
// Backward matrix has its own scale factors, is multiplied row by row by fwd_scale(i)/bck_scale(i).
#include "hmm/decoding.hpp"

#include <cmath>
#include <cstddef>

#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

template <class Ops>
bool decoding_engine(const OProfile& om, const Omx& fwd, Omx& bck, Omx& pp) {
  const int L = fwd.L;
  const int M = om.M;
  const int Q = nqf(M);
  if (!fwd.fits_full(M, L) || !bck.fits_full(M, L) || !pp.fits_full(M, L) || bck.L != L) {
    throw Error(ErrorKind::kInternal, "decoding: matrices must be full matrices of the same size");
  }
  // scaleproduct = 1 / total, in float (double division rounded once, as HMMER's initializer).
  float scaleproduct = static_cast<float>(1.0 / static_cast<double>(bck.x(0, kOmxN)));

  pp.M = M;
  pp.L = L;
  {
    float* ppv = pp.row(0);
    for (int q = 0; q < Q; ++q)
      for (int s = 0; s < kOmxNSCells; ++s)
        Ops::store(ppv + (static_cast<std::size_t>(q) * kOmxNSCells + s) * 4, Ops::zero());
  }
  pp.x(0, kOmxE) = 0.0f;
  pp.x(0, kOmxN) = 0.0f;
  pp.x(0, kOmxJ) = 0.0f;
  pp.x(0, kOmxC) = 0.0f;
  pp.x(0, kOmxB) = 0.0f;

  for (int i = 1; i <= L; ++i) {
    float* ppv = pp.row(i);
    const float* fv = fwd.row(i);
    const float* bv = bck.row(i);  // may alias ppv: each cell is read before it is written
    const typename Ops::V totrv = Ops::set1(scaleproduct * fwd.x(i, kOmxScale));
    for (int q = 0; q < Q; ++q) {
      const std::size_t m = (static_cast<std::size_t>(q) * kOmxNSCells + kOmxM) * 4;
      const std::size_t d = (static_cast<std::size_t>(q) * kOmxNSCells + kOmxD) * 4;
      const std::size_t in = (static_cast<std::size_t>(q) * kOmxNSCells + kOmxI) * 4;
      typename Ops::V v = Ops::mul(Ops::load(fv + m), Ops::load(bv + m));
      Ops::store(ppv + m, Ops::mul(v, totrv));
      Ops::store(ppv + d, Ops::zero());
      v = Ops::mul(Ops::load(fv + in), Ops::load(bv + in));
      Ops::store(ppv + in, Ops::mul(v, totrv));
    }
    pp.x(i, kOmxE) = 0.0f;
    pp.x(i, kOmxN) = fwd.x(i - 1, kOmxN) * bck.x(i, kOmxN) * om.xf[kON][kOLoop] * scaleproduct;
    pp.x(i, kOmxJ) = fwd.x(i - 1, kOmxJ) * bck.x(i, kOmxJ) * om.xf[kOJ][kOLoop] * scaleproduct;
    pp.x(i, kOmxC) = fwd.x(i - 1, kOmxC) * bck.x(i, kOmxC) * om.xf[kOC][kOLoop] * scaleproduct;
    pp.x(i, kOmxB) = 0.0f;

    if (bck.has_own_scales) scaleproduct *= fwd.x(i, kOmxScale) / bck.x(i, kOmxScale);
  }
  return !std::isinf(scaleproduct);
}

}  // namespace

bool decoding(const OProfile& om, const Omx& fwd, Omx& bck, Omx& pp) {
  return decoding_engine<vf4::Native>(om, fwd, bck, pp);
}

namespace detail {
bool decoding_portable(const OProfile& om, const Omx& fwd, Omx& bck, Omx& pp) {
  return decoding_engine<vf4::Portable>(om, fwd, bck, pp);
}
}  // namespace detail

bool domain_decoding(const OProfile& om, const Omx& fwd, const Omx& bck, std::vector<float>& btot,
                     std::vector<float>& etot, std::vector<float>& mocc) {
  const int L = fwd.L;
  if (bck.L != L || fwd.allocXR <= L || bck.allocXR <= L) {
    throw Error(ErrorKind::kInternal, "domain_decoding: Forward and Backward matrices differ in length");
  }
  const std::size_t n = static_cast<std::size_t>(L) + 1;
  if (btot.size() < n) btot.resize(n);
  if (etot.size() < n) etot.resize(n);
  if (mocc.size() < n) mocc.resize(n);

  float scaleproduct = static_cast<float>(1.0 / static_cast<double>(bck.x(0, kOmxN)));
  btot[0] = 0.0f;
  etot[0] = 0.0f;
  mocc[0] = 0.0f;
  for (int i = 1; i <= L; ++i) {
    // scaleproduct covers rows 0..i-2 here.
    btot[i] =
        btot[i - 1] + (fwd.x(i - 1, kOmxB) * bck.x(i - 1, kOmxB) * fwd.x(i - 1, kOmxScale) * scaleproduct);
    if (bck.has_own_scales) scaleproduct *= fwd.x(i - 1, kOmxScale) / bck.x(i - 1, kOmxScale);
    // Now rows 0..i-1.
    etot[i] = etot[i - 1] + (fwd.x(i, kOmxE) * bck.x(i, kOmxE) * fwd.x(i, kOmxScale) * scaleproduct);

    float njcp = fwd.x(i - 1, kOmxN) * bck.x(i, kOmxN) * om.xf[kON][kOLoop] * scaleproduct;
    njcp += fwd.x(i - 1, kOmxJ) * bck.x(i, kOmxJ) * om.xf[kOJ][kOLoop] * scaleproduct;
    njcp += fwd.x(i - 1, kOmxC) * bck.x(i, kOmxC) * om.xf[kOC][kOLoop] * scaleproduct;
    mocc[i] = static_cast<float>(1.0 - static_cast<double>(njcp));
  }
  return !std::isinf(scaleproduct);
}

}  // namespace warpsearch::hmm
