#!/usr/bin/env bash
# bench_blastp.sh: `warpsearch blastp` against BLAST+ 2.12 `blastp` on one machine with the same options:
# wall time and peak memory per query set, composition-based-statistics mode, thread count and device of
# ours, hit counts, whether the two tabular outputs are identical, whether ours is the same at every thread
# count and on every device, ours' per-phase times (TIMING=1), and how many planted homologs each finds
# (scripts/make_blastp_data.sh truth). The numbers of docs/PERFORMANCE.md's blastp sections; a summary
# table is printed last.
#
#   scripts/bench_blastp.sh            (from anywhere; builds into $BUILD_DIR when it has no binary)
#
# On a GPU machine (Ubuntu 24.04, no BLAST+ installed) with the packed oracle (scripts/package_blastp_oracle.sh,
# carried as .device/blast) and the test data (.device/testdata):
#   WARPSEARCH_TESTDATA=$PWD/.device/testdata BLASTP=.device/blast/blastp BUILD_DIR=build-bp scripts/bench_blastp.sh
# GPU against CPU and blastp at 16 threads on the huge data, both query sets (scripts/bench_blastp_gpu.sh):
#   DATA=huge QUERY_SETS=paper3+sw20 DEVICES="gpu cpu" THREADS=16 CBS=0 TIMING=1 OURS_DB=blast scripts/bench_blastp.sh
#
# Environment (all optional; defaults in brackets):
#   BUILD_DIR   build folder [build/bench-blastp] (configured Release; CUDA on when DEVICES names gpu)
#   WS          the warpsearch binary [$BUILD_DIR/src/warpsearch]; built when missing and OURS is unset
#   OURS        command run instead of "$WS blastp" (word-split), e.g. OURS=blastp to test this script; it
#               gets --device only when DEVICES is set, --timing only with TIMING=1 (a stand-in must then
#               accept them)
#   OUT         folder for data, databases, outputs and logs [$BUILD_DIR/bench-blastp-out]
#   DATA        size made by scripts/make_blastp_data.sh when DB is unset: small, bench, big or huge [bench]
#   DB          database FASTA [$OUT/data-$DATA/db.fa]; QUERIES  query FASTA [$OUT/data-$DATA/queries.fa]
#   QUERY_SETS  query FASTA files benchmarked one after another, each on its own [$QUERIES]; with DATA
#               made here, the words paper3 and sw20 name the huge preset's two sets, and paper3+sw20
#               both (queries_paper3.fa, sw_queries20.fa). Runs are labelled by file name (no extension).
#   TRUTH       truth table of DB [$OUT/data-$DATA/truth.tsv when made here; none otherwise]
#   BLASTDB     an existing makeblastdb database of DB (path prefix) to search instead of making one
#   OURS_DB     what ours searches: packed (warpsearch makedb), blast (the makeblastdb database) or fasta
#               (DB itself) [packed]; blastp always searches the makeblastdb database
#   DEVICES     devices of ours, each run with `--device X` (a stand-in OURS: only when DEVICES is set)
#               ["cpu"]; every device's output is compared with the first one's (column "=DEV")
#   TIMING      1: pass --timing to ours and show its phases: stderr lines "timing: PHASE SECONDS s", any
#               phase names, in the order first seen; lines of the same phase in one run are summed [0]
#   THREADS     -num_threads values ["1 2 4 8 16"]
#   CBS         -comp_based_stats modes ["0 2"] (2 is blastp's default)
#   REPEAT      timed runs of each program per (set, mode, thread count); medians are reported [1]
#   OUTFMT      -outfmt of both [6]; EVALUE [10], MAX_TARGET_SEQS [500]; ARGS: more options for both
#   BLASTP      blastp [blastp on PATH, else .device/blast/blastp]; MAKEBLASTDB [next to BLASTP, else PATH]
#   MT_MODE     blastp -mt_mode when threads > 1 [0: split by database]
#   RUN_TIMEOUT seconds after which one run is stopped (timeout -k 10) and counted as failed [none]
#   DEADLINE    a time (seconds since the epoch, date +%s) at which any run still going is stopped; runs
#               not started by then are skipped (both count as failed), so the table still comes [none]
#   TIMER       gnu-time or python [gnu-time when /usr/bin/time -v works]
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh) [~/.cache/warpsearch/testdata]
# Order per (set, mode, thread count, repeat): blastp, then ours on each device in DEVICES order.
# Every run leaves its output, stderr, command line and timing report under $OUT/runs (NAME.tsv, .err,
# .cmd, .time; NAME = ours.SET.DEVICE.cbsM.tT.rR or blastp.SET.cbsM.tT.rR). Times come from /usr/bin/time -v
# (wall clock, maximum RSS) when it exists, else from a python3 runner (perf_counter, getrusage of the
# child). Table columns: speedup = blastp_s / ours_s; identical = ours' output the same as blastp's;
# stable = ours the same at every thread count and repeat (per device); =DEV = the same as the first
# device's output. Exit status 1 when a run failed, our output differs between thread counts, repeats or
# devices, or ours and blastp's differ.
set -euo pipefail
cd "$(dirname "$0")/.."
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
export WARPSEARCH_TESTDATA="$testdata"
BUILD_DIR=${BUILD_DIR:-build/bench-blastp}
WS=${WS:-$BUILD_DIR/src/warpsearch}
OURS=${OURS:-}
OUT=${OUT:-$BUILD_DIR/bench-blastp-out}
DATA=${DATA:-bench}
OURS_DB=${OURS_DB:-packed}
pass_device=1
[[ -n $OURS && -z ${DEVICES:-} ]] && pass_device=0  # a stand-in gets --device only when asked for
DEVICES=${DEVICES:-cpu}
TIMING=${TIMING:-0}
THREADS=${THREADS:-1 2 4 8 16}
CBS=${CBS:-0 2}
REPEAT=${REPEAT:-1}
OUTFMT=${OUTFMT:-6}
EVALUE=${EVALUE:-10}
MAX_TARGET_SEQS=${MAX_TARGET_SEQS:-500}
ARGS=${ARGS:-}
MT_MODE=${MT_MODE:-0}
RUN_TIMEOUT=${RUN_TIMEOUT:-}
DEADLINE=${DEADLINE:-}
if [[ -z ${BLASTP:-} ]]; then
  BLASTP=$(command -v blastp || echo .device/blast/blastp)
