// test_scanner.cpp: the scan driver (scan.hpp, src/scan/scan.cpp, strand.hpp) on the CPU engine.
//
// Every Scanner result is compared with an independent composition of the definition: reference_scan()
// of each target and strand (the query, or its reverse complement built here from the letters), the
// brute-force greedy walk select_brute_force(), trace_alignment_full() and the coordinate rules of
// scan.hpp -- on generated FASTA files with planted (mutated, reverse-complemented) copies of the
// query, several sequences per file, an empty record, soft masks, top-K and minimum-score limits, a
// pool too small for the result (forces rescans), gzip input, protein scoring; plus the strand
// helpers against the IUPAC base sets and the error cases.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "scan/model.hpp"
#include "scan/reference.hpp"
#include "scan/select.hpp"
#include "scan/strand.hpp"
#include "scan/traceback.hpp"
#include "stats/karlin.hpp"
#include "temp_dir.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/scan.hpp"

namespace warpsearch::scan {
namespace {

using test::TempDir;

struct Record {
  std::string name;
  std::string letters;  // lowercase = soft-masked
};

std::string random_letters(std::mt19937_64& rng, std::size_t n, std::string_view symbols = "ACGT") {
  std::string s(n, 'A');
  std::uniform_int_distribution<std::size_t> pick(0, symbols.size() - 1);
  for (char& c : s) c = symbols[pick(rng)];
  return s;
}

// Substitutions and short insertions/deletions at about `rate` per residue.
std::string mutate(std::mt19937_64& rng, const std::string& s, double rate,
                   std::string_view symbols = "ACGT") {
  std::string out;
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<std::size_t> pick(0, symbols.size() - 1);
  for (const char c : s) {
    const double r = u(rng);
    if (r < rate * 0.6) {
      out += symbols[pick(rng)];
    } else if (r < rate * 0.8) {
      // deletion
    } else if (r < rate) {
      out += c;
      out += symbols[pick(rng)];
    } else {
      out += c;
    }
  }
  return out;
}

// Reverse complement on letters (IUPAC), written independently of strand.cpp's code table.
std::string revcomp_letters(const std::string& s) {
  const std::string from = "ACGTRYMKSWHBVDNacgtrymkswhbvdn";
  const std::string to = "TGCAYRKMSWDVBHNtgcayrkmswdvbhn";
  std::string out(s.rbegin(), s.rend());
  for (char& c : out) c = to[from.find(c)];
  return out;
}

Sequence make_sequence(const std::string& name, const std::string& letters, const Alphabet& alphabet) {
  Sequence seq;
  seq.name = name;
  for (std::size_t i = 0; i < letters.size(); ++i) {
    seq.residues.push_back(*alphabet.code(letters[i]));
    if (std::islower(static_cast<unsigned char>(letters[i]))) {
      if (!seq.soft_mask.empty() && seq.soft_mask.back().end == i)
        seq.soft_mask.back().end = i + 1;
      else
        seq.soft_mask.push_back({i, i + 1});
    }
  }
  return seq;
}

std::string fasta(const std::vector<Record>& records) {
  std::string text;
  for (const Record& r : records) {
    text += ">" + r.name + " some description\n";
    for (std::size_t i = 0; i < r.letters.size(); i += 60) text += r.letters.substr(i, 60) + "\n";
  }
  return text;
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
}

// Codes as the definition sees them: soft-masked letters become the unknown code when masking.
std::vector<std::uint8_t> codes_of(const std::string& letters, const Alphabet& alphabet, bool soft_mask) {
  std::vector<std::uint8_t> codes;
  for (const char c : letters)
    codes.push_back(soft_mask && std::islower(static_cast<unsigned char>(c)) ? alphabet.unknown()
                                                                             : *alphabet.code(c));
  return codes;
}

// Per-origin reduction on full column records (sections.hpp, reduce_records): only the best record of
// each origin (score descending, then smallest column) stays a candidate; the others become score 0.
// The reported set is the greedy walk over these per-origin bests: walking every column record can
// report a weaker record of an origin whose best was rejected (model.hpp's "only the first of each
// origin can ever be reported" does not hold then). select_brute_force() reduces per origin as well;
// doing it here too keeps this composition explicit about the definition it checks.
std::vector<ColumnRecord> origin_best(std::vector<ColumnRecord> records) {
  std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> best;
  for (std::size_t j = 0; j < records.size(); ++j) {
    if (records[j].score <= 0) continue;
    const auto [it, inserted] = best.try_emplace({records[j].qstart, records[j].tstart}, j);
    if (!inserted && records[j].score > records[it->second].score) it->second = j;
  }
  std::vector<ColumnRecord> out(records.size());
  for (const auto& [origin, j] : best) out[j] = records[j];
  return out;
}

// The definition, composed from the reference pieces. The column records depend only on the scoring,
// masking and strands of the configuration, so they are computed once; hits() applies top, minimum
// score and traceback of any configuration with the same scoring.
class Reference {
 public:
  Reference(const Config& cfg, const std::string& query, const std::vector<Record>& targets)
      : targets_(targets), model_(ScanModel::make(cfg.matrix, cfg.gaps)) {
    const Alphabet alphabet(cfg.matrix.alphabet());
    const bool nucleotide = alphabet.is_nucleotide();
    const bool plus = !nucleotide || cfg.strands != StrandMode::kMinus;
    const bool minus = nucleotide && cfg.strands != StrandMode::kPlus;
    q_ = codes_of(query, alphabet, cfg.soft_mask);
    if (nucleotide) rc_ = codes_of(revcomp_letters(query), alphabet, cfg.soft_mask);
    std::uint64_t residues = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      t_.push_back(codes_of(targets[i].letters, alphabet, cfg.soft_mask));
      residues += t_.back().size();
      if (t_.back().empty()) continue;
      const auto seq = static_cast<std::uint32_t>(i);
      if (plus) sets_.push_back({seq, Strand::kPlus, origin_best(reference_scan(model_, q_, t_.back()))});
      if (minus) sets_.push_back({seq, Strand::kMinus, origin_best(reference_scan(model_, rc_, t_.back()))});
    }
    karlin_ = stats::gapped_params(cfg.matrix, cfg.gaps);
    space_ = static_cast<double>(q_.size()) * static_cast<double>(residues) *
             ((plus ? 1.0 : 0.0) + (minus ? 1.0 : 0.0));
  }

