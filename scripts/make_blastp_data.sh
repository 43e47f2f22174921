#!/usr/bin/env bash
# make_blastp_data.sh: deterministic test and benchmark data for `warpsearch blastp` (issues 6, 7): a protein
# database of shuffled real proteins with planted homologs of graded identity, the queries they were made
# from, and a truth table. The work is done by scripts/plant_homologs.py (Python 3 standard library only;
# its docstring documents the model); this wrapper finds the test data and picks a size.
#
#   scripts/make_blastp_data.sh OUTDIR [small|bench|big|huge] [extra plant_homologs.py options]
#
#   small  (default) 1,800 shuffled records of the 20k UniProt set + 20 queries x 5 identity levels
#          (90, 60, 40, 30, 25 %) of planted homologs: 1,900 records, 0.86 M residues. CI tests.
#   bench  all 20,000 records shuffled + 100 queries x 5 levels: 20,500 records, 9.29 M residues.
#   big    as bench, with freshly shuffled copies of the 20,000 added until >= 100 M residues (12 copies,
#          240,500 records, 108.9 M residues, 122 MB; about 25 s): thread-scaling runs.
#   huge   the GPU benchmark (issue 7): 50 freshly shuffled copies of all 20,000 records + 5 levels of
#          planted homologs of two query sets, every query of each: queries_paper3.fa (the 3 records of
#          QUERY_SOURCE nearest to the cuBLASTP paper's 127, 517 and 1054 residues, scripts/pick_queries.py:
#          127, 516, 1042) and sw_queries20.fa (a copy of SW_QUERIES: the 20 SWIPE/CUDASW++ benchmark queries,
#          144..5,478 residues, 41,752 in all): 1,000,115 records, 452,987,528 residues, 507 MB. The
#          copies are shuffled in parallel (plant_homologs.py --jobs, default all CPUs; the same output for
#          any count): about 1.5 CPU-seconds per copy, 76 s on one core, ~10 s on 16 (estimated).
#
# Written into OUTDIR: db.fa (database), queries.fa (the queries with homologs, as in the source file; huge:
# both sets, paper3 first), truth.tsv (one line per homolog: id, query, identity level, realized pident,
# coordinates, counts); huge also queries_paper3.fa and sw_queries20.fa (benchmark each set on its own).
#
# Environment (all optional):
#   SEED [6]   seeds every random choice; the same seed, preset and inputs give byte-identical files
#   DB_SOURCE  source of the background [$WARPSEARCH_TESTDATA/prot/mmseqs_DB20k.fasta]
#   QUERY_SOURCE  source of the queries [$WARPSEARCH_TESTDATA/prot/mmseqs_QUERY500.fasta]
#   SW_QUERIES (huge)  the 20 SW benchmark queries [the first readable of $WARPSEARCH_TESTDATA/prot/,
#              .device/blast/, shared/data/ and ../shared/data/ (repository-relative) sw_queries20.fasta]
#   WARPSEARCH_TESTDATA  test data (scripts/fetch_testdata.sh) [~/.cache/warpsearch/testdata]
#   PYTHON [python3]
# Examples:
#   scripts/make_blastp_data.sh /tmp/bp small
#   scripts/make_blastp_data.sh /tmp/bp-big big --identities 80,50,35,30,25 --per-level 2
#   scripts/make_blastp_data.sh /tmp/bp-huge huge [--copies 4]   (4 copies: a quick trial of the same shape)
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit $(($# < 1))
fi
out=$1
preset=${2:-small}
shift $(($# >= 2 ? 2 : 1))
case $preset in
  small | bench | big | huge) ;;
  *) echo "make_blastp_data.sh: unknown size '$preset' (small, bench, big or huge)" >&2; exit 2 ;;
esac
testdata=${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}
DB_SOURCE=${DB_SOURCE:-$testdata/prot/mmseqs_DB20k.fasta}
QUERY_SOURCE=${QUERY_SOURCE:-$testdata/prot/mmseqs_QUERY500.fasta}
for f in "$DB_SOURCE" "$QUERY_SOURCE"; do
  [[ -r $f ]] || { echo "make_blastp_data.sh: cannot read $f (run scripts/fetch_testdata.sh)" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")" && pwd)
queries=(--queries "$QUERY_SOURCE")
if [[ $preset == huge ]]; then
  if [[ -z ${SW_QUERIES:-} ]]; then
    for f in "$testdata/prot" "$here/../.device/blast" "$here/../shared/data" "$here/../../shared/data"; do
      [[ -r $f/sw_queries20.fasta ]] && { SW_QUERIES=$f/sw_queries20.fasta; break; }
    done
  fi
  [[ -r ${SW_QUERIES:-} ]] || { echo "make_blastp_data.sh: no sw_queries20.fasta found (set SW_QUERIES)" >&2; exit 1; }
  mkdir -p "$out"
  "${PYTHON:-python3}" "$here/pick_queries.py" "$QUERY_SOURCE" 127 517 1054 -o "$out/queries_paper3.fa"
  rm -f "$out/sw_queries20.fa" && cat "$SW_QUERIES" > "$out/sw_queries20.fa"  # cp would keep a read-only mode
  queries=(--queries "$out/queries_paper3.fa" --queries "$out/sw_queries20.fa")
fi
"${PYTHON:-python3}" "$here/plant_homologs.py" --db "$DB_SOURCE" "${queries[@]}" \
  --out-dir "$out" --preset "$preset" --seed "${SEED:-6}" "$@"
