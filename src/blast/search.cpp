// search.cpp: the blastp search stages (comp_based_stats 0) and the single-threaded search over subjects in
// memory; see search.hpp for the pipeline and the BLAST+ functions each stage reproduces.
#include "blast/search.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blast/composition.hpp"
#include "blast/kappa.hpp"
#include "blast/lookup.hpp"
#include "blast/prelim_screen.hpp"
#include "blast/split.hpp"
#include "blast/ungapped.hpp"
#include "stats/blast_stats.hpp"
#include "warpsearch/alphabet.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::blast {

namespace {

// BLAST_SEQSRC_MINLENGTH (blast_seqsrc.h), the floor of the "minimum subject length" blastp -subject uses
// for its hit-saving cutoff. Observed with blastp 2.12: outputs match n = max(shortest length, 10) exactly;
// n = 7 (the true shortest of the DB20k test set) and n = 10 for the globins (shortest > 10) both differ.
constexpr int kSubjectSetMinLength = 10;

// The containment tests of the two gapped stages use BLAST+'s interval tree (blast_itree.c,
// eQueryAndSubject indexing, one query strand, min_diag_separation 0), re-implemented node for node because
// it is not an exact containment index: insertion refuses an HSP sharing its start (q_start, s_start) or
// end (q_end, s_end) with a better HSP found on the search path, and unlinks worse ones found there (only
// those: a leaf or list entry off the path stays), so what a later query finds depends on the insertion
// history. An HSP A contains B when B.score <= A.score and B's start and end points both lie in A's closed
// query x subject ranges (CONTAINED_IN_HSP twice).
//
// Layout as in BLAST+: node 0 is the root over query offsets [0, query_length + 1]; an internal node has
// a range [leftend, rightend] split at middle = (leftend + rightend) / 2 (left child [leftend, middle],
// right child [middle + 1, rightend]); an interval entirely left of middle (end < middle) goes left,
// entirely right (start > middle) goes right, else it straddles: at the query level it descends into the
// node's subject-level subtree (root over [0, subject_length + 1]) with its subject range; at the subject
// level it is prepended to the node's midpoint list (linked through the leaves' mid fields). A child slot
// holds a leaf until a second interval arrives there, which splits it into an internal node.
class HspTree {
 public:
  struct Box {
    int score = 0;
    int q_start = 0, q_end = 0, s_start = 0, s_end = 0;
  };

  HspTree(int query_length, int subject_length) : s_max_(subject_length + 1) {
    nodes_.push_back(Node{0, query_length + 1, 0, 0, 0, -1});
  }

  // Blast_IntervalTreeReset: back to the empty root.
  void reset() {
    nodes_.resize(1);
    nodes_[0].left = nodes_[0].mid = nodes_[0].right = 0;
    boxes_.clear();
  }

  // BlastIntervalTreeContainsHSP.
  bool contains(const Box& in) const {
    std::size_t node = 0;
    while (nodes_[node].hsp < 0) {
      if (nodes_[node].mid != 0 && midpoint_tree_contains(nodes_[node].mid, in)) return true;
      const std::int64_t middle = middle_of(node);
      std::size_t next = 0;
      if (in.q_end < middle)
        next = nodes_[node].left;
      else if (in.q_start > middle)
        next = nodes_[node].right;
      if (next == 0) return false;
      node = next;
    }
    return is_contained(in, boxes_[static_cast<std::size_t>(nodes_[node].hsp)]);
  }