  std::vector<Hit> hits(const Config& cfg) const {
    std::vector<Hit> hits;
    for (const Candidate& c : select_brute_force(sets_, cfg.top, cfg.min_score)) {
      Hit h;
      h.target_index = c.seq;
      h.target_name = targets_[c.seq].name;
      h.target_length = targets_[c.seq].letters.size();
      h.minus = c.strand == Strand::kMinus;
      h.score = c.score;
      const std::uint64_t m = q_.size();
      h.query_begin =
          h.minus ? m - static_cast<std::uint64_t>(c.qend) - 1 : static_cast<std::uint64_t>(c.qstart);
      h.query_end =
          h.minus ? m - static_cast<std::uint64_t>(c.qstart) : static_cast<std::uint64_t>(c.qend) + 1;
      h.target_begin = static_cast<std::uint64_t>(c.tstart);
      h.target_end = static_cast<std::uint64_t>(c.tend) + 1;
      if (cfg.traceback) {
        const Alignment a = trace_alignment_full(model_, h.minus ? rc_ : q_, t_[c.seq], c);
        h.cigar = a.cigar;
        h.matches = a.matches;
        h.mismatches = a.mismatches;
        h.gap_opens = a.gap_opens;
        h.gap_columns = a.gap_columns;
        h.length = a.length;
      }
      if (karlin_) {
        h.evalue = stats::evalue(*karlin_, c.score, space_);
        h.bits = stats::bit_score(*karlin_, c.score);
      }
      hits.push_back(h);
    }
    return hits;
  }

