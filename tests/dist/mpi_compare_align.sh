#!/usr/bin/env bash
# mpi_compare_align.sh: end-to-end test of the distributed `warpsearch align` (docs/ALIGN.md "Under MPI",
# docs/MPI.md). Runs each alignment as one process and under `mpiexec --oversubscribe -n R` for R = 2, 3, 4
# and compares the outputs byte for byte: protein (data/globins45.fa, pair i = record i with record i + 1)
# and, with the real test data, DNA (200 BioMarKs 18S sequences, FASTA and FASTQ, each with the next one);
# TSV, TSV --cigar, SAM and PAF; local, global and semiglobal; one chunk and many small chunks (several in
# flight); --pairs; stdout and -o; more ranks than pairs (empty parts); no pairs at all. Failures:
# mismatched pair counts (found after chunks were already written), a bad record, a --pairs name that is
# not in its file, a full output device (rank 0's write fails), stdin under MPI: non-zero exit, one
# message, no output file left behind.
#
#   mpi_compare_align.sh WARPSEARCH MPIEXEC SOURCE_DIR TESTDATA_DIR WORK_DIR
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
# Records FIRST..LAST (1-based) of a FASTA file; and the file with its first record moved to the end.
records() { awk -v a="$2" -v b="$3" '/^>/{n++} n>=a && n<=b' "$1"; }
rotate() { awk '/^>/{n++} n==1{first=first $0 "\n"; next} {print} END{printf "%s", first}' "$1"; }

# --- data
cp "$src/data/globins45.fa" pq.fa
rotate pq.fa > pt.fa
records pq.fa 1 2 > tinyq.fa
records pt.fa 1 2 > tinyt.fa
# --pairs: every query with three targets, in an order that is not the files' (names repeat).
grep '^>' pq.fa | sed 's/^>\([^ ]*\).*/\1/' > names.txt
awk 'NR==FNR{name[NR]=$0; n=NR; next} {for (k = 1; k <= 3; k++) print $0 "\t" name[(FNR * 7 + k * 11) % n + 1]}' \
  names.txt names.txt > pairs.tsv
sets=(prot)
if [[ -f $testdata/dna/BioMarKs50k.fa ]]; then
  records "$testdata/dna/BioMarKs50k.fa" 1 200 > dq.fa
  records "$testdata/dna/BioMarKs50k.fa" 2 201 > dt.fa
  # FASTQ queries (SAM QUAL), qualities cycling through a few letters.
  awk '/^>/{if (h != "") print_rec(); h = substr($0, 2); s = ""; next} {s = s $0}
       function print_rec(  i, q) { q = ""; for (i = 1; i <= length(s); i++) q = q substr("I?5+", i % 4 + 1, 1)
                                   print "@" h; print s; print "+"; print q }
       END{print_rec()}' dq.fa > dq.fq
  sets+=(dna fastq)
fi
dna_pairs=0
[[ -f dq.fa ]] && dna_pairs=$(grep -c '>' dq.fa)
echo "pairs: protein $(grep -c '>' pq.fa), --pairs $(wc -l < pairs.tsv), DNA $dna_pairs"

inputs() {  # inputs SET: the --query/--target options of a data set
  case $1 in
    prot) echo "--query pq.fa --target pt.fa" ;;
    dna) echo "--query dq.fa --target dt.fa" ;;
    fastq) echo "--query dq.fq --target dt.fa --alphabet dna" ;;
  esac
}

