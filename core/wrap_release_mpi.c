// SPDX-License-Identifier: BSD-3-Clause
/* MPI calls that hand a buffer to MPI outside the handled collectives:
 * point-to-point, other collectives, one-sided and file I/O. Open MPI may
 * move those bytes with a system call (TCP writev, CMA process_vm_*) that
 * would fail with EFAULT on a guarded page, so the guards on the buffer are
 * lifted first (trace: recorded as a release; replay: waits for the data). */
#include "intercept.h"

#define REL(buf, count, type) tnbc_release_typed(buf, count, type, TNBC_REL_MPI)

/* Sum of counts: the footprint of a v-variant buffer, conservatively from
 * the lowest to the highest displacement. In 64-bit arithmetic, skipping
 * negative counts (an erroneous call: MPI reports it, we must not turn it
 * into a huge range first). */
static void rel_v(const void *buf, const int *counts, const int *displs, MPI_Datatype t,
                  MPI_Comm comm)
{
    int n, first = 1;
    long lo = 0, hi = 0;
    if (!tnbc_guard_active() || !buf || !counts || !displs || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++) {
        if (counts[i] <= 0)
            continue;
        if (first || displs[i] < lo)
            lo = displs[i];
        if (first || (long)displs[i] + counts[i] > hi)
            hi = (long)displs[i] + counts[i];
        first = 0;
    }
    if (!first) {
        MPI_Aint lb, ext;
        if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
            return;
        REL((const char *)buf + (MPI_Aint)lo * ext, hi - lo, t);
    }
}

int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{ REL(b, c, t); return TNBC_NEXT(MPI_Send)(b, c, t, d, tag, comm); }
int MPI_Bsend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{ REL(b, c, t); return TNBC_NEXT(MPI_Bsend)(b, c, t, d, tag, comm); }
int MPI_Ssend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{ REL(b, c, t); return TNBC_NEXT(MPI_Ssend)(b, c, t, d, tag, comm); }
int MPI_Rsend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{ REL(b, c, t); return TNBC_NEXT(MPI_Rsend)(b, c, t, d, tag, comm); }
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Isend)(b, c, t, d, tag, comm, r); }
int MPI_Ibsend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Ibsend)(b, c, t, d, tag, comm, r); }
int MPI_Issend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Issend)(b, c, t, d, tag, comm, r); }
int MPI_Irsend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Irsend)(b, c, t, d, tag, comm, r); }
int MPI_Send_init(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Send_init)(b, c, t, d, tag, comm, r); }
int MPI_Recv_init(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Recv_init)(b, c, t, s, tag, comm, r); }
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Status *st)
{ REL(b, c, t); return TNBC_NEXT(MPI_Recv)(b, c, t, s, tag, comm, st); }
int MPI_Irecv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Irecv)(b, c, t, s, tag, comm, r); }

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int d, int stag, void *rb, int rc,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm comm, MPI_Status *status)
{
    REL(sb, sc, st);
    REL(rb, rc, rt);
    return TNBC_NEXT(MPI_Sendrecv)(sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status);
}

int MPI_Sendrecv_replace(void *b, int c, MPI_Datatype t, int d, int stag, int s, int rtag,
                         MPI_Comm comm, MPI_Status *status)
{ REL(b, c, t); return TNBC_NEXT(MPI_Sendrecv_replace)(b, c, t, d, stag, s, rtag, comm, status); }

/* Collectives tnbc does not transform: their buffers may still be guarded
 * by an earlier handled collective. */
int MPI_Scan(const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{ REL(sb, c, t); REL(rb, c, t); return TNBC_NEXT(MPI_Scan)(sb, rb, c, t, op, comm); }
int MPI_Exscan(const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{ REL(sb, c, t); REL(rb, c, t); return TNBC_NEXT(MPI_Exscan)(sb, rb, c, t, op, comm); }

int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *r)
{
    int n = 0;
    if (tnbc_guard_active() && PMPI_Comm_size(comm, &n) == MPI_SUCCESS) {
        REL(sb, (long)sc * n, st);
        REL(rb, (long)rc * n, rt);
    }
    return TNBC_NEXT(MPI_Ialltoall)(sb, sc, st, rb, rc, rt, comm, r);
}

int MPI_Ialltoallv(const void *sb, const int *scs, const int *sds, MPI_Datatype st, void *rb,
                   const int *rcs, const int *rds, MPI_Datatype rt, MPI_Comm comm, MPI_Request *r)
{
    if (sb != MPI_IN_PLACE)
        rel_v(sb, scs, sds, st, comm);
    rel_v(rb, rcs, rds, rt, comm);
    return TNBC_NEXT(MPI_Ialltoallv)(sb, scs, sds, st, rb, rcs, rds, rt, comm, r);
}

int MPI_Iallreduce(const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request *r)
{ REL(sb, c, t); REL(rb, c, t); return TNBC_NEXT(MPI_Iallreduce)(sb, rb, c, t, op, comm, r); }
int MPI_Ibcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *r)
{ REL(b, c, t); return TNBC_NEXT(MPI_Ibcast)(b, c, t, root, comm, r); }

/* One-sided: the origin buffer. */
int MPI_Put(const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
            MPI_Datatype tt, MPI_Win w)
{ REL(ob, oc, ot); return TNBC_NEXT(MPI_Put)(ob, oc, ot, tr, td, tc, tt, w); }
int MPI_Get(void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
            MPI_Win w)
{ REL(ob, oc, ot); return TNBC_NEXT(MPI_Get)(ob, oc, ot, tr, td, tc, tt, w); }
int MPI_Accumulate(const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w)
{ REL(ob, oc, ot); return TNBC_NEXT(MPI_Accumulate)(ob, oc, ot, tr, td, tc, tt, op, w); }

/* MPI-IO: ROMIO reads and writes user buffers with pread/pwrite. */
int MPI_File_write(MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_write)(f, b, c, t, s); }
int MPI_File_write_all(MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_write_all)(f, b, c, t, s); }
int MPI_File_write_at(MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_write_at)(f, o, b, c, t, s); }
int MPI_File_write_at_all(MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t,
                          MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_write_at_all)(f, o, b, c, t, s); }
int MPI_File_read(MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_read)(f, b, c, t, s); }
int MPI_File_read_all(MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_read_all)(f, b, c, t, s); }
int MPI_File_read_at(MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_read_at)(f, o, b, c, t, s); }
int MPI_File_read_at_all(MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Status *s)
{ REL(b, c, t); return TNBC_NEXT(MPI_File_read_at_all)(f, o, b, c, t, s); }