 private:
  std::vector<Record> targets_;
  ScanModel model_;
  std::vector<std::uint8_t> q_, rc_;
  std::vector<std::vector<std::uint8_t>> t_;
  std::vector<RecordSet> sets_;
  std::optional<stats::KarlinParams> karlin_;
  double space_ = 0;
};

std::vector<Hit> compose(const Config& cfg, const std::string& query, const std::vector<Record>& targets) {
  return Reference(cfg, query, targets).hits(cfg);
}

std::string summary(const Hit& h) {
  return std::to_string(h.score) + " seq " + std::to_string(h.target_index) + (h.minus ? " - " : " + ") +
         "q[" + std::to_string(h.query_begin) + "," + std::to_string(h.query_end) + ") t[" +
         std::to_string(h.target_begin) + "," + std::to_string(h.target_end) + ")";
}

void expect_same_hits(const std::vector<Hit>& got, const std::vector<Hit>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const Hit& a = got[k];
    const Hit& b = want[k];
    SCOPED_TRACE("hit " + std::to_string(k) + ": got " + summary(a) + ", want " + summary(b));
    EXPECT_EQ(a.target_index, b.target_index);
    EXPECT_EQ(a.target_name, b.target_name);
    EXPECT_EQ(a.target_length, b.target_length);
    EXPECT_EQ(a.minus, b.minus);
    EXPECT_EQ(a.score, b.score);
    EXPECT_EQ(a.query_begin, b.query_begin);
    EXPECT_EQ(a.query_end, b.query_end);
    EXPECT_EQ(a.target_begin, b.target_begin);
    EXPECT_EQ(a.target_end, b.target_end);
    EXPECT_EQ(a.cigar, b.cigar);
    EXPECT_EQ(a.matches, b.matches);
    EXPECT_EQ(a.mismatches, b.mismatches);
    EXPECT_EQ(a.gap_opens, b.gap_opens);
    EXPECT_EQ(a.gap_columns, b.gap_columns);
    EXPECT_EQ(a.length, b.length);
    ASSERT_EQ(a.evalue.has_value(), b.evalue.has_value());
    if (a.evalue) {
      EXPECT_DOUBLE_EQ(*a.evalue, *b.evalue);
      EXPECT_DOUBLE_EQ(*a.bits, *b.bits);
    }
  }
}

// Query and targets with planted copies: plus-strand and reverse-complemented mutated copies,
// ambiguity codes, several sequences and one empty record.
struct Planted {
  std::string query;
  std::vector<Record> targets;
};

Planted planted_dna(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Planted p;
  p.query = random_letters(rng, 320);
  p.query[40] = 'N';
  p.query[41] = 'R';
  p.query[200] = 'Y';
  std::string t0 = random_letters(rng, 2400);
  const std::string copy0 = mutate(rng, p.query.substr(20, 250), 0.08);
  t0.replace(900, copy0.size(), copy0);
  std::string t1 = random_letters(rng, 1800);
  const std::string copy1 = revcomp_letters(mutate(rng, p.query.substr(0, 180), 0.06));
  t1.replace(300, copy1.size(), copy1);
  const std::string copy2 = mutate(rng, p.query.substr(150, 150), 0.12);
  t1.replace(1300, copy2.size(), copy2);
  std::string t3 = random_letters(rng, 1200, "ACGTN");
  const std::string copy3 = revcomp_letters(mutate(rng, p.query.substr(100, 200), 0.1));
  t3.replace(200, copy3.size(), copy3);
  p.targets = {{"chrA", t0}, {"chrB", t1}, {"empty", ""}, {"chrC", t3}, {"chrD", random_letters(rng, 700)}};
  return p;
}

Config cpu_config() {
  Config cfg;
  cfg.device = DeviceMode::kCpu;
  cfg.threads = 2;
  cfg.top = 25;
  return cfg;
}

QueryResult run_scan(const Config& cfg, const std::string& query, const std::string& path) {
  Scanner scanner(cfg);
  return scanner.scan(make_sequence("q1", query, Alphabet(cfg.matrix.alphabet())), path);
}

TEST(ScannerStrand, ComplementMatchesIupacBaseSets) {
  // Bit sets over A=1, C=2, G=4, T=8 for every IUPAC letter; the complement swaps A<->T and C<->G.
  const std::map<char, int> sets = {{'A', 1},  {'C', 2},  {'G', 4},  {'T', 8},  {'R', 5},
                                    {'Y', 10}, {'M', 3},  {'K', 12}, {'S', 6},  {'W', 9},
                                    {'H', 11}, {'B', 14}, {'V', 7},  {'D', 13}, {'N', 15}};
  const Alphabet dna = Alphabet::dna();
  for (const auto& [letter, set] : sets) {
    const int comp = ((set & 1) << 3) | ((set & 8) >> 3) | ((set & 2) << 1) | ((set & 4) >> 1);
    char want = '?';
    for (const auto& [l2, s2] : sets)
      if (s2 == comp) want = l2;
    SCOPED_TRACE(std::string(1, letter));
    const std::uint8_t code = *dna.code(letter);
    EXPECT_EQ(dna.symbol(complement_code(code)), want);
    EXPECT_EQ(complement_code(complement_code(code)), code);
  }
  EXPECT_THROW(complement_code(kDnaCodes), Error);
  const std::string letters = "ACGTRYMKSWHBVDNNACG";
  std::vector<std::uint8_t> codes;
  for (const char c : letters) codes.push_back(*dna.code(c));
  std::vector<std::uint8_t> want;
  for (const char c : revcomp_letters(letters)) want.push_back(*dna.code(c));
  EXPECT_EQ(reverse_complement(codes), want);
  EXPECT_TRUE(reverse_complement({}).empty());
}

