#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What watching tail pages in a site's first TNBC_TRACE_TAIL_CALLS traced
calls only gives the analyzer, from traces that watched them in every
call: each `make bench-tnbc` run directory's APP.db analyzed as it is, as
a trace watching the first N calls' tails has it (the later calls' tails
taken out, meta trace_tail_calls N: the analyzer carries the first ones'),
and with no tails at all (as read once). Prints one line per site:
decision and predicted saving per call (ms) each way, '<>' where the
first calls' tails decide otherwise than every call's.

Usage: bench/tail-calls.py [--tail-calls N] RUN_DIR...   (BUILD=build)
The CPU share each run passed to the analysis is read back from its
APP.model.profile. Works on copies in a temporary directory."""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ANALYZE = os.path.join(os.environ.get("BUILD", "build"), "bin", "tnbc-analyze")
APPS = ["micro-a", "micro-b", "micro-c", "micro-d", "micro-e", "ordinary", "ordinary-heavy",
        "bcast", "fft3d", "pencil", "isort"]


def share_of(run, app):
    try:
        with open(os.path.join(run, app + ".model.profile")) as f:
            m = re.search(r"counting the (\d+)% CPU share", f.read())
    except OSError:
        return None
    return int(m.group(1)) / 100 if m else 0.0


def verdicts(db, share, tmp):
    prof = os.path.join(tmp, "p.profile")
    subprocess.run([ANALYZE, db, "-o", prof, "--comm-cpu-share", str(share), "-q"], check=True)
    out = {}
    with open(prof) as f:
        for blk in f.read().split("\nsite ")[1:]:
            name = blk.split("\n")[0]
            dec = re.search(r"decision (\w+)", blk).group(1)
            sv = re.search(r"saving_call_ns (\S+)", blk)
            out[name] = (dec, float(sv.group(1)) / 1e6 if sv else 0.0)
    return out


def main(argv):
    tail_calls = 2
    if argv[:1] == ["--tail-calls"]:
        tail_calls, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    differing = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "t.db")
        for run in argv:
            for app in APPS:
                src, share = os.path.join(run, app + ".db"), share_of(run, app)
                if share is None or not os.path.exists(src):
                    continue
                shutil.copy(src, db)
                ways = [verdicts(db, share, tmp)]
                c = sqlite3.connect(db)
                c.execute("UPDATE touch SET tail_tsc = NULL WHERE call_id IN "
                          "(SELECT call_id FROM call WHERE invocation >= ?)", (tail_calls,))
                c.execute("INSERT OR REPLACE INTO meta VALUES ('trace_tail_calls', ?)",
                          (str(tail_calls),))
                c.commit()
                ways.append(verdicts(db, share, tmp))
                c.execute("UPDATE touch SET tail_tsc = NULL")
                c.commit()
                c.close()
                ways.append(verdicts(db, share, tmp))
                for site, every in ways[0].items():
                    total += 1
                    first, none = ways[1][site], ways[2][site]
                    differing += first[0] != every[0]
                    mark = " <>" if first[0] != every[0] else ""
                    print(f"{os.path.basename(run.rstrip('/'))} {app:15s} {site[:30]:30s} "
                          f"every call {every[0]:3s} {every[1]:8.2f}  first {tail_calls} {first[0]:3s} "
                          f"{first[1]:8.2f}  none {none[0]:3s} {none[1]:8.2f}{mark}")
    print(f"{total} sites, {differing} decided otherwise with the first {tail_calls} calls' tails")


if __name__ == "__main__":
    main(sys.argv[1:])
