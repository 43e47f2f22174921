// Traceback bookkeeping (HMMER 3.3.2 p7_trace.c): appending states with HMMER's i/k/pp conventions,
// reversal of right-to-left built traces, the domain index, and the profile-trace validator used by tests.
#include "hmm/trace.hpp"

#include <cstddef>
#include <string>
#include <utility>

#include "hmm/common.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::hmm {

namespace {

bool is_emit_on_transition(int s) { return s == kTN || s == kTC || s == kTJ; }

}  // namespace

void Trace::reuse() {
  N = 0;
  M = 0;
  L = 0;
  ndom = 0;
  st.clear();
  k.clear();
  i.clear();
  pp.clear();
}

void Trace::append(TraceState s, int kk, int ii) {
  int ki = 0;
  int ii_out = 0;
  switch (s) {
    case kTN:
    case kTC:
    case kTJ:
      // Emission on transition: only the second and later state of a run carries the residue.
      ii_out = (N > 0 && st[static_cast<std::size_t>(N - 1)] == s) ? ii : 0;
      break;
    case kTX:
    case kTS:
    case kTB:
    case kTE:
    case kTT: break;
    case kTD: ki = kk; break;
    case kTM:
    case kTI:
      ki = kk;
      ii_out = ii;
      break;
    default: throw Error(ErrorKind::kInternal, "trace append: no such state");
  }
  st.push_back(s);
  k.push_back(ki);
  i.push_back(ii_out);
  if (has_pp) pp.push_back(0.0f);
  ++N;
}

void Trace::append_with_pp(TraceState s, int kk, int ii, float p) {
  if (!has_pp) throw Error(ErrorKind::kInternal, "trace append_with_pp on a trace without posteriors");
  append(s, kk, ii);
  // The stored pp follows the stored i: nonzero only where a residue is recorded.
  const std::size_t z = static_cast<std::size_t>(N - 1);
  if (s == kTM || s == kTI || (is_emit_on_transition(s) && z > 0 && st[z - 1] == s)) pp[z] = p;
}

void Trace::reverse() {
  // Right-to-left construction leaves the residue of an N/C/J pair on the earlier-appended (later in the
  // final order) state; move it to the other state of the pair before flipping the arrays.
  for (int z = 0; z + 1 < N; ++z) {
    const std::size_t a = static_cast<std::size_t>(z);
    const std::size_t b = a + 1;
    if (is_emit_on_transition(st[a]) && st[b] == st[a] && i[a] == 0 && i[b] > 0) {
      i[a] = i[b];
      i[b] = 0;
      if (has_pp) {
        pp[a] = pp[b];
        pp[b] = 0.0f;
      }
    }
  }
  for (int z = 0; z < N / 2; ++z) {
    const std::size_t a = static_cast<std::size_t>(z);
    const std::size_t b = static_cast<std::size_t>(N - z - 1);
    std::swap(st[a], st[b]);
    std::swap(k[a], k[b]);
    std::swap(i[a], i[b]);
    if (has_pp) std::swap(pp[a], pp[b]);
  }
}

void Trace::index() {
  ndom = 0;
  tfrom.clear();
  tto.clear();
  sqfrom.clear();
  sqto.clear();
  hmmfrom.clear();
  hmmto.clear();
  for (int z = 0; z < N; ++z) {
    const std::size_t zz = static_cast<std::size_t>(z);
    switch (st[zz]) {
      case kTB:
        tfrom.push_back(z);
        tto.push_back(0);
        sqfrom.push_back(0);
        sqto.push_back(0);
        hmmfrom.push_back(0);
        hmmto.push_back(0);
        break;
      case kTM:
        if (static_cast<int>(tfrom.size()) > ndom) {  // inside domain ndom (profile traces always are)
          const std::size_t d = static_cast<std::size_t>(ndom);
          if (sqfrom[d] == 0) sqfrom[d] = i[zz];
          if (hmmfrom[d] == 0) hmmfrom[d] = k[zz];
          sqto[d] = i[zz];
          hmmto[d] = k[zz];
        }
        break;
      case kTE:
        if (static_cast<int>(tfrom.size()) > ndom) {
          tto[static_cast<std::size_t>(ndom)] = z;
          ++ndom;
        }
        break;
      default: break;
    }
  }
}

