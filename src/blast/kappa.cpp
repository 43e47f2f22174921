// kappa.cpp: blastp's composition-based traceback (BLAST+ 2.12 Blast_RedoAlignmentCore for blastp), see
// kappa.hpp: the per-query data, the per-subject redo (near-identity tests, subject SEG, matrix
// adjustment, ALIGN_EX with the scaled matrix (gapped.hpp's traceback over an IntScoreTable), distinct-end
// and containment rules, scaled E-values) and the sequential BlastCompo_Heap simulation that selects the
// final hit lists.
#include "blast/kappa.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>

#include "blast/gapped.hpp"
#include "blast/seg.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {
namespace {

constexpr double kLn2 = 0.69314718055994530941723212145818;  // NCBIMATH_LN2 / LOCAL_LN2
constexpr double kScalingFactor = 32;                        // SCALING_FACTOR
constexpr double kNearIdenticalBitsPerPosition = 1.74;       // NEAR_IDENTICAL_BITS_PER_POSITION
constexpr int kMinimumLengthNearIdentical = 50;              // MINIMUM_LENGTH_NEAR_IDENTICAL
// s_TestNearIdentical's threshold: 0.96 in BLAST+ 2.12 (read from its libblast.so; the 2026 toolkit
// sources have 0.95). A pair decides on it, e.g. a 1228-residue SEG-masked query whose 48 X letters leave
// 1178 identities (95.9 %) against a near copy: 2.12 SEG-masks the subject.
constexpr double kMinFractionNearIdentical = 0.96;
constexpr int kNearIdenticalMaxShift = 8;
constexpr int kWordSize = 8;                          // s_CreateWordArray / s_FindNumIdentical
constexpr std::uint64_t kWordMask = 0xFFFFFFFFFFULL;  // 8 letters x 5 bits
constexpr double kBitTolerance = 2.0;                 // KAPPA_BIT_TOL
constexpr int kPseudocounts = 20;                     // kReMatrixAdjustmentPseudocounts
constexpr int kCutoffScore = 1;                       // cutoff_s without sum statistics
constexpr double kEvalueStretch = 5;                  // EVALUE_STRETCH
constexpr SegParams kSubjectSeg{10, 1.8, 2.1};        // BLASTP_MASK_INSTRUCTIONS "S 10 1.8 2.1"
constexpr std::uint8_t kCysteine = 1;                 // our code of C
constexpr std::uint8_t kSelenocysteine = 24;          // our code of U

// ---------------------------------------------------------------------------------------------------
// Near-identity tests (blast_kappa.c s_ExtendRight, s_ExtendLeft, s_FindNumIdentical, s_TestNearIdentical),
// on raw pointers because BLAST walks offsets that the callers shift around.

struct Extension {
  int identical = 0;
  int query_length = 0;
  int subject_length = 0;
  int align_length = 0;
};

// s_ExtendRight: from the left ends forward, runs of identities with up to max_shift - 1 skipped
// mismatches or gap letters each followed by two identities.
Extension extend_right(const std::uint8_t* q, int q_len, const std::uint8_t* s, int s_len, int max_shift) {
  Extension e;
  int q_pos = 0, s_pos = 0;
  int gaps_in_query = 0, gaps_in_subject = 0;
  while (q_pos < q_len && s_pos < s_len) {
    bool match = false;
    while (q_pos < q_len && s_pos < s_len && q[q_pos] == s[s_pos]) {
      ++e.identical;
      ++q_pos;
      ++s_pos;
    }
    for (int n = 1; n < max_shift && q_pos + n + 1 < q_len && s_pos + n + 1 < s_len && !match; ++n) {
      if (q[q_pos + n] == s[s_pos + n] && q[q_pos + n + 1] == s[s_pos + n + 1]) {
        q_pos += n + 2;
        s_pos += n + 2;
        e.identical += 2;
        match = true;
      }
      if (!match && q[q_pos + n] == s[s_pos] && q[q_pos + n + 1] == s[s_pos + 1]) {
        q_pos += n + 2;
        s_pos += 2;
        e.identical += 2;
        gaps_in_subject += n;
        match = true;
      }
      if (!match && q[q_pos] == s[s_pos + n] && q[q_pos + 1] == s[s_pos + n + 1]) {
        q_pos += 2;
        s_pos += n + 2;
        e.identical += 2;
        gaps_in_query += n;
        match = true;
      }
    }
    if (match) continue;
    break;
  }
  e.query_length = q_pos;
  e.subject_length = s_pos;
  e.align_length = q_pos > s_pos ? q_pos + gaps_in_query : s_pos + gaps_in_subject;
  return e;
}

// s_ExtendLeft: the mirror image from the right ends (quirk kept: the identity run stops before offset 0).
// align_length is added to `align_length_in` as BLAST adds to its output argument.
Extension extend_left(const std::uint8_t* q, int q_len, const std::uint8_t* s, int s_len, int max_shift,
                      int align_length_in) {
  Extension e;
  int q_pos = q_len - 1, s_pos = s_len - 1;
  int gaps_in_query = 0, gaps_in_subject = 0;
  while (q_pos >= 0 && s_pos >= 0) {
    bool match = false;
    while (q_pos > 0 && s_pos > 0 && q[q_pos] == s[s_pos]) {
      ++e.identical;
      --q_pos;
      --s_pos;
    }
    for (int n = 1; n < max_shift && q_pos - n - 1 > 0 && s_pos - n - 1 > 0 && !match; ++n) {
      if (q[q_pos - n] == s[s_pos - n] && q[q_pos - n - 1] == s[s_pos - n - 1]) {
        q_pos -= n + 2;
        s_pos -= n + 2;
        e.identical += 2;
        match = true;
      }
      if (!match && q[q_pos - n] == s[s_pos] && q[q_pos - n - 1] == s[s_pos - 1]) {
        q_pos -= n + 2;
        s_pos -= 2;
        e.identical += 2;
        gaps_in_subject += n;
        match = true;
      }
      if (!match && q[q_pos] == s[s_pos - n] && q[q_pos - 1] == s[s_pos - n - 1]) {
        q_pos -= 2;
        s_pos -= n + 2;
        e.identical += 2;
        gaps_in_query += n;
        match = true;
      }
    }
    if (match) continue;
    break;
  }
  e.query_length = q_len - q_pos - 1;
  e.subject_length = s_len - s_pos - 1;
  e.align_length = align_length_in + (e.query_length > e.subject_length ? e.query_length + gaps_in_query
                                                                        : e.subject_length + gaps_in_subject);
  return e;
}

// 5 bits a letter, as s_GetHash. Letters enter as code + 1 so that no real word hashes to 0, the value of
// BLAST's never-filled last query slot (in NCBIstdaa no letter is 0 either); only equality matters.
std::uint64_t letter_value(std::uint8_t code) { return static_cast<std::uint64_t>(code) + 1; }
std::uint64_t word_hash(const std::uint8_t* data) {
  std::uint64_t hash = 0;
  for (int k = 0; k < kWordSize; ++k) hash = (hash << 5) + letter_value(data[k]);
  return hash;
}

// s_FindNumIdentical: identities found from exact 8-mer matches extended both ways, scanning the subject.
int find_num_identical(const std::uint8_t* q, const std::uint64_t* q_hashes, int q_len, const std::uint8_t* s,
                       int s_len, int max_shift) {
  if (q == nullptr || q_hashes == nullptr || s == nullptr || q_len < kWordSize || s_len < kWordSize) return 0;
  std::uint64_t hash = 0;
  int query_from = 0, subject_from = 0;
  int identical = 0;
  bool match = false;
  for (int s_pos = 0; s_pos < s_len - kWordSize; ++s_pos) {
    if (s_pos == 0 || match) {
      hash = word_hash(s + s_pos);
    } else {
      hash = ((hash << 5) & kWordMask) + letter_value(s[s_pos + kWordSize - 1]);
    }
    int q_pos = query_from;
    for (; q_pos < q_len - kWordSize; ++q_pos)
      if (q_hashes[q_pos] == hash) break;
    if (q_pos < q_len - kWordSize) {
      const int query_start = q_pos, subject_start = s_pos;
      match = true;
      identical += kWordSize;
      const Extension left = extend_left(q + query_from, query_start - query_from, s + subject_from,
                                         subject_start - subject_from, max_shift, 0);
      identical += left.identical;
      const Extension right =
          extend_right(q + query_start + kWordSize, q_len - query_start - kWordSize,
                       s + subject_start + kWordSize, s_len - subject_start - kWordSize, max_shift);
      identical += right.identical;
      query_from = query_start + kWordSize + right.query_length;
      subject_from = subject_start + kWordSize + right.subject_length;
      s_pos = subject_from - 1;
    } else {
      match = false;
    }
  }
  return identical;
}

struct AlignBox {
  int score = 0;
  int q_start = 0, q_end = 0;  // end exclusive
  int s_start = 0, s_end = 0;
};

// s_TestNearIdentical on the unmasked subject and the redo query copy, for the HSP `align`.
bool test_near_identical(const std::vector<std::uint8_t>& subject, const CompoQueryData& cq,
                         const AlignBox& align) {
  const int q_start = align.q_start, q_end = align.q_end - 1;
  const int s_start = align.s_start, s_end = align.s_end - 1;
  const int query_len = q_end - q_start + 1;
  const int subject_len = s_end - s_start + 1;
  const int align_len = std::min(query_len, subject_len);
  const std::uint8_t* q = cq.align_query.data();
  const std::uint8_t* s = subject.data();
  const auto near = [&](int identical) {
    return static_cast<double>(identical) / static_cast<double>(align_len) > kMinFractionNearIdentical;
  };
  const Extension right =
      extend_right(q + q_start, query_len, s + s_start, subject_len, kNearIdenticalMaxShift);
  int identical = right.identical;
  if (right.query_length >= query_len || right.subject_length >= subject_len) return near(identical);
  const Extension left = extend_left(q + q_start + right.query_length, query_len - right.query_length,
                                     s + s_start + right.subject_length, subject_len - right.subject_length,
                                     kNearIdenticalMaxShift, 0);
  identical += left.identical;
  if (left.query_length + right.query_length >= query_len ||
      left.subject_length + right.subject_length >= subject_len)
    return near(identical);
  const std::uint64_t* words = cq.words.empty() ? nullptr : cq.words.data() + q_start + right.query_length;
  identical += find_num_identical(
      q + q_start + right.query_length, words, query_len - left.query_length - right.query_length,
      s + s_start + right.subject_length, subject_len - left.subject_length - right.subject_length,
      kNearIdenticalMaxShift);
  return near(identical);
}

// s_preliminaryTestNearIdentical (cutoff > 0 variant).
bool prelim_near_identical(const AlignBox& align, int query_length, double cutoff) {
  if ((align.s_end - align.s_start + 1) < std::min(query_length, kMinimumLengthNearIdentical)) return false;
  const int align_len = std::min(align.q_end - align.q_start, align.s_end - align.s_start);
  return !(static_cast<double>(align.score) / static_cast<double>(align_len) < cutoff);
}

IntScoreTable int_score_table(const compo::IntScores& m) {
  IntScoreTable t{};
  const int n = Alphabet::protein().size();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      t[static_cast<std::size_t>(a * kMaxCodes + b)] =
          m[static_cast<std::size_t>(compo::to_std(static_cast<std::uint8_t>(a)) * compo::kStdAlphabetSize +
                                     compo::to_std(static_cast<std::uint8_t>(b)))];
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Alignment list rules (redo_alignment.c).

struct RedoneAlignment {
  AlignBox box;
  std::vector<EditRun> script;
  compo::MatrixAdjustRule rule = compo::MatrixAdjustRule::kDontAdjust;  // the matrix it was scored with
};

Hsp hsp_of(const RedoneAlignment& a) {
  Hsp h;
  h.score = a.box.score;
  h.q_start = a.box.q_start;
  h.q_end = a.box.q_end;
  h.s_start = a.box.s_start;
  h.s_end = a.box.s_end;
  return h;
}

bool contained_in(const AlignBox& outer, int q, int s) {
  return outer.q_start <= q && outer.q_end >= q && outer.s_start <= s && outer.s_end >= s;
}

// s_IsContained: in_align lies inside a redone alignment scoring at least 2 bits (scaled) more.
bool is_contained(const AlignBox& in, const std::vector<RedoneAlignment>& list, double lambda) {
  const double score = in.score;
  const double threshold = score + kBitTolerance * kLn2 / lambda;
  for (const RedoneAlignment& a : list) {
    if (contained_in(a.box, in.q_start, in.s_start) && contained_in(a.box, in.q_end, in.s_end) &&
        threshold <= a.box.score)
      return true;
  }
  return false;
}

bool same_end_point(const AlignBox& n, const AlignBox& a) {
  return (a.q_start == n.q_start && a.s_start == n.s_start) || (a.q_end == n.q_end && a.s_end == n.s_end);
}

// s_IsSimilarEndPoint.
bool similar_end_point(const AlignBox& n, const AlignBox& a) {
  const bool start_contained = contained_in(a, n.q_start, n.s_start);
  const bool end_contained = contained_in(a, n.q_end, n.s_end);
  return (start_contained && (n.q_start - n.s_start == a.q_start - a.s_start)) ||
         (end_contained && (n.q_end - n.s_end == a.q_end - a.s_end));
}

// s_WithDistinctEnds: `list` is BLAST's linked list, head first.
void with_distinct_ends(RedoneAlignment&& added, std::vector<RedoneAlignment>& list,
                        bool is_same_adjustment) {
  for (const RedoneAlignment& a : list) {
    const bool shares =
        is_same_adjustment ? same_end_point(added.box, a.box) : similar_end_point(added.box, a.box);
    if (shares && added.box.score <= a.box.score) return;
  }
  std::vector<RedoneAlignment> out;
  out.reserve(list.size() + 1);
  out.push_back(std::move(added));
  for (RedoneAlignment& a : list)
    if (!same_end_point(out.front().box, a.box)) out.push_back(std::move(a));
  list = std::move(out);
}

}  // namespace

std::shared_ptr<const CompoQueryData> make_compo_query_data(Residues query, const BlastpOptions& options,
                                                            const ScoringMatrix& matrix,
                                                            const BlastpSetup& setup,
                                                            const stats::GumbelParams& gumbel,
                                                            std::int64_t db_length) {
  auto d = std::make_shared<CompoQueryData>();
  d->mode = static_cast<compo::AdjustMode>(options.comp_based_stats);
  std::vector<std::uint8_t> std_query(query.size());
  for (std::size_t i = 0; i < query.size(); ++i) std_query[i] = compo::to_std(query[i]);
  d->composition = compo::read_aa_composition(std_query);
  d->align_query.assign(query.begin(), query.end());
  for (std::uint8_t& r : d->align_query)
    if (r == kSelenocysteine) r = kCysteine;
  // s_CreateWordArray: words[i] is the 8-mer at i for i < length - 8; the last slot stays 0 (BLAST's loop
  // stops one short), and the array is absent for queries shorter than 8.
  const int len = static_cast<int>(query.size());
  if (len >= kWordSize) {
    d->words.assign(static_cast<std::size_t>(len - kWordSize + 1), 0);
    d->words[0] = word_hash(query.data());
    for (int i = 1; i < len - kWordSize; ++i)
      d->words[static_cast<std::size_t>(i)] =
          ((d->words[static_cast<std::size_t>(i - 1)] << 5) & kWordMask) +
          letter_value(query[static_cast<std::size_t>(i + kWordSize - 1)]);
  }
  const auto ideal = stats::ungapped_params(matrix);
  auto info = ideal ? compo::MatrixInfo::create(matrix.name(), ideal->lambda, kScalingFactor) : std::nullopt;
  auto workspace = compo::CompositionWorkspace::create(matrix.name());
  if (!info || !workspace)
    throw Error(ErrorKind::kUsage,
                "composition-based statistics are not available for matrix " + matrix.name());
  d->matrix_info = std::move(*info);
  d->workspace = *workspace;
  d->scaled_gapped = setup.gapped;
  d->scaled_gapped.lambda /= kScalingFactor;
  d->gumbel = gumbel;
  d->db_length = db_length;
  d->old_fsc = options.old_fsc;
  d->search_space = setup.lengths.search_space;
  d->gap_open = static_cast<int>(std::lround(options.gaps.open * kScalingFactor));
  d->gap_extend = static_cast<int>(std::lround(options.gaps.extend * kScalingFactor));
  d->x_dropoff = static_cast<int>(std::max(options.xdrop_gap_final_bits * kLn2 / d->scaled_gapped.lambda,
                                           static_cast<double>(setup.gapped_x_dropoffs.traceback)));
  d->near_identical_cutoff = (kNearIdenticalBitsPerPosition * kLn2) / d->scaled_gapped.lambda;
  d->scale = kScalingFactor;
  return d;
}

SubjectRedo redo_subject(const QueryContext& context, Residues subject_in,
                         const std::vector<PrelimHsp>& prelim) {
  const CompoQueryData& cq = *context.compo();
  SubjectRedo out;
  out.best_evalue = DBL_MAX;
  if (prelim.empty()) return out;
  const int query_length = static_cast<int>(context.query().size());
  const int subject_length = static_cast<int>(subject_in.size());
  const double lambda = cq.scaled_gapped.lambda;

  // The incoming alignments: preliminary scores scaled ((int)(score * 32)), in the preliminary order.
  std::vector<AlignBox> incoming;
  for (const PrelimHsp& p : prelim)
    incoming.push_back(
        {static_cast<int>(p.hsp.score * cq.scale), p.hsp.q_start, p.hsp.q_end, p.hsp.s_start, p.hsp.s_end});

  compo::IntScores matrix{};
  bool matrix_valid = false;  // false until this subject's first adjustment succeeds
  IntScoreTable table{};
  std::vector<std::uint8_t> subject;
  std::vector<RedoneAlignment> list;
  bool subject_maybe_biased = true;
  bool near_identical = true, old_near_identical = false;
  int num_adjustments = 0;
  compo::MatrixAdjustRule rule =
      compo::MatrixAdjustRule::kDontAdjust;  // Blast_RedoOneMatch's matrix_adjust_rule
  for (std::size_t h = 0; h < incoming.size(); ++h) {
    const AlignBox& in = incoming[h];
    if (h == 0 || subject_maybe_biased)
      near_identical = prelim_near_identical(in, query_length, cq.near_identical_cutoff);
    if (h == 0 || (subject_maybe_biased && near_identical != old_near_identical)) {
      // s_SequenceGetProteinRange: a fresh copy, SEG-masked unless the pair is nearly identical.
      subject.assign(subject_in.begin(), subject_in.end());
      if (cq.mode != compo::AdjustMode::kNone && subject_maybe_biased) {
        if (!near_identical || !test_near_identical(subject, cq, incoming.front())) {
          const std::vector<Interval> mask = seg_mask(subject, kSubjectSeg);
          subject_maybe_biased = !mask.empty();
          apply_mask(subject, mask);
        }
      }
    }
    if (!is_contained(in, list, lambda)) {
      bool adjust_failed = false;
      if (cq.mode != compo::AdjustMode::kNone && (h == 0 || near_identical != old_near_identical)) {
        std::vector<std::uint8_t> std_subject(subject.size());
        for (std::size_t i = 0; i < subject.size(); ++i) std_subject[i] = compo::to_std(subject[i]);
        const compo::AaComposition subject_composition = compo::read_aa_composition(std_subject);
        const compo::AdjustResult r =
            compo::adjust_scores(matrix, cq.composition, query_length, subject_composition, subject_length,
                                 cq.matrix_info, cq.mode, kPseudocounts, cq.workspace);
        adjust_failed = r.status != 0;
        if (!adjust_failed) {
          rule = r.rule;
          matrix_valid = true;
          table = int_score_table(matrix);
        }
        ++out.adjustments;
        ++num_adjustments;
      }
      if (!adjust_failed) {
        if (!matrix_valid) {
          ++out.stale_matrix_hsps;
        } else {
          const SeedPoint seed = prelim[h].seed;
          // BLAST_GappedAlignmentWithTraceback with the scaled matrix, over the whole sequences.
          GappedAlignment a = gapped_alignment_with_traceback(
              cq.align_query, subject, table, GappedParams{cq.gap_open, cq.gap_extend, cq.x_dropoff}, seed);
          ++out.alignments;
          if (a.score >= kCutoffScore) {
            const AlignBox box{a.score, a.q_start, a.q_end, a.s_start, a.s_end};
            with_distinct_ends(RedoneAlignment{box, std::move(a.script), rule}, list, num_adjustments == 1);
          }
        }
      }
    }
    old_near_identical = near_identical;
  }

  // s_HSPListFromDistinctAlignments + Blast_HSPListSortByScore (a total order here: no two alignments of
  // the list share an end point).
  std::sort(list.begin(), list.end(), [](const RedoneAlignment& a, const RedoneAlignment& b) {
    return compare_hsps_by_score(hsp_of(a), hsp_of(b)) < 0;
  });
  // s_HitlistReapContained: an HSP inside an earlier kept one of at least its score goes.
  std::vector<RedoneAlignment> kept;
  for (RedoneAlignment& a : list) {
    bool contained = false;
    for (const RedoneAlignment& o : kept) {
      if (contained_in(o.box, a.box.q_start, a.box.s_start) &&
          contained_in(o.box, a.box.q_end, a.box.s_end) && a.box.score <= o.box.score) {
        contained = true;
        break;
      }
    }
    if (!contained) kept.push_back(std::move(a));
  }
  // s_HitlistEvaluateAndPurge: Spouge E-values of the scaled scores (lambda / 32 and the Gumbel block's
  // parameters rescaled by BLAST_SpougeStoE; with the old statistics Karlin-Altschul E-values over the
  // effective search space), best E-value before the reap, reap by -evalue.
  std::vector<double> evalues;
  double best = DBL_MAX;
  for (const RedoneAlignment& a : kept) {
    evalues.push_back(cq.old_fsc ? karlin_evalue(a.box.score, cq.scaled_gapped, cq.search_space)
                                 : spouge_evalue(a.box.score, cq.scaled_gapped, cq.gumbel, query_length,
                                                 subject_length, cq.db_length));
    best = std::min(best, evalues.back());
  }
  const double expect = context.options().evalue;
  std::vector<Hsp> hsps;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (evalues[i] > expect) continue;
    Hsp h = hsp_of(kept[i]);
    h.evalue = evalues[i];
    h.script = std::move(kept[i].script);
    hsps.push_back(std::move(h));
    out.rules.push_back(kept[i].rule);
  }
  if (hsps.empty()) {
    out.rules.clear();
    return out;
  }
  out.best_evalue = best;
  out.best_score = hsps.front().score;
  // s_HSPListNormalizeScores.
  const double log_k = std::log(cq.scaled_gapped.K);
  for (Hsp& h : hsps) {
    const double x = static_cast<double>(h.score) / cq.scale;
    h.score = static_cast<int>(static_cast<long>(x + (x >= 0. ? 0.5 : -0.5)));
    h.bit_score = (h.score * lambda * cq.scale - log_k) / kLn2;
  }
  out.hsps = std::move(hsps);
  return out;
}