TEST(ScannerStrand, SoftMaskAndCoordinates) {
  std::vector<std::uint8_t> codes(10, 0);
  const std::vector<MaskRun> runs = {{1, 3}, {8, 20}};
  apply_soft_mask(codes, runs, kDnaUnknown);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0, 14, 14, 0, 0, 0, 0, 0, 14, 14}));

  // Query of length 100; candidate rows 10..29 inclusive, columns 500..519.
  Candidate c;
  c.score = 77;
  c.qstart = 10;
  c.qend = 29;
  c.tstart = 500;
  c.tend = 519;
  Hit plus;
  set_hit_coordinates(plus, c, 100);
  EXPECT_FALSE(plus.minus);
  EXPECT_EQ(plus.score, 77);
  EXPECT_EQ(plus.query_begin, 10u);
  EXPECT_EQ(plus.query_end, 30u);
  EXPECT_EQ(plus.target_begin, 500u);
  EXPECT_EQ(plus.target_end, 520u);
  c.strand = Strand::kMinus;  // rows 10..29 of the reverse complement are forward residues 70..89
  Hit minus;
  set_hit_coordinates(minus, c, 100);
  EXPECT_TRUE(minus.minus);
  EXPECT_EQ(minus.query_begin, 70u);
  EXPECT_EQ(minus.query_end, 90u);
  EXPECT_EQ(minus.target_begin, 500u);
  EXPECT_EQ(minus.target_end, 520u);
}

TEST(ScannerStrand, ParseStrandMode) {
  EXPECT_EQ(parse_strand_mode("both"), StrandMode::kBoth);
  EXPECT_EQ(parse_strand_mode("plus"), StrandMode::kPlus);
  EXPECT_EQ(parse_strand_mode("minus"), StrandMode::kMinus);
  EXPECT_FALSE(parse_strand_mode("Both").has_value());
  EXPECT_FALSE(parse_strand_mode("").has_value());
}

TEST(ScannerCpu, PlantedBothStrandsMatchComposition) {
  TempDir dir;
  const Planted p = planted_dna(11);
  const std::string path = dir / "targets.fa";
  test::write_file(path, fasta(p.targets));
  for (const StrandMode mode : {StrandMode::kBoth, StrandMode::kPlus, StrandMode::kMinus}) {
    SCOPED_TRACE(static_cast<int>(mode));
    Config cfg = cpu_config();
    cfg.strands = mode;
    const QueryResult r = run_scan(cfg, p.query, path);
    expect_same_hits(r.hits, compose(cfg, p.query, p.targets));
    EXPECT_EQ(r.query_name, "q1");
    EXPECT_EQ(r.query_length, p.query.size());
    ASSERT_EQ(r.targets.size(), p.targets.size());
    std::uint64_t residues = 0;
    for (std::size_t i = 0; i < p.targets.size(); ++i) {
      EXPECT_EQ(r.targets[i].first, p.targets[i].name);
      EXPECT_EQ(r.targets[i].second, p.targets[i].letters.size());
      residues += p.targets[i].letters.size();
    }
    const std::uint64_t strands = mode == StrandMode::kBoth ? 2 : 1;
    EXPECT_EQ(r.stats.target_sequences, p.targets.size());
    EXPECT_EQ(r.stats.empty_targets, 1u);
    EXPECT_EQ(r.stats.target_residues, residues);
    EXPECT_EQ(r.stats.cells, p.query.size() * residues * strands);
    EXPECT_GE(r.stats.computed_cells, r.stats.cells);
    EXPECT_GE(r.stats.sections, 4 * strands);
    EXPECT_EQ(r.stats.rescans, 0u);
    bool any_minus = false, any_plus = false;
    for (const Hit& h : r.hits) (h.minus ? any_minus : any_plus) = true;
    EXPECT_EQ(any_plus, mode != StrandMode::kMinus);
    EXPECT_EQ(any_minus, mode != StrandMode::kPlus);
  }
}

