#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Predicted against measured again, with the analyzer as it is now, for
`make bench-tnbc` runs already made: each run directory's APP.db analyzed
as the bench analyzed it (the run's CPU share, --measured with its trial
run's summary), and the sites the run had on summed, beside the saving
its plain and tuned repetitions measured (medians of t_total, as
bench/tnbc-compare has it). A change to the model can so be weighed on
every stored trace at once, without running the programs again.

Prints one line per application and run:
  run ranks/hosts tcomm_ms app share measured_ms stored_ms stored_ratio now_ms now_ratio
  trial_ms trial_ratio decisions
(tcomm_ms: the run's calibrated Tcomm of a 1 MiB alltoall, which tells the
link rate apart: docs/bench.md)
ratio = measured / predicted; 'stored' is the prediction the run's own
analyzer wrote into APP.profile, 'now' this build's for the same sites,
'trial' the trial run's median saving per pair of calls (in the sites'
reasons; nan without a trial run), a measurement rather than the model;
decisions: 'same' where this build turns on just the sites the run had
on, 'differs' where not (the measured saving is then not what this
build's profile would give); ',no-trial' where the run made no trial run
(the model's decisions alone, both then and now).

Usage: bench/reanalyze.py [RUN_DIR...]   (BUILD=build; no arguments: every
run under $BUILD/bench/apps with a summary.json)
Exit status 1 where an analysis failed."""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(BUILD, "bin")


def load_compare():
    """bench/tnbc-compare (a script without .py) as a module: its profile
    parser is the one both tools read profiles with."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tnbc-compare")
    loader = SourceFileLoader("tnbc_compare", path)
    module = module_from_spec(spec_from_loader("tnbc_compare", loader))
    loader.exec_module(module)
    return module


compare = load_compare()


def shape(db):
    """'4r/2h': the traced ranks and hosts, or '?'."""
    try:
        with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
            ranks, hosts = c.execute("SELECT count(*), count(DISTINCT host) FROM run").fetchone()
        return "%dr/%dh" % (ranks, hosts)
    except sqlite3.Error:
        return "?"


def ratio(measured, predicted):
    return "%6.2f" % (measured / predicted) if predicted > 0 else "     -"   # nan > 0 is false


def reanalyze(run, app, share, work):
    """This build's analysis of the run's trace: its sites by name, as
    tnbc-compare's profile_sites reads them; None where the analysis
    failed (said on stderr)."""
    db, trial = os.path.join(run, app + ".db"), os.path.join(run, app + "-trial.d")
    args = [os.path.join(BIN, "tnbc-analyze"), db, "-o", os.path.join(work, "p"),
            "--comm-cpu-share", "%.6f" % share, "-q"]
    try:
        if os.path.isdir(trial):
            merged = os.path.join(work, "trial.db")
            if os.path.exists(merged):
                os.remove(merged)
            subprocess.run([os.path.join(BIN, "tnbc-merge"), merged, trial], check=True,
                           capture_output=True, timeout=300)
            args += ["--measured", merged]
        subprocess.run(args, check=True, capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        err = getattr(e, "stderr", b"") or b""
        print("reanalyze: %s %s: %s %s" % (run, app, e, err.decode(errors="replace").strip()),
              file=sys.stderr)
        return None
    return {s["site"]: s for s in compare.profile_sites(os.path.join(work, "p"))}


def one_run(run, work):
    """Prints the run's lines; False where an analysis failed."""
    try:
        with open(os.path.join(run, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        return True
    if not isinstance(summary, dict):
        return True
    share = summary.get("meta", {}).get("comm_cpu_share", 0.0) or 0.0
    tcomm = (summary.get("meta", {}).get("tcomm_us", 0.0) or 0.0) / 1e3
    modes = {}
    for r in summary.get("summary", []):
        modes.setdefault(r["app"], {})[r["mode"]] = r
    ok = True
    for app, m in sorted(modes.items()):
        on = [s for s in compare.profile_sites(os.path.join(run, app + ".profile")) if s["on"]]
        if ("plain" not in m or "tuned" not in m or not on
                or not os.path.exists(os.path.join(run, app + ".db"))):
            continue
        measured = (m["plain"]["t_total_median"] - m["tuned"]["t_total_median"]) * 1e3
        stored = sum(s["saving_call_ns"] for s in on) / 1e6
        now = reanalyze(run, app, share, work)
        if now is None:
            ok = False
            continue
        predicted = sum(now[s["site"]]["saving_call_ns"] / 1e6 for s in on if s["site"] in now)
        same = {s["site"] for s in on} == {k for k, v in now.items() if v["on"]}
        trial = compare.trial_sum([now.get(s["site"], {}) for s in on])
        decisions = ("same" if same else "differs") + \
            ("" if os.path.isdir(os.path.join(run, app + "-trial.d")) else ",no-trial")
        print("%-17s %-6s %6.1f %-15s %5.2f %8.1f %8.1f %s %8.1f %s %8.1f %s %s" % (
            os.path.basename(os.path.normpath(run)), shape(os.path.join(run, app + ".db")), tcomm,
            app, share, measured, stored, ratio(measured, stored), predicted,
            ratio(measured, predicted), trial, ratio(measured, trial), decisions))
    return ok


def main():
    runs = sys.argv[1:] or sorted(d for d in glob.glob(os.path.join(BUILD, "bench", "apps", "2*"))
                                  if os.path.exists(os.path.join(d, "summary.json")))
    if any(a.startswith("-") for a in runs):
        sys.exit(__doc__.split("\n\n")[-1].strip())
    print("%-17s %-6s %6s %-15s %5s %8s %8s %6s %8s %6s %8s %6s %s" % (
        "run", "shape", "tcomm", "app", "share", "measured", "stored", "ratio", "now", "ratio", "trial",
        "ratio", "decisions"))
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for run in runs:
            ok = one_run(run, work) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
