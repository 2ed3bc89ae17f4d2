#!/usr/bin/python3
"""e2e_check.py PROFILE OP ORDER: the profile tnbc-analyze made from a real
traced run of test/trace/access_order has, for OP, the consensus ORDER (comma
separated) on every rank, the matching priorities on both sides, and a
predicted Toverlap equal to eq. 3 on its own measured terms."""
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


def main(path, op, order_s):
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
    crc = 0 if math.isinf(m["rcrc"]) else m["tcomm_ns"] * m["rcomm"] / m["rcrc"]
    f = max(0.0, min(m["tcomm_ns"] - m["tinit_ns"], m["tcurc_ns"] + crc))
    if abs(f - m["toverlap_ns"]) > 1e-6 * max(f, 1.0):
        fail(f"toverlap {m['toverlap_ns']} != eq. 3 on the terms {f}")
    if not (m["tcomm_ns"] > 0 and m["dcomm"] > 0 and not math.isinf(m["tcurc_ns"])):
        fail(f"implausible measured terms {m}")
    print(f"e2e_check: {op} ok: order {order}, Toverlap {m['toverlap_ns']:.0f} ns, "
          f"regime {m['regime']}, decision {'on' if s['on'] else 'off'}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail("usage: e2e_check.py PROFILE OP ORDER")
    main(*sys.argv[1:])