  // BlastIntervalTreeAddHSP (eQueryAndSubject).
  void add(const Box& in) {
    if (has_endpoint(in, true) || has_endpoint(in, false)) return;
    boxes_.push_back(in);
    const std::size_t leaf = nodes_.size();
    nodes_.push_back(Node{0, 0, 0, 0, 0, static_cast<int>(boxes_.size() - 1)});
    bool subject_level = false;
    std::int64_t region_start = in.q_start, region_end = in.q_end;
    std::size_t root = 0;
    while (true) {
      const std::int64_t middle = middle_of(root);
      bool go_left = false;
      std::size_t old = 0;
      if (region_end < middle) {
        if (nodes_[root].left == 0) {
          nodes_[root].left = leaf;
          return;
        }
        old = nodes_[root].left;
        if (nodes_[old].hsp < 0) {
          root = old;
          continue;
        }
        go_left = true;
      } else if (region_start > middle) {
        if (nodes_[root].right == 0) {
          nodes_[root].right = leaf;
          return;
        }
        old = nodes_[root].right;
        if (nodes_[old].hsp < 0) {
          root = old;
          continue;
        }
      } else {
        if (subject_level) {
          nodes_[leaf].mid = nodes_[root].mid;
          nodes_[root].mid = leaf;
          return;
        }
        subject_level = true;
        if (nodes_[root].mid == 0) {
          const std::size_t sub = new_subject_root();
          nodes_[root].mid = sub;
        }
        root = nodes_[root].mid;
        region_start = in.s_start;
        region_end = in.s_end;
        continue;
      }
      // Two leaves in one slot: a new internal node takes the slot and the old leaf.
      const std::int64_t parent_middle = middle;
      const std::size_t split = nodes_.size();
      if (go_left)
        nodes_.push_back(Node{nodes_[root].leftend, static_cast<int>(parent_middle), 0, 0, 0, -1});
      else
        nodes_.push_back(Node{static_cast<int>(parent_middle) + 1, nodes_[root].rightend, 0, 0, 0, -1});
      (go_left ? nodes_[root].left : nodes_[root].right) = split;
      const Box& ob = boxes_[static_cast<std::size_t>(nodes_[old].hsp)];
      std::int64_t old_start = subject_level ? ob.s_start : ob.q_start;
      std::int64_t old_end = subject_level ? ob.s_end : ob.q_end;
      root = split;
      const std::int64_t split_middle = middle_of(split);
      if (old_end < split_middle) {
        nodes_[split].left = old;
      } else if (old_start > split_middle) {
        nodes_[split].right = old;
      } else if (subject_level) {
        nodes_[split].mid = old;
      } else {
        const std::size_t sub = new_subject_root();
        nodes_[split].mid = sub;
        old_start = ob.s_start;
        old_end = ob.s_end;
        const std::int64_t sub_middle = middle_of(sub);
        if (old_end < sub_middle)
          nodes_[sub].left = old;
        else if (old_start > sub_middle)
          nodes_[sub].right = old;
        else
          nodes_[sub].mid = old;
      }
    }
  }

 private:
  struct Node {
    int leftend = 0, rightend = 0;
    std::size_t left = 0, mid = 0, right = 0;  // 0: none (node 0 is the root, never a child)
    int hsp = -1;                              // leaf: index into boxes_
  };
  enum class Better { kNone, kTree, kIn };

  std::int64_t middle_of(std::size_t node) const {
    return (static_cast<std::int64_t>(nodes_[node].leftend) + nodes_[node].rightend) / 2;
  }
  std::size_t new_subject_root() {
    nodes_.push_back(Node{0, s_max_, 0, 0, 0, -1});
    return nodes_.size() - 1;
  }

  static bool is_contained(const Box& in, const Box& t) {
    if (in.score > t.score) return false;
    const auto inside = [&](int q, int s) {
      return t.q_start <= q && t.q_end >= q && t.s_start <= s && t.s_end >= s;
    };
    return inside(in.q_start, in.s_start) && inside(in.q_end, in.s_end);
  }

  bool midpoint_tree_contains(std::size_t root, const Box& in) const {
    std::size_t node = root;
    while (nodes_[node].hsp < 0) {
      for (std::size_t k = nodes_[node].mid; k != 0; k = nodes_[k].mid)
        if (is_contained(in, boxes_[static_cast<std::size_t>(nodes_[k].hsp)])) return true;
      const std::int64_t middle = middle_of(node);
      std::size_t next = 0;
      if (in.s_end < middle)
        next = nodes_[node].left;
      else if (in.s_start > middle)
        next = nodes_[node].right;
      if (next == 0) return false;
      node = next;
    }
    return is_contained(in, boxes_[static_cast<std::size_t>(nodes_[node].hsp)]);
  }

  // s_HSPsHaveCommonEndpoint: which of two HSPs sharing the endpoint is kept (higher score; then the
  // shorter query range, then the shorter subject range; identical: the one in the tree).
  static Better common_endpoint(const Box& in, const Box& t, bool left_end) {
    const bool match = left_end ? (in.q_start == t.q_start && in.s_start == t.s_start)
                                : (in.q_end == t.q_end && in.s_end == t.s_end);
    if (!match) return Better::kNone;
    if (in.score != t.score) return in.score > t.score ? Better::kIn : Better::kTree;
    const int in_q = in.q_end - in.q_start, t_q = t.q_end - t.q_start;
    if (in_q != t_q) return in_q > t_q ? Better::kTree : Better::kIn;
    const int in_s = in.s_end - in.s_start, t_s = t.s_end - t.s_start;
    if (in_s != t_s) return in_s > t_s ? Better::kTree : Better::kIn;
    return Better::kTree;
  }

