#!/usr/bin/env bash
# gpu_check.sh: builds warpsearch with CUDA on a GPU machine, runs the GPU tests (ctest -L gpu), the
# other tests and the gpu-* entries of warpsearch-bench, and prints a summary table as the last thing
# it writes. Logs of every step go to $OUT (or $BUILD_DIR/gpu-check-logs).
#
#   scripts/gpu_check.sh                 (from anywhere; it works in the repository root)
#
# Environment (all optional):
#   OUT                  folder for the logs (default: $BUILD_DIR/gpu-check-logs)
#   BUILD_DIR            build folder, reused when it exists (default: build-gpu-check)
#   CUDA_ARCHS           CMAKE_CUDA_ARCHITECTURES (default: 90)
#   JOBS                 parallel build and test jobs (default: 16)
#   BENCH_TIMEOUT        seconds allowed per benchmark run (default: 300)
#   BENCH_INPUT          FASTA input of the benchmarks (default: $WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta
#                        when present, else a generated random protein FASTA)
#   BENCH_MATCH          regex of the warpsearch-bench entries to run (default: GPU entries and the CPU
#                        references they are compared with, '^(gpu|cpu)-')
#   WARPSEARCH_TESTDATA  real data (scripts/fetch_testdata.sh)
# Exit status: 0 when the build, every test and every benchmark passed, and the GPU tests did not all
# skip; 1 otherwise (the summary's last line says why).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
BUILD_DIR=${BUILD_DIR:-build-gpu-check}
CUDA_ARCHS=${CUDA_ARCHS:-90}
JOBS=${JOBS:-16}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
BENCH_MATCH=${BENCH_MATCH:-'^(gpu|cpu)-'}
LOG_DIR=${OUT:-$BUILD_DIR/gpu-check-logs}
mkdir -p "$LOG_DIR" || exit 1

problems=()  # one entry per failure; empty means PASS

step() { printf '\n=== %s\n' "$*"; }

# Prints the last lines of a log, indented, to show why a step failed.
show_tail() { tail -n "${2:-40}" "$1" | sed 's/^/    /'; }

# ctest_counts LOG: "total passed failed skipped" from a ctest log. ctest counts skipped tests as
# passed in its "N tests failed out of M" line, so they are taken out of "passed" here.
ctest_counts() {
  local total failed skipped
  # "N% tests passed, F tests failed out of T", or "100% tests passed out of T" (newer CTest).
  total=$(sed -n 's/.*tests passed.* out of \([0-9][0-9]*\).*/\1/p' "$1" | tail -n 1)
  failed=$(sed -n 's/.* \([0-9][0-9]*\) tests failed out of .*/\1/p' "$1" | tail -n 1)
  skipped=$(grep -c '(Skipped)' "$1")
  total=${total:-0}
  failed=${failed:-0}
  echo "$total $((total - failed - skipped)) $failed $skipped"
}

# --- Device -------------------------------------------------------------------------------------------
step "devices"
device="none found"
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi -L 2>&1 | tee "$LOG_DIR/nvidia-smi.txt"
  gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
  gpu_count=$(printf '%s\n' "$gpu_names" | grep -c .)
  if [ "$gpu_count" -gt 0 ]; then
    device="$gpu_count x $(printf '%s\n' "$gpu_names" | head -n 1) (driver $driver)"
  fi
else
  echo "nvidia-smi not found" | tee "$LOG_DIR/nvidia-smi.txt"
  gpu_count=0
fi

# --- Configure and build ------------------------------------------------------------------------------
step "configure $BUILD_DIR (Release, CUDA architectures $CUDA_ARCHS)"
cmake_args=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DWARPSEARCH_CUDA=ON
            "-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS")
[ -f "$BUILD_DIR/CMakeCache.txt" ] || cmake_args+=(-G Ninja)
configured=0
if cmake "${cmake_args[@]}" > "$LOG_DIR/configure.log" 2>&1; then
  configured=1
  grep 'warpsearch:' "$LOG_DIR/configure.log"
else
  problems+=("configure failed")
  show_tail "$LOG_DIR/configure.log"
fi

built_gpu_tests=0
built_all=0
if [ "$configured" = 1 ]; then
  step "build test_gpu"
  if cmake --build "$BUILD_DIR" --target test_gpu -j "$JOBS" > "$LOG_DIR/build-test_gpu.log" 2>&1; then
    built_gpu_tests=1
    echo "ok"
  else
    problems+=("test_gpu did not build")
    show_tail "$LOG_DIR/build-test_gpu.log"
  fi
  step "build all"
  if cmake --build "$BUILD_DIR" -j "$JOBS" > "$LOG_DIR/build.log" 2>&1; then
    built_all=1
    echo "ok"
  else
    problems+=("full build failed")
    show_tail "$LOG_DIR/build.log"
  fi
fi