fi
if [[ -z ${MAKEBLASTDB:-} ]]; then
  MAKEBLASTDB=$(dirname "$BLASTP")/makeblastdb
  [[ $BLASTP == */* && -x $MAKEBLASTDB ]] || MAKEBLASTDB=$(command -v makeblastdb || echo makeblastdb)
fi
read -r -a devices <<< "$DEVICES"
mkdir -p "$OUT/runs" "$OUT/db"
"$BLASTP" -version > "$OUT/blastp.version" 2>&1 || { echo "bench_blastp.sh: cannot run $BLASTP" >&2; exit 1; }

# --- our binary ---------------------------------------------------------------------------------------
if [[ -z $OURS ]]; then
  if [[ ! -x $WS ]]; then
    cuda=OFF
    [[ " $DEVICES " == *" gpu "* ]] && cuda=ON
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPSEARCH_CUDA=$cuda > "$OUT/configure.log"
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target warpsearch_cli > "$OUT/build.log"
  fi
  ours=("$WS" blastp)
  ours_label="warpsearch $("$WS" --version 2> /dev/null | head -1 || true)"
else
  read -r -a ours <<< "$OURS"
  ours_label=$OURS
fi

# --- data and databases ----------------------------------------------------------------------------------
if [[ -z ${DB:-} ]]; then
  data=$OUT/data-$DATA
  if [[ ! -f $data/.complete ]]; then
    scripts/make_blastp_data.sh "$data" "$DATA" | tee "$OUT/make_blastp_data.log"
    touch "$data/.complete"
  fi
  DB=$data/db.fa
  QUERIES=${QUERIES:-$data/queries.fa}
  TRUTH=${TRUTH:-$data/truth.tsv}
  case ${QUERY_SETS:-} in  # the huge preset's two sets by name
    paper3) QUERY_SETS=$data/queries_paper3.fa ;;
    sw20) QUERY_SETS=$data/sw_queries20.fa ;;
    paper3+sw20) QUERY_SETS="$data/queries_paper3.fa $data/sw_queries20.fa" ;;
  esac
fi
QUERIES=${QUERIES:-$testdata/prot/mmseqs_QUERY500.fasta}
QUERY_SETS=${QUERY_SETS:-$QUERIES}
TRUTH=${TRUTH:-}
read -r -a query_sets <<< "$QUERY_SETS"
for f in "$DB" "${query_sets[@]}"; do [[ -r $f ]] || { echo "bench_blastp.sh: cannot read $f" >&2; exit 1; }; done
db_records=$(grep -c '^>' "$DB")
db_residues=$(grep -v '^>' "$DB" | tr -d '\n\r' | wc -c)
# Set labels: file names without extension, made unique by a numeric prefix when two are equal.
declare -A label_seen=()
set_labels=()
for i in "${!query_sets[@]}"; do
  l=$(basename "${query_sets[$i]}")
  l=${l%.gz}
  l=${l%.*}
  [[ -n ${label_seen[$l]:-} ]] && l=$i-$l
  label_seen[$l]=1
  set_labels+=("$l")
done

# A database is rebuilt when DB is newer than its stamp.
if [[ -n ${BLASTDB:-} ]]; then
  blastdb=$BLASTDB
else
  blastdb=$OUT/db/blast/db
  if [[ ! -f $blastdb.stamp || $DB -nt $blastdb.stamp ]]; then
    rm -rf "$OUT/db/blast" && mkdir -p "$OUT/db/blast"
    "$MAKEBLASTDB" -in "$DB" -dbtype prot -out "$blastdb" > "$OUT/db/makeblastdb.log"
    touch "$blastdb.stamp"
  fi
fi
case $OURS_DB in
  packed)
    ours_db=$OUT/db/packed/db
    if [[ -z $OURS && (! -f $ours_db.stamp || $DB -nt $ours_db.stamp) ]]; then
      mkdir -p "$OUT/db/packed"
      "$WS" makedb "$DB" "$ours_db" --force > "$OUT/db/makedb.log"
      touch "$ours_db.stamp"
    fi
    if [[ -n $OURS ]]; then  # a stand-in command cannot read our database
      ours_db=$blastdb OURS_DB="blast (stand-in for packed)"
    fi
    ;;
  blast) ours_db=$blastdb ;;
  fasta) ours_db=$DB ;;
  *) echo "bench_blastp.sh: OURS_DB must be packed, blast or fasta" >&2; exit 2 ;;
esac
# Warm the page cache, so the first timed run does not pay for the disk.
cat "$DB" "${query_sets[@]}" "$blastdb".* > /dev/null 2>&1 || true
[[ $OURS_DB == packed && -d $OUT/db/packed ]] && cat "$OUT"/db/packed/* > /dev/null

# --- timing ----------------------------------------------------------------------------------------------
timer=${TIMER:-python}
if [[ -z ${TIMER:-} ]] && /usr/bin/time -v -o /dev/null true 2> /dev/null; then timer=gnu-time; fi
# timed NAME CMD...: runs CMD (stdout/stderr to NAME.out/.err), writes "wall_s X" and "maxrss_kb N" to
# NAME.time; returns CMD's status (124 or 137: stopped at RUN_TIMEOUT or DEADLINE; 200: not started, the
# deadline had passed).
timed() {
  local name=$1
  shift
  printf '%q ' "$@" > "$name.cmd"
  echo >> "$name.cmd"
  local status=0 seconds=$RUN_TIMEOUT limit=()
  if [[ -n $DEADLINE ]]; then
    local left=$((DEADLINE - $(date +%s)))
    if ((left <= 0)); then
      echo "not run: the deadline had passed" > "$name.err"
      return 200
    fi
    seconds=$(awk -v a="$seconds" -v b="$left" 'BEGIN { print (a == "" || b < a + 0) ? b : a }')
  fi
  [[ -n $seconds ]] && limit=(timeout -k 10 "$seconds")
  if [[ $timer == gnu-time ]]; then
    /usr/bin/time -v -o "$name.gnutime" "${limit[@]}" "$@" > "$name.out" 2> "$name.err" || status=$?
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]
                                           printf "wall_s %.3f\n", s }
                /Maximum resident set size/ { printf "maxrss_kb %d\n", $2 }' "$name.gnutime" > "$name.time"
  else
    python3 -c '
import resource, subprocess, sys, time
with open(sys.argv[2], "wb") as out, open(sys.argv[3], "wb") as err:
    t = time.perf_counter()
    rc = subprocess.call(sys.argv[4:], stdout=out, stderr=err)
    wall = time.perf_counter() - t
with open(sys.argv[1], "w") as f:
    f.write(f"wall_s {wall:.3f}\nmaxrss_kb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
sys.exit(rc)' "$name.time" "$name.out" "$name.err" "${limit[@]}" "$@" || status=$?
  fi
  return "$status"
}
field() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hits() { if [[ -f $1 ]]; then grep -vc '^#' "$1" || true; else echo -; fi; }
# phases FILE: "PHASE SECONDS" per phase of the "timing: PHASE SECONDS s" lines in FILE (summed per phase,
# in the order first seen).
phases() {
  awk '$1 == "timing:" && NF == 4 && $4 == "s" && $3 ~ /^[0-9.eE+-]+$/ {
         if (!($2 in sum)) order[++n] = $2
         sum[$2] += $3 }
       END { for (i = 1; i <= n; i++) printf "%s %.3f\n", order[i], sum[order[i]] }' "$1"
}
# failed WHO STATUS NAME: the status text of a failed run (its stderr's last line, or the time limit).
failed() {
  if [[ $2 == 200 ]]; then
    echo "$1 not run (deadline passed)"
  elif [[ (-n $RUN_TIMEOUT || -n $DEADLINE) && ($2 == 124 || $2 == 137) ]]; then
    echo "$1 stopped at the time limit (RUN_TIMEOUT ${RUN_TIMEOUT:--}, DEADLINE ${DEADLINE:--})"
  else
    echo "$1 failed (exit $2): $({ grep -v '^Run with --help' "$3.err" || true; } | tail -1)"
  fi
}
# same A B DIFF: "yes" when files A and B are identical, else "no (N lines)" (diff kept in DIFF); "-" when
# one is missing. Returns 1 when they differ.
same() {
  rm -f "$3"
  [[ -f $1 && -f $2 ]] || { echo -; return 0; }
  if diff "$1" "$2" > "$3"; then
    rm -f "$3"
    echo yes
  else
    echo "no ($(grep -c '^[<>]' "$3" || true) lines)"
    return 1
  fi
}

# --- runs ------------------------------------------------------------------------------------------------
read -r -a extra <<< "$ARGS"
ours_extra=()
((TIMING)) && ours_extra+=(--timing)
failures=0 differ=0 unstable=0 devdiff=0
rows=()        # fixed columns of each table row
row_status=()  # its status
row_phases=()  # its phases: "PHASE=SECONDS ..." (medians over the repeats)
phase_names=() # every phase name seen, in order
notes=()
recall_rows=()
for si in "${!query_sets[@]}"; do
  qfile=${query_sets[$si]} ql=${set_labels[$si]}
  common=(-query "$qfile" -evalue "$EVALUE" -max_target_seqs "$MAX_TARGET_SEQS" -outfmt "$OUTFMT")
  for cbs in $CBS; do
    declare -A reference=()  # device -> its first output of this (set, mode)
    for t in $THREADS; do
      declare -A ours_times=() ours_rss=() status=() stable=() phase_times=()
      for dev in "${devices[@]}"; do ours_times[$dev]="" ours_rss[$dev]=0 status[$dev]=ok stable[$dev]=yes; done
      blast_times="" blast_rss=0 blast_status=ok
      for ((r = 1; r <= REPEAT; r++)); do
        # blastp first: its output is the reference, so it is kept when a DEADLINE cuts the runs short.
        b=$OUT/runs/blastp.$ql.cbs$cbs.t$t.r$r
        rm -f "$b".*
        mt=()
        ((t > 1)) && mt=(-mt_mode "$MT_MODE")
        if timed "$b" "$BLASTP" "${common[@]}" -db "$blastdb" -comp_based_stats "$cbs" -num_threads "$t" "${mt[@]}" \
            -out "$b.tsv" "${extra[@]}"; then
          blast_times="$blast_times $(field wall_s "$b.time")"
          rss=$(field maxrss_kb "$b.time")
          ((rss > blast_rss)) && blast_rss=$rss
        else
          blast_status=$(failed blastp $? "$b")
          failures=$((failures + 1))
          rm -f "$b.tsv"
        fi
        for dev in "${devices[@]}"; do
          o=$OUT/runs/ours.$ql.$dev.cbs$cbs.t$t.r$r
          rm -f "$o".*  # no stale output may stand in for a failed run
          dev_opt=()
          ((pass_device)) && dev_opt=(--device "$dev")
          if timed "$o" "${ours[@]}" "${common[@]}" -db "$ours_db" -comp_based_stats "$cbs" -num_threads "$t" \
              -out "$o.tsv" "${extra[@]}" "${dev_opt[@]}" "${ours_extra[@]}"; then
            ours_times[$dev]="${ours_times[$dev]} $(field wall_s "$o.time")"
            rss=$(field maxrss_kb "$o.time")
            ((rss > ours_rss[$dev])) && ours_rss[$dev]=$rss
            while read -r phase secs; do
              [[ -n $phase ]] || continue
              [[ " ${phase_names[*]} " == *" $phase "* ]] || phase_names+=("$phase")
              phase_times[$dev.$phase]="${phase_times[$dev.$phase]:-} $secs"
            done < <(phases "$o.err")
          else
            status[$dev]=$(failed "ours ($dev)" $? "$o")
            failures=$((failures + 1))
            rm -f "$o.tsv"
          fi
          # Ours must not depend on the thread count or the run.
          if [[ -z ${reference[$dev]:-} ]]; then
            [[ -f $o.tsv ]] && reference[$dev]=$o.tsv
          elif [[ -f $o.tsv ]] && ! cmp -s "${reference[$dev]}" "$o.tsv"; then
            stable[$dev]=no
            unstable=$((unstable + 1))
            notes+=("$ql cbs $cbs: $(basename "$o").tsv differs from $(basename "${reference[$dev]}")")
          fi
        done
      done
      b=$OUT/runs/blastp.$ql.cbs$cbs.t$t.r1
      bs=$(median <<< "$blast_times")
      o0=$OUT/runs/ours.$ql.${devices[0]}.cbs$cbs.t$t.r1
      for dev in "${devices[@]}"; do
        o=$OUT/runs/ours.$ql.$dev.cbs$cbs.t$t.r1
        identical=$(same "$o.tsv" "$b.tsv" "$OUT/runs/diff.$ql.$dev.cbs$cbs.t$t.txt") || differ=$((differ + 1))
        vs_first=ref
        if [[ $dev != "${devices[0]}" ]]; then
          vs_first=$(same "$o0.tsv" "$o.tsv" "$OUT/runs/diff.$ql.${devices[0]}-$dev.cbs$cbs.t$t.txt") ||
            devdiff=$((devdiff + 1))
        fi
        os=$(median <<< "${ours_times[$dev]}")
        speedup=$(awk -v a="$os" -v b="$bs" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", b / a; else print "-" }')
        rows+=("$(printf '%-14s %4s %7s %-6s %9s %9s %7s %9s %10s %9s %11s  %-12s %-6s %-12s' "$ql" "$cbs" "$t" "$dev" \
          "$os" "$bs" "$speedup" "$((ours_rss[$dev] / 1024))" "$((blast_rss / 1024))" "$(hits "$o.tsv")" \
          "$(hits "$b.tsv")" "$identical" "${stable[$dev]}" "$vs_first")")
        st=${status[$dev]}
        [[ $blast_status != ok ]] && st=$([[ $st == ok ]] && echo "$blast_status" || echo "$st; $blast_status")
        row_status+=("$st")
        p=""
        for key in "${!phase_times[@]}"; do
          [[ $key == "$dev".* ]] && p="$p ${key#"$dev".}=$(median <<< "${phase_times[$key]}")"
        done
        row_phases+=("$p")
      done
      unset ours_times ours_rss status stable phase_times
    done
    unset reference
    # Planted homologs found (first thread count's outputs): a hit of the planted sequence by its own query;
    # only the homologs of this set's queries count.
    first_t=${THREADS%% *}
    if [[ -n $TRUTH && -f $TRUTH && $OUTFMT =~ ^[67]$ ]]; then
      progs=()
      for dev in "${devices[@]}"; do progs+=("ours.$ql.$dev"); done
      progs+=("blastp.$ql")
      for prog in "${progs[@]}"; do
        f=$OUT/runs/$prog.cbs$cbs.t$first_t.r1.tsv
        [[ -f $f ]] || continue
        name=${prog/.$ql/}
        recall_rows+=("$(awk -F'\t' -v label="$(printf '%-14s cbs %s %-10s' "$ql" "$cbs" "$name")" '
          FILENAME == ARGV[1] { if (/^>/) { id = substr($1, 2); sub(/[ \t].*/, "", id); inset[id] = 1 } next }
          FILENAME == ARGV[2] { if ($0 !~ /^#/ && ($2 in inset)) { query[$1] = $2; level[$1] = $4
                                  if (!($4 in total)) order[++nl] = $4; total[$4]++ }
                                next }
          /^#/ { next }
          ($2 in query) && query[$2] == $1 && !seen[$2]++ { found[level[$2]]++ }
          !($2 in query) && $2 !~ /^pl_/ && $11 + 0 <= 1e-3 { background++ }
          END { s = label; for (i = 1; i <= nl; i++) s = s sprintf("  %s%%: %d/%d", order[i], found[order[i]], total[order[i]])
                printf "%s  background hits with E <= 1e-3: %d\n", s, background }' "$qfile" "$TRUTH" "$f")")
      done
    fi
  done
