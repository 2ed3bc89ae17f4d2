// SPDX-License-Identifier: BSD-3-Clause
/* Fortran bindings (mpif.h, `use mpi` and `use mpi_f08`). Open MPI's Fortran
 * wrappers call the C PMPI_ functions directly, so the C wrappers never see
 * Fortran calls: the Fortran symbols are defined here too, in the four
 * manglings compilers use, converting handles and the MPI_IN_PLACE/MPI_BOTTOM
 * sentinels. Open MPI's mpi_f08 procedures (`mpi_xxx_f08_`) take the same
 * arguments at the machine level (buffers by address, handle types as one
 * INTEGER each, passed by reference), except that their ierror is
 * OPTIONAL: a null pointer when absent. */
#include "intercept.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

typedef MPI_Fint F;

/* Open MPI's Fortran sentinels are the addresses of common blocks. */
static void *f_in_place[4], *f_bottom[4];

static void load_sentinels(void)
{
    static int done;
    static const char *const inp[4] = { "mpi_fortran_in_place_", "mpi_fortran_in_place__",
                                        "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE" };
    static const char *const bot[4] = { "mpi_fortran_bottom_", "mpi_fortran_bottom__",
                                        "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM" };
    if (done)
        return;
    for (int i = 0; i < 4; i++) {
        f_in_place[i] = dlsym(RTLD_DEFAULT, inp[i]);
        f_bottom[i] = dlsym(RTLD_DEFAULT, bot[i]);
    }
    done = 1;
}

static void *fbuf(void *p)
{
    load_sentinels();
    for (int i = 0; i < 4; i++) {
        if (p && p == f_in_place[i])
            return MPI_IN_PLACE;
        if (p && p == f_bottom[i])
            return MPI_BOTTOM;
    }
    /* MPICH's mpif.h/`use mpi` sentinels: the variables MPIR_F_MPI_IN_PLACE
     * and MPIR_F_MPI_BOTTOM hold their addresses, set at Fortran MPI_INIT. */
    static void **mpich_in_place, **mpich_bottom;
    static int mpich_done;
    if (!mpich_done) {
        mpich_in_place = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_IN_PLACE");
        mpich_bottom = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_BOTTOM");
        mpich_done = 1;
    }
    if (p && mpich_in_place && p == *mpich_in_place)
        return MPI_IN_PLACE;
    if (p && mpich_bottom && p == *mpich_bottom)
        return MPI_BOTTOM;
    return p;
}

#define T(x) PMPI_Type_f2c(*(x))
#define C(x) PMPI_Comm_f2c(*(x))
#define CALLER __builtin_return_address(0)
#define SET(ierr, rc) do { if (ierr) *(ierr) = (F)(rc); } while (0)

/* One implementation, four symbol names, and the mpi_f08 one (whose
 * absent ierror gets a local stand-in: Open MPI's own functions, which some
 * impls forward to, store into it unconditionally). */