# --- Tests --------------------------------------------------------------------------------------------
gpu_counts="not run"
other_counts="not run"
if [ "$built_gpu_tests" = 1 ]; then
  step "GPU tests (ctest -L gpu)"
  ctest --test-dir "$BUILD_DIR" -L gpu --no-tests=error --output-on-failure > "$LOG_DIR/ctest-gpu.log" 2>&1
  gpu_status=$?
  cat "$LOG_DIR/ctest-gpu.log"
  read -r g_total g_passed g_failed g_skipped < <(ctest_counts "$LOG_DIR/ctest-gpu.log")
  gpu_counts="$g_total total, $g_passed passed, $g_failed failed, $g_skipped skipped"
  if [ "$gpu_status" != 0 ] || [ "$g_failed" != 0 ] || [ "$g_total" = 0 ]; then
    problems+=("GPU tests failed")
  elif [ "$gpu_count" -gt 0 ] && [ "$g_skipped" = "$g_total" ]; then
    problems+=("nvidia-smi lists a GPU but every GPU test skipped")
  fi
fi
if [ "$configured" = 1 ]; then
  step "other tests (ctest -LE gpu)"
  ctest --test-dir "$BUILD_DIR" -LE gpu -j "$JOBS" --output-on-failure > "$LOG_DIR/ctest-other.log" 2>&1
  other_status=$?
  read -r o_total o_passed o_failed o_skipped < <(ctest_counts "$LOG_DIR/ctest-other.log")
  other_counts="$o_total total, $o_passed passed, $o_failed failed, $o_skipped skipped"
  echo "$other_counts"
  if [ "$other_status" != 0 ] || [ "$o_failed" != 0 ]; then
    problems+=("other tests failed")
    sed -n '/The following tests FAILED/,$p' "$LOG_DIR/ctest-other.log"
  fi
fi

# --- Benchmarks ---------------------------------------------------------------------------------------
bench_lines=()
bench_state="not built"
bench="$BUILD_DIR/bench/warpsearch-bench"
if [ -x "$bench" ]; then
  step "GPU benchmarks"
  input=${BENCH_INPUT:-}
  if [ -n "$input" ]; then
    :
  elif [ -n "${WARPSEARCH_TESTDATA:-}" ] && [ -f "$WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta" ]; then
    input="$WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta"
  else
    # 20,000 random proteins of 50..549 residues (about 6M residues), the same on every run.
    input="$BUILD_DIR/gpu-check-proteins.fasta"
    if [ ! -s "$input" ]; then
      awk 'BEGIN {
        srand(42); aa = "ACDEFGHIKLMNPQRSTVWY";
        for (s = 1; s <= 20000; s++) {
          n = 50 + int(rand() * 500); seq = "";
          for (i = 0; i < n; i++) seq = seq substr(aa, 1 + int(rand() * 20), 1);
          printf(">random%d\n", s);
          for (i = 1; i <= n; i += 60) print substr(seq, i, 60);
        }
      }' > "$input.tmp" && mv "$input.tmp" "$input"
    fi
  fi
  echo "input: $input"
  if "$bench" list > "$LOG_DIR/bench-list.txt" 2>&1; then
    if awk '$1 ~ /^gpu-/ { found = 1 } END { exit !found }' "$LOG_DIR/bench-list.txt"; then
      # The result table goes to stdout, progress to stderr; the table's column header starts "name".
      "$bench" run --match "$BENCH_MATCH" --input "$input" --timeout "$BENCH_TIMEOUT" --label "$device" \
        --csv "$LOG_DIR/bench-gpu.csv" < /dev/null > "$LOG_DIR/bench-gpu.txt" 2> "$LOG_DIR/bench-gpu.err"
      bench_status=$?
      bench_state="gpu-* entries of warpsearch-bench on $(basename "$input"):"
      mapfile -t bench_lines < <(sed -n '/^name  /,$p' "$LOG_DIR/bench-gpu.txt")
      cat "$LOG_DIR/bench-gpu.txt"
      if [ "$bench_status" != 0 ]; then
        problems+=("GPU benchmarks failed (exit $bench_status)")
        show_tail "$LOG_DIR/bench-gpu.err" 10
      fi
    else
      bench_state="no gpu-* entries in warpsearch-bench list"
      echo "$bench_state"
    fi
  else
    bench_state="warpsearch-bench list failed"
    problems+=("warpsearch-bench list failed")
    show_tail "$LOG_DIR/bench-list.txt"
  fi
fi

# --- Summary (last) -----------------------------------------------------------------------------------
if [ "$built_all" = 1 ]; then build_state="ok"; else build_state="FAILED"; fi
[ "$configured" = 1 ] || build_state="configure FAILED"
{
  printf '\n==================== warpsearch GPU check ====================\n'
  printf '%-22s %s\n' "device" "$device"
  printf '%-22s %s\n' "build" "$build_state ($BUILD_DIR, CUDA architectures $CUDA_ARCHS)"
  printf '%-22s %s\n' "gpu tests" "$gpu_counts"
  printf '%-22s %s\n' "other tests" "$other_counts"
  printf '%-22s %s\n' "benchmarks" "$bench_state"
  for line in "${bench_lines[@]}"; do printf '  %s\n' "$line"; done
  printf '%-22s %s\n' "logs" "$LOG_DIR"
  if [ "${#problems[@]}" = 0 ]; then
    printf '%-22s %s\n' "result" "PASS"
  else
    joined=$(printf '%s; ' "${problems[@]}")
    printf '%-22s %s\n' "result" "FAIL: ${joined%; }"
  fi
} | tee "$LOG_DIR/summary.txt"
[ "${#problems[@]}" = 0 ]