done

# --- summary (last) -----------------------------------------------------------------------------------
echo
echo "== blastp benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; timer $timer)"
if [[ " $DEVICES " == *" gpu "* ]] && command -v nvidia-smi > /dev/null; then
  echo "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2> /dev/null | head -1)"
fi
echo "ours: $ours_label, -db $ours_db ($OURS_DB), devices: $DEVICES$( ((pass_device)) || echo ' (not passed)')$( ((TIMING)) && echo ', --timing')"
echo "blastp: $(head -1 "$OUT/blastp.version") ($BLASTP), -db $blastdb, -mt_mode $MT_MODE"
echo "database: $DB, $db_records sequences, $db_residues residues"
for si in "${!query_sets[@]}"; do
  echo "queries ${set_labels[$si]}: ${query_sets[$si]}, $(grep -c '^>' "${query_sets[$si]}") sequences, $(grep -v '^>' "${query_sets[$si]}" | tr -d '\n\r' | wc -c) residues"
done
echo "options: -evalue $EVALUE -max_target_seqs $MAX_TARGET_SEQS -outfmt '$OUTFMT' $ARGS; median of $REPEAT run(s); times in s, RSS in MiB"
header=$(printf '%-14s %4s %7s %-6s %9s %9s %7s %9s %10s %9s %11s  %-12s %-6s %-12s' queries cbs threads device ours_s \
  blastp_s speedup ours_MiB blastp_MiB ours_hits blastp_hits identical stable "=${devices[0]}")
for phase in "${phase_names[@]}"; do header="$header $(printf '%*s' $((${#phase} > 9 ? ${#phase} : 9)) "$phase")"; done
echo "$header status"
for i in "${!rows[@]}"; do
  line=${rows[$i]}
  for phase in "${phase_names[@]}"; do
    v=-
    for kv in ${row_phases[$i]}; do [[ ${kv%%=*} == "$phase" ]] && v=${kv#*=}; done
    line="$line $(printf '%*s' $((${#phase} > 9 ? ${#phase} : 9)) "$v")"
  done
  echo "$line ${row_status[$i]}"
done
if ((${#recall_rows[@]} > 0)); then
  echo "planted homologs found (its own query hits it), first thread count:"
  printf '  %s\n' "${recall_rows[@]}"
fi
if ((${#notes[@]} > 0)); then printf '%s\n' "${notes[@]}"; fi
if ((failures + unstable + differ + devdiff > 0)); then
  echo "FAILED: $failures failed run(s), $unstable unstable output(s) of ours, $differ run(s) of ours differing from blastp, $devdiff differing from ours on ${devices[0]} (diffs in $OUT/runs)"
  exit 1
fi
echo "all runs ok: outputs identical to blastp's and independent of the thread count and device"
