// reference.cpp: the scan DP of model.hpp computed literally, column by column in O(m) memory
// (reference_columns, reference_scan). Also the inner loop of the CPU engine (make_cpu_runner).
//
// Layout: one working row per query row i holding H(i, j-1), E(i, j-1) and their origins; F and the
// diagonal H(i-1, j-1) travel down the column in registers. An origin (qstart, tstart) is packed into
// one 64-bit word (qstart in the high half); kNoOrigin in both halves packs to all ones (kNone). Inside
// the loop a zero value's origin is left unspecified (a positive value's origin always comes from a
// positive predecessor or is fresh, so it is never read); exported states and column records give
// zero values kNone, i.e. (kNoOrigin, kNoOrigin), as model.hpp requires. Scores come from a query
// profile (profile[c * m + i] = s(q_i, c)) so the inner loop reads one contiguous int8 row per column.
#include "scan/reference.hpp"

#include <algorithm>
#include <string>

#include "warpsearch/error.hpp"

namespace warpsearch::scan {
namespace {

using Origin = std::uint64_t;
constexpr Origin kNone = ~Origin{0};

inline Origin pack(std::int32_t q, std::int32_t t) {
  return (Origin{static_cast<std::uint32_t>(q)} << 32) | Origin{static_cast<std::uint32_t>(t)};
}
inline std::int32_t origin_q(Origin o) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(o >> 32));
}
inline std::int32_t origin_t(Origin o) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(o)); }

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorKind::kInternal, "scan reference_columns: " + what);
}

}  // namespace

