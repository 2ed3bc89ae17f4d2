#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tnbc-analyze and tnbc-report on hand-made traces with known answers.

Prints TAP ("ok N - name" / "not ok N - name"), counted by test/lib.sh's
t_cmocka. Needs BUILD (default build) with tnbc-analyze and test_profile.
"""
import importlib.util
import math
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mktrace  # noqa: E402

BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
ANALYZE = os.path.join(BUILD, "bin", "tnbc-analyze")
PROFILE_TOOL = os.path.join(BUILD, "analyzer", "test", "test_profile")
REPORT = os.path.join(ROOT, "scripts", "tnbc-report")

_loader = SourceFileLoader("tnbc_report", REPORT)
_spec = importlib.util.spec_from_loader("tnbc_report", _loader)
report = importlib.util.module_from_spec(_spec)
_loader.exec_module(report)

TMP = tempfile.mkdtemp(prefix="tnbc-analyzer-test-")
SITE = "app+0x10"
MB = 1 << 20


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def close(a, b, rel=1e-6, what=""):
    if math.isinf(a) or math.isinf(b):
        check(a == b, f"{what}: {a} != {b}")
    else:
        check(abs(a - b) <= rel * max(abs(a), abs(b), 1e-9), f"{what}: {a} != {b}")


def db(name):
    return os.path.join(TMP, name + ".db")


def analyze(path, expect_rc=0, extra=(), out=None):
    out = out or path.replace(".db", ".profile")
    r = subprocess.run([ANALYZE, path, "-o", out, "-q", *extra], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != expect_rc:
        raise Fail(f"tnbc-analyze exit {r.returncode} (want {expect_rc}): {r.stderr}")
    if expect_rc:
        return r
    # Every profile the analyzer writes must pass the strict C reader, and
    # writing what it read must give the same bytes (the round trip).
    again = out + ".again"
    c = subprocess.run([PROFILE_TOOL, "--rewrite", out, again], capture_output=True,
                       text=True, timeout=60)
    check(c.returncode == 0, f"strict reader refused the analyzer's profile: {c.stderr}")
    with open(out) as a, open(again) as b:
        check(a.read() == b.read(), "profile changed through read + write")
    return report.read_profile(out)


def site_of(prof, op, site=SITE):
    for s in prof["sites"]:
        if s["site"] == site and s["op"] == op:
            return s
    raise Fail(f"no site {site} {op} in profile")


def ordered_trace(name, orders, n=4, invocations=3, block=MB, hosts=None, **kw):
    """orders(rank, inv) -> the order rank reads its blocks in. The reads
    start 500 us after the return (TCURC), so every rank gains something
    whatever its order, and the site is on (the send copy at 100 GB/s:
    Tinit 40 us, well under what any rank hides)."""
    t = mktrace.Trace(db(name))
    kw.setdefault("copy_bw", 1e11)
    t.runs(n, hosts=hosts, **kw)
    for inv in range(invocations):
        for r in range(n):
            t.ordered_call(r, SITE, "alltoall", n, block, orders(r, inv), 0, 1_000_000, 500_000,
                           50_000)
    t.close()
    return analyze(db(name))


# ------------------------------------------------------------------ orders

def test_order_forward():
    s = site_of(ordered_trace("fwd", lambda r, i: [0, 1, 2, 3]), "alltoall")
    check(s["order_kind"] == "consensus" and s["order"] == [0, 1, 2, 3], s["order"])
    check((s["identical"], s["tau"], s["samples"]) == (1.0, 1.0, 12), s)


def test_order_reverse():
    s = site_of(ordered_trace("rev", lambda r, i: [3, 2, 1, 0]), "alltoall")
    check(s["order_kind"] == "consensus" and s["order"] == [3, 2, 1, 0], s["order"])
    check(s["recv_prio"]["0"] == [3, 2, 1, 0], s["recv_prio"])


def test_order_permutation_and_priorities():
    s = site_of(ordered_trace("perm", lambda r, i: [3, 1, 2, 0]), "alltoall")
    check(s["order"] == [3, 1, 2, 0] and s["identical"] == 1.0, s["order"])
    for r in range(4):
        check(s["recv_prio"][str(r)] == [3, 1, 2, 0], f"recv_prio {r}")
    # the block every receiver reads first is rank 3's: priority 0 everywhere
    check(s["send_prio"]["3"] == [0, 0, 0, 0], s["send_prio"])
    check(s["send_prio"]["0"] == [3, 3, 3, 3], s["send_prio"])
    check(s["send_prio"]["1"] == [1, 1, 1, 1], s["send_prio"])


def test_order_partial_agreement():
    swapped = [1, 0, 2, 3]
    s = site_of(ordered_trace("part", lambda r, i: swapped if (r, i) == (2, 3) else [0, 1, 2, 3],
                              invocations=4), "alltoall")
    check(s["order_kind"] == "consensus" and s["order"] == [0, 1, 2, 3], s["order"])
    close(s["identical"], 15 / 16, what="identical")
    close(s["tau"], (15 + (1 - 2 / 6)) / 16, rel=1e-5, what="tau")


def test_order_per_rank():
    s = site_of(ordered_trace("ranks", lambda r, i: [0, 1, 2, 3] if r < 2 else [3, 2, 1, 0]),
                "alltoall")
    check(s["order_kind"] == "per-rank", s["order_kind"])
    check(s["order"] == [0, 1, 2, 3], f"shared order falls back to default: {s['order']}")
    check(s["rank_order"] == {2: [3, 2, 1, 0], 3: [3, 2, 1, 0]}, s["rank_order"])
    close(s["tau"], 0.0, what="tau of the consensus")
    check("per-rank priorities" in s["reason"], s["reason"])
    check(s["recv_prio"]["2"] == [3, 2, 1, 0] and s["recv_prio"]["0"] == [0, 1, 2, 3], "recv")
    # what rank 0 sends to rank 2 is rank 2's last read
    check(s["send_prio"]["0"] == [0, 0, 3, 3], s["send_prio"]["0"])


def test_order_unstable_default():
    rng = random.Random(7)
    orders = {}

    def pick(r, i):
        o = list(range(8))
        rng.shuffle(o)
        orders[(r, i)] = o
        return o
    s = site_of(ordered_trace("random", pick, n=8, invocations=4, block=8192), "alltoall")
    check(s["order_kind"] == "default" and s["order"] == list(range(8)), s["order_kind"])
    check(s["tau"] < 0.8 and s["identical"] < 0.2, (s["tau"], s["identical"]))
    check(not s["rank_order"], s["rank_order"])
    check("no stable read order" in s["reason"], s["reason"])


def test_order_untouched_blocks():
    # only blocks 2 and 0 are read; the others stay behind them
    s = site_of(ordered_trace("untouched", lambda r, i: [2, 0]), "alltoall")
    check(s["order"][:2] == [2, 0] and sorted(s["order"]) == [0, 1, 2, 3], s["order"])
    check(s["identical"] == 1.0, s["identical"])


# ------------------------------------------------------------------ model

TCOMM = 1_000_000          # ns
DCOMM = 2 * MB             # 2 blocks of 1 MB
TINIT = 100_000            # ns, from copy_bw alone
COPY_BW = DCOMM / (TINIT * 1e-9)


def regime_trace(name, tcurc_ns, gap_ns, calls=50, copy_bw=COPY_BW):
    t = mktrace.Trace(db(name))
    t.runs(2, copy_bw=copy_bw)
    for inv in range(3):
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, tcurc_ns, gap_ns)
    t.site(0, SITE, "alltoall", calls, 3)
    t.close()
    return site_of(analyze(db(name)), "alltoall")


def check_model(s, regime, toverlap, tcurc, rcrc, saving, on):
    """Every number here is worked out by hand for the regime traces (see
    each test); none is recomputed from the profile's own terms."""
    m = s["model"]
    check(m["regime"] == regime, f"regime {m['regime']} != {regime}")
    close(m["tcomm_ns"], TCOMM, what="tcomm")
    close(m["dcomm"], DCOMM, what="dcomm")
    close(m["rcomm"], DCOMM / (TCOMM * 1e-9), rel=1e-8, what="rcomm")
    close(m["tinit_ns"], TINIT, rel=1e-6, what="tinit")
    close(m["tcurc_ns"], tcurc, what="tcurc")
    close(m["rcrc"], rcrc, rel=1e-8, what="rcrc")
    close(m["toverlap_ns"], toverlap, rel=1e-6, what="toverlap (eq. 3)")
    close(m["saving_call_ns"], saving, rel=1e-6,
          what="saving per call: the formula's or the slowest rank's, the smaller")
    close(m["saving_run_ns"], 50 * saving, rel=1e-6, what="saving per run, 50 calls")
    check(s["on"] == on, s["reason"])


# The regime traces' play-out, by hand: 2 ranks read block 0 then block 1
# (1 MB each, one every GAP, the first TCURC after the return); rank r's own
# block is r, the other streams in over Tcomm = 1 ms and can be read one
# piece (1/32 MB, GAP/32) after it has all arrived at the latest. Plain, a
# rank ends at Tcomm + TCURC + 2 GAP; early, where its reads end; it hides
# the difference less Tinit (100 us), at most Tcomm - Tinit. The site saves
# what the slowest rank hides, or the formula's Toverlap if smaller.
def test_regime_a_curc_covers_tcomm():
    # TCURC 1.5 ms, GAP 100 us: both ranks' reads end at 1.7 ms (both blocks
    # long there), plain 2.7 ms: 1.0 - 0.1 = 0.9 ms each.
    s = regime_trace("ra", 1_500_000, 100_000)
    check_model(s, "a", TCOMM - TINIT, 1_500_000, MB / 100e-6, 900_000, True)


def test_regime_b_no_curc_slow_crc():
    # RCRC = 1 MB/ms < Rcomm = 2 MB/ms. Rank 1 reads the remote block first:
    # at max(0 + 1, 1 + 1/32) = 1.03125 ms, its own at 2.03125 ms; plain
    # 3 ms: it hides 0.96875 - 0.1 = 0.86875 ms (rank 0: 0.9 ms).
    s = regime_trace("rb", 0, 1_000_000)
    check_model(s, "b", TCOMM - TINIT, 0, MB / 1e-3, 868_750, True)


def test_regime_c_no_curc_fast_crc():
    # RCRC = 10 MB/ms: Tcomm*Rcomm/RCRC = 200 us. Rank 1 reads its remote
    # block first, as it arrives (1.003125 ms), then its own in 100 us:
    # 1.103125 against 1.2 ms plain, less Tinit: nothing, so the site is off.
    s = regime_trace("rc", 0, 100_000)
    check_model(s, "c", 200_000, 0, MB / 100e-6, 0, False)
    check("slowest rank" in s["reason"], s["reason"])


def test_play_out_near_blocks_there_at_once():
    # 4 ranks, 1 MB blocks, Tcomm 1 ms, Tinit 100 us (copy only), each rank
    # reads blocks 0 1 2 3 from its return, one every 200 us (plain: 1.8
    # ms). On hosts A A B B the data crossing the link (2 MB per rank) is
    # what takes Tcomm; the block from the rank's node partner is there at
    # once, as its own. Rank 2: block 0 (remote) all there at 0.5 ms, read
    # one piece (6.25 us) later; block 1 at 1.0 ms, read at 1.00625; its own
    # block 2 and its partner's block 3 then take 0.4 ms: reads end at
    # 1.40625 ms, it hides 1.8 - 1.40625 - 0.1 = 0.29375 ms (rank 3 the
    # same; ranks 0 and 1 read their node's blocks first: 0.69375). On one
    # host, three foreign blocks stream in over Tcomm (one every 1/3 ms):
    # rank 3 reads 0 at 0.33958, 1 at 0.67292, 2 at 1.00625, its own 3 by
    # 1.20625, hiding 0.49375 ms, the least of the four.
    for name, hosts, saving in (("near2", ["A", "A", "B", "B"], 293_750),
                                ("near1", ["A"] * 4, 493_750)):
        t = mktrace.Trace(db(name))
        t.runs(4, hosts=hosts, copy_bw=4 * MB / 100e-6)
        for inv in range(3):
            for r in range(4):
                t.ordered_call(r, SITE, "alltoall", 4, MB, [0, 1, 2, 3], 0, TCOMM, 0, 200_000)
        t.site(0, SITE, "alltoall", 50, 3)
        t.close()
        m = site_of(analyze(db(name)), "alltoall")["model"]
        close(m["tinit_ns"], 100_000, what=f"{name}: tinit")
        close(m["toverlap_ns"], 800_000, what=f"{name}: eq. 3, Tcomm Rcomm / RCRC")
        close(m["saving_call_ns"], saving, what=f"{name}: the slowest rank's play-out")


