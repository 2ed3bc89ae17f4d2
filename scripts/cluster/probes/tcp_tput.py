#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Raw TCP throughput between two emulated nodes, no MPI (docs/cluster.md).

  ip netns exec tnbc-NAME-n1 probes/tcp_tput.py server ADDR_OF_N1 MIB uni|bi &
  ip netns exec tnbc-NAME-n0 probes/tcp_tput.py client ADDR_OF_N1 MIB uni|bi

uni: the client sends MIB MiB; bi: both send MIB MiB at once. The client
prints Mbit/s per direction.
"""
import socket, sys, time, threading
mode=sys.argv[1]; host=sys.argv[2]; n=int(sys.argv[3])*1048576
buf=b'x'*1048576
def recvall(c, n):
    got=0
    while got<n:
        d=c.recv(1<<20)
        if not d: break
        got+=len(d)
if mode=='server':
    s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind((host,5555)); s.listen(1)
    c,_=s.accept()
    t=threading.Thread(target=lambda: [c.sendall(buf) for _ in range(n//1048576)]) if sys.argv[4]=='bi' else None
    if t: t.start()
    recvall(c,n)
    if t: t.join()
    c.close()
else:
    c=socket.create_connection((host,5555))
    t0=time.time()
    t=threading.Thread(target=recvall,args=(c,n)) if sys.argv[4]=='bi' else None
    if t: t.start()
    for _ in range(n//1048576): c.sendall(buf)
    if t: t.join()
    else: c.shutdown(socket.SHUT_WR); c.recv(1)
    dt=time.time()-t0
    print(f"{sys.argv[4]} {n/1048576:.0f} MiB in {dt*1e3:.1f} ms: {n*8/dt/1e6:.0f} Mbit/s per direction")
