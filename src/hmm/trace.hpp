// Alignment traces of a profile to a sequence (HMMER 3.3.2's P7_TRACE, p7_trace.c): the state path
// S N..N B (M|D|I)... E (J..J B ... E)* C..C T with model node k and sequence position i per state, the
// optional per-residue posterior probabilities, and the domain index (B/E positions, first/last matched
// residue and node of each domain). Contents: TraceState, Trace (reuse, append, append_with_pp, reverse,
// index, domain_count, expected_accuracy) and validate_trace (p7_trace_Validate's checks for
// profile traces, for tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpsearch::hmm {

/// State types of a trace, numbered as HMMER's p7T_* (hmmer.h).
enum TraceState : int8_t {
  kTBogus = 0,
  kTM = 1,   ///< match state Mk, emits i
  kTD = 2,   ///< delete state Dk, silent
  kTI = 3,   ///< insert state Ik, emits i
  kTS = 4,   ///< start
  kTN = 5,   ///< N-terminal flank (emits on transition)
  kTB = 6,   ///< begin of a domain
  kTE = 7,   ///< end of a domain
  kTC = 8,   ///< C-terminal flank (emits on transition)
  kTT = 9,   ///< terminal
  kTJ = 10,  ///< joining segment between domains (emits on transition)
  kTX = 11,  ///< missing data (core traces only; never produced by the search pipeline)
};
inline constexpr int kTraceNStateTypes = 12;

/// A traceback (P7_TRACE). Invariant: st, k, i (and pp when has_pp) all have exactly N elements.
/// Emit-on-transition states N, C, J carry their residue on the *second and later* state of a run: the
/// first N (C, J) of a run has i = 0 (and pp = 0), as in HMMER. Silent states have i = 0, pp = 0; states
/// outside the core model have k = 0. Traces built by DP traceback are appended right to left and then
/// reverse()d; reverse() moves the N/C/J residues so the convention above holds in the final order.
///
/// Domain index (valid after index(); reuse() clears it): ndom domains; for domain d, tfrom[d]/tto[d] are
/// the trace positions of its B and E states, sqfrom[d]/sqto[d] the first/last residue emitted by a match
/// state (1..L), hmmfrom[d]/hmmto[d] the first/last match node (1..M). Like HMMER, a trace whose index has
/// not been built has ndom == 0 (consumers such as p7_alidisplay_Create branch on ndom > 0).
struct Trace {
  int N = 0;               ///< number of states
  int M = 0;               ///< model length (callers set it, as HMMER's tracebacks do)
  int L = 0;               ///< sequence length (callers set it)
  std::vector<int8_t> st;  ///< TraceState codes [0..N-1]
  std::vector<int> k;      ///< node index 1..M for M/D/I, else 0
  std::vector<int> i;      ///< sequence position 1..L for emitting states, else 0
  std::vector<float> pp;   ///< posterior probability of the emitted residue, else 0 (only when has_pp)
  bool has_pp = false;     ///< HMMER's tr->pp != NULL (p7_trace_CreateWithPP)

  int ndom = 0;
  std::vector<int> tfrom, tto, sqfrom, sqto, hmmfrom, hmmto;

  Trace() = default;
  explicit Trace(bool with_pp) : has_pp(with_pp) {}

  /// p7_trace_Reuse: empties the trace (N = M = L = ndom = 0), keeping capacity and has_pp.
  void reuse();

  /// p7_trace_Append: adds a state with HMMER's i/k conventions (N/C/J get i only when the previous state
  /// is the same type; silent states get i = 0; k only for M/D/I). When has_pp the pp entry is set to 0
  /// (HMMER leaves it unset; no consumer of such traces reads it).
  void append(TraceState s, int kk, int ii);

  /// p7_trace_AppendWithPP: as append, also storing pp for emitting states (0 for silent ones and for the
  /// first state of an N/C/J run). Requires has_pp.
  void append_with_pp(TraceState s, int kk, int ii, float p);

  /// p7_trace_Reverse: converts a right-to-left built trace into left-to-right order, first shifting each
  /// N/C/J residue from the later to the earlier state of its pair so the "first of a run is silent"
  /// convention holds after reversal. Invalidates nothing else (the index must be built afterwards).
  void reverse();

  /// p7_trace_Index: builds the domain index (see above) by one pass over the states.
  void index();

  /// p7_trace_GetDomainCount: ndom if indexed, else the number of B states.
  int domain_count() const;

  /// p7_trace_GetExpectedAccuracy: float sum of pp over the trace, in trace order. Requires has_pp.
  float expected_accuracy() const;
};

/// p7_trace_Validate for profile traces of a digital sequence without gaps (dsq[1..L] all residues,
/// dsq[0] and dsq[L+1] sentinels): checks the state grammar, the k and i progressions, the N/C/J and pp
/// conventions and the coverage of every residue. Returns an empty string when valid, else the reason.
std::string validate_trace(const Trace& tr, const uint8_t* dsq, int L);

}  // namespace warpsearch::hmm
