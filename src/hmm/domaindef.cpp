// domaindef.cpp: HMMER 3.3.2's posterior-heuristic domain definition (p7_domaindef.c) for hmmsearch:
// region calling from the domain posteriors, stochastic-trace clustering of multidomain regions with
// trace-averaged null2, and unihit rescoring of each envelope (Forward/Backward, decoding, optimal
// accuracy alignment, null2 by expectation). Every float/double operation, comparison and tie rule is
// HMMER's (see the notes at the quirks kept on purpose).
#include "hmm/domaindef.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "hmm/decoding.hpp"
#include "hmm/fwdback.hpp"
#include "hmm/null2.hpp"
#include "hmm/omx.hpp"
#include "hmm/oprofile.hpp"
#include "hmm/optacc.hpp"
#include "hmm/stotrace.hpp"

namespace warpsearch::hmm {
namespace {

// Easel's ESL_MIN / ESL_MAX macros (their NaN and tie behavior differs from std::min / std::max).
inline float esl_min(float a, float b) { return a < b ? a : b; }
inline float esl_max(float a, float b) { return a > b ? a : b; }
inline int esl_min(int a, int b) { return a < b ? a : b; }
inline int esl_max(int a, int b) { return a > b ? a : b; }

inline std::size_t ix(int v) { return static_cast<std::size_t>(v); }

// region_trace_ensemble: the region ireg..jreg may hold several domains. fwd holds a full Forward
// matrix of the region (profile in multihit mode, length = whole sequence); wrk's row 0 is work space
// for null2. Samples ddef.nsamples stochastic traces; each sampled domain is added to ddef.sp and
// contributes its trace null2 odds ratios to n2sc (residues outside sampled domains contribute 1).
// n2sc[ireg..jreg] then becomes log(mean ratio). Finally clusters the ensemble and removes clusters
// dominated (>= 80% overlap, lower posterior) by another. Returns the number of envelopes, left in
// ddef.sp.sigc ordered by start.
int region_trace_ensemble(DomainDef& ddef, const OProfile& om, const Dsq& dsq, int ireg, int jreg,
                          const Omx& fwd, Omx& wrk) {
  const int Lr = jreg - ireg + 1;
  std::array<float, kMaxKp> null2{};

  for (int pos = ireg; pos <= jreg; ++pos) ddef.n2sc[ix(pos)] = 0.0f;

  // Reproducibility: every ensemble starts from the generator's original seed.
  if (ddef.do_reseeding) ddef.rng.init(ddef.rng.seed());

  for (int t = 0; t < ddef.nsamples; ++t) {
    Trace& tr = ddef.tr;
    stochastic_trace(ddef.rng, dsq.data() + ireg - 1, Lr, om, fwd, tr);
    tr.index();

    int pos = 1;  // region-relative residue 1..Lr
    for (int d = 0; d < tr.ndom; ++d) {
      ddef.sp.add(t, tr.sqfrom[ix(d)] + ireg - 1, tr.sqto[ix(d)] + ireg - 1, tr.hmmfrom[ix(d)],
                  tr.hmmto[ix(d)]);
      null2_by_trace(om, tr, tr.tfrom[ix(d)], tr.tto[ix(d)], wrk, null2.data());
      // Residues before the domain get ratio 1 (f'(x) = f(x)). As in HMMER this includes the domain's
      // first residue sqfrom itself (the loop bound is <=).
      for (; pos <= tr.sqfrom[ix(d)]; ++pos) ddef.n2sc[ix(ireg + pos - 1)] += 1.0f;
      // Residues inside the domain get their null2 odds ratio.
      for (; pos <= tr.sqto[ix(d)]; ++pos) ddef.n2sc[ix(ireg + pos - 1)] += null2[dsq[ix(ireg + pos - 1)]];
    }
    for (; pos <= Lr; ++pos) ddef.n2sc[ix(ireg + pos - 1)] += 1.0f;
    tr.reuse();
  }

  // Mean ratio -> log-odds null2 score per residue (nats).
  for (int pos = ireg; pos <= jreg; ++pos)
    ddef.n2sc[ix(pos)] = std::log(ddef.n2sc[ix(pos)] / static_cast<float>(ddef.nsamples));

  const int nc = ddef.sp.cluster(ddef.link);

  // Which clusters are dominated by a higher-posterior cluster overlapping them by >= 80% of the
  // smaller one? Quirks kept: the scan of d2 stops at the first cluster with overlap exactly 0, and the
  // float ratio is compared with the double 0.8.
  std::vector<SpCoord>& sigc = ddef.sp.sigc;
  std::vector<bool> dominated(ix(nc), false);
  for (int d = 0; d < nc; ++d) {
    for (int d2 = d + 1; d2 < nc; ++d2) {
      const SpCoord& a = sigc[ix(d)];
      const SpCoord& b = sigc[ix(d2)];
      const int nov = esl_min(a.j, b.j) - esl_max(a.i, b.i) + 1;
      if (nov == 0) break;
      const int n = esl_min(a.j - a.i + 1, b.j - b.i + 1);
      if (static_cast<double>(static_cast<float>(nov) / static_cast<float>(n)) >= 0.8) {
        if (a.prob > b.prob)
          dominated[ix(d2)] = true;
        else
          dominated[ix(d)] = true;
      }
    }
  }
  int kept = 0;
  for (int d2 = 0; d2 < nc; ++d2) {
    if (dominated[ix(d2)]) continue;
    if (kept != d2) sigc[ix(kept)] = sigc[ix(d2)];
    ++kept;
  }
  sigc.resize(ix(kept));
  return kept;
}

// rescore_isolated_domain: scores and aligns the envelope i..j with the profile in unihit mode. ox1 and
// ox2 are full matrices large enough for the envelope. When null2_is_done is false, n2sc[i..j] is set
// by null2 by expectation. On success appends a Domain to ddef.dcl and returns true; returns false
// (no domain) when posterior decoding overflows (HMMER's eslERANGE: repetitive garbage).
bool rescore_isolated_domain(DomainDef& ddef, const OProfile& om, const Dsq& dsq, int L,
                             const DomainSeqInfo& seq, Omx& ox1, Omx& ox2, int i, int j, bool null2_is_done) {
  const int Ld = j - i + 1;
  const uint8_t* sub = dsq.data() + i - 1;  // sub[1..Ld] = dsq[i..j]
  Trace& tr = ddef.tr;

  const float envsc = forward(sub, Ld, om, ox1);
  backward(sub, Ld, om, ox1, ox2);
  if (!decoding(om, ox1, ox2, ox2)) {  // ox2 now holds posterior probabilities
    tr.reuse();
    return false;
  }

  const float oasc = optimal_accuracy(om, ox2, ox1);  // ox1 now holds OA scores
  oa_trace(om, ox2, ox1, tr);
  // Shift the trace's sequence coordinates from envelope-relative to the whole sequence.
  for (int z = 0; z < tr.N; ++z)
    if (tr.i[ix(z)] > 0) tr.i[ix(z)] += i - 1;

  Domain dom;
  dom.ad = make_alidisplay(tr, 0, om, seq.name, seq.acc, seq.desc, dsq, L);

  // Null2 bias correction: trace-averaged values already set for clustered envelopes, else from
  // posterior expectation over this envelope.
  if (!null2_is_done) {
    std::array<float, kMaxKp> null2{};
    null2_by_expectation(om, ox2, null2.data());
    for (int pos = i; pos <= j; ++pos) ddef.n2sc[ix(pos)] = std::log(null2[dsq[ix(pos)]]);
  }
  float domcorrection = 0.0f;
  for (int pos = i; pos <= j; ++pos) domcorrection += ddef.n2sc[ix(pos)];  // nats

  dom.domcorrection = domcorrection;
  dom.iali = dom.ad.sqfrom;
  dom.jali = dom.ad.sqto;
  dom.ienv = i;
  dom.jenv = j;
  dom.envsc = envsc;    // nats
  dom.oasc = oasc;      // expected number of correctly aligned residues
  dom.dombias = 0.0f;   // set by the pipeline
  dom.bitscore = 0.0f;  // set by the pipeline
  dom.lnP = 0.0;        // set by the pipeline
  dom.is_reported = false;
  dom.is_included = false;
  ddef.dcl.push_back(std::move(dom));

  tr.reuse();
  return true;
}

}  // namespace

DomainDef::DomainDef(uint32_t seed) : rng(seed, RngKind::kFast), do_reseeding(seed != 0) {}

void DomainDef::reuse() {
  dcl.clear();
  L = 0;
  nexpected = 0.0f;
  nregions = 0;
  nclustered = 0;
  noverlaps = 0;
  nenvelopes = 0;
  sp.reuse();
  tr.reuse();
}

bool is_multidomain_region(const DomainDef& ddef, int i, int j) {
  // max over split points z of min(expected E's in i..z, expected B's in z..j).
  float max = -1.0f;
  for (int z = i; z <= j; ++z) {
    const float expected_n =
        esl_min(ddef.etot[ix(z)] - ddef.etot[ix(i - 1)], ddef.btot[ix(j)] - ddef.btot[ix(z - 1)]);
    max = esl_max(max, expected_n);
  }
  return max >= ddef.rt3;
}

DomainDefStatus by_posterior_heuristics(const Dsq& dsq, int L, const DomainSeqInfo& seq, OProfile& om,
                                        const Omx& oxf, const Omx& oxb, Omx& fwd, Omx& bck, DomainDef& ddef) {
  const int saveL = om.L;  // restored (with the original multi/unihit setting) before returning
  const ProfileMode save_mode = om.mode;

  // Posteriors mocc, btot, etot [0..L].
  const bool decoded = domain_decoding(om, oxf, oxb, ddef.btot, ddef.etot, ddef.mocc);
  ddef.L = L;
  if (!decoded) return DomainDefStatus::kRange;

  ddef.n2sc.assign(ix(L + 1), 0.0f);
  ddef.nexpected = ddef.btot[ix(L)];

  // Each envelope is scored in unihit mode whatever om's mode.
  reconfig_unihit(om, saveL);

  // Region calling: while not triggered, i tracks the last position where mocc - bocc < rt2 (or the
  // first position scanned); mocc >= rt1 triggers; the region ends at the first later j where
  // mocc - eocc < rt2.
  int i = -1;
  bool triggered = false;
  for (int j = 1; j <= L; ++j) {
    const std::size_t uj = ix(j);
    if (!triggered) {
      if (ddef.mocc[uj] - (ddef.btot[uj] - ddef.btot[uj - 1]) < ddef.rt2)
        i = j;
      else if (i == -1)
        i = j;
      if (ddef.mocc[uj] >= ddef.rt1) triggered = true;
    } else if (ddef.mocc[uj] - (ddef.etot[uj] - ddef.etot[uj - 1]) < ddef.rt2) {
      // Region i..j.
      grow_to(fwd, om.M, j - i + 1, true);
      grow_to(bck, om.M, j - i + 1, true);
      ddef.nregions++;
      if (is_multidomain_region(ddef, i, j)) {
        // Resolve by clustering sampled traces of the region (multihit Forward), which also sets the
        // region's n2sc from the traces.
        ddef.nclustered++;
        reconfig_multihit(om, saveL);
        forward(dsq.data() + i - 1, j - i + 1, om, fwd);
        const int nc = region_trace_ensemble(ddef, om, dsq, i, j, fwd, bck);
        reconfig_unihit(om, saveL);

        int last_j2 = 0;
        for (int d = 0; d < nc; ++d) {
          const int i2 = ddef.sp.sigc[ix(d)].i;
          const int j2 = ddef.sp.sigc[ix(d)].j;
          if (i2 <= last_j2) ddef.noverlaps++;
          // Model coordinates k..m of the cluster are not used (HMMER's #h74, handled in output).
          ddef.nenvelopes++;
          if (rescore_isolated_domain(ddef, om, dsq, L, seq, fwd, bck, i2, j2, true)) last_j2 = j2;
        }
        ddef.sp.reuse();
        ddef.tr.reuse();
      } else {
        // A simple single-domain region: the region is the envelope.
        ddef.nenvelopes++;
        rescore_isolated_domain(ddef, om, dsq, L, seq, fwd, bck, i, j, false);
      }
      i = -1;
      triggered = false;
    }
  }

  if (is_multihit(save_mode))
    reconfig_multihit(om, saveL);
  else
    reconfig_unihit(om, saveL);
  return DomainDefStatus::kOk;
}

}  // namespace warpsearch::hmm
