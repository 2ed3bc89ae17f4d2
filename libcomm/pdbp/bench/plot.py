#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots for make bench-pdbp, shaped like figures 8-11 of design paper 003.

usage: plot.py CSV_DIR OUT_DIR [--link-mbps [TRANSPORT=]R ...]

x: unit packet size (bytes, log), y: per-host throughput (Mbit/s; for a
transport given a link rate, the share of that shaped link: R alone is for
"cluster"; loopback and shared memory have no link rate). Also writes
summary.md (tables). A figure with no data for its patterns is not drawn.
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def series(rows, transport, pattern):
    """{hosts: [(size, Mbit/s)]} for one transport and pattern."""
    s = defaultdict(list)
    for r in rows:
        if r["transport"] == transport and r["pattern"] == pattern:
            s[int(r["hosts"])].append((int(r["packet_bytes"]), float(r["host_MBps"]) * 8))
    return {k: sorted(v) for k, v in s.items()}


def label(pattern, n):
    m = n - 1
    return {"1toN": f"1-to-{m} (1toN)", "Nto1": f"{m}-to-1 (Nto1)", "NtoN": f"{n}-to-{n}",
            "alltoall": f"MPI_Alltoall {n}"}[pattern]


def yval(mbps, link):
    return mbps / link * 100 if link else mbps


def fig(rows, transport, patterns, title, path, link):
    plt.figure(figsize=(6.4, 4.2))
    for pat, style in patterns:
        for n, pts in sorted(series(rows, transport, pat).items()):
            plt.plot([p[0] for p in pts], [yval(p[1], link) for p in pts], style,
                     marker="o", label=label(pat, n))
    plt.xscale("log", base=2)
    plt.yscale("log")
    if link:
        plt.axhline(100, color="k", lw=0.8)
        plt.axhline(90, color="r", lw=0.8, ls=":", label="target 90 %")
    plt.xlabel("unit packet size (bytes)")
    plt.ylabel("per-host throughput (% of link)" if link else "per-host throughput (Mbit/s)")
    plt.title(title)
    plt.grid(True, alpha=0.3)
    plt.legend(fontsize=8)
    plt.tight_layout()
    plt.savefig(path, dpi=110)
    plt.close()


def pool_fig(prow, path):
    plt.figure(figsize=(6.4, 4.2))
    by_t = defaultdict(list)
    for r in prow:
        by_t[r["threshold"]].append((int(r["streams"]), int(r["host0_pool_bytes"]) / 2**20))
    for t, pts in sorted(by_t.items()):
        pts.sort()
        plt.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"threshold {t}")
    plt.xscale("log", base=2)
    plt.xlabel("concurrent streams (GP pairs, host 1 -> host 0)")
    plt.ylabel("pool memory on host 0, the receiver (MiB)")
    plt.title("DDBP memory vs streams and threshold")
    plt.grid(True, alpha=0.3)
    plt.legend(fontsize=8)
    plt.tight_layout()
    plt.savefig(path, dpi=110)
    plt.close()


def summary(rows, prow, path, links):
    with open(path, "w") as f:
        for tr in sorted({r["transport"] for r in rows}):
            link = links.get(tr)
            f.write(f"\n### transport {tr}: per-host throughput, Mbit/s\n\n")
            sizes = sorted({int(r["packet_bytes"]) for r in rows})
            f.write("| pattern | hosts | " + " | ".join(str(s) for s in sizes) + " |\n")
            f.write("|---|---|" + "---|" * len(sizes) + "\n")
            for pat in ("1toN", "Nto1", "NtoN", "alltoall"):
                for n, pts in sorted(series(rows, tr, pat).items()):
                    d = dict(pts)
                    f.write(f"| {label(pat, n)} | {n} | " +
                            " | ".join(f"{d.get(s, float('nan')):.0f}" for s in sizes) + " |\n")
            if link:
                f.write(f"\nShare of the {link:g} Mbit/s link, %:\n\n")
                f.write("| pattern | hosts | " + " | ".join(str(s) for s in sizes) + " |\n")
                f.write("|---|---|" + "---|" * len(sizes) + "\n")
                for pat in ("1toN", "Nto1", "NtoN", "alltoall"):
                    for n, pts in sorted(series(rows, tr, pat).items()):
                        d = dict(pts)
                        f.write(f"| {label(pat, n)} | {n} | " + " | ".join(
                            f"{d.get(s, float('nan')) / link * 100:.0f}" for s in sizes) + " |\n")
            f.write("\nN-to-N / MPI_Alltoall, same bytes:\n\n")
            for n, pts in sorted(series(rows, tr, "NtoN").items()):
                a = dict(series(rows, tr, "alltoall").get(n, []))
                ratios = [f"{s}: {v / a[s]:.2f}x" for s, v in pts if a.get(s)]
                f.write(f"- {n} hosts: " + ", ".join(ratios) + "\n")
        for tr, link in sorted(links.items()):
            f.write(f"\nLink rate of transport {tr}: {link:g} Mbit/s (shaped).\n")
        f.write("\n### pool memory on host 0 (MiB) by threshold and streams\n\n")
        by = defaultdict(dict)
        for r in prow:
            by[r["threshold"]][int(r["streams"])] = int(r["host0_pool_bytes"]) / 2**20
        ss = sorted({int(r["streams"]) for r in prow})
        f.write("| threshold | " + " | ".join(f"{s} streams" for s in ss) + " |\n")
        f.write("|---|" + "---|" * len(ss) + "\n")
        for t in sorted(by):
            f.write(f"| {t} | " + " | ".join(f"{by[t].get(s, 0):.2f}" for s in ss) + " |\n")


def main():
    args = sys.argv[1:]
    links = {}
    while "--link-mbps" in args:
        i = args.index("--link-mbps")
        tr, _, rate = args[i + 1].rpartition("=")
        links[tr or "cluster"] = float(rate)
        del args[i:i + 2]
    src, dst = args
    rows = load(os.path.join(src, "tput.csv"))
    prow = load(os.path.join(src, "pool.csv"))
    os.makedirs(dst, exist_ok=True)
    figures = [("fig8_1toN", [("1toN", "-")], "1-to-N"), ("fig9_Nto1", [("Nto1", "-")], "N-to-1"),
               ("fig10_NtoN", [("NtoN", "-")], "N-to-N"),
               ("fig11_vs_alltoall", [("NtoN", "-"), ("alltoall", "--")], "PDBP N-to-N vs MPI_Alltoall")]
    for tr in sorted({r["transport"] for r in rows}):
        lk = links.get(tr)
        on = f"{tr}, {lk:g} Mbit/s links" if lk else tr
        for name, pats, title in figures:
            if any(series(rows, tr, p) for p, _ in pats):
                fig(rows, tr, pats, f"{title} ({on})", f"{dst}/{name}_{tr}.png", lk)
    pool_fig(prow, f"{dst}/pool_memory.png")
    summary(rows, prow, f"{dst}/summary.md", links)


if __name__ == "__main__":
    main()
