#!/usr/bin/env bash
# mpi_compare.sh: end-to-end test of distributed hmmsearch and blastp (docs/MPI.md). Runs each search as one
# process and under `mpiexec --oversubscribe -n R` for R = 1, 2, 3, 4 and compares the outputs byte for byte
# (the main hmmsearch report and the tables' tails without their timing and date lines, which differ
# between any two runs). Also: more ranks than database sequences (empty shards), a command that does not
# run under MPI, and an unreadable database (non-zero exit naming the rank, no output file left behind);
# with the database split (default) and with --mpi-split queries.
#
#   mpi_compare.sh WARPSEARCH MPIEXEC SOURCE_DIR TESTDATA_DIR WORK_DIR
#
# The bundled data (data/globins4.hmm, data/globins45.fa) is always used; with the real test data present
# (scripts/fetch_testdata.sh) the database also holds 300 proteins of mmseqs_DB20k, the HMM file four
# Pfam models and the blastp queries 3 of mmseqs_QUERY500. Databases: FASTA, packed (warpsearch makedb)
# and, when makeblastdb is installed, a BLAST+ database (blastp).
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
# Lines that differ between any two runs (times, dates).
stable() { grep -v -E '^# (CPU time|Mc/sec|Date):' "$1" || true; }
same() {  # same FILE_A FILE_B WHAT
  if ! cmp -s <(stable "$1") <(stable "$2"); then
    fail "$3: $2 differs from $1"; diff <(stable "$1") <(stable "$2") | head -20 >&2
  fi
}

# --- data
cp "$src/data/globins45.fa" db.fa
cp "$src/data/globins4.hmm" models.hmm
awk '/^>/{n++} n<=3' "$src/data/globins45.fa" > queries.fa
if [[ -f $testdata/prot/mmseqs_DB20k.fasta ]]; then
  awk '/^>/{n++} n<=300' "$testdata/prot/mmseqs_DB20k.fasta" >> db.fa
  for m in Pkinase fn3 2OG-FeII_Oxy_3; do cat "$testdata/hmm/$m.hmm" >> models.hmm; done
  awk '/^>/{n++} n<=3' "$testdata/prot/mmseqs_QUERY500.fasta" >> queries.fa
fi
awk '/^>/{n++} n<=2' "$src/data/globins45.fa" > tiny.fa
"$ws" -q makedb db.fa packed >/dev/null
dbs=(db.fa packed)
if command -v makeblastdb >/dev/null; then
  makeblastdb -in db.fa -dbtype prot -out blastdb >/dev/null && dbs+=(blastdb)
fi
echo "database: $(grep -c '>' db.fa) sequences; models: $(grep -c '^//' models.hmm); queries: $(grep -c '>' queries.fa)"

# --- hmmsearch: every output, FASTA and packed database. Each run writes the same file names (they appear
# in the report header and the tables' option lines) and its outputs are then moved to their own folder.
hmm_files=(r.out r.tbl r.dom r.pfam r.sto)
hmm_opts=(-o r.out --tblout r.tbl --domtblout r.dom --pfamtblout r.pfam -A r.sto)
keep() { mkdir -p "$1"; mv "${hmm_files[@]}" "$1/"; }
for db in db.fa packed; do
  "$ws" -q --threads 2 hmmsearch "${hmm_opts[@]}" models.hmm "$db" >/dev/null
  [[ -s r.tbl ]] || fail "hmmsearch one process wrote no table"
  keep "h1-$db"
  for n in 1 2 3 4; do
    mpi "$n" --threads 1 hmmsearch "${hmm_opts[@]}" models.hmm "$db" >/dev/null || fail "hmmsearch -n $n $db"
    keep "h$n-$db-mpi"
    for f in "${hmm_files[@]}"; do same "h1-$db/$f" "h$n-$db-mpi/$f" "hmmsearch -n $n $db"; done
  done
done
# Query split: model i searched by rank i mod R (5 ranks for 4 models: one idle).
for n in 2 3 5; do
  mpi "$n" --mpi-split queries hmmsearch "${hmm_opts[@]}" models.hmm db.fa >/dev/null || fail "hmmsearch queries -n $n"
  keep "hq$n"
  for f in "${hmm_files[@]}"; do same "h1-db.fa/$f" "hq$n/$f" "hmmsearch --mpi-split queries -n $n"; done
done
# Report on stdout (rank 0 only) and --cut_ga-free thresholds: -E / --domE / --incE options.
"$ws" hmmsearch --noali -E 1e-3 --domE 1e-2 --incE 1e-5 models.hmm db.fa > hs1.txt
mpi 3 hmmsearch --noali -E 1e-3 --domE 1e-2 --incE 1e-5 models.hmm db.fa > hs3.txt || fail "hmmsearch stdout -n 3"
same hs1.txt hs3.txt "hmmsearch stdout -n 3"
# More ranks than sequences: empty shards.
"$ws" -q hmmsearch "${hmm_opts[@]}" models.hmm tiny.fa >/dev/null
keep t1
mpi 5 hmmsearch "${hmm_opts[@]}" models.hmm tiny.fa >/dev/null || fail "hmmsearch empty shards"
keep t5
for f in "${hmm_files[@]}"; do same "t1/$f" "t5/$f" "hmmsearch -n 5, 2 sequences (empty shards)"; done

