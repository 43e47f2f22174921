// test_blast_merge.cpp: blastp results split over database parts and merged (src/dist/blast_wire and
// blastp_scan_part / blastp_merge_parts of src/blast/engine), in one process, on real proteins.
//
// BlastWire: a real scan part (preliminary entries with seeds, subjects with deflines and residues,
// counters) survives encode -> decode exactly, and so do its entries as traceback work (with residues); so do
// random traceback results (HSP lists with edit scripts, composition-based redos with their matrix rules),
// stored at their work-list indices. BlastShardMerge: for 1, 2, 3, 5 and 64 parts (more parts than subjects:
// empty parts), the parts scanned separately, encoded, decoded and merged give exactly blastp_run's hit lists
// (every HSP field and edit script), subjects, adjust rules and counters; over a FASTA file (parts found
// while streaming it) and the same subjects as a packed database (parts from its length table); with
// -comp_based_stats 0 and 2 and a -max_target_seqs small enough that the preliminary selection prunes across
// parts; also with a query long enough to be split into pieces (one scan unit each).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "blast/engine.hpp"
#include "dist/blast_wire.hpp"
#include "protein_fasta.hpp"
#include "temp_dir.hpp"
#include "testdata.hpp"
#include "warpsearch/db.hpp"

namespace warpsearch::dist {
namespace {

using blast::BlastpQuery;
using blast::BlastpRunOptions;
using blast::BlastpRunResult;
using blast::BlastpScanPart;
using blast::PrelimEntry;
using blast::SubjectHits;

void expect_same_lists(const std::vector<SubjectHits>& a, const std::vector<SubjectHits>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].oid, b[i].oid) << "list " << i;
    EXPECT_EQ(a[i].hsps, b[i].hsps) << "list " << i;  // Hsp::operator==: every field and the edit script
  }
}

void expect_same_part(const BlastpScanPart& a, const BlastpScanPart& b) {
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (std::size_t q = 0; q < a.entries.size(); ++q) {
    ASSERT_EQ(a.entries[q].size(), b.entries[q].size());
    for (std::size_t k = 0; k < a.entries[q].size(); ++k) {
      const PrelimEntry& x = a.entries[q][k];
      const PrelimEntry& y = b.entries[q][k];
      EXPECT_EQ(x.list.oid, y.list.oid);
      EXPECT_EQ(x.list.hsps, y.list.hsps);
      ASSERT_EQ(x.prelim.size(), y.prelim.size());
      for (std::size_t h = 0; h < x.prelim.size(); ++h) {
        EXPECT_EQ(x.prelim[h].hsp, y.prelim[h].hsp);
        EXPECT_EQ(x.prelim[h].seed, y.prelim[h].seed);
      }
    }
  }
  ASSERT_EQ(a.subjects.size(), b.subjects.size());
  for (std::size_t i = 0; i < a.subjects.size(); ++i) {
    EXPECT_EQ(a.subjects[i].first, b.subjects[i].first);
    EXPECT_EQ(a.subjects[i].second.defline, b.subjects[i].second.defline);
    EXPECT_EQ(a.subjects[i].second.residues, b.subjects[i].second.residues);
    EXPECT_EQ(a.subjects[i].second.ids, b.subjects[i].second.ids);
  }
  EXPECT_EQ(a.counts.word_hits, b.counts.word_hits);
  EXPECT_EQ(a.counts.prelim_hsps, b.counts.prelim_hsps);
}

