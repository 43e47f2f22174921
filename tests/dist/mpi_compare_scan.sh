#!/usr/bin/env bash
# mpi_compare_scan.sh: end-to-end test of the distributed `warpsearch scan` (docs/SCAN.md "Under MPI",
# docs/MPI.md). --mpi-split db (the default): the ranks share the sections of every target; --mpi-split
# queries: query i is scanned by rank i mod R against the whole target file; rank 0 writes the queries in
# order. Runs each scan as one process and under `mpiexec -n R` for R = 1..5 and compares the outputs byte
# for byte. Small DNA data (pieces of mitochondrial genomes as queries, two genomes as the targets); TSV,
# SAM, PAF and the view; both splits; stdout and -o; one query, more ranks than queries; tiny section
# overlaps (fixups whose left state is on another rank, wide fixups split into parts; strands on halves
# of the ranks or in turns); the --stats lines
# and the summary line (rank 0 only, in query order). Failures: a missing target file, a bad query record
# (found in a later round, after earlier queries were written), a full output device, stdin as --query or
# --target under MPI: non-zero exit, one message, no output file left behind.
#
#   mpi_compare_scan.sh WARPSEARCH MPIEXEC SOURCE_DIR TESTDATA_DIR WORK_DIR
set -euo pipefail
ws=$1 mpiexec=$2 src=$3 testdata=$4 work=$5
# WARPSEARCH_MPI_TESTS=small (scripts/test.sh sets it for the ASan/UBSan run): the bundled data only, so
# that the comparisons stay short under the sanitizers; the Release run uses the real test data too.
if [[ ${WARPSEARCH_MPI_TESTS:-full} == small ]]; then testdata=/nonexistent; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
rm -rf "$work"; mkdir -p "$work"; cd "$work"
failures=0 compared=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# MPIEXEC_FLAGS: launcher options (CTest sets "--oversubscribe --bind-to none" for Open MPI).
read -r -a mpiexec_flags <<< "${MPIEXEC_FLAGS---oversubscribe --bind-to none}"
mpi() { local n=$1; shift; "$mpiexec" "${mpiexec_flags[@]}" -n "$n" "$ws" -q "$@"; }
same() {  # same FILE_A FILE_B WHAT
  compared=$((compared + 1))
  if ! cmp -s "$1" "$2"; then
    fail "$3: $2 differs from $1"; diff "$1" "$2" | head -20 >&2
  fi
}
# piece FILE NAME FROM LENGTH: residues FROM.. (1-based) of the one-record FASTA FILE as record NAME.
piece() {
  awk -v name="$2" -v from="$3" -v len="$4" '!/^>/{s = s $0} END{print ">" name; print substr(s, from, len)}' "$1"
}

# --- data: human mitochondria from the repository; mouse, chicken and fugu with the real test data.
human=$src/data/humanMito.fa
genomes=("$human")
for g in mouse chicken fugu; do
  [[ -f $testdata/dna/${g}Mito.fa ]] && genomes+=("$testdata/dna/${g}Mito.fa")
