# SPDX-License-Identifier: BSD-3-Clause
"""Hand-made tnbc trace databases with known contents, for the analyzer tests.

The schema is core/tracedb_schema.sql, the one libtrace writes. Times are
given in nanoseconds and stored as ticks of a 1 GHz clock (tsc_hz 1e9) unless
a run says otherwise, so expected model terms are easy to write down.
"""
import os
import sqlite3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "core", "tracedb_schema.sql")


class Trace:
    def __init__(self, path, schema_version="5", hz=1e9):
        if os.path.exists(path):
            os.remove(path)
        self.path, self.hz = path, hz
        self.db = sqlite3.connect(path)
        with open(SCHEMA) as f:
            self.db.executescript(f.read())
        self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (schema_version,))
        self.db.execute("INSERT INTO meta VALUES ('chunks', '4')")
        self.next_id = 1
        self.site_rows = {}

    def run(self, rank, world, host="node0", mode="trace", copy_bw=1e10,
            mprotect_ns=0.0, fault_ns=0.0, finished=1, machine_ranks=0, machine_cpus=0,
            mprotect_page_ns=0.0, retouch_ns=0.0):
        """machine_ranks, machine_cpus: the job's ranks on the rank's
        machine and their CPUs (schema 3); 0: not counted. mprotect_page_ns,
        retouch_ns: per-page costs (schema 4); 0: not measured."""
        self.db.execute(
            "INSERT INTO run(rank, world_size, host, pid, command_line, start_unix_ns, "
            "start_tsc, tsc_hz, clock_source, mode, page_size, copy_bw, mprotect_ns, fault_ns, "
            "finished, machine_ranks, machine_cpus, mprotect_page_ns, retouch_ns) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rank, world, host, 1000 + rank, "./app", 0, 0, self.hz, "tsc", mode, 4096,
             copy_bw, mprotect_ns, fault_ns, finished, machine_ranks, machine_cpus,
             mprotect_page_ns, retouch_ns))

    def runs(self, world, hosts=None, **kw):
        for r in range(world):
            self.run(r, world, host=(hosts[r] if hosts else "node0"), **kw)

    def call(self, rank, site, op, comm_size, block_bytes, subs, entry_ns, return_ns,
             send_bytes=None, invocation=None, chunks=0, root=-1, comm_rank=None,
             recv_bytes=None, offsets=None):
        """subs: list of (idx, bytes, guard, ord or None, touch_ns or None, how
        [, tail_ns]): tail_ns, the first touch of its tail page (schema 5);
        offsets: each sub's byte offset in the buffer (default: one after
        another, in the list's order)."""
        cid = self.next_id
        self.next_id += 1
        key = (rank, site, op)
        inv = self.site_rows.get(key, 0) if invocation is None else invocation
        self.site_rows[key] = inv + 1
        rb = sum(s[1] for s in subs) if recv_bytes is None else recv_bytes
        sb = rb if send_bytes is None else send_bytes
        t = lambda ns: int(round(ns * self.hz / 1e9))
        self.db.execute(
            "INSERT INTO call VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cid, rank, site, inv, op, comm_size, rank if comm_rank is None else comm_rank,
             root, 1, 1, sb, rb, block_bytes, len(subs), chunks, t(entry_ns), t(return_ns), 0))
        at = 0
        for i, sub in enumerate(subs):
            idx, nbytes, guard, ordv, tns, how = sub[:6]
            tail = sub[6] if len(sub) > 6 else None
            off = offsets[i] if offsets is not None else at
            at += nbytes
            self.db.execute("INSERT INTO submsg VALUES (?,?,?,?,?,?,?)",
                            (cid, "recv", idx, -1 if chunks else idx, off, nbytes, guard))
            if tns is not None:
                self.db.execute("INSERT INTO touch(call_id, side, idx, ord, tsc, how, tail_tsc) "
                                "VALUES (?,?,?,?,?,?,?)",
                                (cid, "recv", idx, ordv, t(tns), how,
                                 None if tail is None else t(tail)))
        return cid

    def ordered_call(self, rank, site, op, comm_size, block_bytes, order, entry_ns, return_ns,
                     first_ns, gap_ns, guard="guarded", tails=None, **kw):
        """A call whose blocks are touched in `order`, the first at first_ns after
        the return and then one every gap_ns; blocks not in `order` untouched.
        tails: {block: ns after its first touch that its tail page is touched}."""
        n = kw.pop("nsub", comm_size)
        tails = tails or {}
        pos = {b: i for i, b in enumerate(order)}
        subs = []
        for idx in range(n):
            if idx in pos:
                at = return_ns + first_ns + pos[idx] * gap_ns
                subs.append((idx, block_bytes, guard, pos[idx], at, "read",
                             at + tails[idx] if idx in tails else None))
            else:
                subs.append((idx, block_bytes, guard, None, None, None))
        return self.call(rank, site, op, comm_size, block_bytes, subs, entry_ns, return_ns, **kw)

    def site(self, rank, site, op, calls, traced):
        self.db.execute("INSERT INTO site(rank, site, module, offset, symbol, op, calls, "
                        "traced, total_ns, bytes) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (rank, site, "app", 0, None, op, calls, traced, 0, 0))

    def early_cost(self, rank, site, op, early, steps_ns, land_ns=0, land_bytes=0):
        """A replay summary's early_cost row: `early` early returns whose
        eight steps (candidate, agree, plan, land_self, arm, copy, submit,
        edges) took steps_ns in all, each summed over those calls."""
        assert len(steps_ns) == 8
        self.db.execute("INSERT INTO early_cost VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (rank, site, op, early, *[int(x) for x in steps_ns], land_ns,
                         land_bytes))

    def close(self):
        self.db.commit()
        self.db.close()