  // The leaf step shared by both endpoint searches: true = refuse the new HSP.
  bool leaf_endpoint(std::size_t parent, std::size_t leaf, std::int64_t target, std::int64_t middle,
                     const Box& in, bool left_end) {
    const Better b = common_endpoint(in, boxes_[static_cast<std::size_t>(nodes_[leaf].hsp)], left_end);
    if (b == Better::kTree) return true;
    if (b == Better::kIn) {
      if (target < middle)
        nodes_[parent].left = 0;
      else if (target > middle)
        nodes_[parent].right = 0;
    }
    return false;
  }

  // s_MidpointTreeHasHSPEndpoint. As in BLAST+, after unlinking a list entry the walk's "previous entry"
  // still advances to the unlinked one.
  bool midpoint_tree_has_endpoint(std::size_t root, const Box& in, bool left_end) {
    const std::int64_t target = left_end ? in.s_start : in.s_end;
    std::size_t node = root;
    while (true) {
      std::size_t prev = node;
      for (std::size_t k = nodes_[node].mid; k != 0;) {
        const Better b = common_endpoint(in, boxes_[static_cast<std::size_t>(nodes_[k].hsp)], left_end);
        const std::size_t following = nodes_[k].mid;
        if (b == Better::kTree) return true;
        if (b == Better::kIn) nodes_[prev].mid = following;
        prev = k;
        k = following;
      }
      const std::int64_t middle = middle_of(node);
      std::size_t next = 0;
      if (target < middle)
        next = nodes_[node].left;
      else if (target > middle)
        next = nodes_[node].right;
      if (next == 0) return false;
      if (nodes_[next].hsp >= 0) return leaf_endpoint(node, next, target, middle, in, left_end);
      node = next;
    }
  }

  // s_IntervalTreeHasHSPEndpoint.
  bool has_endpoint(const Box& in, bool left_end) {
    const std::int64_t target = left_end ? in.q_start : in.q_end;
    std::size_t node = 0;
    while (true) {
      if (nodes_[node].mid != 0 && midpoint_tree_has_endpoint(nodes_[node].mid, in, left_end)) return true;
      const std::int64_t middle = middle_of(node);
      std::size_t next = 0;
      if (target < middle)
        next = nodes_[node].left;
      else if (target > middle)
        next = nodes_[node].right;
      if (next == 0) return false;
      if (nodes_[next].hsp >= 0) return leaf_endpoint(node, next, target, middle, in, left_end);
      node = next;
    }
  }

