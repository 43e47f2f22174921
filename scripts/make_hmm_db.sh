#!/bin/bash
# make_hmm_db.sh: a deterministic synthetic search database with known answers, for hmmsearch tests and
# benchmarks: di-residue-preserving shuffles of real proteins (decoys: no true homologs) plus sequences
# emitted from the given profile HMMs (planted homologs), in a fixed order.
#
#   scripts/make_hmm_db.sh OUT.fa DECOY_SOURCE.fa N_DECOY_COPIES N_PLANTED SEED MODEL.hmm [MODEL.hmm ...]
#
# Needs hmmemit (HMMER) and esl-shuffle (Easel; found on PATH or in the test-data bin/ folder).
# Example: scripts/make_hmm_db.sh /tmp/db.fa ~/.cache/warpsearch/testdata/prot/mmseqs_DB20k.fasta 1 50 7 \
#            ~/.cache/warpsearch/testdata/hmm/Pkinase.hmm
set -euo pipefail
if [[ $# -lt 6 ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1 decoys=$2 copies=$3 planted=$4 seed=$5
shift 5
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
shuffle=$(command -v esl-shuffle || echo "$testdata/bin/esl-shuffle")
[[ -x $shuffle ]] || { echo "make_hmm_db.sh: esl-shuffle not found (PATH or $testdata/bin)" >&2; exit 1; }
command -v hmmemit >/dev/null || { echo "make_hmm_db.sh: hmmemit (HMMER) not found" >&2; exit 1; }
tmp=$(mktemp "$out.tmp.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$shuffle" -d -N "$copies" --seed "$seed" "$decoys" > "$tmp"
for model in "$@"; do
  # hmmemit -p: emit from the configured (local, multihit) profile, like real database hits.
  hmmemit -p -N "$planted" --seed "$seed" "$model" >> "$tmp"
done
mv "$tmp" "$out"
trap - EXIT