# --- blastp: outfmt 6, 7, 0, 5; default composition-based statistics and -comp_based_stats 0; -db and -subject
for db in "${dbs[@]}"; do
  for fmt in 6 7 0 5; do
    for cbs in 2 0; do
      args=(blastp -query queries.fa -db "$db" -outfmt "$fmt" -comp_based_stats "$cbs" -evalue 10)
      "$ws" -q "${args[@]}" -num_threads 2 -out "b1-$db-$fmt-$cbs.txt"
      [[ -s b1-$db-$fmt-$cbs.txt ]] || fail "blastp one process wrote nothing"
      for n in 2 3 4; do
        mpi "$n" "${args[@]}" -out "b$n-$db-$fmt-$cbs.txt" || fail "blastp -n $n $db"
        same "b1-$db-$fmt-$cbs.txt" "b$n-$db-$fmt-$cbs.txt" "blastp -n $n -db $db -outfmt $fmt -cbs $cbs"
      done
    done
  done
done
"$ws" -q blastp -query queries.fa -subject db.fa -outfmt 6 -max_target_seqs 5 -out s1.txt
mpi 3 blastp -query queries.fa -subject db.fa -outfmt 6 -max_target_seqs 5 -out s3.txt || fail "blastp -subject"
same s1.txt s3.txt "blastp -subject -max_target_seqs 5 -n 3"
# Query split: batches of queries round robin over the ranks (many short real queries: several batches).
for fmt in 6 0 5; do
  "$ws" -q blastp -query queries.fa -db packed -outfmt "$fmt" -out "bq1-$fmt.txt"
  mpi 3 --mpi-split queries blastp -query queries.fa -db packed -outfmt "$fmt" -out "bq3-$fmt.txt" ||
    fail "blastp queries -n 3"
  same "bq1-$fmt.txt" "bq3-$fmt.txt" "blastp --mpi-split queries -n 3 -outfmt $fmt"
done
if [[ -f $testdata/prot/mmseqs_DB20k.fasta ]]; then
  # 2400 real proteins cut to 60 residues: three query batches under a query split.
  awk '/^>/{if(h!=""){print h; print substr(s,1,60)}; h=$0; s=""; n++; if(n>2400) exit; next} {s=s $0}' \
    "$testdata/prot/mmseqs_DB20k.fasta" > many.fa
  "$ws" -q blastp -query many.fa -db packed -outfmt 7 -comp_based_stats 0 -out m1.txt
  for n in 2 3 4; do
    mpi "$n" --mpi-split queries blastp -query many.fa -db packed -outfmt 7 -comp_based_stats 0 -out "m$n.txt" ||
      fail "blastp queries -n $n (many)"
    same m1.txt "m$n.txt" "blastp --mpi-split queries -n $n, 2400 queries"
  done
  # XML: every rank numbers its batches' queries (Iteration_iter-num, Query_N) as one process does.
  "$ws" -q blastp -query many.fa -db packed -outfmt 5 -comp_based_stats 0 -out x1.txt
  mpi 3 --mpi-split queries blastp -query many.fa -db packed -outfmt 5 -comp_based_stats 0 -out x3.txt ||
    fail "blastp queries -n 3 (many, XML)"
  same x1.txt x3.txt "blastp --mpi-split queries -n 3, 2400 queries, XML"
fi
"$ws" blastp -query queries.fa -db tiny.fa -outfmt 7 > e1.txt
mpi 4 blastp -query queries.fa -db tiny.fa -outfmt 7 > e4.txt || fail "blastp empty shards"
same e1.txt e4.txt "blastp empty shards (stdout)"

# --- failures
set +e
mpi 3 hmmsearch -o bad.out --tblout bad.tbl models.hmm missing.fa 2> bad.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "hmmsearch with a missing database exited 0"
grep -q "rank 0 of 3: .*missing.fa" bad.err ||
  { fail "hmmsearch error does not name the rank and file"; cat bad.err >&2; }
[[ $(grep -c 'missing.fa' bad.err) -eq 1 ]] || fail "the error is reported more than once"
set +e
mpi 3 blastp -query queries.fa -db missing.fa -outfmt 6 -out bad.tsv 2> bad2.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "blastp with a missing database exited 0"
grep -q "rank 0 of 3: .*missing.fa" bad2.err ||
  { fail "blastp error does not name the rank and file"; cat bad2.err >&2; }
set +e
mpi 3 --mpi-split queries hmmsearch -o bad.out models.hmm missing.fa 2> bad4.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "hmmsearch --mpi-split queries with a missing database exited 0"
grep -q "rank 0 of 3: .*missing.fa" bad4.err || fail "hmmsearch --mpi-split queries: error does not name the rank"
set +e
mpi 2 makedb db.fa other 2> bad3.err
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "makedb under MPI: exit $rc, expected 2 (usage)"
grep -q "does not run under MPI" bad3.err || fail "makedb under MPI: no clear message"
leftover=$(ls | grep -E '^bad\.(out|tbl|tsv)|\.tmp\.|^other' || true)
[[ -z $leftover ]] || fail "failed runs left files behind: $leftover"

if ((failures)); then echo "$failures comparison(s) failed" >&2; exit 1; fi
echo "all MPI outputs identical to one process"
