// test_output.cpp: swsearch's report and tabular output (src/swsearch/output.hpp) on QueryResults built
// here from real alignments (align::Aligner, CPU traceback) of random and real protein / DNA pairs.
//
// The outputs are checked against what they must mean, independently of how output.cpp derives them:
// the report's pairwise display, with gaps removed, spells exactly the aligned query and target ranges,
// its line coordinates count the residues shown, its middle line marks identities / positive pairs, and
// the displayed alignment rescored with the matrix and gap costs gives the hit's score; the tabular fields
// (qseq, sseq, btop, counts, coordinates, percentages) agree with that same rescoring walk of the rows;
// outfmt 7's comment lines name swsearch; --noalign refuses alignment fields; malformed alignments are
// Error(kInternal).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blast/tabular.hpp"
#include "swsearch/output.hpp"
#include "testdata.hpp"
#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace warpsearch::swsearch {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Column of a display line's residues: after the label, the blanks and the start position, and one blank.
std::size_t segment_column(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] != ' ') ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  return i + 1;
}

std::string letters(const std::vector<std::uint8_t>& codes, std::size_t begin, std::size_t end,
                    const Alphabet& alphabet) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) out += alphabet.symbol(codes[i]);
  return out;
}

// Score of an alignment given as two gapped rows (a gap of length k costs open + k * extend).
int rescore(const std::string& qrow, const std::string& trow, const ScoringMatrix& matrix, GapCosts gaps) {
  const Alphabet alphabet(matrix.alphabet());
  int score = 0;
  char gap = 0;  // the kind of gap run in progress: 'I' (gap in target), 'D' (gap in query) or none
  for (std::size_t i = 0; i < qrow.size(); ++i) {
    if (qrow[i] == '-' || trow[i] == '-') {
      const char kind = qrow[i] == '-' ? 'D' : 'I';
      score -= gaps.extend + (gap == kind ? 0 : gaps.open);
      gap = kind;
    } else {
      score += matrix.score(*alphabet.code(qrow[i]), *alphabet.code(trow[i]));
      gap = 0;
    }
  }
  return score;
}

// A search result built from real alignments: one query against several targets, ranked by score.
struct Fixture {
  ScoringMatrix matrix = ScoringMatrix::builtin("BLOSUM62");
  GapCosts gaps{11, 1};
  QueryResult result;
};

std::vector<std::uint8_t> random_codes(std::mt19937& rng, std::size_t n, const Alphabet& alphabet) {
  std::uniform_int_distribution<int> pick(0, alphabet.canonical_size() - 1);
  std::vector<std::uint8_t> out(n);
  for (auto& c : out) c = static_cast<std::uint8_t>(pick(rng));
  return out;
}

// A mutated copy of `seq`: substitutions, insertions and deletions at the given rate.
std::vector<std::uint8_t> mutate(std::mt19937& rng, const std::vector<std::uint8_t>& seq, double rate,
                                 const Alphabet& alphabet) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> pick(0, alphabet.canonical_size() - 1);
  std::vector<std::uint8_t> out;
  for (const std::uint8_t c : seq) {
    const double r = u(rng);
    if (r < rate / 3) continue;  // deletion
    if (r < 2 * rate / 3)
      out.push_back(static_cast<std::uint8_t>(pick(rng)));
    else
      out.push_back(c);
    if (u(rng) < rate / 3) out.push_back(static_cast<std::uint8_t>(pick(rng)));  // insertion
  }
  return out;
}