TEST(ScannerCpu, ExactReverseComplementCopyCoordinates) {
  TempDir dir;
  std::mt19937_64 rng(5);
  const std::string query = random_letters(rng, 400);
  // N scores as a mismatch against everything, so the alignment cannot extend past the copy.
  const std::string target =
      std::string(500, 'N') + revcomp_letters(query.substr(100, 200)) + std::string(800, 'N');
  const std::string path = dir / "t.fa";
  test::write_file(path, fasta({{"t", target}}));
  Config cfg = cpu_config();
  cfg.top = 1;
  const QueryResult r = run_scan(cfg, query, path);
  ASSERT_EQ(r.hits.size(), 1u);
  const Hit& h = r.hits[0];
  EXPECT_TRUE(h.minus);
  EXPECT_EQ(h.score, 200 * 5);
  EXPECT_EQ(h.query_begin, 100u);
  EXPECT_EQ(h.query_end, 300u);
  EXPECT_EQ(h.target_begin, 500u);
  EXPECT_EQ(h.target_end, 700u);
  EXPECT_EQ(h.cigar, "200=");
  EXPECT_EQ(h.matches, 200u);
  EXPECT_EQ(h.length, 200u);
  expect_same_hits(r.hits, compose(cfg, query, {{"t", target}}));
}

TEST(ScannerCpu, SoftMaskedQueryAndTargets) {
  TempDir dir;
  Planted p = planted_dna(23);
  // Lowercase a stretch of the query and the plus-strand planted copy in chrA.
  for (std::size_t i = 60; i < 140; ++i) p.query[i] = static_cast<char>(std::tolower(p.query[i]));
  for (std::size_t i = 950; i < 1100; ++i)
    p.targets[0].letters[i] = static_cast<char>(std::tolower(p.targets[0].letters[i]));
  const std::string path = dir / "masked.fa";
  test::write_file(path, fasta(p.targets));
  std::vector<Hit> results[2];
  for (const bool mask : {false, true}) {
    SCOPED_TRACE(mask);
    Config cfg = cpu_config();
    cfg.soft_mask = mask;
    const QueryResult r = run_scan(cfg, p.query, path);
    expect_same_hits(r.hits, compose(cfg, p.query, p.targets));
    results[mask ? 1 : 0] = r.hits;
  }
  ASSERT_FALSE(results[0].empty());
  ASSERT_FALSE(results[1].empty());
  EXPECT_GT(results[0][0].score, results[1][0].score);  // masking removes most of the best alignment
}

TEST(ScannerCpu, TopAndMinimumScoreLimits) {
  TempDir dir;
  const Planted p = planted_dna(31);
  const std::string path = dir / "targets.fa";
  test::write_file(path, fasta(p.targets));
  const Reference reference(cpu_config(), p.query, p.targets);
  for (const std::size_t top : {std::size_t{1}, std::size_t{3}, std::size_t{200}}) {
    for (const std::int32_t min_score : {1, 30, 400}) {
      SCOPED_TRACE(std::to_string(top) + " " + std::to_string(min_score));
      Config cfg = cpu_config();
      cfg.top = top;
      cfg.min_score = min_score;
      const QueryResult r = run_scan(cfg, p.query, path);
      EXPECT_LE(r.hits.size(), top);
      for (const Hit& h : r.hits) EXPECT_GE(h.score, min_score);
      expect_same_hits(r.hits, reference.hits(cfg));
    }
  }
}

TEST(ScannerCpu, TinyPoolRescansToTheSameResult) {
  TempDir dir;
  const Planted p = planted_dna(47);
  const std::string path = dir / "targets.fa";
  test::write_file(path, fasta(p.targets));
  Config cfg = cpu_config();
  cfg.top = 40;
  const QueryResult full = run_scan(cfg, p.query, path);
  EXPECT_EQ(full.stats.rescans, 0u);
  expect_same_hits(full.hits, compose(cfg, p.query, p.targets));
  for (const std::size_t pool : {std::size_t{1}, std::size_t{3}, std::size_t{20}}) {
    SCOPED_TRACE(pool);
    cfg.pool = pool;
    const QueryResult r = run_scan(cfg, p.query, path);
    EXPECT_GT(r.stats.rescans, 0u);
    expect_same_hits(r.hits, full.hits);
  }
}

