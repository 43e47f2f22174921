#!/usr/bin/env python3
"""Kernel throughput chart of the hmmsearch GPU filters (issue 5), as an SVG file.

Reads the CSV written by `warpsearch-bench run gpu-hmm-filters` with WARPSEARCH_BENCH_HMM_GPU_CSV (one row per
model and pass: length = M, name = pass, gcups = M x residues / device seconds) and draws GCUPS against M for
each pass on a logarithmic axis, with the issue's required floors (SSV 4, MSV 3, Viterbi 0.5 TCUPS) dashed.
Python 3 standard library only.

  scripts/plot_hmm_gpu.py kernels.csv kernels.svg ["title"]
"""
import csv
import math
import sys

PASSES = [  # (CSV pass name, legend, colour, required floor in GCUPS or None)
    ("gpu-hmm-ssv", "SSV", "#1f77b4", 4000.0),
    ("gpu-hmm-msv", "MSV (pipeline: SSV + fallbacks)", "#2ca02c", 3000.0),
    ("gpu-hmm-msv-full", "full MSV (every target)", "#9467bd", None),
    ("gpu-hmm-viterbi", "Viterbi filter", "#d62728", 500.0),
]
W, H = 900, 560
LEFT, RIGHT, TOP, BOTTOM = 80, 30, 50, 120


def load(path):
    series = {name: [] for name, _, _, _ in PASSES}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("status", "ok") != "ok" or row["name"] not in series:
                continue
            series[row["name"]].append((int(row["length"]), float(row["gcups"])))
    for pts in series.values():
        pts.sort()
    return series


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: plot_hmm_gpu.py kernels.csv kernels.svg [title]")
    series = load(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) > 3 else "hmmsearch GPU filters: throughput by model length"
    points = [p for pts in series.values() for p in pts]
    if not points:
        sys.exit(f"plot_hmm_gpu.py: no gpu-hmm rows in {sys.argv[1]}")
    m_max = max(m for m, _ in points)
    x_max = max(500, int(math.ceil(m_max / 500.0)) * 500)
    lo = 10 ** math.floor(math.log10(min(min(g for _, g in points), 500.0)))
    hi = 10 ** math.ceil(math.log10(max(g for _, g in points)))

    def sx(m):
        return LEFT + (W - LEFT - RIGHT) * m / x_max

    def sy(g):
        return TOP + (H - TOP - BOTTOM) * (1.0 - (math.log10(g) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="25" text-anchor="middle" font-size="15">{title}</text>']
    # Grid: decades and their 2x, 5x on y; every 500 nodes on x.
    d = lo
    while d <= hi * 1.0001:
        for k in (1, 2, 5):
            g = d * k
            if g > hi * 1.0001:
                break
            y = sy(g)
            out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
            label = f"{g / 1000:g} T" if g >= 1000 else f"{g:g} G"
            out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        d *= 10
    for m in range(0, x_max + 1, 500):
        x = sx(m)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">{m}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - BOTTOM + 38}" text-anchor="middle">'
               'model length M (nodes)</text>')
    out.append(f'<text x="18" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {(TOP + H - BOTTOM) / 2})">cell updates per second (log scale)</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" '
               'fill="none" stroke="#444"/>')
    legend_y = H - BOTTOM + 62
    for i, (name, legend, colour, floor) in enumerate(PASSES):
        pts = series[name]
        if floor is not None and lo <= floor <= hi:
            y = sy(floor)
            out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="{colour}" '
                       'stroke-dasharray="6,4" stroke-width="1.2"/>')
        if pts:
            path = " ".join(f"{sx(m):.1f},{sy(g):.1f}" for m, g in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
            for m, g in pts:
                out.append(f'<circle cx="{sx(m):.1f}" cy="{sy(g):.1f}" r="2.8" fill="{colour}"/>')
        lx = LEFT + (i % 2) * 400
        ly = legend_y + (i // 2) * 20
        floor_text = f", required {floor / 1000:g} TCUPS (dashed)" if floor is not None else ""
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 24}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 30}" y="{ly}">{legend}{floor_text}</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