void expect_same_result(const BlastpRunResult& a, const BlastpRunResult& b) {
  ASSERT_EQ(a.queries.size(), b.queries.size());
  for (std::size_t q = 0; q < a.queries.size(); ++q) {
    SCOPED_TRACE(::testing::Message() << "query " << q);
    expect_same_lists(a.queries[q].hits, b.queries[q].hits);
    EXPECT_EQ(a.queries[q].adjust_rules, b.queries[q].adjust_rules);
    for (const SubjectHits& h : a.queries[q].hits) {
      ASSERT_TRUE(b.subjects.contains(h.oid));
      EXPECT_EQ(a.subjects.at(h.oid).defline, b.subjects.at(h.oid).defline);
      EXPECT_EQ(a.subjects.at(h.oid).residues, b.subjects.at(h.oid).residues);
    }
  }
  EXPECT_EQ(a.subjects.size(), b.subjects.size());
  EXPECT_EQ(a.counts.word_hits, b.counts.word_hits);
  EXPECT_EQ(a.counts.ungapped_extensions, b.counts.ungapped_extensions);
  EXPECT_EQ(a.counts.ungapped_saved, b.counts.ungapped_saved);
  EXPECT_EQ(a.counts.gapped_extensions, b.counts.gapped_extensions);
  EXPECT_EQ(a.counts.prelim_hsps, b.counts.prelim_hsps);
  EXPECT_EQ(a.counts.redone_subjects, b.counts.redone_subjects);
  EXPECT_EQ(a.counts.composition_redone, b.counts.composition_redone);
}

struct Data {
  test::TempDir dir{"ws_dist_blast"};
  std::string fasta, packed;
  std::vector<BlastpQuery> queries;
};

// 300 real subjects (the first of mmseqs_DB20k) with 6 of the 500 real queries planted among them, and
// those 6 queries plus 2 others; as FASTA and as a packed database.
bool make_data(Data& d) {
  const std::string db = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  const std::string qf = (test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string();
  std::vector<test::Record> subjects = test::read_fasta(db, 300);
  const std::vector<test::Record> queries = test::read_fasta(qf, 8);
  if (subjects.size() < 300 || queries.size() < 8) return false;
  for (std::size_t i = 0; i < 6; ++i) {
    test::Record planted = queries[i];
    planted.defline = fmt::format("planted{} {}", i, planted.defline);
    subjects.insert(subjects.begin() + static_cast<std::ptrdiff_t>(i * 47), planted);
  }
  d.fasta = d.dir / "subjects.fa";
  test::write_fasta(subjects, d.fasta, 60);
  d.packed = d.dir / "subjects";
  make_db(d.fasta, d.packed);
  for (const test::Record& r : queries) d.queries.push_back({r.defline, r.codes});
  return true;
}

// make_data's queries followed by a long one, the 6 planted queries and then the first subjects back to back
// up to 21,000 residues: its BLAST batch (about 23,700 residues) is searched in two chunks (blast/split.hpp),
// so the scan parts hold the pieces' selections.
bool make_split_data(Data& d) {
  if (!make_data(d)) return false;
  BlastpQuery long_query{"long planted queries and subjects", {}};
  for (std::size_t i = 0; i < 6; ++i)
    long_query.residues.insert(long_query.residues.end(), d.queries[i].residues.begin(),
                               d.queries[i].residues.end());
  const std::string db = (test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string();
  for (const test::Record& r : test::read_fasta(db, 200)) {
    if (long_query.residues.size() >= 21000) break;
    long_query.residues.insert(long_query.residues.end(), r.codes.begin(), r.codes.end());
  }
  long_query.residues.resize(21000);
  d.queries.push_back(std::move(long_query));
  return true;
}

void check(const Data& d, const std::string& db, bool subject_mode, int cbs, int max_targets) {
  SCOPED_TRACE(::testing::Message() << db << " cbs " << cbs << " max_target_seqs " << max_targets);
  const blast::DatabaseTotals totals = blast::database_totals(db, subject_mode);
  BlastpRunOptions options;
  options.search.comp_based_stats = cbs;
  options.search.max_target_seqs = max_targets;
  options.search.evalue = 100;  // many weak hits: the selection matters
  options.threads = 2;
  const BlastpRunResult single = blast::blastp_run(d.queries, db, totals, options);
  std::size_t hits = 0;
  for (const auto& q : single.queries) hits += q.hits.size();
  EXPECT_GE(hits, d.queries.size() * static_cast<std::size_t>(std::min(max_targets, 3)));  // real hit lists
  // Under ASan/UBSan every part repeats the query set-up (300 s for all five splits); the sanitized run
  // takes two of them, the Release run all five.
#if defined(__SANITIZE_ADDRESS__)
  const std::vector<int> splits{2, 5};
#else
  const std::vector<int> splits{1, 2, 3, 5, 64};
#endif
  for (const int parts : splits) {
    SCOPED_TRACE(::testing::Message() << parts << " parts");
    std::vector<BlastpScanPart> decoded;
    for (int p = 0; p < parts; ++p) {
      const BlastpScanPart part = blast::blastp_scan_part(d.queries, db, totals, options, p, parts);
      decoded.push_back(decode_scan_part(encode_scan_part(part)));
      expect_same_part(decoded.back(), part);
    }
    const BlastpRunResult merged = blast::blastp_merge_parts(d.queries, totals, options, std::move(decoded));
    expect_same_result(merged, single);
  }
}

TEST(BlastShardMerge, FastaAndPackedDatabaseSplitAnyWayGiveTheOneProcessResult) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  Data d;
  ASSERT_TRUE(make_data(d));
  check(d, d.fasta, false, 0, 7);
  check(d, d.packed, false, 0, 500);
  check(d, d.fasta, true, 2, 20);
  check(d, d.packed, false, 2, 3);
}

TEST(BlastShardMerge, SplitQueryPiecesMergeAsInOneProcess) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  Data d;
  ASSERT_TRUE(make_split_data(d));
  check(d, d.packed, false, 0, 7);
  check(d, d.fasta, true, 2, 20);
}