namespace {

// BlastCompo_Heap (compo_heap.c): a list until heapThreshold records, then a binary max-heap on
// (E-value, score descending, subject index descending: the "worst" record on top) that keeps every record
// with E <= ecutoff and otherwise only the best heapThreshold.
class CompoHeap {
 public:
  struct Record {
    double evalue = 0;
    int score = 0;
    int oid = 0;
    std::size_t payload = 0;
  };

  CompoHeap(int threshold, double ecutoff) : threshold_(threshold), ecutoff_(ecutoff) {}

  bool would_insert(double evalue, int score, int oid) {
    if (n() < threshold_ || evalue <= ecutoff_ || evalue < worst_evalue_) return true;
    if (!is_heap_) convert_to_heap();
    return worse(records_[1], Record{evalue, score, oid, 0});
  }

  void insert(const Record& r) {
    if (!is_heap_ && n() >= threshold_) convert_to_heap();
    if (!is_heap_) {
      records_.push_back(r);
      if (worst_evalue_ < r.evalue) worst_evalue_ = r.evalue;
      return;
    }
    if (n() < threshold_ || (r.evalue <= ecutoff_ && worst_evalue_ <= ecutoff_)) {
      records_.push_back(r);
      heapify_up(n());
    } else {
      if (worse(records_[1], r)) records_[1] = r;
      heapify_down(1, n());
    }
    worst_evalue_ = records_[1].evalue;
  }