// Fills result.hits from the targets: aligned with traceback, ranked by score then input order, with
// made-up bits and E-values (the output prints whatever the search computed).
void add_hits(Fixture& f, const std::vector<std::vector<std::uint8_t>>& targets,
              const std::vector<std::string>& names) {
  align::Config config;
  config.matrix = f.matrix;
  config.gaps = f.gaps;
  config.traceback = true;
  config.device = DeviceMode::kCpu;
  config.threads = 1;
  align::Aligner aligner(config);
  align::Batch batch;
  for (const auto& t : targets) batch.add(f.result.residues, t);
  const std::vector<align::Result> results = aligner.align(std::move(batch));
  for (std::size_t i = 0; i < targets.size(); ++i) {
    Hit h;
    h.target_id = i;
    h.target_name = names[i];
    h.target_description = "description of " + names[i];
    h.target_length = static_cast<std::uint32_t>(targets[i].size());
    h.target_residues = targets[i];
    h.score = results[i].score;
    h.bits = 0.3 * h.score + 0.05;
    h.evalue = 1000.0 * std::exp(-0.3 * h.score);
    h.alignment = results[i];
    f.result.hits.push_back(std::move(h));
  }
  std::stable_sort(f.result.hits.begin(), f.result.hits.end(),
                   [](const Hit& a, const Hit& b) { return a.score > b.score; });
}

Fixture random_fixture(std::uint32_t seed, bool dna) {
  std::mt19937 rng(seed);
  Fixture f;
  if (dna) {
    f.matrix = ScoringMatrix::dna(5, -4);
    f.gaps = {12, 4};
  }
  const Alphabet alphabet(f.matrix.alphabet());
  f.result.name = "query1";
  f.result.description = "a random query";
  f.result.residues = random_codes(rng, 150, alphabet);
  std::vector<std::vector<std::uint8_t>> targets;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) {
    std::vector<std::uint8_t> core = mutate(rng, f.result.residues, 0.05 * i, alphabet);
    std::vector<std::uint8_t> t = random_codes(rng, static_cast<std::size_t>(rng() % 40), alphabet);
    const std::size_t from = rng() % 30, to = core.size() - rng() % 30;
    t.insert(t.end(), core.begin() + static_cast<std::ptrdiff_t>(from),
             core.begin() + static_cast<std::ptrdiff_t>(to));
    const std::vector<std::uint8_t> tail = random_codes(rng, static_cast<std::size_t>(rng() % 40), alphabet);
    t.insert(t.end(), tail.begin(), tail.end());
    targets.push_back(std::move(t));
    names.push_back("target" + std::to_string(i));
  }
  add_hits(f, targets, names);
  return f;
}

OutputSettings settings_for(const Fixture& f, const std::string& format) {
  OutputSettings s;
  s.format = format;
  s.query_label = "queries.fa";
  s.database_label = "db.fa";
  s.matrix = f.matrix;
  s.gaps = f.gaps;
  s.statistics = "test statistics line";
  return s;
}

