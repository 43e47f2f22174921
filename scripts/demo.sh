#!/usr/bin/env bash
# demo.sh: installs what is missing, builds warpsearch (Release) and runs a real job on bundled data.
# The jobs: search the 45 bundled globins with the bundled globin profile HMM (hmmsearch, HMMER 3.3.2's
# results and tables), align every pair of them (local Smith-Waterman with CIGARs), then pack the bundled
# proteins and genome into databases (makedb) and describe them (dbinfo).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh --build
cmake --preset release >/dev/null
cmake --build --preset release
ws=build/release/src/warpsearch
out=build/demo
mkdir -p "$out"

"$ws" --version
"$ws" hmmsearch --tblout "$out/globins4.tbl" --domtblout "$out/globins4.domtbl" -o "$out/globins4.out" \
  data/globins4.hmm data/globins45.fa
echo "hmmsearch globins4 vs globins45: $(grep -vc '^#' "$out/globins4.tbl") sequences, best five:"
grep -v '^#' "$out/globins4.tbl" | head -n 5 | awk '{printf "  %-12s E-value %-9s score %s\n", $1, $5, $6}'
"$ws" align --query data/globins45.fa --target data/globins45.fa --pairs data/globins45_pairs.tsv \
  --cigar -o "$out/globins45_pairs.tsv"
echo "best-scoring globin pairs (of $(($(wc -l <"$out/globins45_pairs.tsv") - 1))):"
sort -t$'\t' -k3,3nr "$out/globins45_pairs.tsv" | head -n 5 | cut -f1-7,9-10
"$ws" makedb data/globins45.fa "$out/globins45" --force
"$ws" dbinfo "$out/globins45"
"$ws" makedb data/humanMito.fa "$out/humanMito" --force
"$ws" dbinfo "$out/humanMito" --verify
"$ws" devices