#define FORTRAN_NAMES(lower, upper, params, args)          \
    void lower##_ params { lower##_impl args; }            \
    void lower##__ params { lower##_impl args; }           \
    void lower params { lower##_impl args; }               \
    void upper params { lower##_impl args; }               \
    void lower##_f08_ params                               \
    {                                                      \
        F ierr_absent;                                     \
        if (!ierr)                                         \
            ierr = &ierr_absent;                           \
        lower##_impl args;                                 \
    }

/* The impls take the caller explicitly, so the four entry points above must
 * be inlined calls with the application's return address: pass CALLER. */

static void mpi_alltoall_impl(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr,
                              void *caller)
{
    struct tnbc_args a = { .op = TNBC_ALLTOALL, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcount = *rc, .rtype = T(rt), .root = -1,
                           .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_alltoall, MPI_ALLTOALL,
              (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr),
              (sb, sc, st, rb, rc, rt, comm, ierr, CALLER))

static void mpi_alltoallv_impl(void *sb, F *scs, F *sds, F *st, void *rb, F *rcs, F *rds, F *rt,
                               F *comm, F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_ALLTOALLV, .sendbuf = fbuf(sb), .scounts = scs, .sdispls = sds,
                           .stype = T(st), .recvbuf = fbuf(rb), .rcounts = rcs, .rdispls = rds,
                           .rtype = T(rt), .root = -1, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_alltoallv, MPI_ALLTOALLV,
              (void *sb, F *scs, F *sds, F *st, void *rb, F *rcs, F *rds, F *rt, F *comm, F *ierr),
              (sb, scs, sds, st, rb, rcs, rds, rt, comm, ierr, CALLER))

static void mpi_allgather_impl(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr,
                               void *caller)
{
    struct tnbc_args a = { .op = TNBC_ALLGATHER, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcount = *rc, .rtype = T(rt), .root = -1,
                           .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_allgather, MPI_ALLGATHER,
              (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr),
              (sb, sc, st, rb, rc, rt, comm, ierr, CALLER))

static void mpi_allgatherv_impl(void *sb, F *sc, F *st, void *rb, F *rcs, F *rds, F *rt, F *comm,
                                F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_ALLGATHERV, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcounts = rcs, .rdispls = rds, .rtype = T(rt),
                           .root = -1, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_allgatherv, MPI_ALLGATHERV,
              (void *sb, F *sc, F *st, void *rb, F *rcs, F *rds, F *rt, F *comm, F *ierr),
              (sb, sc, st, rb, rcs, rds, rt, comm, ierr, CALLER))

static void mpi_gather_impl(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm,
                            F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_GATHER, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcount = *rc, .rtype = T(rt), .root = *root,
                           .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_gather, MPI_GATHER,
              (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
              (sb, sc, st, rb, rc, rt, root, comm, ierr, CALLER))

static void mpi_gatherv_impl(void *sb, F *sc, F *st, void *rb, F *rcs, F *rds, F *rt, F *root,
                             F *comm, F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_GATHERV, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcounts = rcs, .rdispls = rds, .rtype = T(rt),
                           .root = *root, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_gatherv, MPI_GATHERV,
              (void *sb, F *sc, F *st, void *rb, F *rcs, F *rds, F *rt, F *root, F *comm, F *ierr),
              (sb, sc, st, rb, rcs, rds, rt, root, comm, ierr, CALLER))

static void mpi_scatter_impl(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm,
                             F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_SCATTER, .sendbuf = fbuf(sb), .scount = *sc, .stype = T(st),
                           .recvbuf = fbuf(rb), .rcount = *rc, .rtype = T(rt), .root = *root,
                           .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_scatter, MPI_SCATTER,
              (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
              (sb, sc, st, rb, rc, rt, root, comm, ierr, CALLER))

static void mpi_scatterv_impl(void *sb, F *scs, F *sds, F *st, void *rb, F *rc, F *rt, F *root,
                              F *comm, F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_SCATTERV, .sendbuf = fbuf(sb), .scounts = scs, .sdispls = sds,
                           .stype = T(st), .recvbuf = fbuf(rb), .rcount = *rc, .rtype = T(rt),
                           .root = *root, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_scatterv, MPI_SCATTERV,
              (void *sb, F *scs, F *sds, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
              (sb, scs, sds, st, rb, rc, rt, root, comm, ierr, CALLER))

static void mpi_bcast_impl(void *b, F *c, F *t, F *root, F *comm, F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_BCAST, .recvbuf = fbuf(b), .rcount = *c, .rtype = T(t),
                           .root = *root, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_bcast, MPI_BCAST, (void *b, F *c, F *t, F *root, F *comm, F *ierr),
              (b, c, t, root, comm, ierr, CALLER))

static void mpi_allreduce_impl(void *sb, void *rb, F *c, F *t, F *op, F *comm, F *ierr, void *caller)
{
    struct tnbc_args a = { .op = TNBC_ALLREDUCE, .sendbuf = fbuf(sb), .recvbuf = fbuf(rb),
                           .rcount = *c, .stype = T(t), .rtype = T(t), .mpi_op = PMPI_Op_f2c(*op),
                           .root = -1, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_allreduce, MPI_ALLREDUCE, (void *sb, void *rb, F *c, F *t, F *op, F *comm, F *ierr),
              (sb, rb, c, t, op, comm, ierr, CALLER))

static void mpi_reduce_impl(void *sb, void *rb, F *c, F *t, F *op, F *root, F *comm, F *ierr,
                            void *caller)
{
    struct tnbc_args a = { .op = TNBC_REDUCE, .sendbuf = fbuf(sb), .recvbuf = fbuf(rb), .rcount = *c,
                           .stype = T(t), .rtype = T(t), .mpi_op = PMPI_Op_f2c(*op), .root = *root,
                           .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_reduce, MPI_REDUCE,
              (void *sb, void *rb, F *c, F *t, F *op, F *root, F *comm, F *ierr),
              (sb, rb, c, t, op, root, comm, ierr, CALLER))

static void mpi_reduce_scatter_block_impl(void *sb, void *rb, F *c, F *t, F *op, F *comm, F *ierr,
                                          void *caller)
{
    struct tnbc_args a = { .op = TNBC_REDUCE_SCATTER_BLOCK, .sendbuf = fbuf(sb), .recvbuf = fbuf(rb),
                           .rcount = *c, .stype = T(t), .rtype = T(t), .mpi_op = PMPI_Op_f2c(*op),
                           .root = -1, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK,
              (void *sb, void *rb, F *c, F *t, F *op, F *comm, F *ierr),
              (sb, rb, c, t, op, comm, ierr, CALLER))

static void mpi_reduce_scatter_impl(void *sb, void *rb, F *cs, F *t, F *op, F *comm, F *ierr,
                                    void *caller)
{
    struct tnbc_args a = { .op = TNBC_REDUCE_SCATTER, .sendbuf = fbuf(sb), .recvbuf = fbuf(rb),
                           .rcounts = cs, .stype = T(t), .rtype = T(t), .mpi_op = PMPI_Op_f2c(*op),
                           .root = -1, .comm = C(comm) };
    SET(ierr, tnbc_collective(&a, caller));
}
FORTRAN_NAMES(mpi_reduce_scatter, MPI_REDUCE_SCATTER,
              (void *sb, void *rb, F *cs, F *t, F *op, F *comm, F *ierr),
              (sb, rb, cs, t, op, comm, ierr, CALLER))

/* Alltoallw: the type arrays are converted, then as in C. */
static void mpi_alltoallw_impl(void *sb, F *scs, F *sds, F *sts, void *rb, F *rcs, F *rds, F *rts,
                               F *comm, F *ierr, void *caller)
{
    MPI_Comm c = C(comm);
    int p = 0, inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        PMPI_Comm_remote_size(c, &p);
    else
        PMPI_Comm_size(c, &p);
    MPI_Datatype *t = malloc(2 * (size_t)(p ? p : 1) * sizeof *t);
    if (!t) {
        SET(ierr, MPI_ERR_NO_MEM);
        return;
    }
    void *s = fbuf(sb);
    for (int k = 0; k < p; k++) {
        t[k] = s == MPI_IN_PLACE ? MPI_DATATYPE_NULL : PMPI_Type_f2c(sts[k]);
        t[p + k] = PMPI_Type_f2c(rts[k]);
    }
    SET(ierr, tnbc_alltoallw(s, scs, sds, t, fbuf(rb), rcs, rds, t + p, c, caller));
    free(t);
}
FORTRAN_NAMES(mpi_alltoallw, MPI_ALLTOALLW,
              (void *sb, F *scs, F *sds, F *sts, void *rb, F *rcs, F *rds, F *rts, F *comm, F *ierr),
              (sb, scs, sds, sts, rb, rcs, rds, rts, comm, ierr, CALLER))

/* Initialisation and finalisation: Open MPI's Fortran MPI_INIT calls
 * PMPI_Init itself, so ours must run the common path instead. */
static void mpi_init_impl(F *ierr) { SET(ierr, tnbc_init(NULL, NULL, MPI_THREAD_SINGLE, NULL)); }
FORTRAN_NAMES(mpi_init, MPI_INIT, (F *ierr), (ierr))

static void mpi_init_thread_impl(F *req, F *prov, F *ierr)
{
    int p = 0;
    SET(ierr, tnbc_init(NULL, NULL, *req, &p));
    *prov = (F)p;
}
FORTRAN_NAMES(mpi_init_thread, MPI_INIT_THREAD, (F *req, F *prov, F *ierr), (req, prov, ierr))

static void mpi_finalize_impl(F *ierr) { SET(ierr, tnbc_finalize()); }
FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, (F *ierr), (ierr))

/* Point-to-point: lift guards, then forward to Open MPI's own Fortran
 * symbol, which converts the arguments itself. */
#define FORWARD(name, type) \
    static type next_##name; \
    if (!next_##name) next_##name = (type)dlsym(RTLD_NEXT, #name "_")

#define REL_F(buf, count, type) tnbc_release_typed(fbuf(buf), *(count), T(type), TNBC_REL_MPI)

typedef void (*send_fn)(void *, F *, F *, F *, F *, F *, F *);
typedef void (*isend_fn)(void *, F *, F *, F *, F *, F *, F *, F *);

#define SEND_LIKE(lower, upper)                                                     \
    static void lower##_impl(void *b, F *c, F *t, F *d, F *tag, F *comm, F *ierr)  \
    {                                                                               \
        FORWARD(lower, send_fn);                                                    \
        REL_F(b, c, t);                                                             \
        next_##lower(b, c, t, d, tag, comm, ierr);                                  \
    }                                                                               \
    FORTRAN_NAMES(lower, upper, (void *b, F *c, F *t, F *d, F *tag, F *comm, F *ierr), \
                  (b, c, t, d, tag, comm, ierr))

/* isend-like and recv share a shape: buffer, count, type, peer, tag, comm,
 * request-or-status, ierr. */
#define ISEND_LIKE(lower, upper)                                                           \
    static void lower##_impl(void *b, F *c, F *t, F *d, F *tag, F *comm, F *r, F *ierr)   \
    {                                                                                      \
        FORWARD(lower, isend_fn);                                                          \
        REL_F(b, c, t);                                                                    \
        next_##lower(b, c, t, d, tag, comm, r, ierr);                                      \
    }                                                                                      \
    FORTRAN_NAMES(lower, upper, (void *b, F *c, F *t, F *d, F *tag, F *comm, F *r, F *ierr), \
                  (b, c, t, d, tag, comm, r, ierr))

SEND_LIKE(mpi_send, MPI_SEND)
SEND_LIKE(mpi_bsend, MPI_BSEND)
SEND_LIKE(mpi_ssend, MPI_SSEND)
SEND_LIKE(mpi_rsend, MPI_RSEND)
ISEND_LIKE(mpi_isend, MPI_ISEND)
ISEND_LIKE(mpi_ibsend, MPI_IBSEND)
ISEND_LIKE(mpi_issend, MPI_ISSEND)
ISEND_LIKE(mpi_irsend, MPI_IRSEND)
ISEND_LIKE(mpi_irecv, MPI_IRECV)
ISEND_LIKE(mpi_recv, MPI_RECV)

typedef void (*sendrecv_fn)(void *, F *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *, F *);
static void mpi_sendrecv_impl(void *sb, F *sc, F *st, F *d, F *stag, void *rb, F *rc, F *rt,
                              F *s, F *rtag, F *comm, F *status, F *ierr)
{
    FORWARD(mpi_sendrecv, sendrecv_fn);
    REL_F(sb, sc, st);
    REL_F(rb, rc, rt);
    next_mpi_sendrecv(sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status, ierr);
}
FORTRAN_NAMES(mpi_sendrecv, MPI_SENDRECV,
              (void *sb, F *sc, F *st, F *d, F *stag, void *rb, F *rc, F *rt, F *s, F *rtag,
               F *comm, F *status, F *ierr),
              (sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status, ierr))

/* RMA windows (core/wrap_windows.c): forwarded to Open MPI's own Fortran
 * symbol, which calls PMPI_ itself; the memory the window exposes is
 * registered under its C handle, so that it is never guarded. Sizes and
 * base pointers are INTEGER(KIND=MPI_ADDRESS_KIND) (or TYPE(C_PTR)), by
 * reference. */
typedef void (*win_create_fn)(void *, MPI_Aint *, F *, F *, F *, F *, F *);
typedef void (*win_allocate_fn)(MPI_Aint *, F *, F *, F *, void **, F *, F *);
typedef void (*win_attach_fn)(F *, void *, MPI_Aint *, F *);
typedef void (*win_detach_fn)(F *, void *, F *);
typedef void (*win_free_fn)(F *, F *);

static void mpi_win_create_impl(void *base, MPI_Aint *size, F *disp, F *info, F *comm, F *win,
                                F *ierr)
{
    FORWARD(mpi_win_create, win_create_fn);
    tnbc_window_release(base, *size);
    next_mpi_win_create(base, size, disp, info, comm, win, ierr);
    if (*ierr == MPI_SUCCESS)
        tnbc_window_exposes(PMPI_Win_f2c(*win), base, *size);
}
FORTRAN_NAMES(mpi_win_create, MPI_WIN_CREATE,
              (void *base, MPI_Aint *size, F *disp, F *info, F *comm, F *win, F *ierr),
              (base, size, disp, info, comm, win, ierr))

#define WIN_ALLOCATE_LIKE(lower, upper)                                                       \
    static void lower##_impl(MPI_Aint *size, F *disp, F *info, F *comm, void **base, F *win,  \
                             F *ierr)                                                         \
    {                                                                                         \
        FORWARD(lower, win_allocate_fn);                                                      \
        next_##lower(size, disp, info, comm, base, win, ierr);                                \
        if (*ierr == MPI_SUCCESS)                                                             \
            tnbc_window_exposes(PMPI_Win_f2c(*win), *base, *size);                            \
    }                                                                                         \
    FORTRAN_NAMES(lower, upper,                                                               \
                  (MPI_Aint *size, F *disp, F *info, F *comm, void **base, F *win, F *ierr),  \
                  (size, disp, info, comm, base, win, ierr))

WIN_ALLOCATE_LIKE(mpi_win_allocate, MPI_WIN_ALLOCATE)
WIN_ALLOCATE_LIKE(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED)

static void mpi_win_attach_impl(F *win, void *base, MPI_Aint *size, F *ierr)
{
    FORWARD(mpi_win_attach, win_attach_fn);
    tnbc_window_release(base, *size);
    next_mpi_win_attach(win, base, size, ierr);
    if (*ierr == MPI_SUCCESS)
        tnbc_window_exposes(PMPI_Win_f2c(*win), base, *size);
}
FORTRAN_NAMES(mpi_win_attach, MPI_WIN_ATTACH, (F *win, void *base, MPI_Aint *size, F *ierr),
              (win, base, size, ierr))

static void mpi_win_detach_impl(F *win, void *base, F *ierr)
{
    FORWARD(mpi_win_detach, win_detach_fn);
    next_mpi_win_detach(win, base, ierr);
    if (*ierr == MPI_SUCCESS)
        tnbc_window_hides(PMPI_Win_f2c(*win), base);
}
FORTRAN_NAMES(mpi_win_detach, MPI_WIN_DETACH, (F *win, void *base, F *ierr), (win, base, ierr))

static void mpi_win_free_impl(F *win, F *ierr)
{
    FORWARD(mpi_win_free, win_free_fn);
    MPI_Win was = PMPI_Win_f2c(*win);     /* MPI_WIN_NULL after the call */
    next_mpi_win_free(win, ierr);
    if (*ierr == MPI_SUCCESS)
        tnbc_window_hides(was, NULL);
}
FORTRAN_NAMES(mpi_win_free, MPI_WIN_FREE, (F *win, F *ierr), (win, ierr))
