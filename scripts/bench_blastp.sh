#!/usr/bin/env bash
# bench_blastp.sh: `warpsearch blastp` against BLAST+ 2.12 `blastp` on one machine with the same options:
# wall time and peak memory per thread count and composition-based-statistics mode, hit counts, whether the
# two tabular outputs are identical, whether ours is the same at every thread count, and how many planted
# homologs each finds (scripts/make_blastp_data.sh truth). The numbers of docs/PERFORMANCE.md's blastp
# section; a summary table is printed last.
#
#   scripts/bench_blastp.sh            (from anywhere; builds into $BUILD_DIR when it has no binary)
#
# On a GPU machine (Ubuntu 24.04, no BLAST+ installed) with the packed oracle (scripts/package_blastp_oracle.sh,
# carried as .device/blast) and the test data (.device/testdata):
#   WARPSEARCH_TESTDATA=$PWD/.device/testdata BLASTP=.device/blast/blastp BUILD_DIR=build-bp scripts/bench_blastp.sh
#
# Environment (all optional; defaults in brackets):
#   BUILD_DIR   build folder [build/bench-blastp] (configured Release, CUDA off: blastp runs on the CPU)
#   WS          the warpsearch binary [$BUILD_DIR/src/warpsearch]; built when missing and OURS is unset
#   OURS        command run instead of "$WS blastp" (word-split), e.g. OURS=blastp to test this script
#   OUT         folder for data, databases, outputs and logs [$BUILD_DIR/bench-blastp-out]
#   DATA        size made by scripts/make_blastp_data.sh when DB is unset: small, bench or big [bench]
#   DB          database FASTA [$OUT/data-$DATA/db.fa]; QUERIES  query FASTA [$OUT/data-$DATA/queries.fa]
#   TRUTH       truth table of DB [$OUT/data-$DATA/truth.tsv when made here; none otherwise]
#   OURS_DB     what ours searches: packed (warpsearch makedb), blast (the makeblastdb database) or fasta
#               (DB itself) [packed]; blastp always searches the makeblastdb database
#   THREADS     -num_threads values ["1 2 4 8 16"]
#   CBS         -comp_based_stats modes ["0 2"] (2 is blastp's default)
#   REPEAT      timed runs of each program per (mode, thread count); the median is reported [1]
#   OUTFMT      -outfmt of both [6]; EVALUE [10], MAX_TARGET_SEQS [500]; ARGS: more options for both
#   BLASTP      blastp [blastp on PATH, else .device/blast/blastp]; MAKEBLASTDB [next to BLASTP, else PATH]
#   MT_MODE     blastp -mt_mode when threads > 1 [0: split by database]
#   TIMER       gnu-time or python [gnu-time when /usr/bin/time -v works]
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh) [~/.cache/warpsearch/testdata]
# Every run leaves its output, stderr, command line and timing report under $OUT/runs (NAME.tsv, .err,
# .cmd, .time). Times come from /usr/bin/time -v (wall clock, maximum RSS) when it exists, else from a
# python3 runner (perf_counter, getrusage of the child). Exit status 1 when a run failed, our output differs
# between thread counts or repeats, or ours and blastp's differ.
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
THREADS=${THREADS:-1 2 4 8 16}
CBS=${CBS:-0 2}
REPEAT=${REPEAT:-1}
OUTFMT=${OUTFMT:-6}
EVALUE=${EVALUE:-10}
MAX_TARGET_SEQS=${MAX_TARGET_SEQS:-500}
ARGS=${ARGS:-}
MT_MODE=${MT_MODE:-0}
if [[ -z ${BLASTP:-} ]]; then
  BLASTP=$(command -v blastp || echo .device/blast/blastp)
