#!/usr/bin/env bash
# bench_scan.sh: the `warpsearch scan` benchmark (issue 8, SSCA#1): long DNA queries against C. elegans chrX
# and a >= 1e8 bp target, a protein example, the parasail peer and the kernel-1 entries of warpsearch-bench
# side by side on a smaller pair, CPU vs GPU and 1/2/4-GPU identity checks, and a summary table printed last.
#
#   scripts/bench_scan.sh            (from anywhere; builds into $BUILD_DIR when it has no binaries)
#
# On a GPU machine with the git-ignored device copy of the data (.device/scan/ce2_chrX.fa.gz and
# .device/testdata carried along):
#   WARPSEARCH_TESTDATA=$PWD/.device/testdata DATA=.device/scan BUILD_DIR=build-scan scripts/bench_scan.sh
#
# Environment (all optional):
#   BUILD_DIR   build folder (default build/bench-scan; configured Release, CUDA when nvcc is found)
#   CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES when configuring (default 90)
#   OUT         folder for the data, outputs and logs (default $BUILD_DIR/bench-scan-out)
#   DATA        folder holding ce2_chrX.fa or ce2_chrX.fa.gz (default $WARPSEARCH_TESTDATA/dna)
#   PROT        protein FASTA target (default $WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta); its query is the
#               longest record of prot/mmseqs_QUERY500.fasta next to it
#   GPUS        GPU counts of the multi-GPU runs, e.g. "1 2 4" (default: 1 2 4 8 up to the visible GPUs;
#               "0": none). Outputs of every count must be identical.
#   CASES       the timed runs, QUERY:TARGET words (default "q10k:chrX q10k_mut:chrX q1m_mut:chrX
#               q10k_mut:big prot:prot"); queries: q10k q10k_mut q1m q1m_mut window_query prot; targets:
#               chrX big window prot
#   MULTI_CASES runs repeated on every GPU count of GPUS (default "q10k_mut:chrX q10k_mut:big")
#   PEER_CASE   the pair of the warpsearch-bench comparison with parasail and of the CPU-vs-GPU identity
#               check (default q10k_mut:window: 10 kbp x 1 Mbp x 2 strands)
#   TOP         --top of every run (default 200)
#   REPEAT      measured runs of the warpsearch-bench comparison (default 1)
#   CPU_MAX_CELLS  without a GPU, runs needing more cells are skipped (default 5e10; the CPU engine is the
#               exact reference DP, well under 1 GCUPS per core)
#   BIG         residues of the big target (make_scan_data.sh; default 100000000)
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh; default ~/.cache/warpsearch/testdata)
# Every run writes its TSV output, --stats line and /usr/bin/time -v report (when that program exists) under
# $OUT/runs. GCUPS = query length x target residues x strands / kernel-1 seconds (the useful cells; the
# --stats line also gives the computed cells, overlaps and fixups included). Exit status 1 when a run
# failed or outputs that must be identical differ.
set -euo pipefail
cd "$(dirname "$0")/.."
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
BUILD_DIR=${BUILD_DIR:-build/bench-scan}
CUDA_ARCHS=${CUDA_ARCHS:-90}
OUT=${OUT:-$BUILD_DIR/bench-scan-out}
DATA=${DATA:-$testdata/dna}
PROT=${PROT:-$testdata/prot/mmseqs_DB20k.fasta}
CASES=${CASES:-q10k:chrX q10k_mut:chrX q1m_mut:chrX q10k_mut:big prot:prot}
MULTI_CASES=${MULTI_CASES:-q10k_mut:chrX q10k_mut:big}
PEER_CASE=${PEER_CASE:-q10k_mut:window}
TOP=${TOP:-200}
REPEAT=${REPEAT:-1}
CPU_MAX_CELLS=${CPU_MAX_CELLS:-5e10}
export WARPSEARCH_TESTDATA="$testdata"
mkdir -p "$OUT/runs"

