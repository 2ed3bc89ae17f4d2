#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""e2e_check.py PROFILE OP ORDER CURC_US: the profile tnbc-analyze made from
a real traced run of test/trace/access_order (ACCESS_ORDER_CURC_US=CURC_US)
has, for OP, the consensus ORDER (comma separated) on every rank, the
matching priorities on both sides, and a TCURC of at least the CURC_US
microseconds the program spends, by construction, between each return and
its first read. Every expected value comes from what the program does, not
from the profile: the model's arithmetic is checked on hand-made traces
with hand-computed answers (test_analyzer.py); a live trace's times depend
on the machine's load, so no other term of it is judged here."""
import importlib.util
import math
import os
import sys
from importlib.machinery import SourceFileLoader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
loader = SourceFileLoader("tnbc_report", os.path.join(ROOT, "scripts", "tnbc-report"))
report = importlib.util.module_from_spec(importlib.util.spec_from_loader("tnbc_report", loader))
loader.exec_module(report)


def fail(msg):
    print(f"e2e_check: {msg}")
    sys.exit(1)


def main(path, op, order_s, curc_s):
    curc_us = float(curc_s)
    order = [int(x) for x in order_s.split(",")]
    sites = [s for s in report.read_profile(path)["sites"] if s["op"] == op]
    if len(sites) != 1:
        fail(f"want one {op} site, found {len(sites)}")
    s = sites[0]
    if s["order_kind"] != "consensus" or s["order"] != order:
        fail(f"order {s['order_kind']} {s['order']}, want consensus {order}")
    if s["identical"] != 1.0 or s["tau"] != 1.0 or s["samples"] < 2:
        fail(f"agreement {s['identical']} {s['tau']} over {s['samples']}")
    pos = [order.index(b) for b in range(len(order))]
    if s.get("chunks"):
        if s["recv_prio"] != {"*": pos} or s["send_prio"] != {"*": pos}:
            fail(f"chunk priorities {s['recv_prio']} {s['send_prio']}, want {pos}")
    else:
        for r in range(s["comm_size"]):
            if s["recv_prio"][str(r)] != pos:
                fail(f"rank {r} recv_prio {s['recv_prio'][str(r)]}, want {pos}")
            if s["send_prio"][str(r)] != [pos[r]] * s["comm_size"]:
                fail(f"rank {r} send_prio {s['send_prio'][str(r)]}, want all {pos[r]}")
    m = s["model"]
    if not m["tcurc_ns"] >= curc_us * 1000:
        fail(f"tcurc {m['tcurc_ns']} ns, but the program works {curc_us} us before each first read")
    if not (m["tcomm_ns"] > 0 and m["dcomm"] > 0):
        fail(f"no communication measured: {m}")
    print(f"e2e_check: {op} ok: order {order}, Toverlap {m['toverlap_ns']:.0f} ns, "
          f"regime {m['regime']}, decision {'on' if s['on'] else 'off'}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        fail("usage: e2e_check.py PROFILE OP ORDER CURC_US")
    main(*sys.argv[1:])