  int s_max_;
  std::vector<Node> nodes_;
  std::vector<Box> boxes_;
};

HspTree::Box box_of(const Hsp& h) { return {h.score, h.q_start, h.q_end, h.s_start, h.s_end}; }

std::vector<MaskRun> to_mask_runs(const std::vector<Interval>& intervals) {
  std::vector<MaskRun> runs;
  runs.reserve(intervals.size());
  for (const Interval& iv : intervals)
    runs.push_back({static_cast<std::uint64_t>(iv.begin), static_cast<std::uint64_t>(iv.end)});
  return runs;
}

// The preliminary stage's raw parameters (prelim_screen.hpp's screen_params).
ScreenParams stage_params(const BlastpSetup& setup, const BlastpOptions& options) {
  ScreenParams p{};
  p.cutoff = setup.cutoff_score;
  p.restricted_cutoff = static_cast<int>(kRestrictedMult * p.cutoff);
  p.restricted_allowed = options.evalue <= kRestrictedWorstEvalue;
  p.gap_open = options.gaps.open;
  p.gap_extend = options.gaps.extend;
  p.x_dropoff = setup.gapped_x_dropoffs.preliminary;
  return p;
}

// Preliminary gapped stage for one subject (BLAST_GetGappedScore + the engine's purge / sort / E-value
// reap). `ungapped` sorted by sort_ungapped_hsps. Until an extension reaches the cutoff this is exactly
// screen_preliminary's loop (prelim_screen.hpp), with the same rules (starts_restricted,
// restricted_inconclusive) and extension code (gapped_start / preliminary_gapped_alignment are the span
// forms of xdrop.hpp's raw functions).
std::vector<PrelimHsp> preliminary_stage(Residues query, Residues subject, const ScoringMatrix& scoring,
                                         const std::vector<UngappedHsp>& ungapped, const BlastpSetup& setup,
                                         const BlastpOptions& options, const EvalueCalculator& calc,
                                         SearchCounts& counts) {
  const ScreenParams sp = stage_params(setup, options);
  const int cutoff = sp.cutoff;
  const GappedParams params{sp.gap_open, sp.gap_extend, sp.x_dropoff};
  bool restricted = starts_restricted(sp, ungapped.data(), static_cast<int>(ungapped.size()));
  std::vector<PrelimHsp> found;
  HspTree tree(static_cast<int>(query.size()), static_cast<int>(subject.size()));
  for (std::size_t i = 0; i < ungapped.size(); ++i) {
    const UngappedHsp& u = ungapped[i];
    if (tree.contains({u.score, u.query_start, u.query_end, u.subject_start, u.subject_end})) continue;
    ++counts.gapped_extensions;
    const SeedPoint seed = gapped_start(query, subject, scoring, u.query_start, u.subject_start, u.length());
    const GappedScore g = preliminary_gapped_alignment(query, subject, scoring, params, seed, restricted);
    if (restricted_inconclusive(sp, restricted, g.score)) {
      // Inconclusive approximate score: BLAST discards this subject's HSPs and restarts exactly.
      ++counts.redone_subjects;
      restricted = false;
      found.clear();
      tree.reset();
      i = static_cast<std::size_t>(-1);  // the loop's ++i restarts at 0
      continue;
    }
    if (g.score >= cutoff) {
      PrelimHsp p;
      p.hsp.score = g.score;
      p.hsp.q_start = g.q_start;
      p.hsp.q_end = g.q_end;
      p.hsp.s_start = g.s_start;
      p.hsp.s_end = g.s_end;
      p.seed = seed;
      tree.add(box_of(p.hsp));
      found.push_back(std::move(p));
    }
  }
  if (found.empty()) return found;

  // purge_common_endpoints works on Hsp; the index of each HSP rides in bit_score (unused before the
  // traceback) so the survivors find their seeds again.
  std::vector<Hsp> hsps;
  hsps.reserve(found.size());
  for (std::size_t k = 0; k < found.size(); ++k) {
    hsps.push_back(found[k].hsp);
    hsps.back().bit_score = static_cast<double>(k);
  }
  purge_common_endpoints(hsps);
  sort_hsps_by_score(hsps);
  const int subject_length = static_cast<int>(subject.size());
  for (Hsp& h : hsps) h.evalue = calc.evalue(h.score, subject_length);
  reap_by_evalue(hsps, setup.prelim_evalue);
  std::vector<PrelimHsp> out;
  out.reserve(hsps.size());
  for (const Hsp& h : hsps) {
    PrelimHsp p{h, found[static_cast<std::size_t>(h.bit_score)].seed};
    p.hsp.bit_score = 0;
    out.push_back(std::move(p));
  }
  return out;
}

// Traceback stage for one subject (Blast_TracebackFromHSPList + s_HSPListPostTracebackUpdate).
std::vector<Hsp> traceback_stage(Residues query, Residues subject, const ScoringMatrix& scoring,
                                 const std::vector<PrelimHsp>& prelim, const BlastpSetup& setup,
                                 const BlastpOptions& options, const EvalueCalculator& calc) {
  const GappedParams params{options.gaps.open, options.gaps.extend, setup.gapped_x_dropoffs.traceback};
  std::vector<Hsp> kept;
  HspTree tree(static_cast<int>(query.size()), static_cast<int>(subject.size()));
  for (const PrelimHsp& p : prelim) {
    const Hsp& h = p.hsp;
    if (tree.contains(box_of(h))) continue;
    SeedPoint seed = p.seed;
    if (seed.q == 0 && seed.s == 0) {  // BLAST reads gapped_start (0, 0) as "no start yet"
      const auto s = traceback_offsets(query, subject, scoring, h.q_start, h.q_end, h.s_start, h.s_end);
      if (!s) continue;
      seed = *s;
    }
    GappedAlignment a = gapped_alignment_with_traceback(query, subject, scoring, params, seed);
    Hsp t;
    t.score = a.score;
    t.q_start = a.q_start;
    t.q_end = a.q_end;
    t.s_start = a.s_start;
    t.s_end = a.s_end;
    t.script = std::move(a.script);
    tree.add(box_of(t));
    kept.push_back(std::move(t));
  }
  purge_common_endpoints(kept);
  sort_hsps_by_score(kept);
  remove_contained_hsps(kept);
  const int subject_length = static_cast<int>(subject.size());
  for (Hsp& h : kept) h.evalue = calc.evalue(h.score, subject_length);
  reap_by_evalue(kept, options.evalue);
  for (Hsp& h : kept) h.bit_score = calc.bit_score(h.score);
  sort_hsps_by_evalue(kept);
  trim_to_max_hsps(kept, options.max_hsps);
  return kept;
}

}  // namespace

