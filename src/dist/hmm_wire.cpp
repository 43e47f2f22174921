// hmm_wire.cpp: encoding of hmm::Hit (with its Domains and AliDisplays) and hmm::PipelineCounts, field by
// field in declaration order (hmm/tophits.hpp, hmm/reporting.hpp).
#include "dist/hmm_wire.hpp"

#include <utility>

namespace warpsearch::dist {

void write_alidisplay(ByteWriter& w, const hmm::AliDisplay& ad) {
  for (const std::string* s :
       {&ad.rfline, &ad.mmline, &ad.csline, &ad.model, &ad.mline, &ad.aseq, &ad.ppline})
    w.str(*s);
  w.integer(ad.N);
  w.str(ad.hmmname);
  w.str(ad.hmmacc);
  w.str(ad.hmmdesc);
  w.integer(ad.hmmfrom);
  w.integer(ad.hmmto);
  w.integer(ad.M);
  w.str(ad.sqname);
  w.str(ad.sqacc);
  w.str(ad.sqdesc);
  w.integer(ad.sqfrom);
  w.integer(ad.sqto);
  w.integer(ad.L);
}

hmm::AliDisplay read_alidisplay(ByteReader& r) {
  hmm::AliDisplay ad;
  for (std::string* s : {&ad.rfline, &ad.mmline, &ad.csline, &ad.model, &ad.mline, &ad.aseq, &ad.ppline})
    *s = r.str();
  ad.N = r.integer<int>();
  ad.hmmname = r.str();
  ad.hmmacc = r.str();
  ad.hmmdesc = r.str();
  ad.hmmfrom = r.integer<int>();
  ad.hmmto = r.integer<int>();
  ad.M = r.integer<int>();
  ad.sqname = r.str();
  ad.sqacc = r.str();
  ad.sqdesc = r.str();
  ad.sqfrom = r.integer<int64_t>();
  ad.sqto = r.integer<int64_t>();
  ad.L = r.integer<int64_t>();
  return ad;
}

void write_domain(ByteWriter& w, const hmm::Domain& d) {
  w.integer(d.ienv);
  w.integer(d.jenv);
  w.integer(d.iali);
  w.integer(d.jali);
  w.f32(d.envsc);
  w.f32(d.domcorrection);
  w.f32(d.dombias);
  w.f32(d.oasc);
  w.f32(d.bitscore);
  w.f64(d.lnP);
  w.boolean(d.is_reported);
  w.boolean(d.is_included);
  w.integer(static_cast<std::uint64_t>(d.scores_per_pos.size()));
  for (const float f : d.scores_per_pos) w.f32(f);
  write_alidisplay(w, d.ad);
}

hmm::Domain read_domain(ByteReader& r) {
  hmm::Domain d;
  d.ienv = r.integer<int64_t>();
  d.jenv = r.integer<int64_t>();
  d.iali = r.integer<int64_t>();
  d.jali = r.integer<int64_t>();
  d.envsc = r.f32();
  d.domcorrection = r.f32();
  d.dombias = r.f32();
  d.oasc = r.f32();
  d.bitscore = r.f32();
  d.lnP = r.f64();
  d.is_reported = r.boolean();
  d.is_included = r.boolean();
  d.scores_per_pos.resize(r.count(4));
  for (float& f : d.scores_per_pos) f = r.f32();
  d.ad = read_alidisplay(r);
  return d;
}

void write_hit(ByteWriter& w, const hmm::Hit& h) {
  w.str(h.name);
  w.str(h.acc);
  w.str(h.desc);
  w.f64(h.sortkey);
  w.f32(h.score);
  w.f32(h.pre_score);
  w.f32(h.sum_score);
  w.f64(h.lnP);
  w.f64(h.pre_lnP);
  w.f64(h.sum_lnP);
  w.f32(h.nexpected);
  w.integer(h.nregions);
  w.integer(h.nclustered);
  w.integer(h.noverlaps);
  w.integer(h.nenvelopes);
  w.integer(h.ndom);
  w.integer(h.flags);
  w.integer(h.nreported);
  w.integer(h.nincluded);
  w.integer(h.best_domain);
  w.integer(h.seqidx);
  w.integer(static_cast<std::uint64_t>(h.dcl.size()));
  for (const hmm::Domain& d : h.dcl) write_domain(w, d);
}

hmm::Hit read_hit(ByteReader& r) {
  hmm::Hit h;
  h.name = r.str();
  h.acc = r.str();
  h.desc = r.str();
  h.sortkey = r.f64();
  h.score = r.f32();
  h.pre_score = r.f32();
  h.sum_score = r.f32();
  h.lnP = r.f64();
  h.pre_lnP = r.f64();
  h.sum_lnP = r.f64();
  h.nexpected = r.f32();
  h.nregions = r.integer<int>();
  h.nclustered = r.integer<int>();
  h.noverlaps = r.integer<int>();
  h.nenvelopes = r.integer<int>();
  h.ndom = r.integer<int>();
  h.flags = r.integer<uint32_t>();
  h.nreported = r.integer<int>();
  h.nincluded = r.integer<int>();
  h.best_domain = r.integer<int>();
  h.seqidx = r.integer<int64_t>();
  const std::size_t n = r.count(8);
  h.dcl.reserve(n);
  for (std::size_t i = 0; i < n; ++i) h.dcl.push_back(read_domain(r));
  return h;
}

void write_counts(ByteWriter& w, const hmm::PipelineCounts& c) {
  for (const std::uint64_t v :
       {c.nmodels, c.nseqs, c.nres, c.nnodes, c.n_past_msv, c.n_past_bias, c.n_past_vit, c.n_past_fwd,
        c.n_output, c.pos_past_msv, c.pos_past_bias, c.pos_past_vit, c.pos_past_fwd, c.pos_output})
    w.integer(v);
  w.f64(c.F1);
  w.f64(c.F2);
  w.f64(c.F3);
}

hmm::PipelineCounts read_counts(ByteReader& r) {
  hmm::PipelineCounts c;
  for (std::uint64_t* v :
       {&c.nmodels, &c.nseqs, &c.nres, &c.nnodes, &c.n_past_msv, &c.n_past_bias, &c.n_past_vit, &c.n_past_fwd,
        &c.n_output, &c.pos_past_msv, &c.pos_past_bias, &c.pos_past_vit, &c.pos_past_fwd, &c.pos_output})
    *v = r.integer<std::uint64_t>();
  c.F1 = r.f64();
  c.F2 = r.f64();
  c.F3 = r.f64();
  return c;
}

void write_model_result(ByteWriter& w, const hmmsearch::ModelResult& m) {
  w.str(m.name);
  w.str(m.acc);
  w.str(m.desc);
  w.integer(m.M);
  for (const std::uint64_t v :
       {m.nseqs, m.nres, m.n_past_msv, m.n_past_bias, m.n_past_vit, m.n_past_fwd, m.nreported, m.nincluded})
    w.integer(v);
  w.f64(m.Z);
  w.f64(m.domZ);
  w.integer(static_cast<std::uint64_t>(m.hits.size()));
  for (const hmmsearch::TargetHit& t : m.hits) {
    w.str(t.name);
    w.str(t.acc);
    w.str(t.desc);
    w.integer(t.seqidx);
    w.f32(t.score);
    w.f32(t.bias);
    w.f64(t.evalue);
    w.boolean(t.reported);
    w.boolean(t.included);
    w.integer(static_cast<std::uint64_t>(t.domains.size()));
    for (const hmmsearch::DomainHit& d : t.domains) {
      for (const std::int64_t v : {d.ienv, d.jenv, d.iali, d.jali}) w.integer(v);
      w.integer(d.hmmfrom);
      w.integer(d.hmmto);
      w.f32(d.score);
      w.f32(d.bias);
      w.f64(d.c_evalue);
      w.f64(d.i_evalue);
      w.boolean(d.reported);
      w.boolean(d.included);
    }
  }
}

hmmsearch::ModelResult read_model_result(ByteReader& r) {
  hmmsearch::ModelResult m;
  m.name = r.str();
  m.acc = r.str();
  m.desc = r.str();
  m.M = r.integer<int>();
  for (std::uint64_t* v : {&m.nseqs, &m.nres, &m.n_past_msv, &m.n_past_bias, &m.n_past_vit, &m.n_past_fwd,
                           &m.nreported, &m.nincluded})
    *v = r.integer<std::uint64_t>();
  m.Z = r.f64();
  m.domZ = r.f64();
  m.hits.resize(r.count(40));
  for (hmmsearch::TargetHit& t : m.hits) {
    t.name = r.str();
    t.acc = r.str();
    t.desc = r.str();
    t.seqidx = r.integer<std::int64_t>();
    t.score = r.f32();
    t.bias = r.f32();
    t.evalue = r.f64();
    t.reported = r.boolean();
    t.included = r.boolean();
    t.domains.resize(r.count(66));
    for (hmmsearch::DomainHit& d : t.domains) {
      for (std::int64_t* v : {&d.ienv, &d.jenv, &d.iali, &d.jali}) *v = r.integer<std::int64_t>();
      d.hmmfrom = r.integer<int>();
      d.hmmto = r.integer<int>();
      d.score = r.f32();
      d.bias = r.f32();
      d.c_evalue = r.f64();
      d.i_evalue = r.f64();
      d.reported = r.boolean();
      d.included = r.boolean();
    }
  }
  return m;
}

Bytes encode_model_part(const hmm::TopHits& hits, const hmm::PipelineCounts& counts) {
  ByteWriter w;
  w.integer(static_cast<std::uint64_t>(hits.size()));
  for (std::size_t i = 0; i < hits.size(); ++i) write_hit(w, hits.unsorted(i));
  write_counts(w, counts);
  return w.take();
}

hmm::PipelineCounts decode_model_part(std::span<const std::uint8_t> message, hmm::TopHits& hits) {
  ByteReader r(message);
  const std::size_t n = r.count(8);
  for (std::size_t i = 0; i < n; ++i) hits.add(read_hit(r));
  hmm::PipelineCounts counts = read_counts(r);
  r.expect_done();
  return counts;
}

}  // namespace warpsearch::dist