TEST(ScannerCpu, GzipTargetEqualsPlain) {
  TempDir dir;
  const Planted p = planted_dna(53);
  const std::string plain = dir / "t.fa";
  const std::string gz = dir / "t.fa.gz";
  test::write_file(plain, fasta(p.targets));
  write_gzip(gz, fasta(p.targets));
  Config cfg = cpu_config();
  cfg.pool = 4;  // rescans read the gzip file again
  const QueryResult a = run_scan(cfg, p.query, plain);
  const QueryResult b = run_scan(cfg, p.query, gz);
  expect_same_hits(b.hits, a.hits);
  EXPECT_EQ(b.targets, a.targets);
  expect_same_hits(a.hits, compose(cfg, p.query, p.targets));
}

TEST(ScannerCpu, ThreadsOverlapAndTracebackDoNotChangeHits) {
  TempDir dir;
  const Planted p = planted_dna(61);
  const std::string path = dir / "targets.fa";
  test::write_file(path, fasta(p.targets));
  Config cfg = cpu_config();
  const Reference reference(cfg, p.query, p.targets);
  const QueryResult base = run_scan(cfg, p.query, path);
  expect_same_hits(base.hits, reference.hits(cfg));
  cfg.threads = 1;
  cfg.overlap = 1;
  expect_same_hits(run_scan(cfg, p.query, path).hits, base.hits);
  cfg.threads = 3;
  cfg.overlap = 7;
  expect_same_hits(run_scan(cfg, p.query, path).hits, base.hits);
  cfg.traceback = false;
  const QueryResult bare = run_scan(cfg, p.query, path);
  expect_same_hits(bare.hits, reference.hits(cfg));
  ASSERT_EQ(bare.hits.size(), base.hits.size());
  for (std::size_t k = 0; k < bare.hits.size(); ++k) {
    EXPECT_TRUE(bare.hits[k].cigar.empty());
    EXPECT_EQ(bare.hits[k].score, base.hits[k].score);
    EXPECT_EQ(bare.hits[k].query_begin, base.hits[k].query_begin);
    EXPECT_EQ(bare.hits[k].target_end, base.hits[k].target_end);
  }
  EXPECT_EQ(bare.stats.kernel2_seconds, 0.0);
}

TEST(ScannerCpu, ProteinIsPlusOnlyWithEvalues) {
  TempDir dir;
  std::mt19937_64 rng(71);
  const std::string aa = "ACDEFGHIKLMNPQRSTVWY";
  const std::string query = random_letters(rng, 150, aa);
  std::vector<Record> targets = {{"p1", random_letters(rng, 900, aa)}, {"p2", random_letters(rng, 600, aa)}};
  const std::string copy = mutate(rng, query.substr(10, 120), 0.2, aa);
  targets[1].letters.replace(200, copy.size(), copy);
  const std::string path = dir / "prot.fa";
  test::write_file(path, fasta(targets));
  Config cfg = cpu_config();
  cfg.matrix = ScoringMatrix::builtin("BLOSUM62");
  cfg.gaps = {11, 1};
  cfg.top = 15;
  cfg.strands = StrandMode::kBoth;  // plus only for protein
  const QueryResult r = run_scan(cfg, query, path);
  const std::vector<Hit> want = compose(cfg, query, targets);
  expect_same_hits(r.hits, want);
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits[0].target_index, 1u);
  EXPECT_EQ(r.stats.cells, query.size() * 1500u);
  const auto karlin = stats::gapped_params(cfg.matrix, cfg.gaps);
  ASSERT_TRUE(karlin.has_value());  // BLAST+ tabulates BLOSUM62 11/1
  for (const Hit& h : r.hits) {
    EXPECT_FALSE(h.minus);
    ASSERT_TRUE(h.evalue.has_value());
    EXPECT_DOUBLE_EQ(*h.evalue, stats::evalue(*karlin, h.score, 150.0 * 1500.0));
  }
}