void reference_columns(const ScanModel& model, std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> target, std::int64_t start, std::int64_t own_begin,
                       std::int64_t end, const ColumnState* initial, std::span<ColumnRecord> records,
                       ColumnState* probe, ColumnState* end_state) {
  const auto m64 = static_cast<std::int64_t>(query.size());
  const auto n64 = static_cast<std::int64_t>(target.size());
  if (!(0 <= start && start <= own_begin && own_begin <= end && end <= n64))
    fail("column range [" + std::to_string(start) + ", " + std::to_string(own_begin) + ", " +
         std::to_string(end) + ") outside the target (" + std::to_string(n64) + " columns)");
  if (static_cast<std::int64_t>(records.size()) < end - own_begin) fail("record span too short");
  if (initial != nullptr && static_cast<std::int64_t>(initial->size()) != m64)
    fail("initial state has " + std::to_string(initial->size()) + " rows, query " + std::to_string(m64));
  if (model.open < 0 || model.extend < 0) fail("negative gap costs");
  if (!fits_int32(model, m64, n64)) fail("lengths exceed the 32-bit score/position range");

  const std::size_t m = query.size();
  // Query profile: profile[c * m + i] = s(q_i, c).
  std::vector<std::int8_t> profile(static_cast<std::size_t>(kMaxCodes) * m);
  for (std::size_t i = 0; i < m; ++i) {
    if (query[i] >= kMaxCodes) fail("query code out of range");
    for (std::size_t c = 0; c < static_cast<std::size_t>(kMaxCodes); ++c)
      profile[c * m + i] = model.table[static_cast<std::size_t>(query[i]) * kMaxCodes + c];
  }

  // Row state after the previous column.
  std::vector<std::int32_t> hrow(m, 0), erow(m, 0);
  std::vector<Origin> horow(m, kNone), eorow(m, kNone);
  if (initial != nullptr) {
    for (std::size_t i = 0; i < m; ++i) {
      const RowState& r = (*initial)[i];
      hrow[i] = r.h;
      erow[i] = r.e;
      horow[i] = pack(r.h_qstart, r.h_tstart);
      eorow[i] = pack(r.e_qstart, r.e_tstart);
    }
  }
  // Zero values get kNone origins here (the loop leaves theirs unspecified).
  auto export_state = [&](ColumnState& out) {
    out.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      const Origin oh = hrow[i] > 0 ? horow[i] : kNone;
      const Origin oe = erow[i] > 0 ? eorow[i] : kNone;
      out[i] = RowState{hrow[i], erow[i], origin_q(oh), origin_t(oh), origin_q(oe), origin_t(oe)};
    }
  };

  const std::int32_t gap_first = model.open + model.extend;  // O + X: opening a gap
  const std::int32_t gap_ext = model.extend;                 // X
  std::int32_t* __restrict h = hrow.data();
  std::int32_t* __restrict e = erow.data();
  Origin* __restrict ho = horow.data();
  Origin* __restrict eo = eorow.data();

  for (std::int64_t j = start; j < end; ++j) {
    const std::uint8_t tj = target[static_cast<std::size_t>(j)];
    if (tj >= kMaxCodes) fail("target code out of range at column " + std::to_string(j));
    const std::int8_t* __restrict sc = profile.data() + static_cast<std::size_t>(tj) * m;
    const auto col = static_cast<Origin>(static_cast<std::uint32_t>(j));

    std::int32_t hdiag = 0;  // H(i-1, j-1); 0 above the table
    Origin odiag = kNone;
    std::int32_t hup = 0;  // H(i-1, j)
    Origin oup = kNone;
    std::int32_t fup = 0;  // F(i-1, j)
    Origin ofup = kNone;
    std::int32_t best = 0;  // column record: largest H > 0, smallest row on ties
    std::int32_t best_row = -1;

    for (std::size_t i = 0; i < m; ++i) {
      // Origins of zero values are left as they fall (never read: a positive value's origin always
      // comes from a positive predecessor or is fresh) and canonicalized to kNone on export.
      const std::int32_t hleft = h[i];
      const Origin oleft = ho[i];
      const std::int32_t eleft = e[i];
      const Origin oeleft = eo[i];
      // E(i,j): open from H(i,j-1) on ties.
      const std::int32_t e_open = hleft - gap_first;
      const std::int32_t e_ext = eleft - gap_ext;
      const Origin eorig = e_open >= e_ext ? oleft : oeleft;
      const std::int32_t ev = std::max(std::max(e_open, e_ext), 0);
      // F(i,j): the same rule down the column.
      const std::int32_t f_open = hup - gap_first;
      const std::int32_t f_ext = fup - gap_ext;
      const Origin forig = f_open >= f_ext ? oup : ofup;
      const std::int32_t fv = std::max(std::max(f_open, f_ext), 0);
      // D(i,j): continues H(i-1,j-1)'s path when that is positive, else starts a new one here.
      const std::int32_t dv = hdiag + sc[i];
      const Origin dorig = hdiag > 0 ? odiag : ((static_cast<Origin>(i) << 32) | col);
      // H: the first of D, E, F equal to the maximum.
      // (D >= max(E, F) picks D; otherwise E >= F picks E; a 0 maximum's origin is never read.)
      const std::int32_t efv = std::max(ev, fv);
      const Origin eforig = ev >= fv ? eorig : forig;
      const std::int32_t hv = std::max(std::max(dv, efv), 0);
      const Origin horig = dv >= efv ? dorig : eforig;
      // Column record: strict > keeps the smallest row among equal maxima (its origin is read from
      // ho[best_row] after the column).
      const bool better = hv > best;
      best = better ? hv : best;
      best_row = better ? static_cast<std::int32_t>(i) : best_row;

      hdiag = hleft;
      odiag = oleft;
      h[i] = hv;
      ho[i] = horig;
      e[i] = ev;
      eo[i] = eorig;
      hup = hv;
      oup = horig;
      fup = fv;
      ofup = forig;
    }

    if (j >= own_begin) {
      const Origin best_origin = best > 0 ? ho[static_cast<std::size_t>(best_row)] : kNone;
      records[static_cast<std::size_t>(j - own_begin)] =
          ColumnRecord{best, best_row, origin_q(best_origin), origin_t(best_origin)};
    }
    if (probe != nullptr && j + 1 == own_begin && own_begin > start) export_state(*probe);
  }
  if (end_state != nullptr) export_state(*end_state);
}

std::vector<ColumnRecord> reference_scan(const ScanModel& model, std::span<const std::uint8_t> query,
                                         std::span<const std::uint8_t> target) {
  std::vector<ColumnRecord> records(target.size());
  reference_columns(model, query, target, 0, 0, static_cast<std::int64_t>(target.size()), nullptr, records,
                    nullptr, nullptr);
  return records;
}

}  // namespace warpsearch::scan