TEST(BlastWire, TruncatedPartIsAProtocolError) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  Data d;
  ASSERT_TRUE(make_data(d));
  const blast::DatabaseTotals totals = blast::database_totals(d.fasta, false);
  const BlastpScanPart part = blast::blastp_scan_part(d.queries, d.fasta, totals, BlastpRunOptions{}, 1, 2);
  std::size_t entries = 0;
  for (const auto& e : part.entries) entries += e.size();
  EXPECT_GT(entries, 0u);
  EXPECT_FALSE(part.subjects.empty());
  const Bytes msg = encode_scan_part(part);
  expect_same_part(decode_scan_part(msg), part);
  EXPECT_THROW(decode_scan_part(std::span<const std::uint8_t>(msg.data(), msg.size() - 3)), Error);
  // A subject of a -parse_seqids database carries its ids and titles through the wire.
  BlastpScanPart parsed = part;
  parsed.subjects.front().second.ids = blast::ParsedSubjectIds{"sp|P69905|HBA_HUMAN",
                                                               "sp|P69905|HBA_HUMAN;ref|NP_000549.1|",
                                                               "P69905",
                                                               "P69905",
                                                               "P69905;NP_000549",
                                                               "Hemoglobin alpha",
                                                               "Hemoglobin alpha<>hemoglobin subunit alpha",
                                                               "P69905 Hemoglobin alpha",
                                                               "P69905",
                                                               "Hemoglobin alpha",
                                                               "P69905"};
  const Bytes parsed_msg = encode_scan_part(parsed);
  expect_same_part(decode_scan_part(parsed_msg), parsed);
  EXPECT_THROW(decode_scan_part(std::span<const std::uint8_t>(parsed_msg.data(), parsed_msg.size() - 3)),
               Error);

  // The part's entries as traceback work (what rank 0 sends a rank): every field back exactly.
  std::vector<TraceWorkView> views;
  std::uint64_t index = 0;
  for (std::size_t q = 0; q < part.entries.size(); ++q) {
    for (const PrelimEntry& e : part.entries[q]) {
      const auto subject = std::find_if(part.subjects.begin(), part.subjects.end(),
                                        [&e](const auto& s) { return s.first == e.list.oid; });
      ASSERT_NE(subject, part.subjects.end());
      views.push_back({index, q, &e, subject->second.residues});
      index += 3;
    }
  }
  const Bytes work = encode_trace_work(views);
  const std::vector<TraceWork> back = decode_trace_work(work);
  ASSERT_EQ(back.size(), views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(back[i].index, views[i].index);
    EXPECT_EQ(back[i].query, views[i].query);
    EXPECT_EQ(back[i].entry.list.oid, views[i].entry->list.oid);
    EXPECT_EQ(back[i].entry.list.hsps, views[i].entry->list.hsps);
    ASSERT_EQ(back[i].entry.prelim.size(), views[i].entry->prelim.size());
    for (std::size_t h = 0; h < back[i].entry.prelim.size(); ++h) {
      EXPECT_EQ(back[i].entry.prelim[h].hsp, views[i].entry->prelim[h].hsp);
      EXPECT_EQ(back[i].entry.prelim[h].seed, views[i].entry->prelim[h].seed);
    }
    EXPECT_TRUE(std::equal(back[i].residues.begin(), back[i].residues.end(), views[i].residues.begin(),
                           views[i].residues.end()));
  }
  EXPECT_TRUE(decode_trace_work(encode_trace_work({})).empty());
  EXPECT_THROW(decode_trace_work(std::span<const std::uint8_t>(work.data(), work.size() - 1)), Error);
}

