#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mkbig.py OUT.db RANKS SITES CALLS: a synthetic trace for timing tnbc-analyze.

Every rank traces CALLS alltoall invocations at each of SITES sites, RANKS
blocks of 64 KB per call, read in a rotated order with one random swap per
call (so agreement is high but not perfect), on hosts of 8 ranks."""
import os
import random
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import mktrace  # noqa: E402


def main(out, ranks, sites, calls):
    ranks, sites, calls = int(ranks), int(sites), int(calls)
    rng = random.Random(1)
    t = mktrace.Trace(out)
    for r in range(ranks):
        t.run(r, ranks, host=f"node{r // 8}", mprotect_ns=800, fault_ns=2000)
    cid, crow, srow, trow = 1, [], [], []
    block = 65536
    for s in range(sites):
        site = f"app+0x{0x1000 + 16 * s:x}"
        base = list(range(ranks))
        base = base[s % ranks:] + base[:s % ranks]
        for r in range(ranks):
            t.site(r, site, "alltoall", 100 * calls, calls)
            for inv in range(calls):
                order = base[:]
                i = rng.randrange(ranks - 1)
                order[i], order[i + 1] = order[i + 1], order[i]
                ret = 5_000_000
                crow.append((cid, r, site, inv, "alltoall", ranks, r, -1, 1, 1, block * ranks,
                             block * ranks, block, ranks, 0, 0, ret, 0))
                for pos, b in enumerate(order):
                    srow.append((cid, "recv", b, b, b * block, block, "guarded"))
                    trow.append((cid, "recv", b, pos, ret + 1000 + 20_000 * pos, "read"))
                cid += 1
        t.db.executemany("INSERT INTO call VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", crow)
        t.db.executemany("INSERT INTO submsg VALUES (?,?,?,?,?,?,?)", srow)
        t.db.executemany("INSERT INTO touch VALUES (?,?,?,?,?,?)", trow)
        crow, srow, trow = [], [], []
    t.close()


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: mkbig.py OUT.db RANKS SITES CALLS")
    main(*sys.argv[1:])