fi
if [[ -z ${MAKEBLASTDB:-} ]]; then
  MAKEBLASTDB=$(dirname "$BLASTP")/makeblastdb
  [[ $BLASTP == */* && -x $MAKEBLASTDB ]] || MAKEBLASTDB=$(command -v makeblastdb || echo makeblastdb)
fi
mkdir -p "$OUT/runs" "$OUT/db"
"$BLASTP" -version > "$OUT/blastp.version" 2>&1 || { echo "bench_blastp.sh: cannot run $BLASTP" >&2; exit 1; }

# --- our binary ---------------------------------------------------------------------------------------
if [[ -z $OURS ]]; then
  if [[ ! -x $WS ]]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPSEARCH_CUDA=OFF > "$OUT/configure.log"
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
fi
QUERIES=${QUERIES:-$testdata/prot/mmseqs_QUERY500.fasta}
TRUTH=${TRUTH:-}
for f in "$DB" "$QUERIES"; do [[ -r $f ]] || { echo "bench_blastp.sh: cannot read $f" >&2; exit 1; }; done
db_records=$(grep -c '^>' "$DB")
db_residues=$(grep -v '^>' "$DB" | tr -d '\n\r' | wc -c)
n_queries=$(grep -c '^>' "$QUERIES")

# A database is rebuilt when DB is newer than its stamp.
blastdb=$OUT/db/blast/db
if [[ ! -f $blastdb.stamp || $DB -nt $blastdb.stamp ]]; then
  rm -rf "$OUT/db/blast" && mkdir -p "$OUT/db/blast"
  "$MAKEBLASTDB" -in "$DB" -dbtype prot -out "$blastdb" > "$OUT/db/makeblastdb.log"
  touch "$blastdb.stamp"
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
cat "$DB" "$QUERIES" "$OUT"/db/blast/* > /dev/null
[[ $OURS_DB == packed && -d $OUT/db/packed ]] && cat "$OUT"/db/packed/* > /dev/null

# --- timing ----------------------------------------------------------------------------------------------
timer=${TIMER:-python}
if [[ -z ${TIMER:-} ]] && /usr/bin/time -v -o /dev/null true 2> /dev/null; then timer=gnu-time; fi
# timed NAME CMD...: runs CMD (stdout/stderr to NAME.out/.err), writes "wall_s X" and "maxrss_kb N" to
# NAME.time; returns CMD's status.
timed() {
  local name=$1
  shift
  printf '%q ' "$@" > "$name.cmd"
  echo >> "$name.cmd"
  local status=0
  if [[ $timer == gnu-time ]]; then
    /usr/bin/time -v -o "$name.gnutime" "$@" > "$name.out" 2> "$name.err" || status=$?
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
sys.exit(rc)' "$name.time" "$name.out" "$name.err" "$@" || status=$?
  fi
  return "$status"
}
field() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hits() { if [[ -f $1 ]]; then grep -vc '^#' "$1" || true; else echo -; fi; }

# --- runs ------------------------------------------------------------------------------------------------
common=(-query "$QUERIES" -evalue "$EVALUE" -max_target_seqs "$MAX_TARGET_SEQS" -outfmt "$OUTFMT")
read -r -a extra <<< "$ARGS"
failures=0 differ=0 unstable=0
rows=()
notes=()
recall_rows=()
for cbs in $CBS; do
  reference=""
  for t in $THREADS; do
    ours_times="" blast_times="" ours_rss=0 blast_rss=0 status=ok stable=yes
    for ((r = 1; r <= REPEAT; r++)); do
      o=$OUT/runs/ours.cbs$cbs.t$t.r$r b=$OUT/runs/blastp.cbs$cbs.t$t.r$r
      rm -f "$o".* "$b".*  # no stale output may stand in for a failed run
      mt=()
      ((t > 1)) && mt=(-mt_mode "$MT_MODE")
      if timed "$o" "${ours[@]}" "${common[@]}" -db "$ours_db" -comp_based_stats "$cbs" -num_threads "$t" \
          -out "$o.tsv" "${extra[@]}"; then
        ours_times="$ours_times $(field wall_s "$o.time")"
        rss=$(field maxrss_kb "$o.time")
        ((rss > ours_rss)) && ours_rss=$rss
      else
        status="ours failed (exit $?): $(tail -1 "$o.err")"
        failures=$((failures + 1))
      fi
      if timed "$b" "$BLASTP" "${common[@]}" -db "$blastdb" -comp_based_stats "$cbs" -num_threads "$t" "${mt[@]}" \
          -out "$b.tsv" "${extra[@]}"; then
        blast_times="$blast_times $(field wall_s "$b.time")"
        rss=$(field maxrss_kb "$b.time")
        ((rss > blast_rss)) && blast_rss=$rss
      else
        status="blastp failed (exit $?): $(tail -1 "$b.err")"
        failures=$((failures + 1))
      fi
      # Ours must not depend on the thread count or the run.
      if [[ -z $reference ]]; then
        reference=$o.tsv
      elif [[ -f $o.tsv ]] && ! cmp -s "$reference" "$o.tsv"; then
        stable=no
        unstable=$((unstable + 1))
        notes+=("cbs $cbs: $(basename "$o").tsv differs from $(basename "$reference")")
      fi
    done
    o=$OUT/runs/ours.cbs$cbs.t$t.r1 b=$OUT/runs/blastp.cbs$cbs.t$t.r1
    d=$OUT/runs/diff.cbs$cbs.t$t.txt same=-
    rm -f "$d"
    if [[ -f $o.tsv && -f $b.tsv ]]; then
      if diff "$o.tsv" "$b.tsv" > "$d"; then
        same=yes
      else
        same="no ($(grep -c '^[<>]' "$d" || true) lines)"
        differ=$((differ + 1))
      fi
    fi
    os=$(median <<< "$ours_times") bs=$(median <<< "$blast_times")
    speedup=$(awk -v a="$os" -v b="$bs" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", b / a; else print "-" }')
    rows+=("$(printf '%4s %7s %9s %9s %7s %9s %10s %9s %11s  %-10s %-6s %s' "$cbs" "$t" "$os" "$bs" "$speedup" \
      "$((ours_rss / 1024))" "$((blast_rss / 1024))" "$(hits "$o.tsv")" "$(hits "$b.tsv")" "$same" "$stable" \
      "$([[ $status == ok ]] && echo ok || echo "$status")")")
  done
  # Planted homologs found (first thread count's outputs): a hit of the planted sequence by its own query.
  first_t=${THREADS%% *}
  if [[ -n $TRUTH && -f $TRUTH && $OUTFMT =~ ^[67]$ ]]; then
    for prog in ours blastp; do
      f=$OUT/runs/$prog.cbs$cbs.t$first_t.r1.tsv
      [[ -f $f ]] || continue
      recall_rows+=("$(awk -F'\t' -v label="$(printf 'cbs %s %-7s' "$cbs" "$prog")" '
        NR == FNR { if ($0 !~ /^#/) { query[$1] = $2; level[$1] = $4; if (!($4 in total)) order[++nl] = $4; total[$4]++ }
                    next }
        /^#/ { next }
        ($2 in query) && query[$2] == $1 && !seen[$2]++ { found[level[$2]]++ }
        !($2 in query) && $11 + 0 <= 1e-3 { background++ }
        END { s = label; for (i = 1; i <= nl; i++) s = s sprintf("  %s%%: %d/%d", order[i], found[order[i]], total[order[i]])
              printf "%s  background hits with E <= 1e-3: %d\n", s, background }' "$TRUTH" "$f")")
    done
  fi
done

# --- summary (last) -----------------------------------------------------------------------------------
echo
echo "== blastp benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; timer $timer)"
echo "ours: $ours_label, -db $ours_db ($OURS_DB); blastp: $(head -1 "$OUT/blastp.version") ($BLASTP), -mt_mode $MT_MODE"
echo "database: $DB, $db_records sequences, $db_residues residues; queries: $QUERIES, $n_queries"
echo "options: -evalue $EVALUE -max_target_seqs $MAX_TARGET_SEQS -outfmt '$OUTFMT' $ARGS; median of $REPEAT run(s); times in s, RSS in MiB"
printf '%4s %7s %9s %9s %7s %9s %10s %9s %11s  %-10s %-6s %s\n' cbs threads ours_s blastp_s speedup ours_MiB \
  blastp_MiB ours_hits blastp_hits identical stable status
printf '%s\n' "${rows[@]}"
if ((${#recall_rows[@]} > 0)); then
  echo "planted homologs found (its own query hits it), first thread count:"
  printf '  %s\n' "${recall_rows[@]}"
fi
if ((${#notes[@]} > 0)); then printf '%s\n' "${notes[@]}"; fi
if ((failures + unstable + differ > 0)); then
  echo "FAILED: $failures failed run(s), $unstable unstable output(s) of ours, $differ (mode, threads) pair(s) where ours and blastp differ (diffs in $OUT/runs)"
  exit 1
fi
echo "all runs ok: outputs identical to blastp's and independent of the thread count"