  bool filled_to_cutoff() const { return n() >= threshold_ && worst_evalue_ <= ecutoff_; }
  double ecutoff() const { return ecutoff_; }
  // The records held (any order).
  std::span<const Record> records() const { return std::span<const Record>(records_).subspan(1); }

 private:
  int n() const { return static_cast<int>(records_.size()) - 1; }
  // s_CompoHeapRecordCompare: a is worse than b.
  static bool worse(const Record& a, const Record& b) {
    if (a.evalue != b.evalue) return a.evalue > b.evalue;
    if (a.score != b.score) return b.score > a.score;
    return b.oid > a.oid;
  }
  void convert_to_heap() {
    is_heap_ = true;
    for (int i = n() / 2; i >= 1; --i) heapify_down(i, n());
  }
  void heapify_down(int top, int count) {
    int largest = top, i;
    do {
      i = largest;
      const int left = 2 * i, right = 2 * i + 1;
      largest = (left <= count && worse(at(left), at(i))) ? left : i;
      if (right <= count && worse(at(right), at(largest))) largest = right;
      if (largest != i) std::swap(at(i), at(largest));
    } while (largest != i);
  }
  void heapify_up(int i) {
    int parent = i / 2;
    while (parent >= 1 && worse(at(i), at(parent))) {
      std::swap(at(i), at(parent));
      i = parent;
      parent /= 2;
    }
  }
  Record& at(int i) { return records_[static_cast<std::size_t>(i)]; }