// Checks one query's report text against the hits (see the file comment).
void check_report(const Fixture& f, const std::string& text, std::size_t line_width) {
  const Alphabet alphabet(f.matrix.alphabet());
  const std::vector<std::string> lines = lines_of(text);
  std::size_t li = 0;
  for (std::size_t h = 0; h < f.result.hits.size(); ++h) {
    const Hit& hit = f.result.hits[h];
    const align::Result& a = *hit.alignment;
    const std::string head = ">>" + std::to_string(h + 1) + " " + hit.target_name + " ";
    while (li < lines.size() && lines[li].rfind(head, 0) != 0) ++li;
    ASSERT_LT(li, lines.size()) << "no alignment block for hit " << h + 1;
    ASSERT_EQ(lines[li + 1].rfind("Score: " + std::to_string(hit.score) + " ", 0), 0u) << lines[li + 1];
    li += 5;  // >>, Score, Identities, Query/target ranges, blank
    std::string qrow, mrow, trow;
    std::size_t qpos = a.query_begin, tpos = a.target_begin;
    // Blocks of three lines separated by blank lines, until the next ">>" or the end.
    while (li + 2 < lines.size() && lines[li].rfind("Query ", 0) == 0) {
      std::istringstream qs(lines[li]), ts(lines[li + 2]);
      std::string label, seg;
      std::size_t start = 0, end = 0;
      qs >> label >> start >> seg >> end;
      EXPECT_LE(seg.size(), line_width);
      const std::size_t seg_col = segment_column(lines[li]);
      EXPECT_EQ(lines[li].substr(seg_col, seg.size()), seg);
      const std::size_t nq = seg.size() - static_cast<std::size_t>(std::count(seg.begin(), seg.end(), '-'));
      EXPECT_EQ(start, nq > 0 ? qpos + 1 : qpos);
      qpos += nq;
      EXPECT_EQ(end, qpos);
      qrow += seg;
      mrow += lines[li + 1].substr(seg_col, seg.size());
      EXPECT_EQ(lines[li + 1].size(), seg_col + seg.size());
      ts >> label >> start >> seg >> end;
      EXPECT_EQ(label, "Target");
      EXPECT_EQ(segment_column(lines[li + 2]), seg_col);
      EXPECT_EQ(lines[li + 2].substr(seg_col, seg.size()), seg);
      const std::size_t nt = seg.size() - static_cast<std::size_t>(std::count(seg.begin(), seg.end(), '-'));
      EXPECT_EQ(start, nt > 0 ? tpos + 1 : tpos);
      tpos += nt;
      EXPECT_EQ(end, tpos);
      trow += seg;
      li += 4;
    }
    ASSERT_EQ(qrow.size(), trow.size());
    std::string q = qrow, t = trow;
    q.erase(std::remove(q.begin(), q.end(), '-'), q.end());
    t.erase(std::remove(t.begin(), t.end(), '-'), t.end());
    EXPECT_EQ(q, letters(f.result.residues, a.query_begin, a.query_end, alphabet));
    EXPECT_EQ(t, letters(hit.target_residues, a.target_begin, a.target_end, alphabet));
    EXPECT_EQ(rescore(qrow, trow, f.matrix, f.gaps), hit.score) << hit.target_name;
    std::uint32_t matches = 0, positives = 0;
    for (std::size_t i = 0; i < qrow.size(); ++i) {
      const bool pair = qrow[i] != '-' && trow[i] != '-';
      const bool same = pair && qrow[i] == trow[i];
      const bool pos = pair && f.matrix.score(*alphabet.code(qrow[i]), *alphabet.code(trow[i])) > 0;
      EXPECT_EQ(mrow[i], same ? ':' : pos ? '.' : ' ') << "column " << i;
      matches += same ? 1u : 0u;
      positives += pos ? 1u : 0u;
    }
    EXPECT_EQ(matches, a.matches);
    const std::string counts =
        "Identities: " + std::to_string(matches) + "/" + std::to_string(qrow.size()) + " ";
    EXPECT_NE(text.find(counts), std::string::npos) << counts;
    EXPECT_NE(text.find("Positives: " + std::to_string(positives) + "/"), std::string::npos);
  }
}

TEST(SwsearchOutput, ReportDisplaysTheAlignmentsExactly) {
  for (const bool dna : {false, true}) {
    for (const std::size_t width : {std::size_t{60}, std::size_t{7}, std::size_t{1}}) {
      const Fixture f = random_fixture(dna ? 11u : 7u, dna);
      OutputSettings s = settings_for(f, "0");
      s.line_width = width;
      const OutputWriter writer(s);
      EXPECT_FALSE(writer.tabular());
      const std::string header = writer.header();
      EXPECT_NE(header.find("Database:   db.fa"), std::string::npos);
      EXPECT_NE(header.find("Statistics: test statistics line"), std::string::npos);
      const std::string text = writer.query(f.result);
      EXPECT_NE(text.find("Query: query1 a random query\nLength: 150 " + std::string(dna ? "nt" : "aa")),
                std::string::npos);
      check_report(f, text, width);
      // The hit list: one row per hit, in rank order, with the score and the formatted E-value.
      for (std::size_t h = 0; h < f.result.hits.size(); ++h) {
        const Hit& hit = f.result.hits[h];
        const std::string row_start = std::to_string(h + 1) + "  " + hit.target_name + " description of ";
        const std::size_t at = text.find(row_start);
        ASSERT_NE(at, std::string::npos) << row_start;
        const std::string row = text.substr(at, text.find('\n', at) - at);
        EXPECT_NE(row.find(" " + std::to_string(hit.score) + "  "), std::string::npos) << row;
        EXPECT_EQ(row.substr(row.find_last_of(' ') + 1), blast::format_tabular_evalue(hit.evalue));
      }
    }
  }
}

