#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plain TCP (no MPI, no PDBP) N-to-N on an emulated cluster: the reference
for what PDBP's 3-to-3 can reach on the same links (docs/pdbp.md).

  tcp_rotate.py CLUSTER [--mode rot|all] [--mb MB] [--reps R] [--cc NAME]

One process per node (in the node's namespace, on the node's CPUs), one TCP
connection per ordered pair, opened once. Each rep starts at the same clock
time on every node; node i sends MB MB to every other node, one destination
after the other from i+1 (rot, PDBP's order) or to all at once (all). A rep
ends when the last node has received all its bytes. Prints, per rep, that
time and the per-host throughput as a share of the link (from the cluster's
config), like pdbp_bench's window (without its barriers). --cc sets the
nodes' TCP congestion control first (and leaves it set).
"""
import os, socket, subprocess, sys, threading, time

PORT = 5611


def node(i, addrs, nb, reps, t0, mode, out):
    n = len(addrs)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addrs[i], PORT))
    ls.listen(n)
    cin = {}

    def accept():
        for _ in range(n - 1):
            c, _ = ls.accept()
            cin[c.recv(1)[0]] = c
    th = threading.Thread(target=accept)
    th.start()
    cout = {}
    for k in range(n):
        if k == i:
            continue
        while True:
            try:
                c = socket.create_connection((addrs[k], PORT))
                break
            except OSError:
                time.sleep(0.05)
        c.sendall(bytes([i]))
        cout[k] = c
    th.join()
    buf = b"x" * (1 << 20)

    def send(k):
        left = nb
        while left > 0:
            m = min(left, len(buf))
            cout[k].sendall(buf[:m])
            left -= m
    res = []
    for r in range(reps):
        start = t0 + r * 3.0
        done = {}

        def rx(k):
            got = 0
            while got < nb:
                got += len(cin[k].recv(1 << 20))
            done[k] = time.time()
        rts = [threading.Thread(target=rx, args=(k,)) for k in cin]
        for t in rts:
            t.start()
        time.sleep(max(0.0, start - time.time()))
        dsts = [(i + d) % n for d in range(1, n)]
        if mode == "rot":
            for k in dsts:
                send(k)
        else:
            sts = [threading.Thread(target=send, args=(k,)) for k in dsts]
            for t in sts:
                t.start()
            for t in sts:
                t.join()
        for t in rts:
            t.join()
        res.append(max(done.values()) - start)
    with open(out, "w") as f:
        f.write(" ".join("%.6f" % x for x in res) + "\n")


def main():
    a = sys.argv[1:]
    if a and a[0] == "--node":
        i, addrs, nb, reps, t0, mode, out = a[1:8]
        node(int(i), addrs.split(","), int(nb), int(reps), float(t0), mode, out)
        return
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    name, opt = a[0], dict(zip(a[1::2], a[2::2]))
    mode, mb = opt.get("--mode", "rot"), float(opt.get("--mb", "4"))
    reps, cc = int(opt.get("--reps", "5")), opt.get("--cc")
    d = os.path.join(os.environ.get("TNBC_CLUSTER_DIR", "/run/tnbc-cluster"), name)
    nodes = [l.split() for l in open(os.path.join(d, "nodes")) if l.strip()]
    cfg = dict(l.strip().split("=", 1) for l in open(os.path.join(d, "config")) if "=" in l)
    rate = cfg["RATE"].lower()
    mbps = float(rate[:-4]) * 1000 if rate.endswith("gbit") else float(rate[:-4])
    if cc:
        for nd in nodes:
            subprocess.run(["ip", "netns", "exec", nd[1], "sysctl", "-q", "-w",
                            "net.ipv4.tcp_congestion_control=" + cc], check=True)
    used = subprocess.run(["ip", "netns", "exec", nodes[0][1], "sysctl", "-n",
                           "net.ipv4.tcp_congestion_control"], capture_output=True,
                          text=True).stdout.strip()
    addrs = ",".join(nd[0] for nd in nodes)
    t0 = time.time() + 2.0
    nb = int(mb * 1e6)
    outs = ["/tmp/tcp_rotate.%d.%d" % (os.getpid(), k) for k in range(len(nodes))]
    ps = [subprocess.Popen(["ip", "netns", "exec", nd[1], "taskset", "-c", nd[3],
                            sys.executable, os.path.abspath(__file__), "--node", str(k),
                            addrs, str(nb), str(reps), repr(t0), mode, outs[k]])
          for k, nd in enumerate(nodes)]
    rc = [p.wait(timeout=60 + reps * 10) for p in ps]
    if any(rc):
        sys.exit("tcp_rotate: a node failed")
    res = [list(map(float, open(o).read().split())) for o in outs]
    for o in outs:
        os.unlink(o)
    win = [max(x) for x in zip(*res)]
    share = [(len(nodes) - 1) * nb * 8 / w / 1e6 / mbps * 100 for w in win]
    print("tcp_rotate: %d nodes, %s, %g MB per stream, TCP %s: window s %s; share of the link %% %s"
          % (len(nodes), mode, mb, used, " ".join("%.3f" % w for w in win),
             " ".join("%.0f" % s for s in share)))


if __name__ == "__main__":
    main()
