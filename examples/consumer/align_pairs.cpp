// align_pairs.cpp: using warpsearch's batch alignment API from a C++ pipeline, the way assemblers use
// ADEPT's driver: configure once, stream pairs in batches, receive results asynchronously.
//
//   align_pairs QUERIES.fa TARGETS.fa [BATCH_PAIRS]
// aligns the i-th query with the i-th target (local, BLOSUM62, gap open 11 extend 1; DNA inputs are
// detected and scored +2/-3, open 5 extend 2) and prints "query target score qbeg qend tbeg tend cigar"
// with 0-based half-open coordinates. Batches run on every visible GPU, else on all CPU cores.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "warpsearch/align.hpp"
#include "warpsearch/error.hpp"
#include "warpsearch/seqio.hpp"

namespace ws = warpsearch;

namespace {

struct Chunk {
  std::vector<std::pair<std::string, std::string>> names;
  std::future<std::vector<ws::align::Result>> results;
};

void print(Chunk& chunk) {
  const std::vector<ws::align::Result> results = chunk.results.get();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ws::align::Result& r = results[i];
    std::printf("%s\t%s\t%d\t%u\t%u\t%u\t%u\t%s\n", chunk.names[i].first.c_str(),
                chunk.names[i].second.c_str(), r.score, r.query_begin, r.query_end, r.target_begin,
                r.target_end, r.cigar.empty() ? "*" : r.cigar.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: align_pairs QUERIES.fa TARGETS.fa [BATCH_PAIRS]\n");
    return 2;
  }
  const std::size_t batch_pairs = argc == 4 ? std::strtoull(argv[3], nullptr, 10) : 4096;
  try {
    ws::SequenceReader queries(argv[1]);  // the alphabet is guessed from the start of the file
    ws::ReaderOptions options;
    options.alphabet = queries.alphabet().kind();  // targets use the queries' alphabet
    ws::SequenceReader targets(argv[2], options);
    ws::Sequence q, t;
    if (!queries.next(q) || !targets.next(t)) {
      std::fprintf(stderr, "align_pairs: an input file is empty\n");
      return 4;
    }
    const bool dna = queries.alphabet().is_nucleotide();
    ws::align::Config config;
    if (dna) {
      config.matrix = ws::ScoringMatrix::dna(2, -3);
      config.gaps = {5, 2};
    }
    config.traceback = true;
    ws::align::Aligner aligner(config);
    std::fprintf(stderr, "align_pairs: %s\n", aligner.describe().c_str());

    std::vector<Chunk> in_flight;  // at most two batches queued: one running, one being filled
    Chunk chunk;
    ws::align::Batch batch;
    bool more = true;
    while (more) {
      batch.add(q.residues, t.residues);
      chunk.names.emplace_back(q.name, t.name);
      const bool got_q = queries.next(q), got_t = targets.next(t);
      if (got_q != got_t)
        throw ws::Error(ws::ErrorKind::kInput, "the two files hold different numbers of sequences");
      more = got_q;
      if (batch.size() == batch_pairs || !more) {
        chunk.results = aligner.submit(std::move(batch));
        batch = {};
        in_flight.push_back(std::move(chunk));
        chunk = {};
        if (in_flight.size() == 2) {
          print(in_flight.front());
          in_flight.erase(in_flight.begin());
        }
      }
    }
    for (Chunk& c : in_flight) print(c);
    return 0;
  } catch (const ws::Error& e) {
    std::fprintf(stderr, "align_pairs: %s\n", e.what());
    return ws::exit_code(e.kind());
  }
}