TEST(SwsearchOutput, ReportOnRealProteins) {
  WS_REQUIRE_TESTDATA("prot/mmseqs_QUERY500.fasta");
  WS_REQUIRE_TESTDATA("prot/mmseqs_DB20k.fasta");
  ReaderOptions ro;
  ro.alphabet = AlphabetKind::kProtein;
  SequenceReader queries((test::testdata_dir() / "prot/mmseqs_QUERY500.fasta").string(), ro);
  SequenceReader db((test::testdata_dir() / "prot/mmseqs_DB20k.fasta").string(), ro);
  Sequence q, t;
  ASSERT_TRUE(queries.next(q));
  std::vector<std::vector<std::uint8_t>> targets;
  std::vector<std::string> names;
  for (int i = 0; i < 40 && db.next(t); ++i) {
    targets.push_back(t.residues);
    names.push_back(t.name);
  }
  Fixture f;
  f.result.name = q.name;
  f.result.description = q.description;
  f.result.residues = q.residues;
  add_hits(f, targets, names);
  const OutputWriter writer(settings_for(f, "0"));
  check_report(f, writer.query(f.result), 60);
}

// Tabular rows checked field by field against the report's display of the same hits.
TEST(SwsearchOutput, TabularFieldsMatchTheAlignment) {
  for (const bool dna : {false, true}) {
    const Fixture f = random_fixture(dna ? 5u : 3u, dna);
    const Alphabet alphabet(f.matrix.alphabet());
    const OutputWriter writer(settings_for(
        f,
        "6 qseqid sseqid score qstart qend sstart send qlen slen length nident mismatch positive gapopen "
        "gaps pident ppos qseq sseq btop evalue bitscore stitle"));
    ASSERT_TRUE(writer.tabular());
    EXPECT_EQ(writer.header(), "");
    const std::vector<std::string> rows = lines_of(writer.query(f.result));
    ASSERT_EQ(rows.size(), f.result.hits.size());
    for (std::size_t h = 0; h < rows.size(); ++h) {
      const Hit& hit = f.result.hits[h];
      const align::Result& a = *hit.alignment;
      const std::vector<std::string> v = split(rows[h], '\t');
      ASSERT_EQ(v.size(), 23u) << rows[h];
      EXPECT_EQ(v[0], "query1");
      EXPECT_EQ(v[1], hit.target_name);
      EXPECT_EQ(v[2], std::to_string(hit.score));
      EXPECT_EQ(v[3], std::to_string(a.query_begin + 1));
      EXPECT_EQ(v[4], std::to_string(a.query_end));
      EXPECT_EQ(v[5], std::to_string(a.target_begin + 1));
      EXPECT_EQ(v[6], std::to_string(a.target_end));
      EXPECT_EQ(v[7], "150");
      EXPECT_EQ(v[8], std::to_string(hit.target_length));
      const std::string& qseq = v[17];
      const std::string& sseq = v[18];
      ASSERT_EQ(qseq.size(), sseq.size());
      EXPECT_EQ(rescore(qseq, sseq, f.matrix, f.gaps), hit.score);
      std::string qs = qseq, ss = sseq;
      qs.erase(std::remove(qs.begin(), qs.end(), '-'), qs.end());
      ss.erase(std::remove(ss.begin(), ss.end(), '-'), ss.end());
      EXPECT_EQ(qs, letters(f.result.residues, a.query_begin, a.query_end, alphabet));
      EXPECT_EQ(ss, letters(hit.target_residues, a.target_begin, a.target_end, alphabet));
      int nident = 0, positive = 0, gaps = 0, opens = 0;
      char run = 0;
      std::string btop;
      int same_run = 0;
      for (std::size_t i = 0; i < qseq.size(); ++i) {
        const bool gap = qseq[i] == '-' || sseq[i] == '-';
        const char kind = qseq[i] == '-' ? 'D' : sseq[i] == '-' ? 'I' : 'M';
        if (gap) {
          ++gaps;
          if (run != kind) ++opens;
        } else {
          nident += qseq[i] == sseq[i] ? 1 : 0;
          positive += f.matrix.score(*alphabet.code(qseq[i]), *alphabet.code(sseq[i])) > 0 ? 1 : 0;
        }
        run = kind;
        if (!gap && qseq[i] == sseq[i]) {
          ++same_run;
        } else {
          if (same_run > 0) btop += std::to_string(same_run);
          same_run = 0;
          btop += qseq[i];
          btop += sseq[i];
        }
      }
      if (same_run > 0) btop += std::to_string(same_run);
      const int length = static_cast<int>(qseq.size());
      EXPECT_EQ(v[9], std::to_string(length));
      EXPECT_EQ(v[10], std::to_string(nident));
      EXPECT_EQ(v[11], std::to_string(length - nident - gaps));
      EXPECT_EQ(v[12], std::to_string(positive));
      EXPECT_EQ(v[13], std::to_string(opens));
      EXPECT_EQ(v[14], std::to_string(gaps));
      EXPECT_EQ(v[15], fmt::format("{:.3f}", static_cast<double>(nident) / length * 100.0));
      EXPECT_EQ(v[16], fmt::format("{:.2f}", static_cast<double>(positive) / length * 100.0));
      EXPECT_EQ(v[19], btop);
      EXPECT_EQ(v[20], blast::format_tabular_evalue(hit.evalue));
      EXPECT_EQ(v[21], blast::format_tabular_bitscore(hit.bits));
      EXPECT_EQ(v[22], hit.target_name + " description of " + hit.target_name);
    }
    EXPECT_EQ(writer.footer(Summary{}), "");
  }
}

