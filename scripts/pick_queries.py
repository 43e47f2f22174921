#!/usr/bin/env python3
"""pick_queries.py: the records of a protein FASTA file closest in length to given lengths, for benchmark
query sets of chosen lengths (issue 7: the cuBLASTP paper's queries of ~127, ~517 and ~1054 residues).
Python 3 standard library only.

    scripts/pick_queries.py FASTA LENGTH [LENGTH ...] [-o OUT]

For each LENGTH in the order given: the record whose length (residues) is nearest to it, ties to the record
first in the file; a record is picked at most once (later lengths choose among the records left). Writes
the picked records in the order of the lengths, headers and residues as in FASTA (upper-cased, 60-column
lines), to OUT or stdout, and one line per pick to stderr (target, length, header). Deterministic.
make_blastp_data.sh's huge preset makes queries_paper3.fa with
    scripts/pick_queries.py mmseqs_QUERY500.fasta 127 517 1054
(picks 127, 516 and 1042 residues from the mmseqs2 example queries).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plant_homologs import read_fasta, write_record  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fasta", help="protein FASTA (plain or gzip)")
    parser.add_argument("lengths", type=int, nargs="+", help="target lengths in residues")
    parser.add_argument("-o", "--out", help="output FASTA [stdout]")
    args = parser.parse_args()
    records = read_fasta(args.fasta)
    left = list(range(len(records)))  # file order: min() keeps the first of equally near records
    if len(args.lengths) > len(records):
        sys.exit(f"pick_queries.py: {len(args.lengths)} lengths asked, {len(records)} records in {args.fasta}")
    picked = []
    for target in args.lengths:
        best = min(left, key=lambda i: abs(len(records[i][1]) - target))
        left.remove(best)
        picked.append(best)
        print(f"pick_queries.py: {target} -> {len(records[best][1])} {records[best][0][:70]}", file=sys.stderr)
    out = open(args.out, "w", encoding="ascii") if args.out else sys.stdout
    try:
        for i in picked:
            write_record(out, records[i][0], records[i][1])
    finally:
        if args.out:
            out.close()


if __name__ == "__main__":
    main()
