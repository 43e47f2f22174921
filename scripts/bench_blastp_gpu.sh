#!/bin/bash
# Device run (issue 7): `warpsearch blastp --device gpu` and `--device cpu -num_threads 16` against BLAST+ 2.12
# `blastp -num_threads 16` on >= 1e6 database sequences: scripts/make_blastp_data.sh huge (50 shuffled copies
# of the 20,000 mmseqs2 example proteins + 115 planted homologs: 1,000,115 sequences, 453.0 M residues),
# query sets paper3 (the cuBLASTP paper's lengths: 127, 516, 1042 residues) and sw20 (the 20 SWIPE/CUDASW++
# queries, 144..5,478 residues, 41,752 in all). Modelled on run_bench.sh (issue 6, CPU threads).
#
#   bash scripts/bench_blastp_gpu.sh ["CBS modes"] [test targets...]      (from the repository root)
#
# Steps, each followed by its elapsed seconds:
#   1. configure build-gpu (Release, -DWARPSEARCH_CUDA=ON; only when it has no build.ninja) and build the
#      warpsearch target plus the test targets given (build log tail on failure); then run those tests
#      (WARPSEARCH_TESTDATA=.device/testdata, .device/blast on PATH, at most TEST_TIMEOUT s each; logs in $OUT)
#   2. the huge data into /tmp/blast-huge (not $OUT); kept while the machine stays warm, remade when the
#      generating scripts or COPIES change; db.fa's md5 is printed (COPIES=50, SEED 6:
#      a9be1fb8eb0723a780593c1c1c62ff82, as made on the workstation)
#   3. makeblastdb once (/tmp/blast-huge/blastdb/db); ours searches the same database (OURS_DB=blast)
#   4. scripts/bench_blastp.sh: per query set and -comp_based_stats mode (default "0"): blastp once, ours on
#      each device once, TIMING=1 (ours' --timing phases in the table), outputs compared (ours vs blastp,
#      gpu vs cpu), planted homologs found; runs still going at BUDGET s after the start are stopped, later
#      ones skipped, so the table always comes (the whole script stays under 9 minutes)
#   5. the summary table (last)
# Needs: .device/blast (blastp and makeblastdb packed by scripts/package_blastp_oracle.sh, and a copy of
# ../shared/data/sw_queries20.fasta as .device/blast/sw_queries20.fasta) and
# .device/testdata/prot (mmseqs_DB20k.fasta, mmseqs_QUERY500.fasta). Back in $OUT (small files only):
# cfg.log, build.log, test-*.log, data.log, makeblastdb.log, bench.log, runs.txt (the last 40 lines of each
# run's .cmd, .err and .time), diffs.txt (the first 100 lines of each diff); not the outputs.
# Environment (optional): COPIES [50], DEVICES ["gpu cpu"], THREADS [16], TIMING [1], OURS_DB [blast],
#   BUDGET [530] seconds, TEST_TIMEOUT [120], REPEAT [1], DATA_DIR [/tmp/blast-huge], BENCH_OUT [/tmp/bench-gpu].
set -u
T0=$(date +%s)
TL=$T0
step() {
  local now
  now=$(date +%s)
  echo "[$((now - T0)) s] $1 ($((now - TL)) s)"
  TL=$now
}
CBS_MODES=${1:-0}
shift $(($# > 0 ? 1 : 0))
TESTS=("$@")
COPIES=${COPIES:-50}
BUDGET=${BUDGET:-530}
DATA_DIR=${DATA_DIR:-/tmp/blast-huge}
BENCH_OUT=${BENCH_OUT:-/tmp/bench-gpu}
OUT=${OUT:-/tmp/run-gpu-bench-out}
mkdir -p "$OUT"
export WARPSEARCH_TESTDATA=$PWD/.device/testdata
echo "$(nproc) cores; $(lscpu | grep 'Model name' | sed 's/ \+/ /g'); $(python3 --version)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -2

# 1. build (+ tests)
if [[ ! -f build-gpu/build.ninja ]]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPSEARCH_CUDA=ON > "$OUT/cfg.log" 2>&1 ||
    { tail -30 "$OUT/cfg.log"; exit 1; }
fi
ninja -C build-gpu warpsearch "${TESTS[@]}" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
step "build (warpsearch ${TESTS[*]})"
for t in "${TESTS[@]}"; do
  bin=build-gpu/tests/$t
  [[ -x $bin ]] || bin=$(find build-gpu -name "$t" -type f -perm -u+x | head -1)
  if [[ -z $bin || ! -x $bin ]]; then
    echo "test $t: no binary"
    continue
  fi
  PATH=$PWD/.device/blast:$PATH timeout "${TEST_TIMEOUT:-120}" "$bin" > "$OUT/test-$t.log" 2>&1
  rc=$?
  echo "test $t: rc=$rc; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]' "$OUT/test-$t.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]' "$OUT/test-$t.log" | head -10
  step "test $t"
done

# 2. data
stamp="copies=$COPIES seed=${SEED:-6} $(cat scripts/make_blastp_data.sh scripts/plant_homologs.py scripts/pick_queries.py \
  .device/testdata/prot/mmseqs_DB20k.fasta .device/testdata/prot/mmseqs_QUERY500.fasta .device/blast/sw_queries20.fasta |
  md5sum | cut -c1-32)"
