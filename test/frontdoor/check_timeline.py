# SPDX-License-Identifier: BSD-3-Clause
"""check_timeline.py TIMELINE.json TRACE.db REPLAY.db ORDER: the timeline read
back with a JSON parser and checked against the databases (queried here,
independently of scripts/tnbc-timeline) and against the program's known
order of reads (ORDER, e.g. 1,0: the receive blocks it reads after each call)."""
import json
import sqlite3
import sys

path, trace, replay, order = sys.argv[1:5]
order = [int(x) for x in order.split(",")]
doc = json.load(open(path))
ev = doc["traceEvents"]
assert isinstance(ev, list) and ev, "no traceEvents"
for e in ev:
    assert e["ph"] in ("X", "i", "C", "M"), e
    assert isinstance(e["pid"], int), e
    if e["ph"] != "M":
        assert isinstance(e["ts"], (int, float)), e

procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
           if e["ph"] == "M" and e["name"] == "thread_name"}


def check(dbpath, mode):
    db = sqlite3.connect(dbpath)
    ranks = {r: hz for r, hz in db.execute("SELECT rank, tsc_hz FROM run WHERE mode = ?", (mode,))}
    assert ranks, f"{dbpath}: no {mode} ranks"
    pids = {p for p, n in procs.items() if n.startswith("rank ") and f"({mode}," in n}
    assert len(pids) == len(ranks), (procs, ranks)
    for rank, hz in ranks.items():
        pid = [p for p in pids if procs[p].startswith(f"rank {rank} ")]
        assert len(pid) == 1, (rank, procs)
        pid = pid[0]
        assert threads.get((pid, 1)) == "program: collectives", threads
        calls = {c[0]: c for c in db.execute(
            "SELECT call_id, op, entry_tsc, return_tsc, wait_ns FROM call WHERE rank = ?", (rank,))}
        slices = [e for e in ev if e["pid"] == pid and e["ph"] == "X" and e["cat"] == "collective"]
        assert len(slices) == len(calls), (rank, len(slices), len(calls))
        for e in slices:
            cid, op, entry, ret, wait = calls[e["args"]["call_id"]]
            assert abs(e["dur"] - (ret - entry) * 1e6 / hz) < 1e-3, (e, entry, ret)
            assert e["name"].lower().startswith("mpi_" + op), (e["name"], op)
            if mode == "replay" and wait >= 0:
                assert "returned early" in e["name"] and abs(e["args"]["fault_wait_us"] - wait / 1e3) < 1e-6
        returns = [e for e in ev if e["pid"] == pid and e["ph"] == "i" and e["cat"] == "return"]
        assert len(returns) == len(calls)
        if mode == "replay":
            early = db.execute("SELECT count(*) FROM call WHERE rank = ? AND wait_ns >= 0",
                               (rank,)).fetchone()[0]
            assert early > 0 and sum(e["name"] == "early return" for e in returns) == early
            continue
        touches = db.execute("SELECT count(*) FROM touch t JOIN call c USING (call_id) "
                             "WHERE c.rank = ? AND t.ord IS NOT NULL", (rank,)).fetchone()[0]
        ft = [e for e in ev if e["pid"] == pid and e["ph"] == "i" and e["cat"] == "first-touch"]
        assert len(ft) == touches and touches > 0, (len(ft), touches)
        # Every Alltoall's receive blocks first touched in the program's order.
        a2a = [c for c, row in calls.items() if row[1] == "alltoall"]
        assert a2a
        for cid in a2a:
            seen = sorted((e["ts"], e["args"]["idx"]) for e in ft
                          if e["args"]["call_id"] == cid and e["args"]["side"] == "recv")
            assert [i for _, i in seen] == order, (cid, seen)
            # and each after its call's return, by the database's ticks
            ret = calls[cid][3]
            for e in ft:
                if e["args"]["call_id"] == cid:
                    t = db.execute("SELECT tsc FROM touch WHERE call_id=? AND side=? AND idx=?",
                                   (cid, e["args"]["side"], e["args"]["idx"])).fetchone()[0]
                    assert abs(e["args"]["us_after_return"] - (t - ret) * 1e6 / hz) < 1e-6
                    assert t >= ret


check(trace, "trace")
check(replay, "replay")
print(f"ok: {len(ev)} events")
