// blast_wire.cpp: encoding of blast::BlastpScanPart and its pieces (Hsp with its edit script, SubjectHits,
// PrelimEntry, SearchCounts, BlastpSubject) and of traceback results (Hsp lists, SubjectRedo), field by
// field in declaration order (blast/hsp.hpp, blast/search.hpp, blast/engine.hpp, blast/kappa.hpp).
#include "dist/blast_wire.hpp"

#include <utility>

namespace warpsearch::dist {

void write_hsp(ByteWriter& w, const blast::Hsp& h) {
  w.integer(h.score);
  w.integer(h.q_start);
  w.integer(h.q_end);
  w.integer(h.s_start);
  w.integer(h.s_end);
  w.f64(h.evalue);
  w.f64(h.bit_score);
  w.integer(static_cast<std::uint64_t>(h.script.size()));
  for (const blast::EditRun& run : h.script) {
    w.u8(static_cast<std::uint8_t>(run.op));
    w.integer(run.length);
  }
}

blast::Hsp read_hsp(ByteReader& r) {
  blast::Hsp h;
  h.score = r.integer<int>();
  h.q_start = r.integer<int>();
  h.q_end = r.integer<int>();
  h.s_start = r.integer<int>();
  h.s_end = r.integer<int>();
  h.evalue = r.f64();
  h.bit_score = r.f64();
  h.script.resize(r.count(5));
  for (blast::EditRun& run : h.script) {
    const std::uint8_t op = r.u8();
    if (op > static_cast<std::uint8_t>(blast::EditOp::kDeletion))
      throw Error(ErrorKind::kInternal, "MPI message: bad edit operation (protocol mismatch)");
    run.op = static_cast<blast::EditOp>(op);
    run.length = r.integer<int>();
  }
  return h;
}

void write_subject_hits(ByteWriter& w, const blast::SubjectHits& h) {
  w.integer(h.oid);
  w.integer(static_cast<std::uint64_t>(h.hsps.size()));
  for (const blast::Hsp& hsp : h.hsps) write_hsp(w, hsp);
}

blast::SubjectHits read_subject_hits(ByteReader& r) {
  blast::SubjectHits h;
  h.oid = r.integer<int>();
  const std::size_t n = r.count(44);
  h.hsps.reserve(n);
  for (std::size_t i = 0; i < n; ++i) h.hsps.push_back(read_hsp(r));
  return h;
}

void write_prelim_entry(ByteWriter& w, const blast::PrelimEntry& e) {
  write_subject_hits(w, e.list);
  w.integer(static_cast<std::uint64_t>(e.prelim.size()));
  for (const blast::PrelimHsp& p : e.prelim) {
    write_hsp(w, p.hsp);
    w.integer(p.seed.q);
    w.integer(p.seed.s);
  }
}

blast::PrelimEntry read_prelim_entry(ByteReader& r) {
  blast::PrelimEntry e;
  e.list = read_subject_hits(r);
  const std::size_t n = r.count(52);
  e.prelim.resize(n);
  for (blast::PrelimHsp& p : e.prelim) {
    p.hsp = read_hsp(r);
    p.seed.q = r.integer<int>();
    p.seed.s = r.integer<int>();
  }
  return e;
}

void write_search_counts(ByteWriter& w, const blast::SearchCounts& c) {
  for (const std::int64_t v : {c.word_hits, c.ungapped_extensions, c.ungapped_saved, c.gapped_extensions,
                               c.prelim_hsps, c.redone_subjects, c.composition_redone})
    w.integer(v);
}

blast::SearchCounts read_search_counts(ByteReader& r) {
  blast::SearchCounts c;
  for (std::int64_t* v : {&c.word_hits, &c.ungapped_extensions, &c.ungapped_saved, &c.gapped_extensions,
                          &c.prelim_hsps, &c.redone_subjects, &c.composition_redone})
    *v = r.integer<std::int64_t>();
  return c;
}

void write_subject_redo(ByteWriter& w, const blast::SubjectRedo& r) {
  w.integer(static_cast<std::uint64_t>(r.hsps.size()));
  for (const blast::Hsp& h : r.hsps) write_hsp(w, h);
  w.f64(r.best_evalue);
  w.integer(r.best_score);
  w.integer(static_cast<std::uint64_t>(r.rules.size()));
  for (const blast::compo::MatrixAdjustRule rule : r.rules) w.integer(static_cast<std::int32_t>(rule));
  w.integer(r.stale_matrix_hsps);
  w.integer(r.adjustments);
  w.integer(r.alignments);
}

blast::SubjectRedo read_subject_redo(ByteReader& r) {
  blast::SubjectRedo redo;
  const std::size_t n = r.count(44);
  redo.hsps.reserve(n);
  for (std::size_t i = 0; i < n; ++i) redo.hsps.push_back(read_hsp(r));
  redo.best_evalue = r.f64();
  redo.best_score = r.integer<int>();
  redo.rules.resize(r.count(4));
  for (blast::compo::MatrixAdjustRule& rule : redo.rules) {
    const auto v = r.integer<std::int32_t>();
    if (v < static_cast<std::int32_t>(blast::compo::MatrixAdjustRule::kDontAdjust) ||
        v > static_cast<std::int32_t>(blast::compo::MatrixAdjustRule::kUserSpecifiedRelEntropy))
      throw Error(ErrorKind::kInternal, "MPI message: bad matrix adjustment rule (protocol mismatch)");
    rule = static_cast<blast::compo::MatrixAdjustRule>(v);
  }
  redo.stale_matrix_hsps = r.integer<int>();
  redo.adjustments = r.integer<int>();
  redo.alignments = r.integer<int>();
  return redo;
}

Bytes encode_trace_work(std::span<const TraceWorkView> items) {
  ByteWriter w;
  w.integer(static_cast<std::uint64_t>(items.size()));
  for (const TraceWorkView& t : items) {
    w.integer(t.index);
    w.integer(t.query);
    write_prelim_entry(w, *t.entry);
    w.bytes(t.residues);
  }
  return w.take();
}

std::vector<TraceWork> decode_trace_work(std::span<const std::uint8_t> message) {
  ByteReader r(message);
  std::vector<TraceWork> items(r.count(36));
  for (TraceWork& t : items) {
    t.index = r.integer<std::uint64_t>();
    t.query = r.integer<std::uint64_t>();
    t.entry = read_prelim_entry(r);
    t.residues = r.bytes();
  }
  r.expect_done();
  return items;
}

Bytes encode_traced(const std::vector<std::uint64_t>& index,
                    const std::vector<std::vector<blast::Hsp>>& traced,
                    const std::vector<blast::SubjectRedo>& redone) {
  ByteWriter w;
  const bool redo = !redone.empty();
  w.boolean(redo);
  w.integer(static_cast<std::uint64_t>(index.size()));
  for (std::size_t i = 0; i < index.size(); ++i) {
    w.integer(index[i]);
    if (redo) {
      write_subject_redo(w, redone[i]);
    } else {
      w.integer(static_cast<std::uint64_t>(traced[i].size()));
      for (const blast::Hsp& h : traced[i]) write_hsp(w, h);
    }
  }
  return w.take();
}

void decode_traced(std::span<const std::uint8_t> message, std::vector<std::vector<blast::Hsp>>& traced,
                   std::vector<blast::SubjectRedo>& redone) {
  ByteReader r(message);
  const bool redo = r.boolean();
  const std::size_t n = r.count(9);
  for (std::size_t i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(r.integer<std::uint64_t>());
    if (at >= (redo ? redone.size() : traced.size()))
      throw Error(ErrorKind::kInternal, "MPI message: traceback result out of range (protocol mismatch)");
    if (redo) {
      redone[at] = read_subject_redo(r);
    } else {
      std::vector<blast::Hsp>& hsps = traced[at];
      const std::size_t k = r.count(44);
      hsps.clear();
      hsps.reserve(k);
      for (std::size_t j = 0; j < k; ++j) hsps.push_back(read_hsp(r));
    }
  }
  r.expect_done();
}

Bytes encode_scan_part(const blast::BlastpScanPart& part) {
  ByteWriter w;
  w.integer(static_cast<std::uint64_t>(part.entries.size()));
  for (const std::vector<blast::PrelimEntry>& entries : part.entries) {
    w.integer(static_cast<std::uint64_t>(entries.size()));
    for (const blast::PrelimEntry& e : entries) write_prelim_entry(w, e);
  }
  w.integer(static_cast<std::uint64_t>(part.subjects.size()));
  for (const auto& [oid, subject] : part.subjects) {
    w.integer(oid);
    w.str(subject.defline);
    w.bytes(subject.residues);
    w.integer(std::uint64_t{subject.ids.has_value()});
    if (subject.ids) {
      const blast::ParsedSubjectIds& ids = *subject.ids;
      for (const std::string* t :
           {&ids.seqid, &ids.all_seqids, &ids.acc, &ids.accver, &ids.all_accs, &ids.title, &ids.all_titles,
            &ids.report_line, &ids.report_id, &ids.plain_title, &ids.xml_accession})
        w.str(*t);
    }
  }
  write_search_counts(w, part.counts);
  return w.take();
}

blast::BlastpScanPart decode_scan_part(std::span<const std::uint8_t> message) {
  ByteReader r(message);
  blast::BlastpScanPart part;
  part.entries.resize(r.count(8));
  for (std::vector<blast::PrelimEntry>& entries : part.entries) {
    const std::size_t n = r.count(20);
    entries.reserve(n);
    for (std::size_t i = 0; i < n; ++i) entries.push_back(read_prelim_entry(r));
  }
  const std::size_t subjects = r.count(24);
  part.subjects.reserve(subjects);
  for (std::size_t i = 0; i < subjects; ++i) {
    const auto oid = r.integer<std::int64_t>();
    blast::BlastpSubject subject;
    subject.defline = r.str();
    subject.residues = r.bytes();
    if (r.integer<std::uint64_t>() != 0) {
      blast::ParsedSubjectIds& ids = subject.ids.emplace();
      for (std::string* t :
           {&ids.seqid, &ids.all_seqids, &ids.acc, &ids.accver, &ids.all_accs, &ids.title, &ids.all_titles,
            &ids.report_line, &ids.report_id, &ids.plain_title, &ids.xml_accession})
        *t = r.str();
    }
    part.subjects.emplace_back(oid, std::move(subject));
  }
  part.counts = read_search_counts(r);
  r.expect_done();
  return part;
}

}  // namespace warpsearch::dist