def test_play_out_reads_each_block_at_its_own_pace():
    # 4 ranks, 1 MB blocks, Tcomm 1 ms, Tinit 100 us (copy only). Rank r
    # reads (r+1)%4 at its return, its own block 50 us later, (r+2)%4 600 us
    # after that and (r+3)%4 50 us later again: the own block takes 0.6 ms
    # of reading, the others 0.05, the last one RCRC's 1/3 of 0.7 ms
    # (plain: 0.9333 ms of reading). The three remote blocks stream in one
    # every 1/3 ms in read order. Played out with each block's own span:
    # (r+1)%4 is there at 1/3 ms, read one piece (0.05/32 ms) later; the own
    # block until 0.9349 ms, (r+2)%4 (long there) until 0.9849, the last one
    # (there at 1 ms) until 1.2182 ms: the rank hides 1 + 0.9333 - 1.2182
    # - 0.1 = 0.6151 ms. At the mean rate (every block 0.2333 ms), as the
    # play-out read them before, the waiting for (r+1)%4 looked covered by
    # reading the own block sooner: 0.7927 ms, more than the code can hide.
    t = mktrace.Trace(db("pace"))
    t.runs(4, copy_bw=4 * MB / 100e-6)
    for inv in range(3):
        for r in range(4):
            touches = {(r + 1) % 4: (0, 0), r: (1, 50_000), (r + 2) % 4: (2, 650_000),
                       (r + 3) % 4: (3, 700_000)}
            t.call(r, SITE, "alltoall", 4, MB,
                   [(i, MB, "guarded", touches[i][0], TCOMM + touches[i][1], "read")
                    for i in range(4)], 0, TCOMM)
    t.site(0, SITE, "alltoall", 50, 3)
    t.close()
    m = site_of(analyze(db("pace")), "alltoall")["model"]
    close(m["tinit_ns"], 100_000, what="tinit")
    close(m["toverlap_ns"], 900_000, what="eq. 3: Tcomm - Tinit")
    read_end = 1e6 / 3 + 50_000 / 32 + 600_000 + 50_000 + 700_000 / 3
    close(m["saving_call_ns"], TCOMM + 700_000 * 4 / 3 - read_end - 100_000,
          what="each block read at its own pace")


def stream_trace(name, first_ns, fault_ns, tail_ns=None):
    # 2 ranks, 1 MiB blocks, Tcomm 1 ms: the remote block streams in as 32
    # pieces of 32 KiB, one every 31.25 us. Each rank reads the remote block
    # first_ns after its return, then its own 100 us later (RCRC 1 MiB per
    # 100 us, so a piece is read in 3.125 us); copy_bw makes the copy 2 us.
    t = mktrace.Trace(db(name))
    t.runs(2, copy_bw=2 * MB / 2e-6, fault_ns=fault_ns)
    for inv in range(2):
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [1 - r, r], 0, TCOMM, first_ns, 100_000,
                           tails=None if tail_ns is None else {1 - r: tail_ns})
    t.site(0, SITE, "alltoall", 50, 2)
    t.close()
    return site_of(analyze(db(name)), "alltoall")["model"]


def test_play_out_streamed_block_faults_per_piece():
    # Read at its return, the remote block is read faster than it arrives:
    # the reader catches up with all 32 pieces, a fault each, of which Tinit
    # counts one per touched block (2): 31 more on the reader's path. With
    # faults of 1 us the slowest rank's overlap (here the saving: 100 us of
    # reading hidden less one piece's 3.125 us, less Tinit) is 2 + 31 us
    # lower than with free faults. Read 1.5 ms after its return, long after
    # the data arrived, only Tinit's 2 us change.
    streamed0, streamed1 = stream_trace("strm0", 0, 0), stream_trace("strm1", 0, 1000)
    close(streamed0["saving_call_ns"], 100_000 - 3125 - streamed0["tinit_ns"], what="free faults")
    close(streamed0["saving_call_ns"] - streamed1["saving_call_ns"], 33 * 1000,
          what="a fault per piece caught up with, one per block in Tinit")
    late0, late1 = stream_trace("late0", 1_500_000, 0), stream_trace("late1", 1_500_000, 1000)
    close(late0["saving_call_ns"] - late1["saving_call_ns"], 2 * 1000,
          what="read after it arrived: Tinit's faults only")


def test_play_out_block_needed_whole_at_its_tail():
    # As above, but the code needs the remote block's last page 10 us after
    # its first touch (the trace's tail page: a first pass over the block,
    # then 90 us more on it): the block must be there whole by then. It
    # arrives at 1 ms; the first pass ends one piece's 0.3125 us later, the
    # other 90 us of work on it follow, then the own block's 100 us: 1.1903
    # ms against the plain run's 1.2. Read once, front to back (tail at the
    # end of its 100 us, or not seen), the reading hides 100 - 3.125 us.
    tail = stream_trace("tail10", 0, 0, tail_ns=10_000)
    close(tail["saving_call_ns"], 100_000 - 90_000 - 312.5 - tail["tinit_ns"],
          what="needed whole 10 us into its reading")
    once = stream_trace("tail100", 0, 0, tail_ns=100_000)
    close(once["saving_call_ns"], 100_000 - 3125 - once["tinit_ns"], what="tail at the end")
    check(tail["tcurc_ns"] == once["tcurc_ns"] and tail["rcrc"] == once["rcrc"],
          "the tail changes the play-out, not the terms")


def tail_calls_trace(name, tail_calls):
    # stream_trace's calls with the tail 10 us into the remote block's
    # reading, four invocations, of which the trace watched the tail in the
    # first only: it watches tails in each site's first
    # TNBC_TRACE_TAIL_CALLS traced calls (meta trace_tail_calls; None: a
    # trace made before the row, whose every call watched them).
    t = mktrace.Trace(db(name))
    t.runs(2, copy_bw=2 * MB / 2e-6)
    if tail_calls is not None:
        t.db.execute("INSERT INTO meta VALUES ('trace_tail_calls', ?)", (tail_calls,))
    for inv in range(4):
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [1 - r, r], 0, TCOMM, 0, 100_000,
                           tails={1 - r: 10_000} if inv == 0 else None)
    t.site(0, SITE, "alltoall", 50, 4)
    t.close()
    return site_of(analyze(db(name)), "alltoall")["model"]


def test_tails_carried_past_the_watched_calls():
    # trace_tail_calls 1: the later calls take the first call's tail (the
    # block needed whole 10 us into its reading), and the site saves what
    # test_play_out_block_needed_whole_at_its_tail's tailed trace does.
    # Without the row every call watched its tails, and one without a tail
    # had none to see (the code never reached the block's last page before
    # its next call): those three are read once, front to back, and set
    # the lower median.
    carried = tail_calls_trace("tailc1", "1")
    close(carried["saving_call_ns"], 100_000 - 90_000 - 312.5 - carried["tinit_ns"],
          what="tails carried from the first call")
    each = tail_calls_trace("tailall", None)
    close(each["saving_call_ns"], 100_000 - 3125 - each["tinit_ns"],
          what="every call watched: untailed calls read once")


def test_bad_trace_tail_calls():
    msg = bad_trace("tailcalls", sql("INSERT INTO meta VALUES ('trace_tail_calls', 'two');"))
    check("meta trace_tail_calls 'two' is not a count" in msg, msg)


def critical_path_trace(name, rank1_reaches_last):
    # Two invocations, 10 ms apart. Rank 0 reads blocks 0, 1 from 1.5 ms
    # after its return, one every 100 us: it hides Tcomm - Tinit = 0.9 ms
    # in both (regime a). Rank 1 does so in the first; in the second it
    # reads at once and fast (10 us a block), the remote block 0 first: it
    # waits for it until 1.0003 ms, its own ends at 1.0103 ms, plain 1.02:
    # it hides nothing. The first invocation's ranks enter the second 9 ms
    # after their return. After the second, rank 0 enters its next
    # collective (another site) 1.8 ms after its return; rank 1 either
    # 2 ms after its return (then the iteration waits for it, and it hides
    # nothing) or never (then it is done with its reading at 0.02 ms, the
    # iteration waits for rank 0, which hides 0.9 ms).
    t = mktrace.Trace(db(name))
    t.runs(2, copy_bw=COPY_BW)
    at = 10_000_000
    for r in range(2):
        t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 1_500_000, 100_000)
    t.ordered_call(0, SITE, "alltoall", 2, MB, [0, 1], at, at + TCOMM, 1_500_000, 100_000)
    t.ordered_call(1, SITE, "alltoall", 2, MB, [0, 1], at, at + TCOMM, 0, 10_000)
    t.call(0, "app+0x20", "alltoall", 2, 4, [(0, 4, "edge", None, None, None)],
           at + TCOMM + 1_800_000, at + TCOMM + 1_900_000)
    if rank1_reaches_last:
        t.call(1, "app+0x20", "alltoall", 2, 4, [(0, 4, "edge", None, None, None)],
               at + TCOMM + 2_000_000, at + TCOMM + 2_100_000)
    t.site(0, SITE, "alltoall", 50, 2)
    t.close()
    return site_of(analyze(db(name)), "alltoall")


def test_critical_path_lower_median_of_two_calls():
    # Where rank 1 reaches its next collective last after the second
    # invocation, that invocation saves nothing: the iteration waits for
    # rank 1, which hid nothing. Per invocation 0.9 ms and 0: their mean
    # (0.45 ms, the median of two as an_median takes it) would put the
    # site on; the lower median, 0, is what the iteration can count on
    # (tnbc auto learns from 2 calls: with means, u29 went on in 2 of 7
    # auto runs and ran 28-37% slower than plain).
    s = critical_path_trace("critlow", True)
    close(s["model"]["toverlap_ns"], TCOMM - TINIT, what="eq. 3: regime a, Tcomm - Tinit")
    close(s["model"]["saving_call_ns"], 0, what="the critical path's lower median")
    check(not s["on"] and "no predicted overlap for the slowest rank" in s["reason"], s["reason"])


def test_critical_path_not_the_smallest_rank():
    # The same, but rank 1 is done at 0.02 ms after the second invocation
    # while rank 0 reads until 1.7 ms: the iteration waits for rank 0 in
    # both, and saves its 0.9 ms in both; the rank that hid nothing does
    # not set the saving (the smallest rank's lower median said 0).
    s = critical_path_trace("critrank", False)
    close(s["model"]["saving_call_ns"], TCOMM - TINIT, what="rank 0 on the critical path")
    check(s["on"], s["reason"])


def test_decision_min_gain():
    # Each block read in 115 us: the slowest rank (rank 1, remote block
    # first) hides 115 - 3.6 (one piece) - 100 (Tinit) = 11.4 us, less than
    # Tinit itself, the model's estimate of the early return's cost, which
    # measured runs exceeded several times: off.
    s = regime_trace("mingain", 0, 115_000)
    close(s["model"]["saving_call_ns"], 115_000 - 115_000 * 32768 / MB - TINIT, rel=1e-6,
          what="slowest rank's saving")
    check(not s["on"] and "below the early return's modelled cost (Tinit 100.0 us)" in s["reason"],
          s["reason"])
    # With the copy 100 times faster (Tinit 1 us) and each block read in 15
    # us: rank 1 hides 15 - 15/32 - 1 = 13.5 us, more than Tinit but 1.4%
    # of Tcomm: below the 2% worth an early return.
    s = regime_trace("mingain2", 0, 15_000, copy_bw=100 * COPY_BW)
    close(s["model"]["saving_call_ns"], 15_000 - 15_000 / 32 - TINIT / 100, rel=1e-6,
          what="slowest rank's saving, fast copy")
    check(not s["on"] and "below 2% of Tcomm" in s["reason"], s["reason"])


