// bench_db.cpp: packed-database benchmarks: make_db of the input (all six files) into a scratch directory.
#include "registry.hpp"
#include "warpsearch/db.hpp"

namespace warpsearch::bench {
namespace {

Work make_db_of_input(const Context& ctx) {
  const MakeDbResult made = make_db(ctx.input, ctx.scratch + "/db");
  Work work;
  work.bytes = ctx.input_bytes;
  work.residues = made.residues;
  work.records = made.sequences;
  return work;
}

const Registration kMakeDb{{
    .name = "makedb",
    .description = "make_db: read the input and write a packed database (length partitions, CRCs)",
    .headline = Headline::kBytes,
    .body = InternalRun{make_db_of_input},
}};

}  // namespace
}  // namespace warpsearch::bench