int Trace::domain_count() const {
  if (ndom > 0) return ndom;
  int n = 0;
  for (int z = 0; z < N; ++z)
    if (st[static_cast<std::size_t>(z)] == kTB) ++n;
  return n;
}

float Trace::expected_accuracy() const {
  float acc = 0.0f;
  for (int z = 0; z < N; ++z) acc += pp[static_cast<std::size_t>(z)];
  return acc;
}

std::string validate_trace(const Trace& tr, const uint8_t* dsq, int L) {
  const int n = tr.N;
  if (n < 3) return "trace is too short";
  if (static_cast<int>(tr.st.size()) != n || static_cast<int>(tr.k.size()) != n ||
      static_cast<int>(tr.i.size()) != n || (tr.has_pp && static_cast<int>(tr.pp.size()) != n))
    return "array sizes don't match N";
  auto st = [&](int z) { return static_cast<int>(tr.st[static_cast<std::size_t>(z)]); };
  auto tk = [&](int z) { return tr.k[static_cast<std::size_t>(z)]; };
  auto ti = [&](int z) { return tr.i[static_cast<std::size_t>(z)]; };
  auto tp = [&](int z) { return tr.has_pp ? tr.pp[static_cast<std::size_t>(z)] : 0.0f; };
  if (st(0) != kTS) return "first state not S";
  if (st(n - 1) != kTT) return "last state not T";
  if (tk(0) != 0 || ti(0) != 0 || tk(n - 1) != 0 || ti(n - 1) != 0) return "S/T shouldn't have k or i set";
  if (tp(0) != 0.0f || tp(n - 1) != 0.0f) return "S/T can't have nonzero post prob";

  int k = 0;
  int i = 1;
  for (int z = 1; z < n - 1; ++z) {
    const int prv = st(z - 1);
    switch (st(z)) {
      case kTN:
      case kTJ:
      case kTC: {
        const int s = st(z);
        const int opener = (s == kTN) ? kTS : kTE;
        if (tk(z) != 0) return "N/C/J shouldn't have k set";
        if (prv == opener) {
          if (ti(z) != 0 || tp(z) != 0.0f) return "first N/C/J of a run shouldn't emit";
        } else if (prv == s) {
          if (ti(z) != i) return "expected i doesn't match trace's i (N/C/J)";
          ++i;
        } else {
          return "bad transition to N/C/J";
        }
        break;
      }
      case kTB:
        if (tk(z) != 0 || ti(z) != 0 || tp(z) != 0.0f) return "B shouldn't have k, i or pp set";
        if (prv != kTN && prv != kTJ) return "bad transition to B; expected {N,J}->B";
        break;
      case kTM:
        if (prv == kTB)
          k = tk(z);
        else
          ++k;
        if (tk(z) != k) return "expected k doesn't match trace's k (M)";
        if (ti(z) != i) return "expected i doesn't match trace's i (M)";
        if (prv != kTB && prv != kTM && prv != kTD && prv != kTI) return "bad transition to M";
        ++i;
        break;
      case kTD:
        ++k;
        if (tk(z) != k) return "expected k doesn't match trace's k (D)";
        if (ti(z) != 0 || tp(z) != 0.0f) return "D shouldn't have i or pp set";
        if (prv != kTM && prv != kTD) return "bad transition to D; expected {M,D}->D";
        break;
      case kTI:
        if (tk(z) != k) return "expected k doesn't match trace's k (I)";
        if (ti(z) != i) return "expected i doesn't match trace's i (I)";
        if (prv != kTM && prv != kTI) return "bad transition to I; expected {M,I}->I";
        ++i;
        break;
      case kTE:
        if (tk(z) != 0 || ti(z) != 0 || tp(z) != 0.0f) return "E shouldn't have k, i or pp set";
        if (prv != kTM && prv != kTD) return "bad transition to E; expected {M,D}->E";
        break;
      default: return "state S/T/X/bogus inside the trace";
    }
    if (k > tr.M) return "k exceeds M";
  }
  if (dsq != nullptr && (dsq[0] != kDsqSentinel || dsq[L + 1] != kDsqSentinel)) return "dsq lacks sentinels";
  if (i - 1 != L) return "trace didn't account for all residues (or too many)";
  if (i - 1 > tr.L) return "i exceeds L";
  return {};
}

}  // namespace warpsearch::hmm
