// Ranked hit lists of an hmmsearch (HMMER 3.3.2 P7_TOPHITS and friends): the alignment display of one
// domain (AliDisplay, p7_alidisplay), one domain (Domain, P7_DOMAIN), one target sequence (Hit, P7_HIT)
// and the list of hits (TopHits) with HMMER's sort order and merge. Thresholding and output live in
// reporting.hpp and output.hpp; this header only holds the data and the ordering rules.
//
// Conventions: coordinates are 1-based as in HMMER (sequence 1..L, model 1..M); scores in bits unless a
// field says nats; optional strings (accession, description, annotation lines) are empty when absent,
// which is how HMMER's NULL / "" cases print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hmm/common.hpp"

namespace warpsearch::hmm {

struct Trace;     // trace.hpp (P7_TRACE)
struct OProfile;  // oprofile.hpp (P7_OPROFILE)
struct Abc;       // abc.hpp

/// Hit flags (p7_IS_INCLUDED ... p7_IS_DUPLICATE).
inline constexpr uint32_t kIsIncluded = 1u << 0;
inline constexpr uint32_t kIsReported = 1u << 1;
inline constexpr uint32_t kIsNew = 1u << 2;
inline constexpr uint32_t kIsDropped = 1u << 3;
inline constexpr uint32_t kIsDuplicate = 1u << 4;

/// Printable alignment of one domain (P7_ALIDISPLAY). All display lines have length N. rfline, mmline,
/// csline and ppline are empty when the model (or trace) lacks that annotation; model, mline and aseq are
/// always present. hmmacc/hmmdesc/sqacc/sqdesc are empty when absent.
struct AliDisplay {
  std::string rfline;  // reference annotation, or empty
  std::string mmline;  // model mask annotation, or empty
  std::string csline;  // consensus structure, or empty
  std::string model;   // aligned model consensus: match states consensus letters, '.' for inserts
  std::string mline;   // identities (letter), conservative (+), else ' '
  std::string aseq;    // aligned target: upper case matches, lower case inserts, '-' deletions
  std::string ppline;  // posterior probabilities ('0'..'9', '*', '.' for deletions), or empty
  int N = 0;           // length of the display lines

  std::string hmmname;
  std::string hmmacc;
  std::string hmmdesc;
  int hmmfrom = 0;  // start position on the model (1..M)
  int hmmto = 0;    // end position on the model (1..M)
  int M = 0;        // model length

  std::string sqname;
  std::string sqacc;
  std::string sqdesc;
  int64_t sqfrom = 0;  // start position on the sequence (1..L)
  int64_t sqto = 0;    // end position on the sequence (1..L)
  int64_t L = 0;       // sequence length
};

/// What p7_alidisplay_Create reads from the query profile. rf, cs and consensus are indexed by node
/// k = 1..M (HMMER's layout: [0] is a pad character); rf/cs are empty when the model lacks them.
/// match_odds(k, x) is the match emission odds ratio of residue code x at node k (p7_oprofile_FGetEmission).
struct AliModel {
  std::string_view name, acc, desc;
  int M = 0;
  std::string_view rf, cs, consensus;
  const Abc* abc = nullptr;
  std::function<float(int k, int x)> match_odds;
};

/// p7_alidisplay_Create on the pieces of AliModel (see the OProfile overload below). Throws
/// Error(kInternal) for a trace without such a domain or without match states in it.
AliDisplay make_alidisplay(const Trace& tr, int which, const AliModel& model, std::string_view sqname,
                           std::string_view sqacc, std::string_view sqdesc, const Dsq& dsq, int64_t L);

/// Builds the display of domain number `which` (0-based, in trace order) of trace `tr`, exactly as
/// p7_alidisplay_Create: model consensus/annotation from `om`, residues of `dsq` (Easel digital, sentinels
/// at 0 and L+1) printed with the model's alphabet symbols. `tr` must be indexed (trace_index).
AliDisplay make_alidisplay(const Trace& tr, int which, const OProfile& om, std::string_view sqname,
                           std::string_view sqacc, std::string_view sqdesc, const Dsq& dsq, int64_t L);

/// One domain of a hit (P7_DOMAIN). Envelope ienv..jenv, alignment iali..jali (1-based, inclusive).
struct Domain {
  int64_t ienv = 0, jenv = 0;
  int64_t iali = 0, jali = 0;
  float envsc = 0.0f;          // Forward score of the envelope, nats, without null2 correction
  float domcorrection = 0.0f;  // null2 score of the domain, nats
  float dombias = 0.0f;        // FLogsum(0, log(omega) + domcorrection), nats
  float oasc = 0.0f;           // optimal accuracy score (expected number of correctly aligned residues)
  float bitscore = 0.0f;       // null-corrected score, bits, as if the only domain in the sequence
  double lnP = 0.0;            // log P-value of bitscore
  bool is_reported = false;
  bool is_included = false;
  std::vector<float> scores_per_pos;  // unused by hmmsearch (nhmmer --aliscoresout); kept for parity
  AliDisplay ad;
};

/// One target sequence hit (P7_HIT).
struct Hit {
  std::string name;
  std::string acc;       // empty when absent
  std::string desc;      // empty when absent
  double sortkey = 0.0;  // bigger is better; hmmsearch sets it to -lnP (or score with bit cutoffs)