blast::Hsp random_hsp(std::mt19937& rng) {
  std::uniform_int_distribution<int> pos(0, 5000);
  blast::Hsp h;
  h.score = pos(rng);
  h.q_start = pos(rng);
  h.q_end = h.q_start + pos(rng);
  h.s_start = pos(rng);
  h.s_end = h.s_start + pos(rng);
  h.evalue = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng), -pos(rng) / 5);
  h.bit_score = std::uniform_real_distribution<double>(0, 900)(rng);
  for (int k = pos(rng) % 6; k > 0; --k)
    h.script.push_back({static_cast<blast::EditOp>(pos(rng) % 3), 1 + pos(rng) % 40});
  return h;
}

TEST(BlastWire, TracebackResultsRoundTrip) {
  std::mt19937 rng(1022);
  std::uniform_int_distribution<int> small(0, 4);
  const int rules[] = {-1, 0, 1, 2, 3, 4};
  // A work list of 9 items of which this "rank" holds 4, once as HSP lists and once as redos.
  const std::vector<std::uint64_t> index{0, 3, 4, 8};
  std::vector<std::vector<blast::Hsp>> traced(index.size());
  std::vector<blast::SubjectRedo> redone(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    for (int k = small(rng); k > 0; --k) traced[i].push_back(random_hsp(rng));
    for (int k = small(rng); k > 0; --k) {
      redone[i].hsps.push_back(random_hsp(rng));
      redone[i].rules.push_back(static_cast<blast::compo::MatrixAdjustRule>(rules[small(rng)]));
    }
    redone[i].best_evalue = std::ldexp(1.0, -small(rng) * 40);
    redone[i].best_score = small(rng) * 1000;
    redone[i].stale_matrix_hsps = small(rng);
    redone[i].adjustments = small(rng);
    redone[i].alignments = small(rng);
  }
  std::vector<std::vector<blast::Hsp>> all_traced(9), none_traced;
  std::vector<blast::SubjectRedo> all_redone(9), none_redone;
  decode_traced(encode_traced(index, traced, {}), all_traced, none_redone);
  decode_traced(encode_traced(index, {}, redone), none_traced, all_redone);
  for (std::size_t i = 0; i < index.size(); ++i) {
    EXPECT_EQ(all_traced[index[i]], traced[i]);
    const blast::SubjectRedo& a = all_redone[index[i]];
    const blast::SubjectRedo& b = redone[i];
    EXPECT_EQ(a.hsps, b.hsps);
    EXPECT_EQ(a.best_evalue, b.best_evalue);
    EXPECT_EQ(a.best_score, b.best_score);
    EXPECT_EQ(a.rules, b.rules);
    EXPECT_EQ(a.stale_matrix_hsps, b.stale_matrix_hsps);
    EXPECT_EQ(a.adjustments, b.adjustments);
    EXPECT_EQ(a.alignments, b.alignments);
  }
  EXPECT_TRUE(all_traced[1].empty());  // items of other ranks untouched
  // An index beyond the receiver's work list is a protocol error.
  std::vector<std::vector<blast::Hsp>> short_list(5);
  EXPECT_THROW(decode_traced(encode_traced(index, traced, {}), short_list, none_redone), Error);
}

}  // namespace
}  // namespace warpsearch::dist