# --- one-to-one: every format; modes; chunking (one chunk; chunks of 7 pairs: many in flight)
formats=("--format tsv" "--format tsv --cigar" "--format sam" "--format paf")
for set in "${sets[@]}"; do
  read -r -a io <<< "$(inputs "$set")"
  for f in "${!formats[@]}"; do
    read -r -a fmt <<< "${formats[$f]}"
    for variant in "plain" "global" "semiglobal" "chunks"; do
      extra=()
      case $variant in
        global) extra=(--mode global) ;;
        semiglobal) extra=(--mode semiglobal) ;;
        chunks) extra=(--batch-pairs 7) ;;
      esac
      # All four formats in local mode; the other modes with one format each to bound the run time.
      if [[ $variant == global && $f -ne 1 ]] || [[ $variant == semiglobal && $f -ne 2 ]]; then continue; fi
      [[ $set == fastq && $f -ne 2 ]] && continue  # FASTQ matters for SAM only
      tag="$set-$f-$variant"
      "$ws" -q --threads 2 align "${io[@]}" "${fmt[@]}" "${extra[@]}" -o "$tag-1.out"
      [[ -s $tag-1.out ]] || fail "one process wrote nothing ($tag)"
      for n in 2 3 4; do
        mpi "$n" --threads 1 align "${io[@]}" "${fmt[@]}" "${extra[@]}" -o "$tag-$n.out" || fail "align -n $n $tag"
        same "$tag-1.out" "$tag-$n.out" "align -n $n $tag"
      done
    done
  done
done
# Chunks of one pair and chunk limits by residues; stdout.
"$ws" -q align --query pq.fa --target pt.fa --cigar --batch-pairs 1 > bp1.tsv
mpi 3 align --query pq.fa --target pt.fa --cigar --batch-pairs 1 > bp3.tsv || fail "align --batch-pairs 1 -n 3"
same bp1.tsv bp3.tsv "align --batch-pairs 1 -n 3 (stdout)"
"$ws" -q align --query pq.fa --target pt.fa --format paf --batch-residues 900 > br1.paf
mpi 4 align --query pq.fa --target pt.fa --format paf --batch-residues 900 > br4.paf ||
  fail "align --batch-residues 900 -n 4"
same br1.paf br4.paf "align --batch-residues 900 -n 4 (stdout)"
# More ranks than pairs: empty parts.
for fmt in tsv sam; do
  "$ws" -q align --query tinyq.fa --target tinyt.fa --format "$fmt" > "tiny1.$fmt"
  for n in 3 5; do
    mpi "$n" align --query tinyq.fa --target tinyt.fa --format "$fmt" > "tiny$n.$fmt" || fail "align tiny -n $n"
    same "tiny1.$fmt" "tiny$n.$fmt" "align -n $n, 2 pairs ($fmt)"
  done
done
# No pairs at all: the header alone.
: > empty.fa
"$ws" -q align --query empty.fa --target empty.fa --alphabet dna --format sam > empty1.sam
mpi 3 align --query empty.fa --target empty.fa --alphabet dna --format sam > empty3.sam || fail "align empty -n 3"
same empty1.sam empty3.sam "align -n 3, no pairs"

# --- --pairs (both files in memory): TSV --cigar, SAM (the @SQ lines of the listed targets), PAF; one
# file for both sides; small chunks.
for fmt in "--cigar" "--format sam" "--format paf --mode global"; do
  read -r -a f <<< "$fmt"
  tag="pairs-${f[1]:-cigar}"
  "$ws" -q --threads 2 align --query pq.fa --target pq.fa --pairs pairs.tsv "${f[@]}" -o "$tag-1.out"
  for n in 2 3 4; do
    mpi "$n" --threads 1 align --query pq.fa --target pq.fa --pairs pairs.tsv "${f[@]}" -o "$tag-$n.out" ||
      fail "align --pairs -n $n $fmt"
    same "$tag-1.out" "$tag-$n.out" "align --pairs -n $n $fmt"
  done
done
"$ws" -q align --query pq.fa --target pt.fa --pairs pairs.tsv --format sam --batch-pairs 10 > ps1.sam
mpi 3 align --query pq.fa --target pt.fa --pairs pairs.tsv --format sam --batch-pairs 10 > ps3.sam ||
  fail "align --pairs --batch-pairs 10 -n 3"
same ps1.sam ps3.sam "align --pairs (two files) --batch-pairs 10 -n 3"

# --- the summary line (rank 0 only, once)
"$mpiexec" "${mpiexec_flags[@]}" -n 3 "$ws" align --query tinyq.fa --target tinyt.fa 2> summary.err >/dev/null ||
  fail "align -n 3 with the summary line"
