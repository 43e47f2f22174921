#!/usr/bin/env bash
# bootstrap.sh: installs what warpsearch needs on Debian 12 (only what is missing) and fetches test data.
#
#   scripts/bootstrap.sh            build dependencies + oracle tools + test data (for the test suite)
#   scripts/bootstrap.sh --build    build dependencies only (enough to build and run warpsearch)
#
# Build: cmake, ninja, g++, clang (fuzzing), zlib, fmt, CLI11, GoogleTest, Google Benchmark, OpenMPI,
# matplotlib (plots). Oracles used by tests: hmmer, ncbi-blast+, parasail, python3-parasail, emboss,
# fasta3. Uses sudo when not run as root. CUDA is optional and never installed here: with nvcc on PATH
# or in /usr/local/cuda the build includes the GPU code.
set -euo pipefail

mode=all
case "${1:-}" in
  "") ;;
  --build) mode=build ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "bootstrap.sh: unknown option '$1' (expected --build)" >&2; exit 2 ;;
esac

BUILD_PKGS=(build-essential cmake ninja-build pkg-config git zlib1g-dev libfmt-dev libcli11-dev
            googletest libgtest-dev libgmock-dev libbenchmark-dev libopenmpi-dev openmpi-bin)
TEST_PKGS=(clang libclang-rt-14-dev python3 python3-matplotlib hmmer ncbi-blast+ parasail libparasail-dev
           python3-parasail emboss fasta3 gzip)

wanted=("${BUILD_PKGS[@]}")
[[ $mode == all ]] && wanted+=("${TEST_PKGS[@]}")

missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=()
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "bootstrap.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  echo "bootstrap: installing ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "bootstrap: all ${#wanted[@]} packages present"
fi

if [[ $mode == all ]]; then
  "$(dirname "$0")/fetch_testdata.sh"
fi