ScreenParams screen_params(const QueryContext& context) {
  return stage_params(context.setup(), context.options());
}

ScoringMatrix blast_scoring_matrix(const ScoringMatrix& matrix) {
  const ScoreTable t = blast_score_table(matrix);
  const Alphabet alpha = Alphabet::protein();
  const int n = alpha.size();
  std::string text = " ";
  for (int a = 0; a < n; ++a) text += std::string(" ") + alpha.symbol(static_cast<std::uint8_t>(a));
  text += '\n';
  for (int a = 0; a < n; ++a) {
    text += alpha.symbol(static_cast<std::uint8_t>(a));
    for (int b = 0; b < n; ++b) text += ' ' + std::to_string(t[static_cast<std::size_t>(a * kMaxCodes + b)]);
    text += '\n';
  }
  return ScoringMatrix::from_ncbi_text(text, matrix.name());
}

int spouge_cutoff_score(double e0, const stats::KarlinParams& gapped, const stats::GumbelParams& gumbel,
                        int query_length, int subject_length, std::int64_t db_length) {
  const double db_scale = db_length != 0 ? static_cast<double>(db_length) : 1.0;
  int a = 0;
  int b = std::max(static_cast<int>(std::log(db_scale / e0) / gapped.lambda), 2);
  const auto e_of = [&](int s) {
    return spouge_evalue(s, gapped, gumbel, query_length, subject_length, db_length);
  };
  double e = e_of(b);
  if (e > e0) {
    while (e > e0) {
      a = b;
      b *= 2;
      e = e_of(b);
    }
  } else {
    a = 0;
  }
  while (b - a > 1) {
    const int c = (a + b) / 2;
    e = e_of(c);
    if (e > e0)
      a = c;
    else
      b = c;
  }
  return a;
}

