#!/usr/bin/env bash
# make_blastp_data.sh: deterministic test and benchmark data for `warpsearch blastp` (issue 6): a protein
# database of shuffled real proteins with planted homologs of graded identity, the queries they were made
# from, and a truth table. The work is done by scripts/plant_homologs.py (Python 3 standard library only;
# its docstring documents the model); this wrapper finds the test data and picks a size.
#
#   scripts/make_blastp_data.sh OUTDIR [small|bench|big] [extra plant_homologs.py options]
#
#   small  (default) 1,800 shuffled records of the 20k UniProt set + 20 queries x 5 identity levels
#          (90, 60, 40, 30, 25 %) of planted homologs: 1,900 records, 0.86 M residues. CI tests.
#   bench  all 20,000 records shuffled + 100 queries x 5 levels: 20,500 records, 9.29 M residues.
#   big    as bench, with freshly shuffled copies of the 20,000 added until >= 100 M residues (12 copies,
#          240,500 records, 108.9 M residues, 122 MB; about 25 s): thread-scaling runs.
#
# Written into OUTDIR: db.fa (database), queries.fa (the queries with homologs, as in the source file),
# truth.tsv (one line per homolog: id, query, identity level, realized pident, coordinates, counts).
#
# Environment (all optional):
#   SEED [6]   seeds every random choice; the same seed, preset and inputs give byte-identical files
#   DB_SOURCE  source of the background [$WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta]
#   QUERY_SOURCE  source of the queries [$WARPSEARCH_TESTDATA/prot/mmseqs_QUERY500.fasta]
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh) [~/.cache/warpsearch/testdata]
#   PYTHON [python3]
# Examples:
#   scripts/make_blastp_data.sh /tmp/bp small
#   scripts/make_blastp_data.sh /tmp/bp-big big --identities 80,50,35,30,25 --per-level 2
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit $(($# < 1))
fi
out=$1
preset=${2:-small}
shift $(($# >= 2 ? 2 : 1))
case $preset in
  small | bench | big) ;;
  *) echo "make_blastp_data.sh: unknown size '$preset' (small, bench or big)" >&2; exit 2 ;;
esac
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
DB_SOURCE=${DB_SOURCE:-$testdata/prot/mmseqs_DB20k.fasta}
QUERY_SOURCE=${QUERY_SOURCE:-$testdata/prot/mmseqs_QUERY500.fasta}
for f in "$DB_SOURCE" "$QUERY_SOURCE"; do
  [[ -r $f ]] || { echo "make_blastp_data.sh: cannot read $f (run scripts/fetch_testdata.sh)" >&2; exit 1; }
done
"${PYTHON:-python3}" "$(dirname "$0")/plant_homologs.py" --db "$DB_SOURCE" --queries "$QUERY_SOURCE" \
  --out-dir "$out" --preset "$preset" --seed "${SEED:-6}" "$@"