def test_comm_cpu_share():
    # Regime a with a quarter of the CPU taken by the communication in
    # flight: Toverlap (the formula) stands; the program's work under the
    # Alltoall runs at 3/4 speed, so it hides Tcomm * 3/4 - Tinit = 650 us
    # (the formula's overlap * 3/4 would be 675 us): per call and per run.
    s0 = regime_trace("share", 1_500_000, 100_000)
    s = site_of(analyze(db("share"), extra=("--comm-cpu-share", "0.25"),
                        out=db("share-25").replace(".db", ".profile")), "alltoall")
    close(s["model"]["toverlap_ns"], s0["model"]["toverlap_ns"], what="Toverlap unchanged")
    close(s["model"]["saving_call_ns"], 0.75 * TCOMM - TINIT, rel=1e-6,
          what="saving per call after the CPU share")
    close(s["model"]["saving_run_ns"], 50 * (0.75 * TCOMM - TINIT), rel=1e-6,
          what="saving per run after the CPU share")
    check(s["on"] and "counting the 25% CPU share" in s["reason"], s["reason"])
    # Work that waits for data anyway loses nothing: each block read in
    # 150 us, the slowest rank (remote block first) waits for it and hides
    # 150 - 4.7 (one piece) - 100 (Tinit) = 45.3 us with or without a share.
    g0 = regime_trace("share-wait", 0, 150_000)
    g = site_of(analyze(db("share-wait"), extra=("--comm-cpu-share", "0.5"),
                        out=db("share-wait-50").replace(".db", ".profile")), "alltoall")
    want = 150_000 - 150_000 * 32768 / MB - TINIT
    close(g0["model"]["saving_call_ns"], want, rel=1e-6, what="waiting rank, no share")
    close(g["model"]["saving_call_ns"], want, rel=1e-6, what="waiting rank, share 0.5")
    # A share that leaves less than Tinit turns a site off:
    # 1000 * 0.11 - 100 = 10 us.
    s = site_of(analyze(db("share"), extra=("--comm-cpu-share", "0.89"),
                        out=db("share-89").replace(".db", ".profile")), "alltoall")
    close(s["model"]["saving_call_ns"], 0.11 * TCOMM - TINIT, rel=1e-6, what="share 0.89")
    check(not s["on"] and "below the early return's modelled cost" in s["reason"], s["reason"])
    for bad in ("1", "-0.1", "nan", "0.2x", ""):
        r = analyze(db("share"), expect_rc=2, extra=("--comm-cpu-share", bad))
        check("not a number in [0, 0.9]" in r.stderr and r.stderr.count("\n") == 1, r.stderr)


def crowded_trace(name, hosts, machine_ranks, machine_cpus, schema_version="3"):
    """regime_trace's site (on: it hides Tcomm - Tinit per call), traced on
    `hosts` whose machine runs machine_ranks of the job's ranks on
    machine_cpus CPUs."""
    t = mktrace.Trace(db(name), schema_version=schema_version)
    t.runs(2, hosts=hosts, copy_bw=COPY_BW, machine_ranks=machine_ranks,
           machine_cpus=machine_cpus)
    for inv in range(3):
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 1_500_000, 100_000)
    t.site(0, SITE, "alltoall", 50, 3)
    t.close()


def test_crowded_machine_off():
    # Both members on one node of a machine that runs 4 of the job's ranks
    # on 2 CPUs: moving their data is copying, which takes some rank's CPU
    # (docs/analyzer.md, rule 4; the rule tnbc auto applies, crowding.h).
    crowded_trace("crowd", ["n0", "n0"], 4, 2)
    s = site_of(analyze(db("crowd")), "alltoall")
    check(not s["on"] and s["reason"].startswith(
        "no CPU to overlap with: the 2 members share a node, and its machine runs 4 of the "
        "job's ranks on 2 CPUs") and "(--comm-cpu-share overrides)" in s["reason"], s["reason"])
    check(s["model"]["saving_call_ns"] == 0, f"saving {s['model']['saving_call_ns']}")
    # The user's measured share overrides the rule: the model's verdict.
    s = site_of(analyze(db("crowd"), extra=("--comm-cpu-share", "0"),
                        out=db("crowd-0").replace(".db", ".profile")), "alltoall")
    close(s["model"]["saving_call_ns"], TCOMM - TINIT, rel=1e-6, what="share given")
    check(s["on"], s["reason"])
    # Members on two hosts of one machine that runs the whole job (2
    # ranks) on 1 CPU: the hosts share a kernel, whose TCP moves the data
    # on that CPU; off too, said so.
    crowded_trace("crowd-job", ["n0", "n1"], 2, 1)
    s = site_of(analyze(db("crowd-job")), "alltoall")
    check(not s["on"] and s["reason"].startswith(
        "no CPU to overlap with: the job's 2 ranks run on one machine with 1 CPU (its hosts "
        "share one kernel)") and "(--comm-cpu-share overrides)" in s["reason"], s["reason"])
    # Not crowded (as many CPUs as ranks, on one host or two), members on
    # two hosts whose machine count is not the job's size (the rule needs
    # the whole job on the machine), the machine not counted (0), a
    # schema 2 trace without the columns: the model's verdict, on.
    for name, hosts, ranks, cpus, ver in (("crowd-fits", ["n0", "n0"], 2, 2, "3"),
                                          ("crowd-2n", ["n0", "n1"], 4, 2, "3"),
                                          ("crowd-job-fits", ["n0", "n1"], 2, 2, "3"),
                                          ("crowd-unk", ["n0", "n0"], 0, 0, "3")):
        crowded_trace(name, hosts, ranks, cpus, ver)
        s = site_of(analyze(db(name)), "alltoall")
        check(s["on"] and "regime a" in s["reason"], f"{name}: {s['reason']}")
    crowded_trace("crowd-v2", ["n0", "n0"], 0, 0, "3")
    c = sqlite3.connect(db("crowd-v2"))
    c.executescript("UPDATE meta SET value='2' WHERE key='schema_version';"
                    "ALTER TABLE run DROP COLUMN machine_ranks;"
                    "ALTER TABLE run DROP COLUMN machine_cpus;")
    c.close()
    s = site_of(analyze(db("crowd-v2")), "alltoall")
    check(s["on"] and "regime a" in s["reason"], f"schema 2: {s['reason']}")


def test_regime_d_curc_slow_crc():
    # TCURC 300 us, GAP 1 ms: both ranks end at 2.3 ms (the remote block is
    # there at 1.03125 ms), plain 3.3 ms: 0.9 ms each.
    s = regime_trace("rd", 300_000, 1_000_000)
    check_model(s, "d", TCOMM - TINIT, 300_000, MB / 1e-3, 900_000, True)


def test_regime_e_curc_fast_crc():
    # Eq. 3: 300 + 200 us. Play-out: rank 1 reads the remote block at
    # 1.003125 ms, its own until 1.103125 ms; plain 1.5 ms: it hides
    # 0.396875 - 0.1 = 0.296875 ms (rank 0, own block first: 0.396875 ms).
    s = regime_trace("re", 300_000, 100_000)
    check_model(s, "e", 500_000, 300_000, MB / 100e-6, 296_875, True)


def test_tinit_terms():
    # copy 10 us, 3 guarded blocks (protect+unprotect 1 us each, 2 us per
    # fault, all touched), one 4 KB edge block = 1/4 of 1 ms of communication
    t = mktrace.Trace(db("tinit"))
    t.runs(4, copy_bw=16384 / 10e-6, mprotect_ns=1000, fault_ns=2000)
    for r in range(4):
        subs = [(0, 4096, "edge", None, None, None)] + [
            (i, 4096, "guarded", i - 1, TCOMM + 1000 * i, "read") for i in (1, 2, 3)]
        t.call(r, SITE, "alltoall", 4, 4096, subs, 0, TCOMM)
    t.close()
    m = site_of(analyze(db("tinit")), "alltoall")["model"]
    # ... and the edge block leaves its sender only after that sender's
    # copy (10 us) and closing of its 3 guarded blocks (1 us each).
    close(m["tinit_ns"], 10_000 + 6 * 1000 + 3 * 2000 + TCOMM / 4 + 10_000 + 3 * 1000, what="tinit")
    close(m["rcrc"], 8192 / 2e-6, what="rcrc from touches 1..3")


def test_tinit_page_terms():
    # Schema 4's per-page costs: 16 KiB blocks (4 pages), all guarded, 3 of
    # each rank's 4 touched; the own block (index = rank) is landed before
    # the guard and pays neither term. Rank r: guarded pages of the other
    # blocks 12, touched pages of them 4 x (touched others): mprotect 100 ns
    # a page twice, retouch 500 ns a page. The site's Tinit is the median
    # over calls; every rank touches blocks 0..2 (rank 3 all three others).
    def tinit(name, schema, **costs):
        t = mktrace.Trace(db(name), schema_version=schema)
        t.runs(4, copy_bw=1e15, **costs)
        for r in range(4):
            subs = [(i, 16384, "guarded", i if i < 3 else None, TCOMM + 1000 * i if i < 3 else None,
                     "read" if i < 3 else None) for i in range(4)]
            t.call(r, SITE, "alltoall", 4, 16384, subs, 0, TCOMM)
        t.close()
        return site_of(analyze(db(name)), "alltoall")["model"]["tinit_ns"]
    base = tinit("tpage0", "4")
    with_costs = tinit("tpage", "4", mprotect_page_ns=100, retouch_ns=500)
    # ranks 0-2 touch 2 other blocks (8 pages), rank 3 three (12): median 8 pages
    close(with_costs - base, 2 * 12 * 100 + 8 * 500, what="page terms")
    close(tinit("tpage3", "3", mprotect_page_ns=100, retouch_ns=500), base,
          what="schema 3: no page costs read")


def test_tinit_partial_blocks_wait_for_senders():
    # Blocks not page-aligned ('partial': their first and last bytes share
    # an unguarded page with other data) have no block wholly in an edge
    # page, yet the call still waits for the edge parts, which leave their
    # senders after those senders' copy and guard: 10 us + 4 x 1 us more
    # than aligned blocks ('guarded'), whose Tinit is copy, protect and
    # unprotect, and faults only.
    for name, kind in (("tpart", "partial"), ("tguard", "guarded")):
        t = mktrace.Trace(db(name))
        t.runs(4, copy_bw=16384 / 10e-6, mprotect_ns=1000, fault_ns=2000)
        for r in range(4):
            subs = [(i, 4096, kind, i, TCOMM + 1000 * i, "read") for i in range(4)]
            t.call(r, SITE, "alltoall", 4, 4096, subs, 0, TCOMM)
        t.close()
    base = 10_000 + 8 * 1000 + 4 * 2000
    close(site_of(analyze(db("tguard")), "alltoall")["model"]["tinit_ns"], base, what="tinit, aligned")
    close(site_of(analyze(db("tpart")), "alltoall")["model"]["tinit_ns"], base + 10_000 + 4 * 1000,
          what="tinit, not aligned")


def test_unobserved_calls_left_out():
    # Every other call of the site had no guarded page (its memory still
    # held by an earlier call's guard: all 'edge'), so the trace saw no
    # touch there. Those calls say nothing about the code's pace: TCURC is
    # the observed calls' 300 us, not "never read" (inf, regime a).
    t = mktrace.Trace(db("unobs"))
    t.runs(2)
    for r in range(2):
        for k in range(4):
            entry = k * 10 * TCOMM
            ret = entry + TCOMM
            if k % 2:
                subs = [(i, 65536, "edge", None, None, None) for i in range(2)]
            else:
                subs = [(i, 65536, "guarded", i, ret + 300_000 + 100_000 * i, "read") for i in range(2)]
            t.call(r, SITE, "alltoall", 2, 65536, subs, entry, ret)
    t.close()
    m = site_of(analyze(db("unobs")), "alltoall")["model"]
    close(m["tcurc_ns"], 300_000, rel=1e-3, what="TCURC of the observed calls")
    assert m["regime"] != "a", m


