#!/usr/bin/env bash
# mpi_compare_sw.sh: end-to-end test of distributed swsearch (docs/MPI.md). Runs each search as one process
# and under `mpiexec --oversubscribe -n R` and compares the outputs byte for byte: the report (alignments),
# tabular output with alignment fields, --noalign; database split on FASTA, packed and (when makeblastdb is
# installed) BLAST+ databases, and the query split; --top 3 (the cut falls between ranks); -E with several
# batches per shard; ties across shards (identical sequences: the lowest database ids win); more ranks
# than sequences (empty shards); DNA. Failures: a missing database (one message naming the rank and file,
# non-zero exit, no output file) and stdin under MPI (usage error). Kept small: it also runs under ASan.
#
#   mpi_compare_sw.sh WARPSEARCH MPIEXEC SOURCE_DIR TESTDATA_DIR WORK_DIR
set -euo pipefail
ws=$1 mpiexec=$2 src=$3 testdata=$4 work=$5
# WARPSEARCH_MPI_TESTS=small (scripts/test.sh sets it for the ASan/UBSan run): the bundled data only, so
# that the comparisons stay short under the sanitizers; the Release run uses the real test data too.
if [[ ${WARPSEARCH_MPI_TESTS:-full} == small ]]; then testdata=/nonexistent; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
rm -rf "$work"; mkdir -p "$work"; cd "$work"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# MPIEXEC_FLAGS: launcher options (CTest sets "--oversubscribe --bind-to none" for Open MPI).
read -r -a mpiexec_flags <<< "${MPIEXEC_FLAGS---oversubscribe --bind-to none}"
mpi() { local n=$1; shift; "$mpiexec" "${mpiexec_flags[@]}" -n "$n" "$ws" -q "$@"; }
same() {  # same FILE_A FILE_B WHAT
  if ! cmp -s "$1" "$2"; then fail "$3: $2 differs from $1"; diff "$1" "$2" | head -20 >&2; fi
}

# --- data: globins45 (plus 300 real proteins when the test data is there); queries: 3 globins (+3 real).
cp "$src/data/globins45.fa" db.fa
awk '/^>/{n++} n<=3' "$src/data/globins45.fa" > queries.fa
if [[ -f $testdata/prot/mmseqs_DB20k.fasta ]]; then
  awk '/^>/{n++} n<=300' "$testdata/prot/mmseqs_DB20k.fasta" >> db.fa
  awk '/^>/{n++} n<=3' "$testdata/prot/mmseqs_QUERY500.fasta" >> queries.fa
fi
awk '/^>/{n++} n<=2' "$src/data/globins45.fa" > tiny.fa
"$ws" -q makedb db.fa packed >/dev/null
blastdb=packed
if command -v makeblastdb >/dev/null; then
  makeblastdb -in db.fa -dbtype prot -out blastdb >/dev/null && blastdb=blastdb
fi
echo "database: $(grep -c '>' db.fa) sequences; queries: $(grep -c '>' queries.fa)"

# check TAG N_LIST ARGS...: one process, then each N in N_LIST ("q3" = --mpi-split queries with 3 ranks).
check() {
  local tag=$1 ns=$2; shift 2
  "$ws" -q --threads 2 "$@" -o "$tag-1.txt"
  [[ -s $tag-1.txt ]] || fail "$tag: one process wrote nothing"
  for n in $ns; do
    local split=()
    [[ $n == q* ]] && split=(--mpi-split queries)
    mpi "${n#q}" --threads 1 "${split[@]}" "$@" -o "$tag-$n.txt" || fail "$tag: -n $n failed"
    same "$tag-1.txt" "$tag-$n.txt" "$tag -n $n"
  done
}
check report "2 3 q3" swsearch --query queries.fa --db db.fa
check tab-packed "3 4" swsearch --query queries.fa --db packed --top 3 --outfmt "7 std score positive gaps btop"
check noalign-$blastdb "2 q2" swsearch --query queries.fa --db "$blastdb" --top 3 --noalign \
  --outfmt "6 qseqid sseqid score evalue bitscore slen"
check batches "3" swsearch --query queries.fa --db db.fa -E 1e-3 --top 20 --batch-residues 3000
# Ties across shards: 12 copies of one sequence score the same; the best --top 5 are the lowest ids.
awk '/^>/{n++} n==1' "$src/data/globins45.fa" > one.fa
for k in $(seq 1 12); do sed "s/^>\\([^ ]*\\)/>\\1_$k/" one.fa; done > ties.fa
cat "$src/data/globins45.fa" >> ties.fa
check ties "3 5" swsearch --query one.fa --db ties.fa --top 5 --outfmt 6
# More ranks than sequences: empty shards (stdout).
"$ws" -q swsearch --query queries.fa --db tiny.fa --outfmt 7 > empty-1.txt
mpi 4 swsearch --query queries.fa --db tiny.fa --outfmt 7 > empty-4.txt || fail "empty shards -n 4"
same empty-1.txt empty-4.txt "empty shards (stdout)"
if [[ -f $testdata/dna/BioMarKs50k.fa ]]; then
  awk '/^>/{n++} n<=200' "$testdata/dna/BioMarKs50k.fa" > dna.fa
  awk '/^>/{n++} n>=100 && n<=101' "$testdata/dna/BioMarKs50k.fa" > dnaq.fa
  check dna "3" swsearch --dna --query dnaq.fa --db dna.fa --top 10
fi

# --- failures
set +e
mpi 3 swsearch --query queries.fa --db missing.fa -o bad.sw 2> bad1.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a missing database exited 0"
grep -q "rank 0 of 3: .*missing.fa" bad1.err || { fail "the error does not name the rank and file"; cat bad1.err >&2; }
[[ $(grep -c 'missing.fa' bad1.err) -eq 1 ]] || fail "the error is reported more than once"
set +e
mpi 2 swsearch --query - --db db.fa < queries.fa > bad2.out 2> bad2.err
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "--query - under MPI: exit $rc, expected 2 (usage)"
[[ ! -s bad2.out ]] || fail "--query - under MPI wrote output"
leftover=$(ls | grep -E '^bad\.sw|\.tmp\.' || true)
[[ -z $leftover ]] || fail "failed runs left files behind: $leftover"

if ((failures)); then echo "$failures comparison(s) failed" >&2; exit 1; fi
echo "all swsearch outputs under MPI identical to one process"