if [[ ! -x $BUILD_DIR/bench/warpsearch-bench || ! -x $BUILD_DIR/src/warpsearch ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS" \
    > "$OUT/configure.log"
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target warpsearch-bench warpsearch_cli > "$OUT/build.log"
fi
bench=$BUILD_DIR/bench/warpsearch-bench
ws=$BUILD_DIR/src/warpsearch

# --- data ------------------------------------------------------------------------------------------
data=$OUT/data
mkdir -p "$data"
if [[ ! -s $data/ce2_chrX.fa ]]; then
  src=$DATA/ce2_chrX.fa
  [[ -f $src ]] || src=$DATA/ce2_chrX.fa.gz
  [[ -f $src ]] || { echo "bench_scan.sh: no ce2_chrX.fa(.gz) in $DATA" >&2; exit 1; }
  zcat -f "$src" > "$data/ce2_chrX.fa.part" && mv "$data/ce2_chrX.fa.part" "$data/ce2_chrX.fa"
fi
if [[ ! -f $data/.complete ]]; then
  scripts/make_scan_data.sh "$data" "$data/ce2_chrX.fa" | tee "$OUT/make_scan_data.log"
  touch "$data/.complete"
fi
if [[ -f $PROT && ! -s $data/prot_query.fa ]]; then
  # The longest query of mmseqs_QUERY500 (ties: the first).
  awk '/^>/ { if (seq != "" && length(seq) > length(best)) { best = seq; bh = h } h = $0; seq = ""; next }
       { seq = seq $0 }
       END { if (length(seq) > length(best)) { best = seq; bh = h }
             print bh; for (i = 1; i <= length(best); i += 60) print substr(best, i, 60) }' \
    "$(dirname "$PROT")/mmseqs_QUERY500.fasta" > "$data/prot_query.fa"
fi
query_file() {
  case $1 in
    prot) echo "$data/prot_query.fa" ;;
    *) echo "$data/$1.fa" ;;
  esac
}
target_file() {
  case $1 in
    chrX) echo "$data/ce2_chrX.fa" ;;
    big | window) echo "$data/$1.fa" ;;
    prot) echo "$PROT" ;;
    *) echo "bench_scan.sh: unknown target $1" >&2; exit 1 ;;
  esac
}
declare -A residues_of
residues() {  # residues of a FASTA file, cached
  if [[ -z ${residues_of[$1]:-} ]]; then residues_of[$1]=$(grep -v '^>' "$1" | tr -d '\n\r' | wc -c); fi
  echo "${residues_of[$1]}"
}
strands() { [[ $1 == prot ]] && echo 1 || echo 2; }

# --- devices ---------------------------------------------------------------------------------------
visible=0
if command -v nvidia-smi > /dev/null; then visible=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true); fi
if [[ -z ${GPUS:-} ]]; then
  GPUS=""
  for n in 1 2 4 8; do
    if ((n <= visible)); then GPUS="$GPUS $n"; fi
  done
fi
if [[ $GPUS == 0 ]]; then GPUS=""; fi
device=$([[ $visible -gt 0 ]] && echo gpu || echo cpu)
echo "devices: $visible visible GPU(s); timed runs on $device; multi-GPU counts: ${GPUS:-none}"
timer=""
if /usr/bin/time -v -o /dev/null true 2> /dev/null; then timer=/usr/bin/time; fi

failures=0
rows=()
# run_scan TAG QUERY TARGET DEVICE GPULIST [extra args]: one `warpsearch scan`; appends a table row.
run_scan() {
  local tag=$1 qname=$2 tname=$3 dev=$4 gpulist=$5
  shift 5
  local q t base m n s cells
  q=$(query_file "$qname") t=$(target_file "$tname") base=$OUT/runs/$tag
  m=$(residues "$q") n=$(residues "$t") s=$(strands "$qname")
  cells=$(awk -v m="$m" -v n="$n" -v s="$s" 'BEGIN { printf "%.2e", m * n * s }')
  if [[ $dev == cpu ]] && awk -v c="$cells" -v x="$CPU_MAX_CELLS" 'BEGIN { exit !(c > x) }'; then
    rows+=("$(printf '%-24s %9s %11s %8s %9s %9s %9s %9s %8s %9s  %s' "$tag" "$m" "$n" "$cells" - - - - - - \
      "skipped: no GPU")")
    return 0
  fi
  local args=(--device "$dev")
  if [[ -n $gpulist ]]; then args+=(--gpus "$gpulist"); fi
  args+=(scan --query "$q" --target "$t" --top "$TOP" --stats -o "$base.tsv" "$@")
  local t0 t1 status=ok
  t0=$(date +%s.%N)
  if [[ -n $timer ]]; then
    $timer -v -o "$base.time" "$ws" "${args[@]}" 2> "$base.err" || status=failed
  else
    "$ws" "${args[@]}" 2> "$base.err" || status=failed
  fi
  t1=$(date +%s.%N)
  echo "$ws ${args[*]}" > "$base.cmd"
  local stats k1 g k2 total rss wall
  stats=$(grep '^scan stats:' "$base.err" | tail -1 || true)
  k1=$(sed -n 's/.*kernel 1 \([0-9.]*\) s.*/\1/p' <<< "$stats")
  g=$(sed -n 's/.*kernel 1 [0-9.]* s (\([0-9.]*\) GCUPS).*/\1/p' <<< "$stats")
  k2=$(sed -n 's/.*kernel 2 \([0-9.]*\) s.*/\1/p' <<< "$stats")
  total=$(sed -n 's/.*total \([0-9.]*\) s.*/\1/p' <<< "$stats")
  rss=-
  if [[ -f $base.time ]]; then rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$base.time"); fi
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  if [[ $status != ok ]]; then
    failures=$((failures + 1))
    status="failed: $(tail -1 "$base.err")"
  fi
  echo "$tag: ${stats:-$status}"
  rows+=("$(printf '%-24s %9s %11s %8s %9s %9s %9s %9s %8s %9s  %s' "$tag" "$m" "$n" "$cells" "${k1:--}" "${g:--}" \
    "${k2:--}" "${total:--}" "$wall" "${rss:--}" "$status")")
}