TEST(SwsearchOutput, Outfmt7CommentLinesNameSwsearch) {
  Fixture f = random_fixture(9, false);
  const OutputWriter writer(settings_for(f, "7 std score"));
  const std::vector<std::string> out = lines_of(writer.query(f.result));
  ASSERT_GE(out.size(), 5u);
  EXPECT_EQ(out[0].rfind("# warpsearch swsearch ", 0), 0u) << out[0];
  EXPECT_EQ(out[1], "# Query: query1 a random query");
  EXPECT_EQ(out[2], "# Database: db.fa");
  EXPECT_EQ(out[3].rfind("# Fields: query acc.ver, subject acc.ver, % identity", 0), 0u) << out[3];
  EXPECT_EQ(out[3].substr(out[3].size() - 7), ", score");
  EXPECT_EQ(out[4], fmt::format("# {} hits found", f.result.hits.size()));
  EXPECT_EQ(out.size(), 5 + f.result.hits.size());
  f.result.hits.clear();
  EXPECT_EQ(lines_of(writer.query(f.result)).back(), "# 0 hits found");
  Summary summary;
  summary.queries = 3;
  EXPECT_EQ(writer.footer(summary), "# warpsearch swsearch processed 3 queries\n");
}

TEST(SwsearchOutput, WithoutAlignments) {
  Fixture f = random_fixture(13, false);
  for (Hit& h : f.result.hits) {
    h.alignment.reset();
    h.target_residues.clear();  // the search need not keep them without alignments
  }
  OutputSettings s = settings_for(f, "6 qseqid sseqid qlen slen evalue bitscore score stitle");
  s.alignments = false;
  const OutputWriter tab(s);
  const std::vector<std::string> rows = lines_of(tab.query(f.result));
  ASSERT_EQ(rows.size(), f.result.hits.size());
  for (std::size_t h = 0; h < rows.size(); ++h) {
    const std::vector<std::string> v = split(rows[h], '\t');
    ASSERT_EQ(v.size(), 8u);
    EXPECT_EQ(v[3], std::to_string(f.result.hits[h].target_length));
    EXPECT_EQ(v[6], std::to_string(f.result.hits[h].score));
  }
  for (const char* field : {"qstart", "send", "length", "pident", "qseq", "btop", "qcovs", "gaps"}) {
    s.format = std::string("6 qseqid ") + field;
    try {
      const OutputWriter w(s);
      ADD_FAILURE() << field << " accepted without alignments";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  s.format = "0";
  const OutputWriter report(s);
  EXPECT_NE(report.header().find("(no alignments)"), std::string::npos);
  const std::string text = report.query(f.result);
  EXPECT_EQ(text.find(">>"), std::string::npos);
  EXPECT_NE(text.find(fmt::format("{} hits:", f.result.hits.size())), std::string::npos);
}

TEST(SwsearchOutput, NoHitsAndFooter) {
  Fixture f = random_fixture(17, false);
  f.result.hits.clear();
  OutputSettings s = settings_for(f, "0");
  s.evalue = 0.001;
  const OutputWriter writer(s);
  EXPECT_NE(writer.query(f.result).find("No hits with E-value <= 0.001."), std::string::npos);
  Summary summary;
  summary.queries = 2;
  summary.db_sequences = 1;
  summary.db_residues = 345;
  EXPECT_EQ(writer.footer(summary), "\n2 queries searched against 1 database sequence (345 residues).\n");
}

TEST(SwsearchOutput, BadFormatsAreUsageErrors) {
  const Fixture f = random_fixture(19, false);
  for (const char* spec : {"5", "6 nosuchfield", "11", "7 qseqid bogus", "xml", "6 qseqid delim=@"}) {
    try {
      const OutputWriter w(settings_for(f, spec));
      ADD_FAILURE() << spec << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << spec;
      EXPECT_NE(std::string(e.what()).find("--outfmt"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(OutputWriter(settings_for(f, "10")).tabular());  // comma-separated, as blastp's -outfmt 10
  EXPECT_FALSE(OutputWriter(settings_for(f, "")).tabular());
  EXPECT_FALSE(OutputWriter(settings_for(f, " 0 ")).tabular());
}

// An alignment inconsistent with the sequences is a bug in the search: Error(kInternal), in every format.
TEST(SwsearchOutput, InconsistentAlignmentsAreInternalErrors) {
  const Fixture base = random_fixture(23, false);
  using Edit = void (*)(Hit&);
  const Edit edits[] = {
      [](Hit& h) { h.alignment->cigar += "3Q"; },                     // malformed CIGAR
      [](Hit& h) { h.alignment->cigar = "=" + h.alignment->cigar; },  // run without a count
      [](Hit& h) { h.target_residues.pop_back(); },                   // residues not the whole target
      [](Hit& h) { h.alignment->query_end += 1; },                    // CIGAR ends before the range does
      [](Hit& h) { h.alignment->matches += 1; },                      // counts disagree
      [](Hit& h) { h.alignment->score += 1; },                        // score disagrees
      [](Hit& h) { h.alignment->target_end = h.target_length + 1; },  // range outside the target
      [](Hit& h) {                                                    // '=' over different residues
        std::string& c = h.alignment->cigar;
        const std::size_t x = c.find('X');
        if (x != std::string::npos)
          c[x] = '=';
        else
          h.alignment->cigar = "0=";
      },
  };
  for (const char* format : {"0", "6 std"}) {
    for (const Edit edit : edits) {
      Fixture f = base;
      edit(f.result.hits.back());  // the most mutated target: mismatches and gaps
      const OutputWriter writer(settings_for(f, format));
      try {
        static_cast<void>(writer.query(f.result));
        ADD_FAILURE() << "accepted an inconsistent alignment (" << format << ")";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInternal) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace warpsearch::swsearch