QueryContext QueryContext::create(Residues query_in, const BlastpOptions& options, std::int64_t db_length,
                                  std::int64_t db_num_seqs, int min_length) {
  QueryContext c;
  c.options_ = options;
  BlastpSetup& setup = c.setup_;
  c.matrix_ = ScoringMatrix::load(options.matrix);
  c.scoring_ = blast_scoring_matrix(*c.matrix_);
  const ScoringMatrix& matrix = *c.matrix_;

  // 1. Query (SEG mask -> X in the working copy).
  c.original_query_.assign(query_in.begin(), query_in.end());
  c.query_ = c.original_query_;
  if (options.seg) {
    setup.mask = seg_mask(c.query_);
    apply_mask(c.query_, setup.mask);
  }
  const int query_length = static_cast<int>(c.query_.size());

  c.calc_ = EvalueCalculator::create(matrix, options.gaps, query_length, db_length,
                                     static_cast<int>(db_num_seqs), options.old_fsc, options.searchsp);
  const auto gumbel = stats::gumbel_params(matrix, options.gaps);
  const auto xdrops =
      blastp_xdropoffs(matrix, options.gaps, options.xdrop_gap_bits, options.xdrop_gap_final_bits);
  if (!c.calc_ || !gumbel || !xdrops)
    throw Error(ErrorKind::kUsage, "BLAST+ has no gapped statistics for " + matrix.name() +
                                       " with gap costs " + std::to_string(options.gaps.open) + "/" +
                                       std::to_string(options.gaps.extend));
  setup.threshold = options.threshold >= 0 ? options.threshold : blastp_default_threshold(matrix.name());
  setup.window = options.window > 0 ? options.window : blastp_default_window(matrix.name());
  if (options.comp_based_stats < 0 || options.comp_based_stats > 3)
    throw Error(ErrorKind::kUsage,
                "-comp_based_stats must be 0, 1, 2 or 3, not " + std::to_string(options.comp_based_stats));
  if (options.comp_based_stats != 0 && compo::matrix_frequency_data(matrix.name()) == nullptr)
    throw Error(ErrorKind::kUsage,
                "composition-based statistics are not available for matrix " + matrix.name());
  // BlastHitSavingParametersUpdate: with -comp_based_stats 2 or 3 the preliminary stage keeps HSPs up to
  // 5 x -evalue (cutoff and reap), so that the adjusted scores can still reach -evalue.
  // With the old statistics (-searchsp) the preliminary stage keeps -evalue (BLAST_Cutoffs' branch).
  setup.prelim_evalue = (options.comp_based_stats > 1 && !options.old_fsc ? 5 : 1) * options.evalue;
  if (c.query_.empty()) return c;
  setup.gapped = c.calc_->gapped();
  const auto ungapped = stats::query_ungapped_params(matrix, c.query_);
  if (ungapped) setup.ungapped = *ungapped;
  // Subjects without residues (a -subject file of empty records): blastp reports the query's statistics,
  // an effective search space of 0 and no hits.
  if (db_length == 0 || db_num_seqs == 0) return c;
  setup.lengths = c.calc_->lengths();
  setup.gapped_x_dropoffs = *xdrops;
  if (!ungapped) return c;

  // 2. Cutoffs.
  setup.cutoff_score =
      options.old_fsc ? evalue_cutoff_score(setup.prelim_evalue, setup.gapped, setup.lengths.search_space)
                      : spouge_cutoff_score(setup.prelim_evalue, setup.gapped, *gumbel, query_length,
                                            min_length, db_length);
  c.ungapped_params_ = blastp_ungapped_params(setup.ungapped, true, query_length, min_length,
                                              setup.cutoff_score, options.xdrop_ungap_bits);
  c.ungapped_params_.word_size = options.word_size;
  c.ungapped_params_.window = setup.window;
  setup.ungapped_cutoff = c.ungapped_params_.cutoff_score;
  setup.ungapped_x_dropoff = c.ungapped_params_.x_dropoff;

  // Lookup table (unmasked words only).
  const std::vector<MaskRun> mask_runs = to_mask_runs(setup.mask);
  c.table_ = AaLookupTable::build(c.query_, mask_runs, matrix, options.word_size, setup.threshold);
  if (options.comp_based_stats != 0)
    c.compo_ = make_compo_query_data(c.query_, options, matrix, setup, *gumbel, db_length);
  c.searchable_ = true;
  return c;
}

SubjectScanner::SubjectScanner(const QueryContext& context)
    : context_(&context), finder_(context.query(), context.scoring(), context.ungapped_params()) {}

std::vector<PrelimHsp> SubjectScanner::run(Residues subject, SearchCounts& counts) {
  const QueryContext& c = *context_;
  const AaLookupTable& table = c.table();
  const int w = table.word_size();
  const std::uint32_t word_mask = table.word_mask();
  ungapped_.clear();
  finder_.begin_subject(subject, ungapped_);
  const auto n = static_cast<std::int32_t>(subject.size());
  if (n >= w) {
    std::uint32_t index = 0;
    for (int k = 0; k < w - 1; ++k) index = (index << kLookupCharBits) | subject[static_cast<std::size_t>(k)];
    for (std::int32_t s = 0; s + w <= n; ++s) {
      index = ((index << kLookupCharBits) | subject[static_cast<std::size_t>(s + w - 1)]) & word_mask;
      if (!table.present(index)) continue;
      for (const std::uint32_t q : table.hits(index)) finder_.hit(static_cast<std::int32_t>(q), s);
    }
  }
  const UngappedCounts uc = finder_.end_subject();
  counts.word_hits += uc.hits;
  counts.ungapped_extensions += uc.extended;
  counts.ungapped_saved += uc.saved;
  if (ungapped_.empty()) return {};
  sort_ungapped_hsps(ungapped_);
  std::vector<PrelimHsp> prelim =
      preliminary_stage(c.query(), subject, c.scoring(), ungapped_, c.setup(), c.options(), c.calc(), counts);
  counts.prelim_hsps += static_cast<std::int64_t>(prelim.size());
  return prelim;
}

