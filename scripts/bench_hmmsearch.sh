#!/usr/bin/env bash
# bench_hmmsearch.sh: warpsearch hmmsearch against HMMER 3.3.2's hmmsearch on one machine, the numbers of
# docs/PERFORMANCE.md: the per-filter throughput at 1 thread, the whole search at 1..N threads (thread
# scaling), and an identity check of the two tblout/domtblout tables on the benchmark database.
#
#   scripts/bench_hmmsearch.sh            (from anywhere; builds into $BUILD_DIR when it has no binaries)
#
# Environment (all optional):
#   BUILD_DIR   build folder (default build/bench-hmm; configured Release, CUDA off: the search is CPU-only)
#   OUT         folder for the database, CSVs and logs (default $BUILD_DIR/bench-hmm-out)
#   THREADS     thread counts of the scaling runs (default "1 2 4 8 16")
#   MODELS      model files searched, one bench input model each (default: Pkinase and globins4 of the
#               test data)
#   COPIES      shuffled copies of the 20k UniProt set in the database (default 4: ~36M residues)
#   PLANTED     sequences emitted per model and planted (default 200)
#   REPEAT      measured runs per entry (default 3)
#   FILTERS     1: also the per-filter entries at 1 thread (default 1)
#   DB          where the benchmark database is written (default $OUT/hmmdb.fa; reused when present)
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh); hmmsearch/hmmemit/esl-shuffle are taken from
#               PATH or its bin/ folder
set -euo pipefail
cd "$(dirname "$0")/.."
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
BUILD_DIR=${BUILD_DIR:-build/bench-hmm}
OUT=${OUT:-$BUILD_DIR/bench-hmm-out}
THREADS=${THREADS:-1 2 4 8 16}
MODELS=${MODELS:-$testdata/hmm/Pkinase.hmm $testdata/hmm/globins4.hmm}
COPIES=${COPIES:-4}
PLANTED=${PLANTED:-200}
REPEAT=${REPEAT:-3}
FILTERS=${FILTERS:-1}
export PATH="$PATH:$testdata/bin" WARPSEARCH_TESTDATA="$testdata"
mkdir -p "$OUT"

if [[ ! -x $BUILD_DIR/bench/warpsearch-bench || ! -x $BUILD_DIR/src/warpsearch ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPSEARCH_CUDA=OFF > "$OUT/configure.log"
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target warpsearch-bench warpsearch_cli > "$OUT/build.log"
fi
bench=$BUILD_DIR/bench/warpsearch-bench
ws=$BUILD_DIR/src/warpsearch

db=${DB:-$OUT/hmmdb.fa}
if [[ ! -s $db ]]; then
  # shellcheck disable=SC2086
  scripts/make_hmm_db.sh "$db" "$testdata/prot/mmseqs_DB20k.fasta" "$COPIES" "$PLANTED" 1 $MODELS
fi
residues=$(grep -v '^>' "$db" | tr -d '\n' | wc -c)
echo "database: $db, $(grep -c '^>' "$db") sequences, $residues residues"

summary=()
for model in $MODELS; do
  name=$(basename "$model" .hmm)
  export WARPSEARCH_BENCH_HMM=$model
  # Identity: our tables against HMMER's (comment lines and column padding aside).
  "$ws" hmmsearch --cpu "$(nproc)" --noali -o /dev/null --tblout "$OUT/$name.ws.tbl" \
    --domtblout "$OUT/$name.ws.dom" "$model" "$db"
  hmmsearch --cpu "$(nproc)" --noali -o /dev/null --tblout "$OUT/$name.h3.tbl" \
    --domtblout "$OUT/$name.h3.dom" "$model" "$db"
  same=yes
  for t in tbl dom; do
    if ! diff <(grep -v '^#' "$OUT/$name.ws.$t" | tr -s ' ') <(grep -v '^#' "$OUT/$name.h3.$t" | tr -s ' ') \
        > "$OUT/$name.$t.diff"; then
      same=no
    fi
  done
  summary+=("$name: tblout/domtblout identical to hmmsearch: $same ($(grep -vc '^#' "$OUT/$name.h3.tbl") targets, $(grep -vc '^#' "$OUT/$name.h3.dom") domains)")

  if [[ $FILTERS == 1 ]]; then
    "$bench" run cpu-hmm-msv cpu-hmm-viterbi cpu-hmm-forward peer:hmmsearch-msv peer:hmmsearch-viterbi \
      --input "$db" --threads 1 --repeat "$REPEAT" --csv "$OUT/$name.filters.csv" | tee "$OUT/$name.filters.txt"
  fi
  for t in $THREADS; do
    "$bench" run hmmsearch peer:hmmsearch --input "$db" --threads "$t" --repeat "$REPEAT" \
      --csv "$OUT/$name.t$t.csv" | tee "$OUT/$name.t$t.txt"
  done
done

echo
echo "== summary (median seconds; GCUPS = M x residues / s)"
for model in $MODELS; do
  name=$(basename "$model" .hmm)
  echo "-- $name"
  for f in "$OUT"/"$name".filters.csv "$OUT"/"$name".t*.csv; do
    [[ -f $f ]] || continue
    python3 - "$f" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"  {r['name']:<24} threads={r['threads']:>3} median_s={float(r['median_s']):8.3f} "
          f"GCUPS={float(r['gcups'] or 0):8.2f} peak_MiB={float(r['peak_rss_mib'] or 0):7.0f}")
PY
  done
done
printf '%s\n' "${summary[@]}"
