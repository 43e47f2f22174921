// gpu_stage.cpp: stage_reference, the CPU reference of the GPU seed stage (gpu_stage.hpp): per subject
// and query, TwoHitFinder over the query's lookup table as SubjectScanner runs it, sort_ungapped_hsps,
// then screen_preliminary with the GPU's DP column (a ring of the same size).
#include "blast/gpu_stage.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "warpsearch/error.hpp"

namespace warpsearch::blast {

StageOutput stage_reference(std::span<const QueryContext* const> queries, std::span<const Residues> subjects,
                            bool keep_all, int ring) {
  if (ring < 1 || !std::has_single_bit(static_cast<unsigned>(ring)))
    throw Error(ErrorKind::kInternal, "stage_reference: the ring size is not a power of two");
  StageOutput out;
  std::vector<TwoHitFinder> finders;
  std::vector<ScreenParams> params;
  finders.reserve(queries.size());
  for (const QueryContext* c : queries) {
    finders.emplace_back(c->query(), c->scoring(), c->ungapped_params());
    params.push_back(screen_params(*c));
  }
  std::vector<XdropCell> column(static_cast<std::size_t>(ring));
  const xdrop::RingColumn col{column.data(), ring - 1, 1};
  std::vector<UngappedHsp> ungapped;
  for (std::size_t si = 0; si < subjects.size(); ++si) {
    const Residues subject = subjects[si];
    if (subject.size() > kGpuMaxSubjectLength) continue;
    const auto n = static_cast<std::int32_t>(subject.size());
    for (std::size_t qi = 0; qi < queries.size(); ++qi) {
      const QueryContext& c = *queries[qi];
      const AaLookupTable& table = c.table();
      const int w = table.word_size();
      const std::uint32_t word_mask = table.word_mask();
      TwoHitFinder& finder = finders[qi];
      ungapped.clear();
      finder.begin_subject(subject, ungapped);
      if (n >= w) {
        std::uint32_t index = 0;
        for (int k = 0; k < w - 1; ++k)
          index = (index << kLookupCharBits) | subject[static_cast<std::size_t>(k)];
        for (std::int32_t s = 0; s + w <= n; ++s) {
          index = ((index << kLookupCharBits) | subject[static_cast<std::size_t>(s + w - 1)]) & word_mask;
          if (!table.present(index)) continue;
          for (const std::uint32_t q : table.hits(index)) finder.hit(static_cast<std::int32_t>(q), s);
        }
      }
      const UngappedCounts uc = finder.end_subject();
      out.counts.word_hits += uc.hits;
      out.counts.ungapped_extensions += uc.extended;
      out.counts.ungapped_saved += uc.saved;
      if (ungapped.empty()) continue;
      sort_ungapped_hsps(ungapped);
      StagePair pair;
      pair.subject = static_cast<std::uint32_t>(si);
      pair.query = static_cast<std::uint32_t>(qi);
      pair.count = static_cast<std::uint32_t>(ungapped.size());
      ScreenCounts sc;
      const Residues q = c.query();
      pair.screen = pair.count > kStageScreenMaxHsps
                        ? ScreenResult::kFull
                        : screen_preliminary(q.data(), static_cast<int>(q.size()), subject.data(), n,
                                             c.scoring().row(0), ungapped.data(),
                                             static_cast<int>(ungapped.size()), params[qi], col, &sc);
      if (pair.screen == ScreenResult::kEmpty) {
        out.counts.gapped_extensions += sc.gapped_extensions;
        out.counts.redone_subjects += sc.redone;
      }
      if (keep_all || pair.screen == ScreenResult::kFull) {
        pair.first = static_cast<std::uint32_t>(out.hsps.size());
        out.hsps.insert(out.hsps.end(), ungapped.begin(), ungapped.end());
      }
      out.pairs.push_back(pair);
    }
  }
  return out;
}

}  // namespace warpsearch::blast
