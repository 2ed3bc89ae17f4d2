# SPDX-License-Identifier: BSD-3-Clause
"""Best-of-N tables from bench/run.sh output (rates: max, times: min)."""
import re
import sys


def putget(path):
    best, impls, rows = {}, [], []
    for line in open(path):
        f = line.split()
        if len(f) != 5 or line.startswith("#"):
            continue
        impl, what, size, val, unit = f
        key = (what, int(size))
        if impl not in impls:
            impls.append(impl)
        if key not in rows:
            rows.append(key)
        v = float(val)
        old = best.get((impl, key))
        better = v > old if old is not None and unit.endswith("/s") else \
            (old is None or v < old)
        if old is None or better:
            best[(impl, key)] = v
    print("| measurement | bytes | " + " | ".join(impls) + " |")
    print("|---|---:|" + "---:|" * len(impls))
    for what, size in rows:
        unit = "Mmsg/s" if "rate" in what else "us"
        cells = ["%.2f" % best[(i, (what, size))] if (i, (what, size)) in best else "-"
                 for i in impls]
        print("| %s (%s) | %d | %s |" % (what, unit, size, " | ".join(cells)))


def irregular(path):
    best, labels, kernels, label = {}, [], [], None
    for line in open(path):
        m = re.match(r"## (.*) run \d+:", line)
        if m:
            label = m.group(1)
            continue
        m = re.match(r"(\S.*?)\s+np=(\d+)\s+([\d.]+) ms/iter\s+([\d.]+) Mref/s (\w+)", line)
        if not m or label is None:
            continue
        k, ms, ok = m.group(1), float(m.group(3)), m.group(5)
        if label not in labels:
            labels.append(label)
        if k not in kernels:
            kernels.append(k)
        old = best.get((label, k))
        if old is None or ms < old[0]:
            best[(label, k)] = (ms, ok)
    print()
    print("| kernel (ms/iter) | " + " | ".join(labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for k in kernels:
        cells = []
        for lab in labels:
            v = best.get((lab, k))
            cells.append("-" if v is None else "%.2f%s" % (v[0], "" if v[1] == "ok" else " WRONG"))
        print("| %s | %s |" % (k, " | ".join(cells)))


if __name__ == "__main__":
    putget(sys.argv[1])
    irregular(sys.argv[2])
