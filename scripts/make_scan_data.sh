#!/usr/bin/env bash
# make_scan_data.sh: deterministic test and benchmark data for `warpsearch scan` (issue 8), cut from
# C. elegans chrX (dna/ce2_chrX.fa of scripts/fetch_testdata.sh, 17,718,849 bp), with mutated copies of
# known origin and truth files.
#
#   scripts/make_scan_data.sh OUTDIR [CHRX_FASTA]
#
# CHRX_FASTA (plain or gzip; its records are concatenated, ce2_chrX.fa has one) defaults to
# $WARPSEARCH_TESTDATA/dna/ce2_chrX.fa (test data cache
# ~/.cache/warpsearch/testdata when unset). Needs bash, awk (any POSIX awk: mawk, gawk, busybox), rev, tr,
# fold, cut. Written into OUTDIR (existing files of the same names are replaced):
#
#   window.fa          one record "window": chrX[WINDOW_START, WINDOW_START + WINDOW) with COPIES mutated
#                      copies of window_query.fa inserted at spread positions (alternating strands, the
#                      minus copies being the reverse complement of the query), so it is a little longer
#                      than WINDOW
#   window_query.fa    the planted query: chrX[PLANT_START, PLANT_START + PLANT_LEN) (outside the window)
#   window.truth.tsv   one line per copy: record, start, end (0-based half-open in window.fa), strand ('+':
#                      the query aligns to the forward window; '-': to its reverse complement), the
#                      copy's substitution rate, substituted, inserted and deleted residues
#   q10k.fa, q1m.fa    10 kbp and 1 Mbp queries cut from chrX (QUERY_10K_START, QUERY_1M_START)
#   q10k_mut.fa, q1m_mut.fa   the reverse complement of the same regions, mutated (7 % substitutions,
#                      0.5 % indels): they align to the minus strand of chrX around the same place
#   queries.truth.tsv  per query: name, length, source record (chrX), start, end (0-based half-open in
#                      chrX), strand of its alignment to chrX, substituted, inserted, deleted residues
#   big.fa             (BIG > 0) a multi-FASTA target of >= BIG residues of real sequence: chrX, its reverse
#                      complement, then mutated copies of both (substitution rate 1, 5, 10, 15, 20 ... %,
#                      0.5 % indels) until the total reaches BIG; its record list goes to big.tsv
#
# Environment (all optional; defaults in brackets):
#   SEED [8]                 seeds every random choice (each output has its own stream derived from it)
#   WINDOW [1000000]         window length;  WINDOW_START [5000000]
#   PLANT_LEN [3000]         planted query length;  PLANT_START [12000000];  COPIES [8]
#   SUB_MIN, SUB_MAX [0.05, 0.10]   substitution rate of the copies (copy k of n: SUB_MIN + k/(n-1) of
#                            the range);  INDEL [0.005] indel rate of the copies (1-3 bp each)
#   QUERY_10K_START [2000000], QUERY_1M_START [9000000]
#   BIG [100000000]          minimum residues of big.fa; 0 skips it (it takes ~1 minute and 110 MB)
#   ONLY                     comma list of outputs to make: window, queries, big (default: all)
# The same inputs and settings always give byte-identical outputs (random numbers come from a
# Park-Miller generator in awk, exact in double precision, never from awk's rand()).
#
# Mutation model: events are spaced at random with mean spacing 1/(sub + indel) (the residues kept
# before each event number an integer drawn uniformly from [0, 2/(sub+indel) - 2]); an event is a
# substitution (a different base, uniformly) with probability sub/(sub+indel), else an insertion of 1-3
# random bases after the residue or a deletion of 1-3 residues, with equal probability.
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit $(($# < 1))
fi
out=$1
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
chrx=${2:-$testdata/dna/ce2_chrX.fa}
SEED=${SEED:-8}
WINDOW=${WINDOW:-1000000}
WINDOW_START=${WINDOW_START:-5000000}
PLANT_LEN=${PLANT_LEN:-3000}
PLANT_START=${PLANT_START:-12000000}
COPIES=${COPIES:-8}
SUB_MIN=${SUB_MIN:-0.05}
SUB_MAX=${SUB_MAX:-0.10}
INDEL=${INDEL:-0.005}
QUERY_10K_START=${QUERY_10K_START:-2000000}
QUERY_1M_START=${QUERY_1M_START:-9000000}
BIG=${BIG:-100000000}
ONLY=${ONLY:-window,queries,big}

[[ -r $chrx ]] || { echo "make_scan_data.sh: cannot read $chrx (run scripts/fetch_testdata.sh)" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/make_scan_data.XXXXXX")
trap 'rm -rf "$work"' EXIT
wants() { [[ ,$ONLY, == *,$1,* ]]; }

# The chromosome as one upper-case line without a newline, and its reverse complement.
zcat -f "$chrx" | grep -v '^>' | tr -d '\n\r' | tr '[:lower:]' '[:upper:]' > "$work/chrX.txt"
chrx_len=$(wc -c < "$work/chrX.txt")
revcomp() { rev | tr ACGTRYMKBVDH TGCAYRKMVBHD; }
# cut_region START LEN: chrX[START, START+LEN) (0-based) on stdout, no newline.
cut_region() {
  if (($1 < 0 || $1 + $2 > chrx_len)); then
    echo "make_scan_data.sh: region $1+$2 outside chrX ($chrx_len bp)" >&2
    exit 1
  fi
  cut -c "$(($1 + 1))-$(($1 + $2))" "$work/chrX.txt" | tr -d '\n'
}
# fasta NAME [DESCRIPTION] < one-line sequence > FASTA with 60-column lines.
fasta() {
  echo ">$1${2:+ $2}"
  fold -w 60
  echo
}

# The awk library: Park-Miller random numbers and the mutation model.
#   mutate(s, sub, indel, file): writes the mutated s to file (no newline) and returns its length;
#   nsub, nins, ndel receive the event counts.
awk_lib='
function rnd() { rng = (rng * 16807) % 2147483647; return rng }
function unif() { return rnd() / 2147483647 }
function randint(n) { return int(unif() * n) }
function base() { return substr("ACGT", 1 + randint(4), 1) }
function other(c,   i) {
  i = index("ACGT", c)
  if (i == 0) return base()
  return substr("ACGT", 1 + (i + randint(3)) % 4, 1)
}
function seed_rng(s) { rng = (s * 7919 + 12345) % 2147483646 + 1; rnd(); rnd() }
function mutate(s, srate, indel, file,   n, pos, next_pos, maxgap, r, u, k, j, c, len, ins) {
  n = length(s); pos = 1; r = srate + indel; maxgap = int(2 / r) - 1; len = 0
  nsub = 0; nins = 0; ndel = 0
  if (maxgap < 1) maxgap = 1
  while (1) {
    next_pos = pos + randint(maxgap)
    if (next_pos > n) break
    if (next_pos > pos) { printf "%s", substr(s, pos, next_pos - pos) > file; len += next_pos - pos }
    c = substr(s, next_pos, 1)
    u = unif() * r
    if (u < srate) {
      printf "%s", other(c) > file; len++; nsub++; pos = next_pos + 1
    } else if (u < srate + indel / 2) {
      k = 1 + randint(3); ins = c
      for (j = 0; j < k; j++) ins = ins base()
      printf "%s", ins > file; len += k + 1; nins += k; pos = next_pos + 1
    } else {
      k = 1 + randint(3); if (next_pos + k > n + 1) k = n + 1 - next_pos
      ndel += k; pos = next_pos + k
    }
  }
  if (pos <= n) { printf "%s", substr(s, pos) > file; len += n - pos + 1 }
  return len
}
'

if wants window; then
  if ((PLANT_START < WINDOW_START + WINDOW && WINDOW_START < PLANT_START + PLANT_LEN)); then
    echo "make_scan_data.sh: the planted query overlaps the window" >&2
    exit 1
  fi
  cut_region "$PLANT_START" "$PLANT_LEN" > "$work/plant.txt"
  revcomp < "$work/plant.txt" > "$work/plant_rc.txt"
  cut_region "$WINDOW_START" "$WINDOW" > "$work/window.txt"
  fasta window_query "chrX:$PLANT_START-$((PLANT_START + PLANT_LEN)) (0-based half-open)" \
    < "$work/plant.txt" > "$out/window_query.fa"
  # Copy k goes after window residue pos_k = (k + 1/2) * WINDOW / COPIES +- WINDOW / (4 COPIES); strands
  # alternate from a random first one; substitution rates spread evenly over [SUB_MIN, SUB_MAX].
  awk -v seed="$SEED" -v copies="$COPIES" -v submin="$SUB_MIN" -v submax="$SUB_MAX" -v indel="$INDEL" \
    -v wfile="$work/window.txt" -v pfile="$work/plant.txt" -v rfile="$work/plant_rc.txt" \
    -v out="$work/window_planted.txt" -v truth="$out/window.truth.tsv" "$awk_lib"'
    BEGIN {
      seed_rng(seed + 101)
      getline w < wfile; getline p < pfile; getline prc < rfile
      n = length(w); first = randint(2)
      print "#record\tstart\tend\tstrand\tsub_rate\tsubstituted\tinserted\tdeleted" > truth
      done = 0; written = 0
      for (k = 0; k < copies; k++) {
        at = int((k + 0.5) * n / copies) + randint(int(n / (2 * copies)) + 1) - int(n / (4 * copies))
        if (at < done) at = done
        if (at > done) { printf "%s", substr(w, done + 1, at - done) > out; written += at - done }
        minus = (k + first) % 2
        srate = copies > 1 ? submin + (submax - submin) * k / (copies - 1) : submin
        len = mutate(minus ? prc : p, srate, indel, out)
        printf "window\t%d\t%d\t%s\t%.4f\t%d\t%d\t%d\n", written, written + len, minus ? "-" : "+", srate, \
          nsub, nins, ndel > truth
        written += len; done = at
      }
      if (done < n) printf "%s", substr(w, done + 1) > out
    }'
  fasta window "chrX:$WINDOW_START-$((WINDOW_START + WINDOW)) with $COPIES planted copies of window_query" \
    < "$work/window_planted.txt" > "$out/window.fa"
  echo "window.fa: $(wc -c < "$work/window_planted.txt") bp, $COPIES copies of a $PLANT_LEN bp query"
fi

if wants queries; then
  printf '#query\tlength\tsource\tstart\tend\tstrand\tsubstituted\tinserted\tdeleted\n' > "$out/queries.truth.tsv"
  i=0
  for spec in "q10k $QUERY_10K_START 10000" "q1m $QUERY_1M_START 1000000"; do
    read -r name start len <<< "$spec"
    cut_region "$start" "$len" > "$work/$name.txt"
    fasta "$name" "chrX:$start-$((start + len))" < "$work/$name.txt" > "$out/$name.fa"
    printf '%s\t%d\tchrX\t%d\t%d\t+\t0\t0\t0\n' "$name" "$len" "$start" "$((start + len))" >> "$out/queries.truth.tsv"
    revcomp < "$work/$name.txt" > "$work/${name}_rc.txt"
    counts=$(awk -v seed="$((SEED + 200 + i))" -v in_file="$work/${name}_rc.txt" -v out="$work/${name}_mut.txt" \
      "$awk_lib"'BEGIN { seed_rng(seed); getline s < in_file; len = mutate(s, 0.07, 0.005, out)
                         printf "%d\t%d\t%d\t%d\n", len, nsub, nins, ndel }')
    read -r mlen nsub nins ndel <<< "$counts"
    fasta "${name}_mut" "reverse complement of chrX:$start-$((start + len)), mutated" \
      < "$work/${name}_mut.txt" > "$out/${name}_mut.fa"
    printf '%s\t%d\tchrX\t%d\t%d\t-\t%d\t%d\t%d\n' "${name}_mut" "$mlen" "$start" "$((start + len))" \
      "$nsub" "$nins" "$ndel" >> "$out/queries.truth.tsv"
    i=$((i + 1))
  done
  echo "queries: q10k.fa q10k_mut.fa q1m.fa q1m_mut.fa"
fi

if wants big && ((BIG > 0)); then
  revcomp < "$work/chrX.txt" > "$work/chrX_rc.txt"
  : > "$out/big.fa"
  printf '#record\tlength\tsource\tsub_rate\tsubstituted\tinserted\tdeleted\n' > "$out/big.tsv"
  total=0 k=0
  while ((total < BIG)); do
    if ((k < 2)); then
      name=$([[ $k == 0 ]] && echo chrX || echo chrX_revcomp)
      src=$([[ $k == 0 ]] && echo chrX.txt || echo chrX_rc.txt)
      fasta "$name" < "$work/$src" >> "$out/big.fa"
      len=$chrx_len
      printf '%s\t%d\t%s\t0\t0\t0\t0\n' "$name" "$len" "${src%.txt}" >> "$out/big.tsv"
    else
      # Copies 2, 3, ...: forward and reverse complement alternately, substitution rate 1, 5, 10, 15 ... %.
      c=$((k - 2))
      src=$( ((c % 2 == 0)) && echo chrX.txt || echo chrX_rc.txt)
      rate=$(awk -v c="$c" 'BEGIN { printf "%.2f", c == 0 ? 0.01 : 0.05 * c }')
      name="chrX_mut$((c + 1))"
      counts=$(awk -v seed="$((SEED + 300 + c))" -v in_file="$work/$src" -v out="$work/mut.txt" -v rate="$rate" \
        "$awk_lib"'BEGIN { seed_rng(seed); getline s < in_file; len = mutate(s, rate, 0.005, out)
                           printf "%d\t%d\t%d\t%d\n", len, nsub, nins, ndel }')
      read -r len nsub nins ndel <<< "$counts"
      fasta "$name" "mutated copy of ${src%.txt}, substitution rate $rate" < "$work/mut.txt" >> "$out/big.fa"
      printf '%s\t%d\t%s\t%s\t%d\t%d\t%d\n' "$name" "$len" "${src%.txt}" "$rate" "$nsub" "$nins" "$ndel" \
        >> "$out/big.tsv"
    fi
    total=$((total + len)) k=$((k + 1))
  done
  echo "big.fa: $k records, $total bp"
fi