# --- timed runs --------------------------------------------------------------------------------------
gpu_list() { seq -s, 0 $(($1 - 1)); }
all_gpus=""
if ((visible > 0)); then all_gpus=$(gpu_list "$visible"); fi
for c in $CASES; do
  qn=${c%%:*} tn=${c#*:}
  if [[ ($qn == prot || $tn == prot) && ! -f $PROT ]]; then
    echo "skipping $c: no $PROT"
    continue
  fi
  run_scan "${qn}_vs_${tn}" "$qn" "$tn" "$device" "$all_gpus"
done

# --- multi-GPU identity ------------------------------------------------------------------------------
identity=()
for c in $MULTI_CASES; do
  [[ -n $GPUS ]] || break
  qn=${c%%:*} tn=${c#*:} first=""
  for n in $GPUS; do
    tag="${qn}_vs_${tn}_gpus$n"
    run_scan "$tag" "$qn" "$tn" gpu "$(gpu_list "$n")"
    if [[ -z $first ]]; then
      first=$tag
    elif cmp -s "$OUT/runs/$first.tsv" "$OUT/runs/$tag.tsv"; then
      identity+=("$tag: identical to $first")
    else
      identity+=("$tag: DIFFERS from $first")
      failures=$((failures + 1))
    fi
  done
done

# --- peer comparison and CPU vs GPU on a smaller pair ------------------------------------------------
qn=${PEER_CASE%%:*} tn=${PEER_CASE#*:}
pq=$(query_file "$qn") pt=$(target_file "$tn")
entries=(scan parasail-sw-scan)
if ((visible > 0)); then entries=(gpu-scan-kernel1 "${entries[@]}"); fi
if WARPSEARCH_BENCH_SCAN_QUERY=$pq WARPSEARCH_BENCH_SCAN_TOP=$TOP "$bench" run "${entries[@]}" --input "$pt" \
    --threads "$(nproc)" --repeat "$REPEAT" --csv "$OUT/peer.csv" > "$OUT/peer.txt" 2> "$OUT/peer.log"; then
  :
else
  failures=$((failures + 1))
fi
# Every entry prints its best score per strand; they must agree with parasail's.
best_lines=$(grep -o 'best plus [0-9]*\(; best minus [0-9]*\)\{0,1\}' "$OUT/peer.log" | sort -u || true)
if [[ $(wc -l <<< "$best_lines") == 1 && -n $best_lines ]]; then
  identity+=("bench entries ${entries[*]}: same best scores as parasail ($best_lines)")
else
  identity+=("bench entries: best scores DIFFER: $(tr '\n' '|' <<< "$best_lines")")
  failures=$((failures + 1))
fi
if ((visible > 0)); then
  run_scan "${qn}_vs_${tn}_cpu" "$qn" "$tn" cpu ""
  run_scan "${qn}_vs_${tn}_gpu" "$qn" "$tn" gpu "$all_gpus"
  if cmp -s "$OUT/runs/${qn}_vs_${tn}_cpu.tsv" "$OUT/runs/${qn}_vs_${tn}_gpu.tsv"; then
    identity+=("${qn}_vs_${tn}: CPU and GPU outputs identical")
  else
    identity+=("${qn}_vs_${tn}: CPU and GPU outputs DIFFER")
    failures=$((failures + 1))
  fi
fi

# --- summary (last) ------------------------------------------------------------------------------------
echo
echo "== warpsearch-bench on $PEER_CASE ($(basename "$pq") vs $(basename "$pt")), threads $(nproc)"
cat "$OUT/peer.txt"
echo
echo "== warpsearch scan ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')$(nproc) CPUs; top $TOP; times in s, GCUPS = m x n x strands / kernel-1 s)"
printf '%-24s %9s %11s %8s %9s %9s %9s %9s %8s %9s  %s\n' run query_len target_len cells kernel1 k1_GCUPS kernel2 \
  total wall peak_MiB status
printf '%s\n' "${rows[@]}"
printf '%s\n' "${identity[@]}"
if ((failures > 0)); then
  echo "FAILED: $failures run(s) failed or differ (logs in $OUT/runs)"
  exit 1
fi
echo "all runs ok"
