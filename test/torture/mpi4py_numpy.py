# SPDX-License-Identifier: BSD-3-Clause
"""An ordinary mpi4py + numpy program (torture case mpi4py_numpy): numpy
arrays received by Alltoall and read at once, block by block in reverse,
with numpy's own loops; a helper with a smaller Alltoall of its own (the
same site in mpi4py's module, another block size); an Allgather into an
array allocated per iteration; the arrays dropped by Python's reference
counting right after. The interpreter takes free's address (a canonical
PLT entry in a non-PIE python3): tnbc must still see it as its own free.
Output from rank 0 only, in rank order."""
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
BLK = 1 << 18           # float64 per block: 2 MiB


def helper(it):
    s = np.arange(4096 * size, dtype=np.int64) * (rank + 1) + it
    r = np.empty_like(s)
    comm.Alltoall(s, r)
    return int(r[::-1].sum())


out = []
for it in range(6):
    s = (np.arange(BLK * size, dtype=np.float64) * 0.5 + rank * 3 + it) % 977.0
    r = np.empty_like(s)
    comm.Alltoall(s, r)
    blocks = r.reshape(size, BLK)
    parts = [float(np.dot(blocks[b], blocks[b][::-1])) for b in reversed(range(size))]
    g = np.empty(size * 4, dtype=np.int64)
    comm.Allgather(np.array([it, rank, helper(it), int(parts[0]) % 1000003], dtype=np.int64), g)
    out.append(f"rank {rank} it {it} {parts!r} {g.tolist()}")
    del s, r, blocks
for lines in comm.gather(out, root=0) or []:
    for line in lines:
        print(line)