TEST(ScannerCpu, NucleotideEvalueSearchSpaceCountsStrands) {
  TempDir dir;
  const Planted p = planted_dna(83);
  const std::string path = dir / "targets.fa";
  test::write_file(path, fasta(p.targets));
  Config cfg = cpu_config();
  cfg.matrix = ScoringMatrix::dna(2, -3);  // blastn's default reward/penalty
  cfg.gaps = {5, 2};
  cfg.top = 5;
  const QueryResult r = run_scan(cfg, p.query, path);
  expect_same_hits(r.hits, compose(cfg, p.query, p.targets));
  ASSERT_FALSE(r.hits.empty());
  const auto karlin = stats::gapped_params(cfg.matrix, cfg.gaps);
  const double space =
      static_cast<double>(p.query.size()) * static_cast<double>(r.stats.target_residues) * 2.0;
  for (const Hit& h : r.hits) {
    ASSERT_EQ(h.evalue.has_value(), karlin.has_value());
    if (karlin) {
      EXPECT_DOUBLE_EQ(*h.evalue, stats::evalue(*karlin, h.score, space));
    }
  }
}

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorKind::kInternal;
}

TEST(ScannerErrors, ConfigValidation) {
  Config cfg = cpu_config();
  EXPECT_NO_THROW(cfg.validate());
  Config c = cfg;
  c.top = 0;
  EXPECT_EQ(kind_of([&] { Scanner s(c); }), ErrorKind::kUsage);
  c = cfg;
  c.min_score = 0;
  EXPECT_EQ(kind_of([&] { c.validate(); }), ErrorKind::kUsage);
  c = cfg;
  c.gaps = {-1, 1};
  EXPECT_EQ(kind_of([&] { c.validate(); }), ErrorKind::kUsage);
  c = cfg;
  c.gaps = {0, 0};
  EXPECT_EQ(kind_of([&] { c.validate(); }), ErrorKind::kUsage);
  c = cfg;
  c.overlap = -3;
  EXPECT_EQ(kind_of([&] { c.validate(); }), ErrorKind::kUsage);
  c = cfg;
  c.matrix = ScoringMatrix::builtin("BLOSUM62");
  c.strands = StrandMode::kMinus;
  EXPECT_EQ(kind_of([&] { Scanner s(c); }), ErrorKind::kUsage);
  c.strands = StrandMode::kBoth;
  EXPECT_NO_THROW(c.validate());
  Scanner s(cfg);
  EXPECT_EQ(s.config().top, cfg.top);
  EXPECT_EQ(s.describe(), "CPU, 2 threads");
}

TEST(ScannerErrors, InputProblems) {
  TempDir dir;
  std::mt19937_64 rng(97);
  const std::string aa = "ACDEFGHIKLMNPQRSTVWY";
  const std::string prot = dir / "prot.fa";
  test::write_file(prot, fasta({{"p", random_letters(rng, 300, aa)}}));
  const std::string dna = dir / "dna.fa";
  test::write_file(dna, fasta({{"empty", ""}, {"d", random_letters(rng, 300)}}));
  const std::string dna_query = random_letters(rng, 50);

  Config cfg = cpu_config();
  Scanner scanner(cfg);
  const Sequence q = make_sequence("q", dna_query, Alphabet::dna());
  try {  // protein target with nucleotide scoring: named with file and line
    scanner.scan(q, prot);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_EQ(e.file(), prot);
    EXPECT_EQ(e.line(), 1u);
  }
  EXPECT_EQ(kind_of([&] { scanner.scan(q, dir / "missing.fa"); }), ErrorKind::kIo);
  EXPECT_EQ(kind_of([&] { scanner.scan(make_sequence("e", "", Alphabet::dna()), dna); }), ErrorKind::kInput);
  // check_query gives the query's own errors before any work (cmd_scan runs it on every rank under MPI).
  EXPECT_EQ(kind_of([&] { scanner.check_query(make_sequence("e", "", Alphabet::dna())); }),
            ErrorKind::kInput);
  Sequence bad = q;
  bad.residues[0] = 200;  // not a DNA code
  EXPECT_EQ(kind_of([&] { scanner.check_query(bad); }), ErrorKind::kInput);
  EXPECT_NO_THROW(scanner.check_query(q));

  Config pcfg = cpu_config();
  pcfg.matrix = ScoringMatrix::builtin("BLOSUM62");
  pcfg.gaps = {11, 1};
  Scanner pscanner(pcfg);
  try {  // nucleotide target with protein scoring; the first record is empty, the check names line 2
    pscanner.scan(make_sequence("pq", random_letters(rng, 40, aa), Alphabet::protein()), dna);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_EQ(e.file(), dna);
    EXPECT_EQ(e.line(), 2u);
  }
  // The right alphabet scans fine.
  EXPECT_NO_THROW(scanner.scan(q, dna));
}

}  // namespace
}  // namespace warpsearch::scan