def test_never_touched_and_release():
    t = mktrace.Trace(db("untch"))
    t.runs(2, copy_bw=COPY_BW)
    for r in range(2):
        t.call(r, SITE, "alltoall", 2, MB, [(0, MB, "guarded", None, None, None),
                                            (1, MB, "guarded", None, None, None)], 0, TCOMM)
        t.call(r, "app+0x20", "alltoall", 2, MB,
               [(0, MB, "guarded", None, TCOMM + 200_000, "release:mpi"),
                (1, MB, "guarded", None, TCOMM + 200_000, "release:mpi")], 0, TCOMM)
        t.call(r, "app+0x30", "alltoall", 2, MB,
               [(0, MB, "guarded", None, TCOMM + 200_000, "release:free"),
                (1, MB, "guarded", None, None, None)], 0, TCOMM)
    t.close()
    p = analyze(db("untch"))
    m = site_of(p, "alltoall")["model"]
    check(math.isinf(m["tcurc_ns"]) and m["regime"] == "a", m)
    close(m["toverlap_ns"], TCOMM - TINIT, what="never read: all CURC")
    m2 = site_of(p, "alltoall", "app+0x20")["model"]
    close(m2["tcurc_ns"], 200_000, what="release before an MPI call needs the data")
    m3 = site_of(p, "alltoall", "app+0x30")["model"]
    close(m3["tcurc_ns"], 200_000, what="a free needs the data (replay waits there for it)")


def test_play_out_waits_for_unread_data_it_hands_on():
    # 2 ranks; 300 us after its return each writes its whole receive
    # buffer to a file (release:io of both blocks), reading none. Eq. 3:
    # TCURC 300 us (RCRC inf). Played out: the work before the write runs
    # under the communication, the write waits for the remote block
    # (unread: the lowest priority, there at Tcomm) and what follows it
    # runs after Tcomm as in plain: the rank hides 300 - Tinit = 200 us.
    # Played out as never waiting (no block touched), it hid Tcomm - Tinit
    # and the site took eq. 3's 300 us.
    t = mktrace.Trace(db("need"))
    t.runs(2, copy_bw=COPY_BW)
    for inv in range(3):
        for r in range(2):
            t.call(r, SITE, "alltoall", 2, MB,
                   [(i, MB, "guarded", None, TCOMM + 300_000, "release:io") for i in range(2)],
                   0, TCOMM)
    t.site(0, SITE, "alltoall", 50, 3)
    t.close()
    m = site_of(analyze(db("need")), "alltoall")["model"]
    close(m["tcurc_ns"], 300_000, what="TCURC: the first release that needs the data")
    close(m["toverlap_ns"], 300_000, what="eq. 3: TCURC")
    close(m["saving_call_ns"], 300_000 - TINIT, what="the play-out waits at the write")


def test_curc_less_other_collectives():
    # 2 ranks read blocks 0, 1 from 1.5 ms after the return, one every 100
    # us; from 0.2 to 1.4 ms after it they are inside another alltoall
    # (app+0x40, its data never read). That call's 1.2 ms moves its own
    # bytes over the same links: TCURC is the code's own 0.3 ms. Eq. 3:
    # min(Tcomm - Tinit, 0.3 + Tcomm Rcomm / RCRC = 0.3 + 0.2) = 0.5 ms,
    # regime e; with the other call counted as CURC it was regime a, 0.9.
    t = mktrace.Trace(db("curcomm"))
    t.runs(2, copy_bw=COPY_BW)
    for inv in range(3):
        base = inv * 10_000_000
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], base, base + TCOMM, 1_500_000,
                           100_000)
            t.call(r, "app+0x40", "alltoall", 2, MB,
                   [(i, MB, "guarded", None, None, None) for i in range(2)],
                   base + TCOMM + 200_000, base + TCOMM + 1_400_000)
    t.site(0, SITE, "alltoall", 50, 3)
    t.close()
    m = site_of(analyze(db("curcomm")), "alltoall")["model"]
    close(m["tcurc_ns"], 300_000, what="TCURC less the time inside the other alltoall")
    check(m["regime"] == "e", m["regime"])
    close(m["toverlap_ns"], 500_000, what="eq. 3 with the code's own CURC")


def test_last_member_decides_tcomm():
    # Rank 0 enters each Alltoall 2 ms before rank 1 (it waits there for
    # rank 1's work) and both leave at 3 ms: rank 0 spent 3 ms in the
    # call, rank 1, which came last, 1 ms. Nothing is read after it. The
    # program's cycle is rank 1's work plus 1 ms, so an early return
    # saves 1 ms less Tinit, not the median of 3 and 1 ms.
    t = mktrace.Trace(db("lastin"))
    t.runs(2, copy_bw=COPY_BW)
    untouched = [(0, MB, "guarded", None, None, None), (1, MB, "guarded", None, None, None)]
    for inv in range(3):
        base = inv * 10_000_000
        t.call(0, SITE, "alltoall", 2, MB, untouched, base, base + 3 * TCOMM)
        t.call(1, SITE, "alltoall", 2, MB, untouched, base + 2 * TCOMM, base + 3 * TCOMM)
    t.close()
    m = site_of(analyze(db("lastin")), "alltoall")["model"]
    close(m["tcomm_ns"], TCOMM, what="Tcomm: the last-come member's time in the call")
    close(m["saving_call_ns"], TCOMM - TINIT, what="saving: Tcomm - Tinit (regime a)")
    # A broadcast keeps each rank's own time: ranks 1 and 2 wait 1 and
    # 3 ms for their chunks (the tree's shape, not who came last); the
    # root receives nothing. Median over the receivers' calls: 2 ms.
    t = mktrace.Trace(db("lastin-bcast"))
    t.runs(3)
    for inv in range(2):
        t.call(0, SITE, "bcast", 3, MB // 4, [], 0, TCOMM, chunks=4, root=0,
               send_bytes=MB, recv_bytes=0)
        for r, ret in ((1, TCOMM), (2, 3 * TCOMM)):
            t.ordered_call(r, SITE, "bcast", 3, MB // 4, [0, 1, 2, 3], 0, ret, 0, 100_000,
                           nsub=4, chunks=4, root=0, recv_bytes=MB)
    t.close()
    m = site_of(analyze(db("lastin-bcast")), "bcast")["model"]
    close(m["tcomm_ns"], 2 * TCOMM, what="bcast Tcomm: median of the receivers' own times")


# ------------------------------------------------------------------ decision

def test_decision_tiny_off():
    s = site_of(ordered_trace("tiny", lambda r, i: [0, 1, 2, 3], block=64), "alltoall")
    check(not s["on"] and "256 B" in s["reason"] and "64 B" in s["reason"], s["reason"])
    # off by size, not by the model's timing: no trial run tries it
    check(not s.get("trial"), "a tiny site marked for a trial run")


def test_decision_small_on_with_note():
    s = site_of(ordered_trace("small", lambda r, i: [0, 1, 2, 3], block=1024), "alltoall")
    check(s["on"] and "4 KB" in s["reason"], s["reason"])


def test_decision_no_overlap():
    t = mktrace.Trace(db("atonce"))
    t.runs(2, copy_bw=COPY_BW)
    for r in range(2):  # both blocks read the instant the call returns
        t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 0, 0)
    t.close()
    s = site_of(analyze(db("atonce")), "alltoall")
    check(not s["on"] and "at once" in s["reason"], s["reason"])
    # off by the model's timing alone: a trial run may time it
    check(s.get("trial"), "an off-by-timing site not marked for a trial run")
    t = mktrace.Trace(db("slowcopy"))
    t.runs(2, copy_bw=DCOMM / 2e-3)  # copying takes 2 ms > Tcomm
    for r in range(2):
        t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 500_000, 100_000)
    t.close()
    s = site_of(analyze(db("slowcopy")), "alltoall")
    check(not s["on"] and "Tinit" in s["reason"], s["reason"])
    check(s["model"]["toverlap_ns"] == 0, s["model"])


def test_decision_varying_comm_size():
    t = mktrace.Trace(db("varcomm"))
    t.runs(4)
    for r in range(4):
        t.ordered_call(r, SITE, "alltoall", 4, MB, [0, 1, 2, 3], 0, TCOMM, 0, 1000)
    for r in range(2):
        t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 0, 1000)
    t.close()
    s = site_of(analyze(db("varcomm")), "alltoall")
    check(not s["on"] and "communicator size varies" in s["reason"], s["reason"])


def varying_block_trace(name, sizes, op="alltoall", n=4):
    """One site whose per-source block has sizes[inv] bytes in invocation
    inv; reads start 500 us after the return, so the site gains (the send
    copy at 100 GB/s: Tinit 40-80 us, well under every call's overlap)."""
    t = mktrace.Trace(db(name))
    t.runs(n, copy_bw=1e11)
    for inv, b in enumerate(sizes):
        for r in range(n):
            t.ordered_call(r, SITE, op, n, b, [3, 1, 2, 0], 0, TCOMM, 500_000, 50_000)
    t.close()
    return site_of(analyze(db(name)), op)


