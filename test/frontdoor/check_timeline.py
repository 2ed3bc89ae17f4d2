# SPDX-License-Identifier: BSD-3-Clause
"""check_timeline.py TIMELINE.json TRACE.db REPLAY.db ORDER BLOCK: the timeline
read back with a JSON parser and checked against the databases (queried here,
independently of scripts/tnbc-timeline) and against the program's known
shape: an Alltoall of BLOCK bytes per rank pair, whose receive blocks it reads
in the order ORDER (e.g. 1,0) after each call."""
import json
import sqlite3
import sys

path, trace, replay, order, block = sys.argv[1:6]
block = int(block)
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
            check_activity(db, pid, rank, hz, calls, slices)
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


def on(pid, tid, ph, cat):
    return [e for e in ev if e["pid"] == pid and e.get("tid") == tid and e["ph"] == ph
            and e.get("cat") == cat]


def check_activity(db, pid, rank, hz, calls, slices):
    """The replay's arrivals, fault waits and progress thread against the
    summary's activity tables and the program's shape."""
    assert threads.get((pid, 2)) == "progress thread", threads
    dropped = db.execute("SELECT dropped FROM activity WHERE rank = ?", (rank,)).fetchone()
    assert dropped == (0,), dropped   # a few dozen events, far below the bound
    entry_us = {e["args"]["call_id"]: e["ts"] for e in slices}
    us = lambda cid, tsc: entry_us[cid] + (tsc - calls[cid][2]) * 1e6 / hz
    early = [c for c, row in calls.items() if row[4] >= 0]
    # Arrivals: every receive block of every early call lands in full (its
    # pieces add up to BLOCK bytes), the own block by the caller before the
    # call returns, the others' by the progress thread, all after the entry.
    arr = on(pid, 4, "i", "arrival")
    rows = db.execute("SELECT a.call_id, a.idx, a.piece, a.bytes, a.tsc, a.by FROM arrival a "
                      "JOIN call c USING (call_id) WHERE c.rank = ?", (rank,)).fetchall()
    assert len(arr) == len(rows) and rows, (len(arr), len(rows))
    size = db.execute("SELECT world_size FROM run WHERE rank = ?", (rank,)).fetchone()[0]
    assert size == 2
    for cid in early:
        got = {}
        for c, idx, piece, nbytes, tsc, by in rows:
            if c == cid:
                got[idx] = got.get(idx, 0) + nbytes
                assert tsc >= calls[cid][2], (cid, tsc)
                assert (by == "caller") == (idx == rank), (cid, idx, by)
                if by == "caller":
                    assert tsc <= calls[cid][3], (cid, tsc)
        assert got == {i: block for i in range(size)}, (cid, got)
    for e in arr:
        a = e["args"]
        tsc = db.execute("SELECT tsc FROM arrival WHERE call_id = ? AND piece = ?",
                         (a["call_id"], a["piece"])).fetchone()[0]
        assert e["name"] == f"arrived recv[{a['idx']}]", e
        assert abs(e["ts"] - us(a["call_id"], tsc)) < 1e-3, (e, tsc)
        assert e["ts"] >= entry_us[a["call_id"]] - 1e-3, e
    # Fault waits: one slice each, starting after its call's return, never
    # for the rank's own block (it landed before the return).
    waits = on(pid, 3, "X", "fault-wait")
    wrows = {(r[0], r[1], r[2]): r[3:] for r in db.execute(
        "SELECT w.call_id, w.piece, w.start_tsc, w.idx, w.end_tsc FROM fault_wait w "
        "JOIN call c USING (call_id) WHERE c.rank = ?", (rank,))}
    assert len(waits) == len(wrows), (len(waits), len(wrows))
    for (cid, piece, t0), (idx, t1) in wrows.items():
        assert t0 >= calls[cid][3] and t1 >= t0 and idx != rank, (cid, idx, t0, t1, calls[cid])
    for e in waits:
        cid = e["args"]["call_id"]
        assert e["dur"] >= 0 and e["ts"] >= us(cid, calls[cid][3]) - 1e-3, e
    # The progress thread: one slice per busy span, none negative, one after
    # another (one thread), all after the first early call's entry.
    busy = on(pid, 2, "X", "progress")
    spans = db.execute("SELECT start_tsc, end_tsc FROM progress WHERE rank = ? "
                       "ORDER BY start_tsc", (rank,)).fetchall()
    assert len(busy) == len(spans) and spans, (len(busy), len(spans))
    first = min(calls[c][2] for c in early)
    for k, (t0, t1) in enumerate(spans):
        assert t0 >= first and t1 >= t0 and (k == 0 or t0 >= spans[k - 1][1]), (k, t0, t1)
    for e in busy:
        assert e["dur"] >= 0 and e["ts"] >= min(entry_us[c] for c in early) - 1e-3, e


check(trace, "trace")
check(replay, "replay")
print(f"ok: {len(ev)} events")