std::vector<PrelimHsp> preliminary_hsps(const QueryContext& context, Residues subject,
                                        const std::vector<UngappedHsp>& ungapped, SearchCounts& counts) {
  std::vector<PrelimHsp> prelim =
      preliminary_stage(context.query(), subject, context.scoring(), ungapped, context.setup(),
                        context.options(), context.calc(), counts);
  counts.prelim_hsps += static_cast<std::int64_t>(prelim.size());
  return prelim;
}

std::vector<Hsp> traceback_subject(const QueryContext& context, Residues subject,
                                   const std::vector<PrelimHsp>& prelim) {
  return traceback_stage(context.query(), subject, context.scoring(), prelim, context.setup(),
                         context.options(), context.calc());
}

BlastpResult blastp_search(Residues query, std::span<const Residues> subjects, const BlastpOptions& options) {
  BlastpResult result;
  // Subject totals (-subject: the subject set acts as the database).
  std::int64_t db_length = options.db_length;
  std::int64_t db_num_seqs = options.db_num_seqs;
  int min_length = options.min_subject_length;
  if (db_length == 0)
    for (const Residues& s : subjects) db_length += static_cast<std::int64_t>(s.size());
  if (db_num_seqs == 0) db_num_seqs = static_cast<std::int64_t>(subjects.size());
  if (min_length == 0) min_length = subject_set_min_length(subjects);
  const QueryContext context = QueryContext::create(query, options, db_length, db_num_seqs, min_length);
  result.setup = context.setup();
  if (!context.searchable() || subjects.empty()) return result;

  // 3-4. Scan, ungapped, preliminary gapped, per subject; with a query of 19,800 residues or more, per piece
  // of the query in BLAST+'s chunks (split.hpp), each piece searched as a query of its own.
  const std::size_t limit = prelim_list_limit(options);
  const std::size_t query_length = query.size();
  const std::vector<QueryPiece> pieces =
      split_query_batch(std::span<const std::size_t>(&query_length, 1)).front();
  std::vector<SubjectHits> prelim_lists;
  std::vector<std::vector<PrelimHsp>> prelim_hsps(subjects.size());
  std::optional<std::vector<PrelimEntry>> combined;
  for (const QueryPiece& piece : pieces) {
    const bool whole = pieces.size() == 1;
    std::optional<QueryContext> piece_context;
    if (!whole)
      piece_context.emplace(QueryContext::create(query.subspan(piece.begin, piece.end - piece.begin), options,
                                                 db_length, db_num_seqs, min_length));
    const QueryContext& scanned = whole ? context : *piece_context;
    if (!scanned.searchable()) continue;
    SubjectScanner scanner(scanned);
    std::vector<PrelimEntry> entries;
    for (std::size_t oid = 0; oid < subjects.size(); ++oid) {
      std::vector<PrelimHsp> prelim = scanner.run(subjects[oid], result.counts);
      if (prelim.empty()) continue;
      PrelimEntry e;
      e.list.oid = static_cast<int>(oid);
      for (const PrelimHsp& p : prelim) e.list.hsps.push_back(p.hsp);
      e.prelim = std::move(prelim);
      entries.push_back(std::move(e));
    }
    if (whole) {  // stage 5 below selects from these
      combined = std::move(entries);
      break;
    }
    // A piece's own preliminary selection, in query coordinates, merged into the earlier pieces'.
    std::sort(entries.begin(), entries.end(), [](const PrelimEntry& a, const PrelimEntry& b) {
      return compare_hit_lists(a.list, b.list) < 0;
    });
    if (entries.size() > limit) entries.resize(limit);
    shift_query(entries, static_cast<int>(piece.begin));
    merge_chunk_hits(combined, std::move(entries), static_cast<int>(piece.begin), limit);
  }
  if (combined)
    for (PrelimEntry& e : *combined) {
      prelim_hsps[static_cast<std::size_t>(e.list.oid)] = std::move(e.prelim);
      prelim_lists.push_back(std::move(e.list));
    }

  // 5. Preliminary hit list.
  const bool cbs = options.comp_based_stats != 0;
  select_hit_lists(prelim_lists, limit);

  if (cbs) {
    // 6-7 with composition-based statistics (kappa.hpp): the redo runs lazily, for the lists BLAST redoes.
    const RedoQueryInput input{prelim_lists, [&](std::size_t i) {
                                 const auto oid = static_cast<std::size_t>(prelim_lists[i].oid);
                                 ++result.counts.composition_redone;
                                 return redo_subject(context, subjects[oid], prelim_hsps[oid]);
                               }};
    RedoneQuery redone =
        std::move(finish_composition_redo(std::span<const RedoQueryInput>(&input, 1), options).front());
    result.hits = std::move(redone.hits);
    result.adjust_rules = std::move(redone.rules);
    reap_by_query_coverage(result.hits, result.adjust_rules, static_cast<int>(query.size()),
                           options.qcov_hsp_perc);
    drop_zero_score_hsps(result.hits, result.adjust_rules);
    return result;
  }

  // 6. Traceback.
  std::vector<SubjectHits> final_lists;
  for (const SubjectHits& list : prelim_lists) {
    const auto oid = static_cast<std::size_t>(list.oid);
    SubjectHits out;
    out.oid = list.oid;
    out.hsps = traceback_subject(context, subjects[oid], prelim_hsps[oid]);
    if (!out.hsps.empty()) final_lists.push_back(std::move(out));
  }

  // 7. Final hit lists.
  select_hit_lists(final_lists, static_cast<std::size_t>(options.max_target_seqs));
  result.hits = std::move(final_lists);
  reap_by_query_coverage(result.hits, result.adjust_rules, static_cast<int>(query.size()),
                         options.qcov_hsp_perc);
  return result;
}