def test_varying_block_within_range():
    """Sizes up to 4x apart share a decision: block_bytes -1 and the traced
    range, which the C reader accepts and the check takes within 2x."""
    s = varying_block_trace("varblock", [MB, 3 * MB // 2, 2 * MB, MB])
    check(s["block_bytes"] == -1, s["block_bytes"])
    check(s.get("block_range") == (MB, 2 * MB), s.get("block_range"))
    check(s["on"], s["reason"])
    check(s["order"] == [3, 1, 2, 0], s["order"])
    g = varying_block_trace("varblock-ag", [MB, 2 * MB], op="allgather")
    check(g.get("block_range") == (MB, 2 * MB) and g["on"], g)
    r = subprocess.run([REPORT, db("varblock"), "-p", db("varblock").replace(".db", ".profile"),
                        "-o", os.path.join(TMP, "varblock-report"), "--no-plots"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "block bytes 1048576 to 2097152 (varying)" in r.stdout,
          r.stdout + r.stderr)


def test_varying_block_too_far_apart():
    s = varying_block_trace("varblock-far", [MB, 5 * MB])
    check(not s["on"], "on with sizes 5x apart")
    check("block size varies between calls more than 4x (1048576 B to 5242880 B)" in s["reason"],
          s["reason"])
    check("block_range" not in s, s)


def test_same_block_no_range():
    s = varying_block_trace("sameblock", [MB, MB, MB])
    check(s["block_bytes"] == MB and "block_range" not in s, s)


# ------------------------------------------------------------------ ops

def chunked_trace(name, total, order, op="bcast", n=4, m=4):
    t = mktrace.Trace(db(name))
    t.runs(n)
    for inv in range(2):
        for r in range(n):
            if r == 0 and op in ("bcast", "reduce"):  # the root receives nothing
                t.call(r, SITE, op, n, total // m, [], 0, TCOMM, chunks=m, root=0,
                       send_bytes=total, recv_bytes=0)
                continue
            t.ordered_call(r, SITE, op, n, total // m, order, 0, TCOMM, 0, 100_000,
                           nsub=m, chunks=m, root=0, recv_bytes=total)
    t.close()
    return site_of(analyze(db(name)), op)


def test_bcast_chunks_order():
    s = chunked_trace("bcast", MB, [3, 1, 2, 0])
    check(s["chunks"] == 4 and s["block_bytes"] == MB, (s["chunks"], s["block_bytes"]))
    check(s["order"] == [3, 1, 2, 0] and s["order_kind"] == "consensus", s["order"])
    check(s["recv_prio"] == {"*": [3, 1, 2, 0]} and s["send_prio"] == {"*": [3, 1, 2, 0]},
          (s["recv_prio"], s["send_prio"]))
    check(s["samples"] == 6, s["samples"])


def test_bcast_chunks_play_out():
    # 1 MB in 4 chunks of 256 KB, read 3, 1, 2, 0, each in 100 us from the
    # first touch at return. A non-root rank can read a chunk only once it
    # has landed whole: chunks land every 250 us (Tcomm 1 ms), so the reads
    # end at 250+100, 500+100, 750+100, 1000+100 us; plain ends at
    # 1000 + 400 us. It hides 300 us - Tinit (the last chunk's read cannot
    # be hidden); the formula says 400 us - as much as all the reads.
    # Tinit: the copy of 1 MB at the trace's 1e10 B/s, 104.8576 us (no
    # mprotect or fault cost in this trace).
    s = chunked_trace("bcast-play", MB, [3, 1, 2, 0])
    m = s["model"]
    close(m["tinit_ns"], 104_857.6, rel=1e-6, what="tinit")
    close(m["toverlap_ns"], 400_000, rel=1e-6, what="eq. 3")
    close(m["saving_call_ns"], 300_000 - 104_857.6, rel=1e-6, what="chunk play-out")
    check(s["on"], s["reason"])


def test_allreduce_fewer_chunks_when_small():
    # 8 KB in 4 traced chunks of 2 KB -> 2 chunks of 4 KB; chunk 3 (read
    # first) lies in the second half
    s = chunked_trace("allred", 8192, [3, 1, 2, 0], op="allreduce")
    check(s["chunks"] == 2 and s["order"] == [1, 0], (s["chunks"], s["order"]))
    check(s["recv_prio"]["*"] == [1, 0], s["recv_prio"])


def test_node_schedule():
    s = site_of(ordered_trace("nodes", lambda r, i: [3, 1, 2, 0],
                              hosts=["A", "A", "B", "B"]), "alltoall")
    check(s["nodes"] == [("A", [1, 0]), ("B", [3, 2])], s["nodes"])
    s = site_of(ordered_trace("nodes1", lambda r, i: [3, 1, 2, 0],
                              hosts=["A", "B", "C", "D"]), "alltoall")
    check(s["nodes"] == [], "one rank per host: no node schedule")


def test_node_schedule_sub_communicator():
    # World ranks 0..3 on hosts A B A B; one code address used on two
    # 2-rank communicators (one site id per shape): {1, 3}, both on B, and
    # {0, 1}, on A and B. Node lines name the members' host and hold
    # communicator ranks; the second has one member per host: none.
    t = mktrace.Trace(db("subnodes"))
    t.runs(4, hosts=["A", "B", "A", "B"])
    both_b, split = SITE + "@c2.11111111", SITE + "@c2.22222222"
    for inv in range(3):
        for cr, world in enumerate([1, 3]):
            t.ordered_call(world, both_b, "alltoall", 2, MB, [1, 0], 0, 1_000_000, 500_000, 50_000,
                           comm_rank=cr)
        for cr, world in enumerate([0, 1]):
            t.ordered_call(world, split, "alltoall", 2, MB, [1, 0], 0, 1_000_000, 500_000, 50_000,
                           comm_rank=cr)
    t.close()
    prof = analyze(db("subnodes"))
    s = site_of(prof, "alltoall", both_b)
    check(s["comm_size"] == 2 and [(h, sorted(r)) for h, r in s["nodes"]] == [("B", [0, 1])],
          (s["comm_size"], s["nodes"]))
    s = site_of(prof, "alltoall", split)
    check(s["nodes"] == [], s["nodes"])


def test_gather_root_only():
    t = mktrace.Trace(db("gather"))
    t.runs(4)
    for inv in range(2):
        t.ordered_call(0, SITE, "gather", 4, 8192, [2, 0, 3, 1], 0, TCOMM, 0, 10_000, root=0)
        for r in (1, 2, 3):
            t.call(r, SITE, "gather", 4, 8192, [], 0, TCOMM, root=0, send_bytes=8192,
                   recv_bytes=0)
    t.close()
    s = site_of(analyze(db("gather")), "gather")
    check(s["order"] == [2, 0, 3, 1], s["order"])
    check(s["recv_prio"]["0"] == [1, 3, 0, 2], s["recv_prio"]["0"])
    check(s["recv_prio"]["1"] == [-1] * 4, s["recv_prio"]["1"])
    check(s["send_prio"]["2"] == [0, -1, -1, -1], s["send_prio"]["2"])
    check(s["send_prio"]["1"] == [3, -1, -1, -1], s["send_prio"]["1"])


def fnv(sizes):
    h = 0xcbf29ce484222325
    for v in sizes:
        for b in range(8):
            h ^= (v >> (8 * b)) & 0xff
            h = (h * 0x100000001b3) & (2**64 - 1)
    return f"0x{h:016x}"


def test_alltoallv_vhash():
    t = mktrace.Trace(db("v"))
    t.runs(2)
    sizes = {0: [[5000, 7000], [5000, 7000]], 1: [[4096, 9000], [4096, 9001]]}
    for inv in range(2):
        for r in range(2):
            sz = sizes[r][inv]
            subs = [(i, sz[i], "guarded", i, TCOMM + 1000 * i, "read") for i in range(2)]
            t.call(r, SITE, "alltoallv", 2, -1, subs, 0, TCOMM)
    t.close()
    s = site_of(analyze(db("v")), "alltoallv")
    check(s["block_bytes"] == -1, s["block_bytes"])
    check(s["vhash"] == {0: fnv([5000, 7000])}, s["vhash"])


# ------------------------------------------------------------------ bad traces

def bad_trace(name, mutate):
    path = db(name)
    t = mktrace.Trace(path)
    t.runs(2)
    t.ordered_call(0, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 0, 1000)
    t.close()
    mutate(path)
    r = analyze(path, expect_rc=1)
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1, f"want one line, got: {r.stderr!r}")
    check(lines[0].startswith(f"tnbc-analyze: {path}: "), lines[0])
    return lines[0]


def sql(stmt):
    def run(path):
        import sqlite3
        c = sqlite3.connect(path)
        c.executescript(stmt)
        c.commit()
        c.close()
    return run


def test_bad_trace_missing_table():
    msg = bad_trace("notouch", sql("DROP TABLE touch;"))
    check("table 'touch' is missing" in msg, msg)


def test_bad_trace_schema_version():
    msg = bad_trace("v6", sql("UPDATE meta SET value='6' WHERE key='schema_version';"))
    check("schema_version 6" in msg and "versions 1 to 5" in msg, msg)


def test_bad_trace_empty_file():
    def empty(path):
        open(path, "w").close()
    msg = bad_trace("empty", empty)
    check("table 'meta' is missing" in msg, msg)


def test_bad_trace_no_runs():
    msg = bad_trace("noruns", sql("DELETE FROM run;"))
    check("empty trace" in msg, msg)


def test_bad_trace_not_sqlite():
    def text(path):
        with open(path, "w") as f:
            f.write("this is not a database\n" * 100)
    msg = bad_trace("text", text)
    check("not a database" in msg or "not a tnbc trace" in msg, msg)


def test_bad_trace_missing_file():
    path = db("does-not-exist")
    r = analyze(path, expect_rc=1)
    check(r.stderr.count("\n") == 1 and "cannot open" in r.stderr, r.stderr)


def test_bad_trace_replay_only():
    msg = bad_trace("replay", sql("UPDATE run SET mode='replay';"))
    check("no rank ran in trace mode" in msg, msg)


def test_bad_trace_bad_column():
    msg = bad_trace("nocol", sql("ALTER TABLE call DROP COLUMN wait_ns; "
                                 "ALTER TABLE call RENAME COLUMN nsub TO n;"))
    check("nsub" in msg, msg)


# Damaged values (found by mutating real traces: each crashed the
# analyzer under UBSan, leaked, or read text as 0).

DAMAGED = [  # (name, SQL on a good trace, what the one line must say)
    ("textnum", "UPDATE call SET wait_ns='x';",
     "damaged: table 'call' column 'wait_ns' holds a value that is not a number"),
    ("tick", "UPDATE call SET entry_tsc=-9.2e18;", "clock tick or invocation out of range"),
    ("bytes", "UPDATE submsg SET bytes=1e308 WHERE side='recv';",
     "its bytes or its touch's clock tick out of range"),
    # 2^62 read as an int is 0: rank 0 twice (the first host leaked)
    ("rankwrap", "UPDATE run SET rank=4611686018427387904 WHERE rank=1;", "bad run table"),
    ("negcost", "UPDATE run SET fault_ns=-1e308 WHERE rank=0;", "a negative or infinite cost"),
]


def test_bad_trace_damaged_values():
    for name, stmt, want in DAMAGED:
        msg = bad_trace(name, sql(stmt))
        check(want in msg, f"{name}: {msg}")


def test_huge_invocation_is_cheap():
    # The invocation counts every call of a site: one of 2e9 must not cost
    # an array of 2e9 entries (the last-arrival grouping sorts instead).
    path = db("hugeinv")
    t = mktrace.Trace(path)
    t.runs(2)
    for r in range(2):
        t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 500_000, 1000)
    t.close()
    sql("UPDATE call SET invocation=2000000000;")(path)
    # Under 1 GiB of address space (the array took 16 GB and 38 s); not
    # for a sanitizer build, whose shadow memory needs more.
    limit = None if "san" in os.path.basename(BUILD) else lambda: resource.setrlimit(
        resource.RLIMIT_AS, (1 << 30, 1 << 30))
    r = subprocess.run([ANALYZE, path, "-o", path.replace(".db", ".profile"), "-q"],
                       capture_output=True, text=True, timeout=60, preexec_fn=limit)
    check(r.returncode == 0, r.stderr)
    site_of(report.read_profile(path.replace(".db", ".profile")), "alltoall")


def test_report_damaged_trace():
    path = db("textrep")
    t = mktrace.Trace(path)
    t.runs(2)
    t.ordered_call(0, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 0, 1000)
    t.close()
    sql("UPDATE touch SET tsc='x';")(path)
    r = subprocess.run([REPORT, path, "-o", os.path.join(TMP, "textrep.out"), "--no-plots"],
                       capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1 and len(lines) == 1 and "damaged: table 'touch' column 'tsc'" in lines[0],
          r.stderr)


def test_interleaved_blocks_nothing_to_guard():
    # A transpose into a malloc'd matrix: each block's footprint spans the
    # buffer (offsets 0 and 8, interleaved), none in whole pages of its own
    # ('partial'): replay would find nothing to guard, so the analyzer says
    # so and no trial run is asked for. The same blocks side by side
    # ('partial' at the buffer's ends only) or one of them 'guarded' (a
    # page-aligned matrix) are not this case.
    def trace(name, offsets, guard):
        t = mktrace.Trace(db(name))
        t.runs(2)
        for inv in range(3):
            for r in range(2):
                subs = [(i, MB, guard, i, 1_000_000 + i * 10_000, "read") for i in (r, 1 - r)]
                t.call(r, SITE, "alltoall", 2, MB, subs, 0, TCOMM, offsets=offsets)
        t.close()
        return db(name)
    why = "nothing to guard: its receive blocks interleave across the buffer"
    s = site_of(analyze(trace("il1", [0, 8], "partial")), "alltoall")
    check(not s["on"] and s["reason"].startswith(why) and "all 3 traced calls" in s["reason"]
          and not s.get("trial"), s)
    s = site_of(analyze(trace("il2", [0, MB], "partial")), "alltoall")
    check(why not in s["reason"], s["reason"])
    s = site_of(analyze(trace("il3", [0, 8], "guarded")), "alltoall")
    check(why not in s["reason"], s["reason"])


def test_crashed_run_warns():
    t = mktrace.Trace(db("crash"))
    t.runs(2, finished=0)
    for r in range(2):
        t.ordered_call(r, SITE, "alltoall", 2, MB, [1, 0], 0, TCOMM, 500_000, 1000)
    t.close()
    out = db("crash").replace(".db", ".profile")
    r = subprocess.run([ANALYZE, db("crash"), "-o", out], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0 and "did not reach MPI_Finalize" in r.stderr, r.stderr)
    check("app+0x10 alltoall: on:" in r.stdout, r.stdout)


def test_cli():
    r = subprocess.run([ANALYZE, "--help"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "usage: tnbc-analyze" in r.stdout, r.stdout)
    r = subprocess.run([ANALYZE], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "no trace given" in r.stderr, r.stderr)
    r = subprocess.run([ANALYZE, "x.db"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "no -o" in r.stderr, r.stderr)


# ------------------------------------------------------------------ measured

def cycle_db(name, cycles_ms, mode="trace", n=4, invocations=4):
    """A site whose calls start every cycles_ms(rank) ms; blocks read late
    (regime a, so the model turns it on)."""
    t = mktrace.Trace(db(name))
    t.runs(n, mode=mode)
    for inv in range(invocations):
        for r in range(n):
            e = inv * cycles_ms(r) * 1e6
            t.ordered_call(r, SITE, "alltoall", n, MB, [0, 1, 2, 3], e, e + 1_000_000,
                           2_000_000, 10_000)
    t.close()
    return db(name)


def analyze_measured(trace, replay, expect_rc=0):
    out = trace.replace(".db", "-m.profile")
    r = subprocess.run([ANALYZE, trace, "-o", out, "-q", "--measured", replay],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == expect_rc, f"exit {r.returncode} (want {expect_rc}): {r.stderr}")
    return r if expect_rc else report.read_profile(out)


def test_measured_no_gain_turns_off():
    trace = cycle_db("mt1", lambda r: 10)
    check(site_of(analyze(trace), "alltoall")["on"], "the model should turn the site on")
    s = site_of(analyze_measured(trace, cycle_db("mr1", lambda r: 12, mode="replay")),
                "alltoall")
    check(not s["on"], s)
    check("measured in replay: 12.0 ms from call to call against 10.0 ms traced, no gain"
          in s["reason"] and "the model said: regime a" in s["reason"], s["reason"])


def test_measured_gain_keeps_on():
    trace = cycle_db("mt2", lambda r: 10)
    s = site_of(analyze_measured(trace, cycle_db("mr2", lambda r: 6, mode="replay")),
                "alltoall")
    check(s["on"] and s["reason"].startswith("regime a") and
          s["reason"].endswith("measured in replay: 6.0 ms from call to call against "
                               "10.0 ms traced"), s["reason"])


def test_measured_slowest_rank_decides():
    trace = cycle_db("mt3", lambda r: 10)
    s = site_of(analyze_measured(trace, cycle_db("mr3", lambda r: 11 if r == 2 else 6,
                                                 mode="replay")), "alltoall")
    check(not s["on"] and "11.0 ms from call to call" in s["reason"], s["reason"])


def trial_db(name, early_ms, blocking_ms, n=4, invocations=6):
    """A trial replay run (TNBC_REPLAY_TRIAL) of one site: even invocations
    early, odd ones blocking (wait_ns -1); the cycle after an early call
    lasts early_ms, after a blocking one blocking_ms."""
    t = mktrace.Trace(db(name))
    t.runs(n, mode="replay")
    for r in range(n):
        e = 0.0
        for inv in range(invocations):
            t.ordered_call(r, SITE, "alltoall", n, MB, [0, 1, 2, 3], e, e + 1_000_000,
                           2_000_000, 10_000)
            e += (early_ms if inv % 2 == 0 else blocking_ms) * 1e6
    t.db.execute("UPDATE call SET wait_ns = -1 WHERE invocation % 2 = 1")
    t.close()
    return db(name)


def test_measured_trial_compares_within_the_run():
    # The trace's cycle (20 ms) would make a 12 ms replay cycle look like a
    # gain; the trial run's own blocking calls (9 ms) say it is a loss.
    trace = cycle_db("mt5", lambda r: 20)
    s = site_of(analyze_measured(trace, trial_db("mr5", 12, 9)), "alltoall")
    check(not s["on"] and "measured in replay: 12.0 ms from call to call against 9.0 ms "
          "after its blocking calls in the same trial run (means of 2 pairs of calls that "
          "differ in this site alone; median saving per pair -3.0 ms), no gain" in s["reason"],
          s["reason"])
    s = site_of(analyze_measured(trace, trial_db("mr6", 8, 11)), "alltoall")
    check(s["on"] and s["reason"].endswith("measured in replay: 8.0 ms from call to call "
                                           "against 11.0 ms after its blocking calls in the "
                                           "same trial run (means of 2 pairs of calls that "
                                           "differ in this site alone; median saving per pair "
                                           "3.0 ms)"), s["reason"])


SITE_B = "app+0x2000"


def two_site_trace(name, n=2, invocations=4):
    """Two alltoall sites called once each per iteration, A then B, every
    block read late (regime a: the model turns both on)."""
    t = mktrace.Trace(db(name))
    t.runs(n)
    for inv in range(invocations):
        for r in range(n):
            e = inv * 20e6
            for site, at in ((SITE, e), (SITE_B, e + 10e6)):
                t.ordered_call(r, site, "alltoall", n, MB, list(range(n)), at, at + 1_000_000,
                               2_000_000, 10_000)
    t.close()
    return db(name)


def two_site_trial_db(name, n=2, invocations=24):
    """A trial run of A and B in one loop, as libreplay/replay.c runs it: A
    (the profile's first on site) blocking on calls whose bit 2 is set, B
    on calls whose bit 3 is set. A's early call saves 3 ms of the
    iteration, B saves nothing: every iteration lasts 20 ms, 17 where A
    went early. Each site's cycle spans the other's call, so with both
    sites alternating in step B would look as if it saved A's 3 ms."""
    t = mktrace.Trace(db(name))
    t.runs(n, mode="replay")
    for r in range(n):
        e = 0.0
        for inv in range(invocations):
            a_early = (inv >> 2) & 1 == 0
            t.ordered_call(r, SITE, "alltoall", n, MB, list(range(n)), e, e + 1_000_000,
                           2_000_000, 10_000)
            b_at = e + (7e6 if a_early else 10e6)
            t.ordered_call(r, SITE_B, "alltoall", n, MB, list(range(n)), b_at,
                           b_at + 1_000_000, 2_000_000, 10_000)
            e += (17 if a_early else 20) * 1e6
    t.db.execute("UPDATE call SET wait_ns = -1 WHERE site = ? AND (invocation / 4) % 2 = 1",
                 (SITE,))
    t.db.execute("UPDATE call SET wait_ns = -1 WHERE site = ? AND (invocation / 8) % 2 = 1",
                 (SITE_B,))
    t.close()
    return db(name)


def phased_trial_db(name, n=2, invocations=16, early_saves_ms=0):
    """A trial run of one site called twice per iteration (fft3d's forward
    and backward transposes), blocking on calls whose bit 2 is set: the
    cycle after the first call of an iteration lasts 30 ms, after the
    second 10 ms, the early return saving early_saves_ms of either."""
    t = mktrace.Trace(db(name))
    t.runs(n, mode="replay")
    for r in range(n):
        e = 0.0
        for inv in range(invocations):
            t.ordered_call(r, SITE, "alltoall", n, MB, list(range(n)), e, e + 1_000_000,
                           2_000_000, 10_000)
            early = (inv >> 2) & 1 == 0
            e += ((30 if inv % 2 == 0 else 10) - (early_saves_ms if early else 0)) * 1e6
    t.db.execute("UPDATE call SET wait_ns = -1 WHERE (invocation / 4) % 2 = 1")
    t.close()
    return db(name)


def test_measured_trial_pairs_alike_calls():
    # A pair's calls stand at the same place in the iteration: the 20 ms
    # between the first and the second call of an iteration is no gain.
    trace = cycle_db("mt10", lambda r: 40)
    s = site_of(analyze_measured(trace, phased_trial_db("mr10")), "alltoall")
    check(not s["on"] and "median saving per pair 0.0 ms), no gain" in s["reason"], s["reason"])
    s = site_of(analyze_measured(trace, phased_trial_db("mr11", early_saves_ms=2)), "alltoall")
    check(s["on"] and "median saving per pair 2.0 ms)" in s["reason"], s["reason"])


def test_measured_trial_gain_needs_the_trace_beaten():
    # The pairs say early calls save 3 ms, but they are no faster than the
    # traced (all blocking) calls: the trial's blocking calls were slow.
    trace = cycle_db("mt12", lambda r: 5)
    s = site_of(analyze_measured(trace, trial_db("mr12", 8, 11)), "alltoall")
    check(not s["on"] and "median saving per pair 3.0 ms), but no faster than the traced calls "
          "(5.0 ms), no gain" in s["reason"], s["reason"])


def test_measured_trial_pairs_sites_apart():
    trace = two_site_trace("mt9")
    prof = analyze_measured(trace, two_site_trial_db("mr9"))
    a, b = site_of(prof, "alltoall"), site_of(prof, "alltoall", site=SITE_B)
    check(a["on"] and "median saving per pair 3.0 ms" in a["reason"], a["reason"])
    check(not b["on"] and "median saving per pair 0.0 ms), no gain" in b["reason"], b["reason"])
    check(not a.get("trial") and not b.get("trial"), "a site the trial run decided kept 'trial'")


def early_trace(name, **run_kw):
    """Regime a's trace (test_early_cost) with the run's costs run_kw."""
    t = mktrace.Trace(db(name))
    t.runs(2, copy_bw=COPY_BW, **run_kw)
    for inv in range(3):
        for r in range(2):
            t.ordered_call(r, SITE, "alltoall", 2, MB, [0, 1], 0, TCOMM, 1_500_000, 100_000)
    t.site(0, SITE, "alltoall", 50, 3)
    t.close()
    return db(name)


def early_summary(name, us_per_call, site=SITE, agree_extra_us=(0, 0)):
    """A replay summary whose 4 early returns per rank took us_per_call[r]
    each, in eight equal steps, the agreement agree_extra_us[r] more; no
    call rows (nothing to compare cycles of)."""
    t = mktrace.Trace(db(name))
    t.runs(len(us_per_call), mode="replay")
    for r, u in enumerate(us_per_call):
        steps = [4 * u * 1000 / 8] * 8
        steps[1] += 4 * agree_extra_us[r] * 1000
        t.early_cost(r, site, "alltoall", 4, steps, land_ns=2_000_000, land_bytes=4 * MB)
    t.close()
    return db(name)


def test_measured_early_return_is_tinit():
    # mprotect 5 us and a fault 10 us: Tinit = copy 100 + the guard armed
    # (2 guarded blocks x 5) in the call, + opened (2 x 5) and 2 faults
    # (2 x 10) after it: 140 us.
    trace = early_trace("et1", mprotect_ns=5000, fault_ns=10000)
    close(site_of(analyze(trace), "alltoall")["model"]["tinit_ns"], 140_000, rel=1e-6,
          what="the model's Tinit")
    # A run that timed 300 us per early return replaces the part in the
    # call (copy, arm, edges): 300 + 30 = 330 us; regime a hides
    # Tcomm - Tinit = 670 us.
    s = site_of(analyze_measured(trace, early_summary("es1", [300, 300])), "alltoall")
    close(s["model"]["tinit_ns"], 330_000, rel=1e-6, what="Tinit with the measured steps")
    close(s["model"]["toverlap_ns"], 670_000, rel=1e-6, what="eq. 3")
    close(s["model"]["saving_call_ns"], 670_000, rel=1e-6, what="saving")
    check(s["on"] and "Tinit counts the early return as timed in the measured run "
          "(300.0 us per call)" in s["reason"], s["reason"])
    # Rank 0 waited 8 ms more in the agreement, for rank 1 (a wait the
    # blocking call has too): only the shortest agreement counts, 330 us.
    s = site_of(analyze_measured(trace, early_summary("es5", [300, 300], agree_extra_us=(8000, 0))),
                "alltoall")
    close(s["model"]["tinit_ns"], 330_000, rel=1e-6, what="Tinit, one rank waiting in the agreement")
    # --early-cost is for calls the run did not time: here it changes nothing.
    out = db("et1-ec").replace(".db", ".profile")
    r = subprocess.run([ANALYZE, trace, "-o", out, "-q", "--measured", db("es1"),
                        "--early-cost", "200"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    close(site_of(report.read_profile(out), "alltoall")["model"]["tinit_ns"], 330_000,
          rel=1e-6, what="Tinit, measured steps and --early-cost")
    # The run timed another site: this one keeps the model's terms.
    s = site_of(analyze_measured(trace, early_summary("es2", [300, 300], site="app+0x99")),
                "alltoall")
    close(s["model"]["tinit_ns"], 140_000, rel=1e-6, what="Tinit of an untimed site")
    check("timed in the measured run" not in s["reason"], s["reason"])
    # 980 us per early return: Tinit 1010 us >= Tcomm 1000 us, off.
    s = site_of(analyze_measured(trace, early_summary("es3", [980, 980])), "alltoall")
    check(not s["on"] and "no predicted overlap: Tinit 1010.0 us >= Tcomm 1000.0 us; Tinit "
          "counts the early return as timed in the measured run (980.0 us per call)"
          in s["reason"], s["reason"])
    # A summary made before the table existed: the model's terms.
    t = mktrace.Trace(db("es4"))
    t.runs(2, mode="replay")
    t.db.execute("DROP TABLE early_cost")
    t.close()
    close(site_of(analyze_measured(trace, db("es4")), "alltoall")["model"]["tinit_ns"],
          140_000, rel=1e-6, what="Tinit without the table")


def timed_trial_db(name, early_ms, blocking_ms):
    """trial_db's run on 2 ranks with its early returns timed at 980 us
    each (3 per rank, in eight equal steps): enough, with early_trace's
    costs, for the model to turn regime a's site off."""
    path = trial_db(name, early_ms, blocking_ms, n=2)
    c = sqlite3.connect(path)
    for r in range(2):
        c.execute("INSERT INTO early_cost VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (r, SITE, "alltoall", 3, *[3 * 980_000 // 8] * 8, 0, 0))
    c.commit()
    c.close()
    return path


def test_measured_run_decides_what_it_ran_early():
    # With 980 us per early return timed, the model turns regime a's site
    # off (Tinit 1010 us >= Tcomm); the trial run that timed them had its
    # cycle 8 ms after early calls against 11 ms after blocking ones: on,
    # the model's reason kept beside the measurement.
    trace = early_trace("et5", mprotect_ns=5000, fault_ns=10000)
    s = site_of(analyze_measured(trace, timed_trial_db("mr7", 8, 11)), "alltoall")
    check(s["on"] and s["reason"].startswith(
        "measured in replay: 8.0 ms from call to call against 11.0 ms after its blocking calls "
        "in the same trial run (means of 2 pairs of calls that differ in this site alone; "
        "median saving per pair 3.0 ms), a gain (the model said off: no predicted overlap: "
        "Tinit 1010.0 us >= Tcomm 1000.0 us; Tinit counts the early return as timed"),
        s["reason"])
    # and off where the trial measured a loss
    s = site_of(analyze_measured(trace, trial_db("mr8", 12, 11, n=2)), "alltoall")
    check(not s["on"] and "no gain (the model said: regime a" in s["reason"], s["reason"])


def test_measured_trial_off_site_needs_a_clear_gain():
    # The model turned the site off (test_measured_run_decides_what_it_ran_early's
    # costs); the trial's pairs save 0.1 ms of an 11 ms cycle: under 2%
    # (AN_MIN_GAIN), as likely noise, it stays off. 0.5 ms (4.5%) turns it on.
    trace = early_trace("et6", mprotect_ns=5000, fault_ns=10000)
    s = site_of(analyze_measured(trace, timed_trial_db("mr13", 10.9, 11)), "alltoall")
    check(not s["on"] and "median saving per pair 0.1 ms), under the 2% of the blocking "
          "calls' cycle that turns on a site the model turned off, no gain (the model said: "
          "no predicted overlap" in s["reason"], s["reason"])
    s = site_of(analyze_measured(trace, timed_trial_db("mr14", 10.5, 11)), "alltoall")
    check(s["on"] and "median saving per pair 0.5 ms), a gain (the model said off" in s["reason"],
          s["reason"])


def test_measured_never_early_turns_off():
    # The model turns the site on; in the measured run the runtime ran all
    # 20 calls blocking for reasons of its own (a buffer with nothing to
    # guard on one rank, the other told so): off, with those counts, and
    # no trial run asked to try it again. A run where the profile had the
    # site off (reason `off`) says nothing of it.
    trace = cycle_db("mt9", lambda r: 10)
    check(site_of(analyze(trace), "alltoall")["on"], "the model should turn the site on")
    def summary(name, fallbacks):
        t = mktrace.Trace(db(name))
        t.runs(2, mode="replay")
        for r, fb in enumerate(fallbacks):
            t.site(r, SITE, "alltoall", 20, 0)
            t.db.execute("UPDATE site SET fallback = ? WHERE rank = ?", (fb, r))
        t.close()
        return db(name)
    s = site_of(analyze_measured(trace, summary("mr9", ["nothing-to-guard:20", "other-rank:20"])),
                "alltoall")
    check(not s["on"] and not s.get("trial") and s["reason"].startswith(
        "the measured run ran all 20 of its calls blocking (nothing-to-guard:20), none early "
        "(the model said: regime a"), s["reason"])
    s = site_of(analyze_measured(trace, summary("mr10", ["off:20", "off:20"])), "alltoall")
    check(s["on"] and "measured" not in s["reason"], s["reason"])


def test_measured_bad_input():
    trace = cycle_db("mt4", lambda r: 10)
    r = analyze_measured(trace, trace, expect_rc=1)
    check(r.stderr.count("\n") == 1 and "not a replay summary" in r.stderr, r.stderr)
    r = analyze_measured(trace, db("no-such-replay"), expect_rc=1)
    check(r.stderr.count("\n") == 1 and "no-such-replay" in r.stderr, r.stderr)


# ------------------------------------------------------------------ report

def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_report_with_replay():
    ordered_trace("rep", lambda r, i: [3, 1, 2, 0], hosts=["A", "A", "B", "B"])
    t = mktrace.Trace(db("rep-replay"))
    t.runs(4, mode="replay")
    for r in range(4):
        cid = t.ordered_call(r, SITE, "alltoall", 4, MB, [3, 1, 2, 0], 0, 300_000, 0, 50_000)
        t.db.execute("UPDATE call SET wait_ns = 100000 WHERE call_id = ?", (cid,))
        t.site(r, SITE, "alltoall", 10, 4 if r else 3)  # 10 calls, 4 (rank 0: 3) early
        # Per rank the early returns' steps: 80 us per call on ranks 0-1,
        # 160 on 2-3 (1 + 2 + ... + 8 = 36 parts); 1 MiB landed in 1 ms.
        early = 4 if r else 3
        per = 80 if r < 2 else 160
        t.early_cost(r, SITE, "alltoall", early, [early * per * 1000 * k / 36 for k in range(1, 9)],
                     land_ns=1_000_000, land_bytes=MB)
    t.close()
    out = os.path.join(TMP, "report")
    r = subprocess.run([REPORT, db("rep"), "-r", db("rep-replay"), "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stderr)
    text = open(os.path.join(out, "summary.txt")).read()
    for want in ("site app+0x10 alltoall", "order (consensus): 3 1 2 0", "Kendall tau 1.00",
                 "regime", "decision: ON", "node A: network order 1 0",
                 "measured (replay)", "hidden 600.0 us"):
        check(want in text, f"summary lacks '{want}':\n{text}")
    # Side by side: the profile's prediction (the report shows it, the model
    # tests check it) and the 600 us measured; 3 + 3 x 4 = 15 of 40 calls
    # early; one recorded early call per rank, each waiting 100 us.
    pred = site_of(report.read_profile(os.path.join(out, "report.profile")),
                   "alltoall")["model"]["saving_call_ns"]
    for want in (f"saving per call: predicted {pred / 1e3:.1f} us, measured 600.0 us "
                 f"({600e3 / pred:.2f} of predicted)",
                 "replay: 15 of 40 calls returned early (all ranks)",
                 "fault waits: 4 recorded early calls, median 100.0 us, max 100.0 us, "
                 "total 0.400 ms"):
        check(want in text, f"summary lacks '{want}':\n{text}")
    # The steps, mean per early call over the 15: (7 x 80 + 8 x 160) / 15 =
    # 122.67 us, step k of 8 k/36 of it; outside Tinit, steps 1-4 and 7
    # (17/36), with the agreement (2/36) as the shortest rank's, 80 x 2/36:
    # 54.4 us; 4 MiB landed in 4 ms.
    mean = (7 * 80 + 8 * 160) / 15
    steps = ", ".join(f"{n} {mean * k / 36:.1f}" for k, n in enumerate(
        ("candidate", "agree", "plan", "land_self", "arm", "copy", "submit", "edges"), 1))
    tinit = site_of(report.read_profile(os.path.join(out, "report.profile")),
                    "alltoall")["model"]["tinit_ns"]
    for want in (f"early return (measured, mean of 15 early calls on 4 rank(s)): {steps} us; "
                 f"total {mean:.1f} us",
                 "not in the model's Tinit (candidate + agree + plan + land_self + submit, the "
                 f"agreement as its shortest rank's {80 * 2 / 36:.1f} us): "
                 f"{mean * 15 / 36 + 80 * 2 / 36:.1f} us per call; the model's Tinit "
                 f"{tinit / 1e3:.1f} us",
                 "landing: 4.0 MiB written in by the progress thread in 4.0 ms (1.05 GB/s)"):
        check(want in text, f"summary lacks '{want}':\n{text}")
    for png in ("first-touch-0.png", "overlap.png", "predicted-vs-measured.png"):
        check(is_png(os.path.join(out, png)), f"{png} missing or not a PNG")


def test_report_with_profile_and_errors():
    ordered_trace("rep2", lambda r, i: [0, 1, 2, 3])
    out = os.path.join(TMP, "report2")
    prof = db("rep2").replace(".db", ".profile")
    r = subprocess.run([REPORT, db("rep2"), "-p", prof, "-o", out, "--no-plots"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "order (consensus): 0 1 2 3" in r.stdout, r.stdout + r.stderr)
    check("trial:" not in r.stdout, "a site that is on shown as one a trial run tries")
    # A site off by the model's timing alone says a trial run tries it.
    regime_trace("rep2t", 0, 0)   # reads at once: no predicted overlap
    prof = db("rep2t").replace(".db", ".profile")
    check(site_of(report.read_profile(prof), "alltoall").get("trial"), "no 'trial' line")
    r = subprocess.run([REPORT, db("rep2t"), "-p", prof, "-o", out, "--no-plots"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "  trial: off by the model's timing alone; a trial run "
          "(TNBC_REPLAY_TRIAL=1) runs it early on half its calls" in r.stdout,
          r.stdout + r.stderr)
    t = mktrace.Trace(db("rep2v"), schema_version="6")
    t.runs(1)
    t.close()
    r = subprocess.run([REPORT, db("rep2v"), "-o", out], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "schema_version 6" in r.stderr,
          r.stderr)
    bad = os.path.join(TMP, "bad.profile")
    with open(bad, "w") as f:
        f.write("tnbc-profile 7\n")
    r = subprocess.run([REPORT, db("rep2"), "-p", bad, "-o", out], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 1 and "bad.profile:1: unknown profile version 7" in r.stderr,
          r.stderr)


def test_early_cost():
    # Regime a's trace (TCURC 1.5 ms, both ranks read long after all has
    # arrived) with 200 us of measured early-return steps per call: Tinit
    # 100 + 200 = 300 us, and both the formula and the play-out hide
    # Tcomm - Tinit = 700 us (900 us without it).
    regime_trace("early", 1_500_000, 100_000)
    s = site_of(analyze(db("early"), extra=("--early-cost", "200"),
                        out=db("early-200").replace(".db", ".profile")), "alltoall")
    close(s["model"]["tinit_ns"], 300_000, rel=1e-6, what="Tinit with the early cost")
    close(s["model"]["toverlap_ns"], 700_000, rel=1e-6, what="eq. 3")
    close(s["model"]["saving_call_ns"], 700_000, rel=1e-6, what="saving")
    # 890 us of it make Tinit 990 us and leave Tcomm - Tinit = 10 us, less
    # than Tinit: off (steps given by hand are not a measured run's).
    s = site_of(analyze(db("early"), extra=("--early-cost", "890"),
                        out=db("early-890").replace(".db", ".profile")), "alltoall")
    check(not s["on"] and "below the early return's modelled cost (Tinit 990.0 us)" in s["reason"],
          s["reason"])
    for bad in ("-1", "x", "1e9", ""):
        r = analyze(db("early"), expect_rc=2, extra=("--early-cost", bad))
        check("--early-cost" in r.stderr and r.stderr.count("\n") == 1, r.stderr)


# ------------------------------------------------------------------ projection

# The projection keeps the trace's reads (TCURC, RCRC, order, Tinit's
# costs) and replaces Tcomm by the platform's, from the bytes: for the
# alltoall traces below each rank receives D = 2 MB; on P = nodes x ppn
# ranks it gets D/P from each, ppn blocks by memory copy (here at the
# trace's copy_bw, 2 MB per 100 us, so 1 MB in 50 us), the rest over the
# node's link, which its ppn ranks share, plus (P - 1) latencies.
# Every expected value below is worked out by hand in the comments.
MBIT_1MB_10MS = 1048576 * 8 / 0.01 / 1e6     # Mbit/s that move 1 MB in 10 ms
GBIT_1MB_100US = 1048576 * 8 / 100e-6 / 1e9  # Gbit/s that move 1 MB in 100 us


def projected(name, tcurc_ns, gap_ns, spec):
    regime_trace(name, tcurc_ns, gap_ns)
    out = db(name + "-proj").replace(".db", ".profile")
    prof = analyze(db(name), extra=("--platform", spec), out=out)
    check(prof["source"].endswith(f"[projection: {spec}]"), prof["source"])
    return site_of(prof, "alltoall")


def test_projection_comm_bound():
    # 2 nodes x 1, link moving 1 MB in 10 ms, no latency: Tcomm' = 1 MB over
    # the link (10 ms) + 1 MB own block copied (50 us) = 10.05 ms. The trace
    # (TCURC 5 ms, a 1 MB block read per 100 us) hid 0.9 ms of 1 ms on its
    # platform (regime a); here eq. 3 gives min(10.05 - 0.1, 5 + 0.2) =
    # 5.2 ms (regime e: RCRC 10.5 GB/s > Rcomm 0.21 GB/s). Play-out, rank 1
    # (remote block first): reads start at 5 ms, the remote block is there
    # at 10.05 ms + one piece (3.125 us), its own read ends 10.153125 ms;
    # plain it would end 10.05 + 5.2 ms: hides 5.096875 - 0.1 = 4.996875 ms
    # (rank 0, own block first: 5.096875 ms). The site saves 4.996875 ms.
    spec = f"link={MBIT_1MB_10MS:.4f}Mbit,latency=0us,ppn=1,nodes=2"
    s = projected("p-comm", 5_000_000, 100_000, spec)
    m = s["model"]
    close(m["tcomm_ns"], 10_050_000, rel=1e-6, what="projected Tcomm")
    close(m["toverlap_ns"], 5_200_000, rel=1e-6, what="eq. 3")
    close(m["saving_call_ns"], 4_996_875, rel=1e-6, what="slowest rank")
    close(m["tinit_ns"], TINIT, rel=1e-6, what="Tinit (the CPU's, kept)")
    close(m["rcrc"], MB / 100e-6, rel=1e-8, what="RCRC kept")
    check(m["regime"] == "e" and s["on"], (m["regime"], s["reason"]))


def test_projection_shared_cores():
    # The comm-bound trace on 2 nodes x 2 with one core per node (cores=1):
    # Tcomm' = 2 x 512 KiB by copy (50 us) + 2 MB over the link its 2 ranks
    # share (20 ms) = 20.05 ms. The ranks share the core, so their work
    # takes twice as long: TCURC 10 ms, 1 MB read per 200 us. Eq. 3:
    # min(20.05 - 0.1, 10 + 2 MB read at that rate, 0.4) = 10.4 ms. Play-out
    # (the traced blocks, no node-near ones: the traced communicator has 2
    # members, the platform 4), rank 1 (remote block first): reads start at
    # 10 ms, the remote block is there at 20.05 ms + one piece (6.25 us),
    # its own read ends 20.25625 ms; plain 20.05 + 10.4 = 30.45 ms: hides
    # 10.19375 - 0.1 = 10.09375 ms (rank 0: 10.29375). Tinit stays the
    # traced one. With cores=4 (more than ppn) nothing changes: the eq. 3
    # of a core per rank, 5.2 ms.
    spec = f"link={MBIT_1MB_10MS:.4f}Mbit,latency=0us,ppn=2,nodes=2,cores=1"
    s = projected("p-cores", 5_000_000, 100_000, spec)
    m = s["model"]
    close(m["tcomm_ns"], 20_050_000, rel=1e-6, what="projected Tcomm")
    close(m["tcurc_ns"], 10_000_000, rel=1e-6, what="TCURC on a shared core")
    close(m["rcrc"], MB / 200e-6, rel=1e-8, what="RCRC on a shared core")
    close(m["toverlap_ns"], 10_400_000, rel=1e-6, what="eq. 3")
    close(m["saving_call_ns"], 10_093_750, rel=1e-6, what="slowest rank")
    close(m["tinit_ns"], TINIT, rel=1e-6, what="Tinit (kept)")
    spec = f"link={MBIT_1MB_10MS:.4f}Mbit,latency=0us,ppn=2,nodes=2,cores=4"
    m = projected("p-cores4", 5_000_000, 100_000, spec)["model"]
    close(m["tcurc_ns"], 5_000_000, rel=1e-6, what="TCURC, a core per rank")
    close(m["toverlap_ns"], 5_200_000, rel=1e-6, what="eq. 3, a core per rank")
    # With --comm-cpu-share 0.2 (measured with a core per rank) each core
    # carries both ranks' alltoall traffic: 0.4. The formula's saving
    # shrinks to 10.4 x 0.6 = 6.24 ms. The play-out loses nothing to it
    # (rank 1: TCURC ends at 10 / 0.6 = 16.67 ms, its reads wait for the
    # remote block at 20.05 ms anyway: 10.09375 ms, as above), so the
    # formula's 6.24 ms is the site's saving.
    spec = f"link={MBIT_1MB_10MS:.4f}Mbit,latency=0us,ppn=2,nodes=2,cores=1"
    out = db("p-cores-share").replace(".db", ".profile")
    prof = analyze(db("p-cores"), extra=("--platform", spec, "--comm-cpu-share", "0.2"), out=out)
    s = site_of(prof, "alltoall")
    close(s["model"]["saving_call_ns"], 6_240_000, rel=1e-6, what="saving at share 0.4")
    check("40% CPU share" in s["reason"], s["reason"])


def test_projection_compute_bound():
    # Same trace on a link moving 1 MB in 100 us: Tcomm' = 100 + 50 = 150 us,
    # under TCURC (5 ms): regime a, the whole Tcomm' - Tinit = 50 us hidden
    # (both ranks read long after everything arrived); less than Tinit
    # (100 us), the early return's estimated cost: off.
    spec = f"link={GBIT_1MB_100US:.5f}Gbit,latency=0ns,ppn=1,nodes=2"
    s = projected("p-cpu", 5_000_000, 100_000, spec)
    m = s["model"]
    close(m["tcomm_ns"], 150_000, rel=1e-6, what="projected Tcomm")
    close(m["toverlap_ns"], 50_000, rel=1e-6, what="eq. 3")
    close(m["saving_call_ns"], 50_000, rel=1e-6, what="saving")
    check(m["regime"] == "a" and not s["on"] and "below the early return's modelled cost"
          in s["reason"], (m["regime"], s["reason"]))


def test_projection_latency_bound():
    # 4 nodes x 2 (P = 8), 100 us latency, the fast link: each rank gets
    # 2 MB / 8 = 256 KiB from each rank; 2 of them (512 KiB) by copy: 25 us;
    # 6 (1.5 MB) over the link, shared with the node's other rank: 3 MB at
    # 1 MB per 100 us = 300 us; 7 latencies = 700 us. Tcomm' = 1025 us, two
    # thirds latency. The trace reads after 300 us, 1 MB per ms (RCRC 1 GB/s
    # < Rcomm 2 GB/s: regime d): eq. 3 = min(1025 - 100, 300 + 2000) =
    # 925 us; play-out: the remote block is there at 1025 + 31.25 us (one
    # piece at 1 GB/s), before the reads need it (1300 us): both ranks hide
    # Tcomm' - Tinit = 925 us.
    spec = f"link={GBIT_1MB_100US:.5f}Gbit,latency=100us,ppn=2,nodes=4"
    s = projected("p-lat", 300_000, 1_000_000, spec)
    m = s["model"]
    close(m["tcomm_ns"], 1_025_000, rel=1e-6, what="projected Tcomm")
    close(m["toverlap_ns"], 925_000, rel=1e-6, what="eq. 3")
    close(m["saving_call_ns"], 925_000, rel=1e-6, what="saving")
    check(m["regime"] == "d" and s["on"], (m["regime"], s["reason"]))
    # memcpy stated: 512 KiB at 1 GB/s = 524.288 us instead of 25 us.
    out = db("p-lat-mem").replace(".db", ".profile")
    prof = analyze(db("p-lat"), extra=("--platform", spec + ",memcpy=1GB/s"), out=out)
    close(site_of(prof, "alltoall")["model"]["tcomm_ns"], 1_000_000 + 524_288, rel=1e-6,
          what="projected Tcomm, memcpy 1 GB/s")


def test_projection_bcast():
    # A bcast of 1 MB in 4 chunks to rank 1 (rank 0, the root, receives
    # nothing): 16 x 8 (P = 128), 2 us latency, link 1 MB per 100 us:
    # ceil(log2 128) = 7 latencies (14 us) + 100 us over the link + 1 MB
    # by copy at the trace's copy_bw (50 us): Tcomm' = 164 us.
    t = mktrace.Trace(db("p-bcast"))
    t.runs(2, copy_bw=COPY_BW)
    for inv in range(3):
        t.ordered_call(1, SITE, "bcast", 2, MB // 4, [0, 1, 2, 3], 0, TCOMM, 500_000, 10_000,
                       nsub=4, chunks=4, root=0, send_bytes=0)
    t.close()
    spec = f"link={GBIT_1MB_100US:.5f}Gbit,latency=2us,ppn=8,nodes=16"
    prof = analyze(db("p-bcast"), extra=("--platform", spec),
                   out=db("p-bcast-proj").replace(".db", ".profile"))
    close(site_of(prof, "bcast")["model"]["tcomm_ns"], 164_000, rel=1e-6,
          what="projected bcast Tcomm")


def test_projection_bad_spec():
    regime_trace("p-bad", 0, 100_000)
    for bad, why in (("link=40Gbit,latency=1.5us,ppn=8", "are all required"),
                     ("link=40Gbit,latency=1.5us,ppn=8,nodes=16,nodes=2", "given twice"),
                     ("link=40,latency=1.5us,ppn=8,nodes=16", "link '40'"),
                     ("link=40Gbit,latency=1.5,ppn=8,nodes=16", "latency '1.5'"),
                     ("link=40Gbit,latency=1.5us,ppn=0,nodes=16", "ppn '0'"),
                     ("link=40Gbit,latency=1.5us,ppn=8,nodes=1.5", "nodes '1.5'"),
                     ("link=-1Gbit,latency=1.5us,ppn=8,nodes=16", "link '-1Gbit'"),
                     ("link=40Gbit,latency=1.5us,ppn=8,nodes=16,cpu=2", "'cpu'"),
                     ("link=40Gbit,latency=1.5us,ppn=8,nodes=16,cores=0", "cores '0'"),
                     ("link=40Gbit,,latency=1.5us,ppn=8,nodes=16", "empty item"),
                     ("link=40Gbit,latency=1.5us,ppn=8,nodes=16,memcpy=5GiB/s",
                      "memcpy '5GiB/s'"),
                     # projected a Tcomm of inf: a profile its reader refused
                     ("link=1e-300Gbit,latency=1.5us,ppn=8,nodes=16", "from 1 Kbit to 100 Tbit"),
                     ("link=40Gbit,latency=1e300s,ppn=8,nodes=16", "from 0 to 10 s"),
                     ("", "are all required")):
        r = analyze(db("p-bad"), expect_rc=2, extra=("--platform", bad))
        check(why in r.stderr and r.stderr.count("\n") == 1, f"{bad!r}: {r.stderr!r}")
    # --measured compares traced and replayed cycles on one platform
    r = analyze(db("p-bad"), expect_rc=2, extra=("--platform", "link=1Gbit,latency=0s,ppn=1,"
                                                 "nodes=2", "--measured", db("p-bad")))
    check("not with --platform" in r.stderr and r.stderr.count("\n") == 1, r.stderr)


def test_projection_summary_and_report():
    regime_trace("p-rep", 5_000_000, 100_000)
    spec = "link=40Gbit,latency=1.5us,ppn=8,nodes=16"
    out = db("p-rep").replace(".db", ".profile")
    r = subprocess.run([ANALYZE, db("p-rep"), "-o", out, "--platform", spec],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    check(r.stdout.startswith(f"PROJECTION to platform {spec}"), r.stdout)
    rep = os.path.join(TMP, "p-rep-report")
    r = subprocess.run([REPORT, db("p-rep"), "-p", out, "-o", rep, "--no-plots"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and f"PROJECTION to platform {spec}" in r.stdout,
          r.stdout + r.stderr)


def main():
    tests = [(n, f) for n, f in sorted(globals().items(), key=lambda kv: kv[1].__code__.co_firstlineno
                                        if callable(kv[1]) and hasattr(kv[1], "__code__") else 0)
             if n.startswith("test_") and callable(f)]
    print(f"1..{len(tests)}")
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        try:
            fn()
            print(f"ok {i} - {name}")
        except Exception as e:  # a test's failure, reported, never fatal
            failed += 1
            print(f"not ok {i} - {name}")
            detail = str(e) if isinstance(e, Fail) else traceback.format_exc()
            for line in detail.splitlines()[-20:]:
                print(f"# {line}")
        sys.stdout.flush()
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# kept {TMP}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