done
# Seven queries of 100 residues, from every genome at hand (the same genome twice when only one); short, so
# that the test also fits CTest's limit under ASan.
: > q.fa
k=0
for start in 1 3001 6001 9001 12001 14001 15001; do
  g=${genomes[$((k % ${#genomes[@]}))]}
  piece "$g" "q$k-$(basename "$g" .fa)-$start" "$start" 100 >> q.fa
  k=$((k + 1))
done
# Targets: the first two genomes (human alone: human and its second half as another record); about 33000
# residues, so that one process scans the seven queries in a few seconds on one CPU core.
if ((${#genomes[@]} >= 2)); then
  cat "${genomes[0]}" "${genomes[1]}" > t.fa
else
  { cat "$human"; piece "$human" humanMito_second_half 8001 8569; } > t.fa
fi
awk '/^>/{n++} n<=2' q.fa > q2.fa   # two queries
awk '/^>/{n++} n==3' q.fa > q1.fa   # one query
echo "queries: $(grep -c '>' q.fa), targets: $(grep -c '>' t.fa) ($(grep -v '>' t.fa | tr -d '\n' | wc -c) residues)"

# --- every format, R = 1..4, both --mpi-split values
for fmt in tsv sam paf view; do
  top=(--top 20)
  [[ $fmt == view ]] && top=(--top 4)
  "$ws" -q --threads 2 scan --query q.fa --target t.fa --format "$fmt" "${top[@]}" -o "all-1.$fmt"
  [[ -s all-1.$fmt ]] || fail "one process wrote nothing ($fmt)"
  for n in 1 2 3 4; do
    split=db
    ((n % 2)) && split=queries
    mpi "$n" --threads 1 --mpi-split "$split" scan --query q.fa --target t.fa --format "$fmt" "${top[@]}" \
      -o "all-mpi$n.$fmt" || fail "scan -n $n $fmt"
    same "all-1.$fmt" "all-mpi$n.$fmt" "scan -n $n --format $fmt (--mpi-split $split)"
  done
done
# stdout, plus strand only, --no-traceback.
"$ws" -q scan --query q.fa --target t.fa --strand plus --no-traceback --top 7 > plus1.tsv
mpi 3 scan --query q.fa --target t.fa --strand plus --no-traceback --top 7 > plus3.tsv || fail "scan -n 3 (stdout)"
same plus1.tsv plus3.tsv "scan -n 3 --strand plus --no-traceback (stdout)"
# One query, two queries, more ranks than queries (target split: every rank works on each query).
for fmt in tsv sam; do
  for set in q1 q2; do
    "$ws" -q scan --query "$set.fa" --target t.fa --format "$fmt" --top 10 > "$set-1.$fmt"
    for n in 2 3 5; do
      mpi "$n" --threads 1 scan --query "$set.fa" --target t.fa --format "$fmt" --top 10 > "$set-$n.$fmt" ||
        fail "scan $set -n $n $fmt"
      same "$set-1.$fmt" "$set-$n.$fmt" "scan -n $n, $(grep -c '>' "$set.fa") quer(ies) ($fmt)"
    done
  done
done
# Target split with tiny pass-1 overlaps: most sections start from a wrong state and are recomputed from
# their left neighbour's end state, which is often on another rank; one long record (the human genome 12
# times, 200 kb) makes the recomputed sections wide enough to be split into parts (--threads 2). With an
# even number of ranks each strand has half of them (4 ranks: two per strand, fixups crossing between
# them); with 3 the strands take turns on all three. The same query split for comparison.
{ echo ">humanMito_x12"; for _ in $(seq 12); do grep -v '>' "$human"; done; } > long.fa
for th in 1 2; do
  "$ws" -q --threads "$th" scan --query q2.fa --target long.fa --top 40 --overlap 40 --format sam > "long-1-$th.sam"
  for n in 2 3 4; do
    for split in db queries; do
      mpi "$n" --threads "$th" --mpi-split "$split" scan --query q2.fa --target long.fa --top 40 --overlap 40 \
        --format sam > "long-$n-$th-$split.sam" || fail "scan long -n $n --threads $th --mpi-split $split"
      same "long-1-$th.sam" "long-$n-$th-$split.sam" "scan -n $n --overlap 40 --threads $th --mpi-split $split"
    done
  done
done
# No alignment at all (--min-score too high): the header alone, as in one process.
"$ws" -q scan --query q2.fa --target t.fa --format sam --min-score 1000000 > none1.sam
mpi 3 scan --query q2.fa --target t.fa --format sam --min-score 1000000 > none3.sam || fail "scan -n 3 no hits"
same none1.sam none3.sam "scan -n 3, no alignments (sam)"

# --- --stats lines (rank 0, in query order) and the summary line (rank 0 only, once)
"$mpiexec" "${mpiexec_flags[@]}" -n 3 "$ws" scan --query q.fa --target t.fa --top 5 --stats \
  2> summary.err > /dev/null || fail "scan -n 3 with --stats and the summary line"
grep '^scan stats: query' summary.err | sed 's/^scan stats: query \([^ ]*\) .*/\1/' > stats-order.txt
grep '>' q.fa | sed 's/^>//' > query-order.txt
same query-order.txt stats-order.txt "scan -n 3 --stats: one line per query, in query order"
[[ $(grep -c "^scan: $(grep -c '>' q.fa) queries" summary.err) -eq 1 ]] ||
  { fail "summary line not printed once"; cat summary.err >&2; }

# --- failures: non-zero exit, one message (from rank 0), no output file left behind
expect_failure() {  # expect_failure WHAT N STATUS PATTERN -- ARGS...: runs `mpi N ARGS`
  local what=$1 n=$2 status=$3 pattern=$4; shift 5
  set +e
  mpi "$n" "$@" > bad.stdout 2> bad.err < q.fa
  local rc=$?
  set -e
  [[ $rc -eq $status ]] || { fail "$what: exit $rc, expected $status"; cat bad.err >&2; }
  [[ $(grep -c -E -e "$pattern" bad.err) -eq 1 ]] ||
    { fail "$what: expected one message matching '$pattern'"; cat bad.err >&2; }
  [[ $(grep -c '^warpsearch:' bad.err) -eq 1 ]] || { fail "$what: more than one message"; cat bad.err >&2; }
  [[ ! -s bad.stdout ]] || fail "$what: wrote on stdout"
}
expect_failure "missing target" 3 3 "rank 0 of 3: .*no_such_target.fa" -- \
  scan --query q.fa --target no_such_target.fa -o bad.out
# A bad query record (an empty sequence) in the third round of two ranks: two rounds written before.
{ awk '/^>/{n++} n<=4' q.fa; echo ">empty"; awk '/^>/{n++} n>=5' q.fa; } > badq.fa
expect_failure "bad query record" 2 4 "rank 0 of 2: .*badq.fa:[0-9]+: .*empty" -- \
  scan --query badq.fa --target t.fa --top 5 --format sam -o bad.out
expect_failure "--query - under MPI" 2 2 "--query - : under MPI .*cannot be stdin" -- \
  scan --query - --target t.fa -o bad.out
expect_failure "--target - under MPI" 2 2 "--target - : under MPI .*cannot be stdin" -- \
  scan --query q1.fa --target - -o bad.out
# Rank 0 cannot write (a full device): found when the output is flushed, after every rank has finished.
if [[ -w /dev/full ]]; then
  expect_failure "full output device" 3 3 "rank 0 of 3: /dev/full: write failed" -- \
    scan --query q.fa --target t.fa --top 5 -o /dev/full
fi
shopt -s nullglob
leftover=(bad.out* ./*.tmp.*)
shopt -u nullglob
((${#leftover[@]} == 0)) || fail "failed runs left files behind: ${leftover[*]}"

if ((failures)); then echo "$failures of $compared comparison(s) or checks failed" >&2; exit 1; fi
echo "all $compared scan outputs under MPI identical to one process"