if [[ ! -f $DATA_DIR/.complete || $(cat "$DATA_DIR/.complete") != "$stamp" ]]; then
  rm -rf "$DATA_DIR"
  SW_QUERIES=.device/blast/sw_queries20.fasta scripts/make_blastp_data.sh "$DATA_DIR" huge --copies "$COPIES" \
    > "$OUT/data.log" 2>&1 || { tail -20 "$OUT/data.log"; exit 1; }
  echo "$stamp" > "$DATA_DIR/.complete"
  cat "$OUT/data.log"
else
  echo "data: kept from an earlier call ($stamp)"
fi
echo "db.fa md5 $(md5sum < "$DATA_DIR/db.fa" | cut -c1-32)$([[ $COPIES == 50 && ${SEED:-6} == 6 ]] &&
  echo " (expected a9be1fb8eb0723a780593c1c1c62ff82)"), $(du -m "$DATA_DIR/db.fa" | cut -f1) MB"
step "data (huge, $COPIES copies)"

# 3. makeblastdb
blastdb=$DATA_DIR/blastdb/db
if [[ ! -f $blastdb.stamp || $DATA_DIR/db.fa -nt $blastdb.stamp ]]; then
  rm -rf "$DATA_DIR/blastdb" && mkdir -p "$DATA_DIR/blastdb"
  .device/blast/makeblastdb -in "$DATA_DIR/db.fa" -dbtype prot -out "$blastdb" > "$OUT/makeblastdb.log" 2>&1 ||
    { tail -20 "$OUT/makeblastdb.log"; exit 1; }
  touch "$blastdb.stamp"
fi
step "makeblastdb ($(du -cm "$blastdb".* | tail -1 | cut -f1) MB)"

# 4. benchmark
left=$((T0 + BUDGET - $(date +%s)))
echo "bench: CBS \"$CBS_MODES\", devices ${DEVICES:-gpu cpu}, threads ${THREADS:-16}; deadline in $left s"
BLASTP=.device/blast/blastp MAKEBLASTDB=.device/blast/makeblastdb BUILD_DIR=build-gpu WS=build-gpu/src/warpsearch \
  OUT=$BENCH_OUT DB=$DATA_DIR/db.fa TRUTH=$DATA_DIR/truth.tsv BLASTDB=$blastdb \
  QUERY_SETS="$DATA_DIR/queries_paper3.fa $DATA_DIR/sw_queries20.fa" DEVICES="${DEVICES:-gpu cpu}" \
  THREADS="${THREADS:-16}" CBS="$CBS_MODES" TIMING="${TIMING:-1}" OURS_DB="${OURS_DB:-blast}" REPEAT="${REPEAT:-1}" \
  DEADLINE=$((T0 + BUDGET)) scripts/bench_blastp.sh > "$OUT/bench.log" 2>&1
rc=$?
# Each run's command, stderr and timing report in one file (few files come back from the device).
for f in "$BENCH_OUT"/runs/*.cmd "$BENCH_OUT"/runs/*.err "$BENCH_OUT"/runs/*.time; do
  [[ -f $f ]] && { echo "== $(basename "$f")"; tail -40 "$f"; }
done > "$OUT/runs.txt"
for f in "$BENCH_OUT"/runs/diff.*; do
  [[ -f $f ]] && { echo "== $(basename "$f")"; head -100 "$f"; }
done > "$OUT/diffs.txt"
grep -H "timing: gpu pairs" "$BENCH_OUT"/runs/*.err 2>/dev/null | sed 's#.*/runs/##' 
step "bench (rc=$rc)"

# 5. summary
sed -n '/^== blastp benchmark/,$p' "$OUT/bench.log" | grep . || tail -30 "$OUT/bench.log"
echo "total $(($(date +%s) - T0)) s"
exit "$rc"
