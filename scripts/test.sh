#!/usr/bin/env bash
# test.sh: installs what is missing (build deps, oracle tools, test data), builds warpsearch and runs
# every test: the installed-package consumer example, a bounded fuzzing run of every parser, the whole
# CTest suite under AddressSanitizer/UBSan, and the whole CTest suite of the Release build (unit,
# oracle, CLI and bad-input tests; GPU tests skip without a GPU).
#
#   scripts/test.sh                      everything (what CI runs)
#   FUZZ_SECONDS=0 scripts/test.sh       skip fuzzing (default: 30 s per fuzz target)
#   SANITIZE=0 scripts/test.sh           skip the ASan/UBSan build and run
#   WARPSEARCH_PRESET=debug scripts/test.sh   use another preset than release for the main build
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${WARPSEARCH_PRESET:-release}
fuzz_seconds=${FUZZ_SECONDS:-30}
# Builds a preset with its output kept in build/PRESET-build.log; on failure the end of that log (the
# compiler's errors) is printed before exiting.
quiet_build() {
  if ! cmake --build --preset "$1" -j "$jobs" > "build/$1-build.log" 2>&1; then
    tail -n 60 "build/$1-build.log"
    echo "test.sh: the $1 build failed (log: build/$1-build.log)" >&2
    exit 1
  fi
}
sanitize=${SANITIZE:-1}
jobs=$(nproc)

scripts/bootstrap.sh

echo "== build ($preset)"
cmake --preset "$preset" -DWARPSEARCH_WERROR=ON >/dev/null
cmake --build --preset "$preset" -j "$jobs"

echo "== install + find_package consumer"
prefix=$PWD/build/$preset-install
rm -rf "$prefix" "build/$preset-consumer"
cmake --install "build/$preset" --prefix "$prefix" >/dev/null
cmake -S examples/consumer -B "build/$preset-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "build/$preset-consumer" >/dev/null
"build/$preset-consumer/count_residues" data/globins45.fa
"build/$preset-consumer/align_pairs" data/globins45.fa data/globins45.fa 16 | tail -n 2
"$prefix/bin/warpsearch" --version

if ((fuzz_seconds > 0)); then
  echo "== fuzz (${fuzz_seconds} s per target)"
  cmake --preset fuzz >/dev/null
  quiet_build fuzz
  for fuzzer in "$PWD"/build/fuzz/fuzz/fuzz_*; do
    [[ -x $fuzzer ]] || continue
    name=$(basename "$fuzzer"); name=${name#fuzz_}
    work=build/fuzz/run-$name
    rm -rf "$work"; mkdir -p "$work/corpus"
    [[ -d fuzz/corpus/$name ]] && cp -r "fuzz/corpus/$name/." "$work/corpus/"
    echo "-- fuzz_$name"
    ( cd "$work" && "$fuzzer" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=0 corpus 2> log.txt ) || {
      tail -40 "$work/log.txt"; echo "fuzz_$name found a crash: reproducer in $work" >&2; exit 1; }
    grep -E '^#[0-9]+.*DONE' "$work/log.txt" | tail -1 || true
  done
fi

if ((sanitize)) && [[ $preset != asan ]]; then
  echo "== tests under ASan/UBSan"
  # Warnings are errors in the main build (the same sources); not here: GCC 12 at -O1 with the sanitizers'
  # instrumentation reports false "may be used uninitialized" warnings inside libstdc++ (<regex>).
  cmake --preset asan -DWARPSEARCH_WERROR=OFF >/dev/null
  quiet_build asan
  # The end-to-end MPI comparisons (label mpi) use only the bundled data here (WARPSEARCH_MPI_TESTS=small):
  # with the real test data they take over 40 minutes under the sanitizers; the Release run below has it.
  if ! WARPSEARCH_REQUIRE_TESTDATA=1 WARPSEARCH_MPI_TESTS=small ctest --preset asan -j "$jobs" \
    > build/asan/ctest.log 2>&1; then
    tail -n 100 build/asan/ctest.log
    echo "test.sh: tests failed under ASan/UBSan (log: build/asan/ctest.log)" >&2
    exit 1
  fi
  grep -E 'tests passed' build/asan/ctest.log
fi

echo "== tests ($preset)"
WARPSEARCH_REQUIRE_TESTDATA=1 ctest --preset "$preset" -j "$jobs"