  float score = 0.0f;      // bits, all domains, null2-corrected
  float pre_score = 0.0f;  // bits before null2 correction
  float sum_score = 0.0f;  // bits reconstructed from the sum of domain envelopes

  double lnP = 0.0;
  double pre_lnP = 0.0;
  double sum_lnP = 0.0;

  float nexpected = 0.0f;
  int nregions = 0;
  int nclustered = 0;
  int noverlaps = 0;
  int nenvelopes = 0;
  int ndom = 0;  // == dcl.size()

  uint32_t flags = 0;  // kIsReported | kIsIncluded | ...
  int nreported = 0;   // domains satisfying the reporting thresholds
  int nincluded = 0;   // domains satisfying the inclusion thresholds
  int best_domain = -1;

  int64_t seqidx = 0;  // database index of the target: deterministic order for otherwise equal hits
  std::vector<Domain> dcl;
};

/// HMMER's ranking comparison (hit_sorter_by_sortkey): <0 when a ranks before b. Larger sortkey first;
/// then name (strcmp); then strand of dcl[0] (forward first); then smaller dcl[0].iali first. Where HMMER
/// returns 0 (an order left to qsort), we break the tie by seqidx so results do not depend on threads.
int compare_hits(const Hit& a, const Hit& b);

/// A list of hits (P7_TOPHITS): hits are stored unsorted in insertion order; sort_by_sortkey() builds the
/// ranked view hit(i). nreported/nincluded are set by threshold() in reporting.hpp.
class TopHits {
 public:
  /// Appends a hit (p7_tophits_CreateNextHit + filling); invalidates the sorted view. Returns it.
  Hit& add(Hit h);
  /// Moves all hits of `other` into this list (p7_tophits_Merge): result is sorted.
  void merge(TopHits&& other);
  /// Ranks the hits with compare_hits (p7_tophits_SortBySortkey). Idempotent.
  void sort_by_sortkey();
  bool is_sorted() const { return sorted_; }

  std::size_t size() const { return unsrt_.size(); }
  bool empty() const { return unsrt_.empty(); }
  /// i-th hit in rank order; requires is_sorted().
  Hit& hit(std::size_t i) { return unsrt_[order_[i]]; }
  const Hit& hit(std::size_t i) const { return unsrt_[order_[i]]; }
  /// i-th hit in insertion order.
  Hit& unsorted(std::size_t i) { return unsrt_[i]; }
  const Hit& unsorted(std::size_t i) const { return unsrt_[i]; }

  /// Longest target name; longest shown name (accession when non-empty, else name) for --acc
  /// (p7_tophits_GetMaxNameLength / GetMaxShownLength), over all hits, reported or not.
  int max_name_length() const;
  int max_shown_length() const;

  uint64_t nreported = 0;  // reportable targets (set by threshold())
  uint64_t nincluded = 0;  // includable targets (set by threshold())

 private:
  std::vector<Hit> unsrt_;
  std::vector<std::size_t> order_;  // rank -> index into unsrt_
  bool sorted_ = true;
};

}  // namespace warpsearch::hmm