[[ $(grep -c '^align: 2 pairs' summary.err) -eq 1 ]] || { fail "summary line not printed once"; cat summary.err >&2; }

# --- failures: non-zero exit, one message (from rank 0), no output file left behind
expect_failure() {  # expect_failure WHAT STATUS PATTERN -- ARGS...: runs `mpi 3 ARGS`, output to bad.out
  local what=$1 status=$2 pattern=$3; shift 4
  set +e
  mpi 3 "$@" > bad.stdout 2> bad.err
  local rc=$?
  set -e
  [[ $rc -eq $status ]] || { fail "$what: exit $rc, expected $status"; cat bad.err >&2; }
  [[ $(grep -c -E "$pattern" bad.err) -eq 1 ]] ||
    { fail "$what: expected one message matching '$pattern'"; cat bad.err >&2; }
  [[ $(grep -c '^warpsearch:' bad.err) -eq 1 ]] || { fail "$what: more than one message"; cat bad.err >&2; }
  # With -o nothing goes to stdout; on stdout part of the output may precede the error, as in one process.
  [[ " $* " != *" -o "* || ! -s bad.stdout ]] || fail "$what: wrote on stdout"
}
# Mismatched counts, found after 40 pairs in chunks of 4 (10 chunks written before the error).
records pt.fa 1 40 > short.fa
expect_failure "mismatched counts" 4 "rank 0 of 3: .*short.fa.*ran out of sequences after 40 pairs" -- \
  align --query pq.fa --target short.fa --batch-pairs 4 -o bad.out
# The same on stdout.
expect_failure "mismatched counts (stdout)" 4 "ran out of sequences" -- \
  align --query pq.fa --target short.fa --batch-pairs 4
# A bad record (an empty sequence) in the middle of the file.
{ records pq.fa 1 30; echo ">empty"; records pq.fa 32 45; } > badrec.fa
expect_failure "empty sequence" 4 "rank 0 of 3: .*badrec.fa:[0-9]+: .*empty sequence" -- \
  align --query badrec.fa --target pt.fa --batch-pairs 4 --format sam -o bad.out
# A --pairs name that is not in its file.
{ head -5 pairs.tsv; echo "MYG_HORSE no_such_target"; } > badpairs.tsv
expect_failure "--pairs unknown name" 4 "rank 0 of 3: .*badpairs.tsv:6: target 'no_such_target' is not in" -- \
  align --query pq.fa --target pq.fa --pairs badpairs.tsv -o bad.out
# Rank 0 cannot write (a full device): the other ranks stop too. With the DNA data the SAM output passes
# the output buffer (1 MiB) after about 1000 pairs, so the write fails in the middle of the run.
if [[ -w /dev/full ]]; then
  full=(--query pq.fa --target pt.fa)
  if [[ -f dq.fa ]]; then
    records "$testdata/dna/BioMarKs50k.fa" 1 1500 > bigq.fa
    records "$testdata/dna/BioMarKs50k.fa" 2 1501 > bigt.fa
    full=(--query bigq.fa --target bigt.fa)
  fi
  expect_failure "full output device" 3 "rank 0 of 3: /dev/full: write failed" -- \
    align "${full[@]}" --format sam --batch-pairs 20 -o /dev/full
fi
# stdin cannot be read by every rank: usage error.
set +e
mpi 2 align --query - --target pt.fa -o bad.out < pq.fa > bad.stdout 2> bad.err
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "align --query - under MPI: exit $rc, expected 2 (usage)"
[[ $(grep -c "cannot be stdin" bad.err) -eq 1 ]] || { fail "align --query - under MPI: no clear message"; cat bad.err >&2; }
shopt -s nullglob
leftover=(bad.out* ./*.tmp.*)
shopt -u nullglob
((${#leftover[@]} == 0)) || fail "failed runs left files behind: ${leftover[*]}"

if ((failures)); then echo "$failures of $compared comparison(s) or checks failed" >&2; exit 1; fi
echo "all $compared align outputs under MPI identical to one process"