std::size_t prelim_list_limit(const BlastpOptions& options) {
  if (options.exact_max_target_seqs) return SIZE_MAX;
  return static_cast<std::size_t>(
      prelim_hitlist_size(options.max_target_seqs, options.comp_based_stats != 0, true));
}

int subject_set_min_length(std::span<const Residues> subjects) {
  int min_length = INT_MAX;
  for (const Residues& s : subjects) min_length = std::min(min_length, static_cast<int>(s.size()));
  return std::max(min_length, kSubjectSetMinLength);
}

namespace {

// HSPs for which drop(hsp) holds removed from the lists, lists left empty dropped; `rules` (one per HSP, or
// empty) follow.
template <class Drop>
void reap_hsps(std::vector<SubjectHits>& lists, std::vector<std::vector<compo::MatrixAdjustRule>>& rules,
               Drop drop) {
  const bool with_rules = !rules.empty();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < lists[i].hsps.size(); ++k) {
      if (drop(lists[i].hsps[k])) continue;
      if (n != k) {
        lists[i].hsps[n] = std::move(lists[i].hsps[k]);
        if (with_rules) rules[i][n] = rules[i][k];
      }
      ++n;
    }
    lists[i].hsps.resize(n);
    if (with_rules) rules[i].resize(n);
    if (n == 0) continue;
    if (kept != i) {
      lists[kept] = std::move(lists[i]);
      if (with_rules) rules[kept] = std::move(rules[i]);
    }
    ++kept;
  }
  lists.resize(kept);
  if (with_rules) rules.resize(kept);
}

}  // namespace

void reap_by_query_coverage(std::vector<SubjectHits>& lists,
                            std::vector<std::vector<compo::MatrixAdjustRule>>& rules, int query_length,
                            double percent) {
  if (percent <= 0) return;
  reap_hsps(lists, rules, [&](const Hsp& h) { return below_query_coverage(h, query_length, percent); });
}

void drop_zero_score_hsps(std::vector<SubjectHits>& lists,
                          std::vector<std::vector<compo::MatrixAdjustRule>>& rules) {
  reap_hsps(lists, rules, [](const Hsp& h) { return h.score == 0; });
}

std::vector<TabularHit> tabular_hits(const std::vector<SubjectHits>& hits) {
  std::vector<TabularHit> out;
  for (const SubjectHits& list : hits) {
    for (const Hsp& h : list.hsps) {
      TabularHit t;
      t.subject = static_cast<std::size_t>(list.oid);
      t.hsp.score = h.score;
      t.hsp.bits = h.bit_score;
      t.hsp.evalue = h.evalue;
      t.hsp.q_start = h.q_start;
      t.hsp.q_end = h.q_end;
      t.hsp.s_start = h.s_start;
      t.hsp.s_end = h.s_end;
      t.hsp.script = h.script;
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace warpsearch::blast