  int threshold_;
  double ecutoff_;
  double worst_evalue_ = 0;
  bool is_heap_ = false;
  std::vector<Record> records_ = std::vector<Record>(1);  // 1-based
};

}  // namespace

std::vector<std::size_t> blastp_query_batches(std::span<const std::size_t> lengths) {
  std::vector<std::size_t> starts;
  std::size_t size_read = kBlastpQueryBatchResidues;  // forces a new batch at the first query
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (size_read >= kBlastpQueryBatchResidues) {
      starts.push_back(i);
      size_read = 0;
    }
    size_read += lengths[i];
  }
  starts.push_back(lengths.size());
  return starts;
}

std::vector<RedoneQuery> finish_composition_redo(std::span<const RedoQueryInput> batch,
                                                 const BlastpOptions& options) {
  struct Kept {
    SubjectHits hits;
    std::vector<compo::MatrixAdjustRule> rules;
  };
  std::vector<CompoHeap> heaps(batch.size(), CompoHeap(options.max_target_seqs, kCompoHeapEvalueCutoff));
  std::vector<std::vector<Kept>> kept(batch.size());
  for (std::size_t q = 0; q < batch.size(); ++q) {
    const RedoQueryInput& in = batch[q];
    for (std::size_t i = 0; i < in.prelim.size(); ++i) {
      const SubjectHits& list = in.prelim[i];
      // BlastCompo_EarlyTermination over every query of the batch (not with exact_max_target_seqs, whose
      // promise is the best max_target_seqs of all subjects).
      const double prelim_best = list.best_evalue();
      bool terminate = !options.exact_max_target_seqs;
      for (const CompoHeap& h : heaps) {
        if (!h.filled_to_cutoff() || prelim_best <= kEvalueStretch * h.ecutoff()) {
          terminate = false;
          break;
        }
      }
      if (terminate) continue;
      SubjectRedo redo = in.redo(i);
      if (redo.hsps.empty() || !(redo.best_evalue <= options.evalue)) continue;
      CompoHeap& heap = heaps[q];
      if (!heap.would_insert(redo.best_evalue, redo.best_score, list.oid)) continue;
      heap.insert({redo.best_evalue, redo.best_score, list.oid, kept[q].size()});
      kept[q].push_back({SubjectHits{list.oid, std::move(redo.hsps)}, std::move(redo.rules)});
    }
  }
  // The heap's content, then Blast_HitListUpdate / sort / prune as select_hit_lists does it (a total order),
  // and -max_hsps (s_FilterBlastResults).
  std::vector<RedoneQuery> out(batch.size());
  for (std::size_t q = 0; q < batch.size(); ++q) {
    std::vector<Kept> lists;
    for (const CompoHeap::Record& r : heaps[q].records()) lists.push_back(std::move(kept[q][r.payload]));
    std::stable_sort(lists.begin(), lists.end(),
                     [](const Kept& a, const Kept& b) { return compare_hit_lists(a.hits, b.hits) < 0; });
    if (lists.size() > static_cast<std::size_t>(options.max_target_seqs))
      lists.resize(static_cast<std::size_t>(options.max_target_seqs));
    for (Kept& l : lists) {
      trim_to_max_hsps(l.hits.hsps, options.max_hsps);
      l.rules.resize(l.hits.hsps.size());
      out[q].hits.push_back(std::move(l.hits));
      out[q].rules.push_back(std::move(l.rules));
    }
  }
  return out;
}

}  // namespace warpsearch::blast
