#!/usr/bin/env bash
# demo.sh: installs what is missing, builds warpsearch (Release) and runs a real job on bundled data.
# Until the first search command lands, the job is: pack the bundled proteins and genome into
# databases (makedb) and describe them (dbinfo).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh --build
cmake --preset release >/dev/null
cmake --build --preset release
ws=build/release/src/warpsearch
out=build/demo
mkdir -p "$out"

"$ws" --version
"$ws" makedb data/globins45.fa "$out/globins45" --force
"$ws" dbinfo "$out/globins45"
"$ws" makedb data/humanMito.fa "$out/humanMito" --force
"$ws" dbinfo "$out/humanMito" --verify
"$ws" devices
