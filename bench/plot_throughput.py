#!/usr/bin/env python3
"""plot_throughput.py: throughput-vs-length chart from warpsearch-bench CSV files.

Reads one or more CSVs written by `warpsearch-bench run ... --csv FILE` (columns: bench/README.md),
keeps the rows with status "ok" and a `length`, and draws one line per implementation (the `name`
column; "name [label]" when the files carry several labels) of the chosen throughput column versus
length. Saves a PNG.

    python3 bench/plot_throughput.py sw-*.csv --metric gcups --logx [--logy] --out sw.png
"""

import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib import ticker  # noqa: E402

METRICS = {
    "gcups": "GCUPS (10^9 cell updates / s)",
    "mb_per_s": "MB/s (10^6 input bytes / s)",
    "mres_per_s": "Mres/s (10^6 residues / s)",
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="CSV files from warpsearch-bench --csv")
    parser.add_argument("--metric", choices=sorted(METRICS), default="gcups", help="y axis (default: gcups)")
    parser.add_argument("--out", default="throughput.png", help="PNG to write (default: throughput.png)")
    parser.add_argument("--logx", action="store_true", help="logarithmic (base 2) length axis")
    parser.add_argument("--logy", action="store_true", help="logarithmic throughput axis (GPU vs CPU)")
    parser.add_argument("--title", default=None, help="chart title (default: the metric)")
    parser.add_argument("--xlabel", default="length (residues)", help="length axis label")
    return parser.parse_args(argv)


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as handle:
            rows.extend(csv.DictReader(handle))
    return rows


def series(rows, metric):
    """{line name: [(length, value), ...] sorted by length} for the plottable rows."""
    labels = {row["label"] for row in rows}
    points = defaultdict(list)
    for row in rows:
        if row["status"] != "ok" or not row["length"] or not row[metric]:
            continue
        name = row["name"] if len(labels) <= 1 else f"{row['name']} [{row['label']}]"
        points[name].append((float(row["length"]), float(row[metric])))
    return {name: sorted(values) for name, values in sorted(points.items())}


def plot(lines, args):
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name, values in lines.items():
        lengths, throughputs = zip(*values)
        ax.plot(lengths, throughputs, marker="o", label=name)
    if args.logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    if args.logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(args.xlabel)
    ax.set_ylabel(METRICS[args.metric])
    ax.set_title(args.title or f"{METRICS[args.metric].split(' ')[0]} vs length")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out)


def main(argv):
    args = parse_args(argv)
    lines = series(read_rows(args.csv), args.metric)
    if not lines:
        sys.exit(f"plot_throughput.py: no rows with status ok, a length and a {args.metric} value")
    plot(lines, args)
    print(f"wrote {args.out}: {len(lines)} lines")


if __name__ == "__main__":
    main(sys.argv[1:])
