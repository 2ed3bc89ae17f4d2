#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Damaged traces: tnbc-analyze (and tnbc-report on some) on traces whose
cells are overwritten with extreme, negative, fractional, text and NULL
values, a few at a time, from fixed seeds.

    BUILD=build [FUZZ_ANALYZE=build-asan/bin/tnbc-analyze] [FUZZ_COUNT=100] fuzz_traces.py

Each run must end with exit 0, or exit 1 and a last stderr line that is
tnbc-analyze's (or tnbc report's) one-line error; never a signal, a
sanitizer report, a Python traceback, or more than 60 s; and a profile
written must pass the strict reader (PROFILE_TOOL --rewrite: no NaN or
other value the runtime would refuse). With a
sanitizer build of the analyzer (SAN=asan: AddressSanitizer and
UndefinedBehaviorSanitizer) an overflow on a damaged value fails too.
Prints TAP, one test per kind of base trace, counted by test/lib.sh's
t_cmocka. Found, before they were fixed: signed overflows on huge clock
ticks and byte counts, a host string leaked when a rank wrapped to 0, a
16 GB array for one huge invocation number, text read as 0, and
tracebacks in tnbc report.
"""
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mktrace  # noqa: E402

VALUES = [0, -1, 1, 7, 2**31 - 1, -2**31, 2**62, -2**62, 2**63 - 1, None, "x", "",
          1e308, -1e308, 0.5, 1e-300]
# Tables the analyzer reads row by row get most of the mutations.
READ = ("call", "touch", "submsg", "run", "site", "fidelity", "early_cost", "arrival")
SANITIZED = ("runtime error", "Sanitizer", "Traceback")


def base_traces(work):
    """Small traces of each kind the analyzer reads: a per-source
    alltoall on two hosts (touched, partly untouched, an edge), a chunked
    bcast, a replay summary of a trial run (blocking calls in the first
    site's pattern, 4 early then 4 blocking) with early returns for
    --measured."""
    a = mktrace.Trace(os.path.join(work, "a2a.db"))
    a.runs(4, hosts=["n0", "n0", "n1", "n1"], fault_ns=3000.0, mprotect_ns=2000.0)
    for inv in range(3):
        for r in range(4):
            e = inv * 5_000_000
            a.ordered_call(r, "app+0x10", "alltoall", 4, 1 << 20, [(r + k) % 4 for k in range(3)],
                           e, e + 1_000_000, 200_000, 300_000)
    for r in range(4):
        a.site(r, "app+0x10", "alltoall", 3, 3)
    b = mktrace.Trace(os.path.join(work, "bcast.db"))
    b.runs(2)
    for inv in range(3):
        for r in range(2):
            e = inv * 4_000_000
            b.call(r, "app+0x20", "bcast", 2, 1 << 18,
                   [(c, 1 << 18, "guarded", k, e + 1_000_000 + 100_000 * (k + 1), "read")
                    for k, c in enumerate([3, 1, 2, 0])], e, e + 1_000_000, chunks=4, root=0)
    s = mktrace.Trace(os.path.join(work, "summary.db"))
    s.runs(4, mode="replay")
    for r in range(4):
        for inv in range(12):
            e = inv * 5_000_000 + (500_000 if (inv >> 2) & 1 else 0)
            s.ordered_call(r, "app+0x10", "alltoall", 4, 1 << 20, [r], e, e + 300_000, 100_000,
                           1000)
        s.early_cost(r, "app+0x10", "alltoall", 3, [9e4, 3e5, 2e4, 1e5, 1e5, 1e5, 1e4, 1e3],
                     land_ns=900_000, land_bytes=3 << 20)
    s.db.execute("UPDATE call SET wait_ns = -1 WHERE (invocation / 4) % 2 = 1")
    for t in (a, b, s):
        t.close()
    return a.path, b.path, s.path


def mutate(src, dst, rnd):
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    weighted = [t for t in tables if t in READ] * 4 + tables
    done = []
    for _ in range(rnd.randint(1, 3)):
        t = rnd.choice(weighted)
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
        rows = [r[0] for r in db.execute(f'SELECT rowid FROM "{t}"')]
        if not cols or not rows:
            continue
        col, rowid, value = rnd.choice(cols), rnd.choice(rows), rnd.choice(VALUES)
        try:
            db.execute(f'UPDATE "{t}" SET "{col}" = ? WHERE rowid = ?', (value, rowid))
            done.append(f"{t}.{col}[{rowid}]={value!r}")
        except sqlite3.Error:
            pass            # a NOT NULL or key constraint: the file stays valid
    db.commit()
    db.close()
    return done


def acceptable(r, prefix):
    err = r.stderr.strip().splitlines()
    if any(s in line for line in err for s in SANITIZED):
        return False
    return r.returncode == 0 or (r.returncode == 1 and err and err[-1].startswith(prefix))


def run(cmd, env):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -9, "", "timed out after 60 s")


def main():
    root = os.path.dirname(os.path.dirname(HERE))
    build = os.path.join(root, os.environ.get("BUILD", "build"))
    analyze = os.environ.get("FUZZ_ANALYZE") or os.path.join(build, "bin", "tnbc-analyze")
    report = os.path.join(root, "scripts", "tnbc-report")
    reader = os.path.join(build, "analyzer", "test", "test_profile")   # the strict reader
    count = int(os.environ.get("FUZZ_COUNT", "100"))
    work = tempfile.mkdtemp(prefix="tnbc-analyzer-fuzz-")
    a2a, bcast, summary = base_traces(work)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=98:print_stacktrace=1")
    kinds = [("alltoall trace", a2a, None), ("chunked bcast trace", bcast, None),
             ("replay summary for --measured", summary, a2a)]
    print(f"1..{len(kinds)}")
    failed = 0
    for k, (name, base, trace) in enumerate(kinds, 1):
        bad = []
        for seed in range(count):
            rnd = random.Random(f"{name}:{seed}")
            dst = os.path.join(work, f"m{k}.db")
            muts = mutate(base, dst, rnd)
            out = os.path.join(work, f"m{k}.profile")
            cmd = ([analyze, trace, "-o", out, "-q", "--measured", dst] if trace
                   else [analyze, dst, "-o", out, "-q"])
            r = run(cmd, env)
            if not acceptable(r, "tnbc-analyze:"):
                bad.append((seed, muts, r.returncode, r.stderr.strip().splitlines()[-3:]))
            elif r.returncode == 0:
                r = run([reader, "--rewrite", out, out + ".again"], env)
                if r.returncode != 0:
                    bad.append((seed, muts, "profile refused", r.stderr.strip().splitlines()[-2:]))
            if not trace and seed % 10 == 0:     # the report is slower: one in ten
                r = run([report, dst, "-o", os.path.join(work, "rep"), "--no-plots"], env)
                if not acceptable(r, "tnbc report:"):
                    bad.append((seed, muts, r.returncode, r.stderr.strip().splitlines()[-3:]))
        print(f"{'not ok' if bad else 'ok'} {k} - {count} damaged copies of the {name}")
        for seed, muts, rc, tail in bad[:5]:
            print(f"# seed {seed}: {muts}: exit {rc}: {' | '.join(tail)}")
        failed += bool(bad)
    if not failed:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"# kept {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
