/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposition layer shared by libtnbc-trace and libtnbc-replay.
 *
 * core/wrap_*.c define the MPI (C and Fortran) and libc symbols; every
 * handled collective arrives at tnbc_collective() as a struct tnbc_args,
 * and every other call that hands a buffer to the kernel or to MPI first
 * lifts the guards on that buffer. What a collective does is the mode's
 * business: each library defines the tnbc_mode_* functions below. */
#ifndef TNBC_INTERCEPT_H
#define TNBC_INTERCEPT_H

#include "collective.h"
#include "guard.h"

/* ---- provided by the mode library (trace or replay) ---- */
extern const char tnbc_mode_name[];
/* Thread level to ask of MPI when the program asks for `required`. */
int tnbc_mode_thread_level(int required);
/* After MPI is initialised (provided: what MPI granted). Returns 0 when
 * the mode has nothing to do (no profile, no trace database): every call
 * then goes straight to MPI. */
int tnbc_mode_init(int provided);
/* A handled blocking collective; returns an MPI error code. */
int tnbc_mode_collective(const struct tnbc_args *a, void *caller);
/* Before MPI_Comm_free of comm, and before MPI_Finalize (comm NULL). */
void tnbc_mode_quiesce(MPI_Comm *comm);
void tnbc_mode_finalize(void);

/* ---- provided by core ---- */
int tnbc_collective(const struct tnbc_args *a, void *caller);
/* MPI_Alltoallw (core/wrap_alltoallw.c): as an alltoallv when its types
 * allow, else blocking. */
int tnbc_alltoallw(const void *sb, const int *scs, const int *sds, const MPI_Datatype *sts,
                   void *rb, const int *rcs, const int *rds, const MPI_Datatype *rts,
                   MPI_Comm comm, void *caller);
/* The real (PMPI) blocking collective for these arguments. */
int tnbc_pmpi_collective(const struct tnbc_args *a);
/* Lift guards on the bytes `count` elements of `type` at buf touch. */
void tnbc_release_typed(const void *buf, long count, MPI_Datatype type,
                        enum tnbc_release_reason why);
/* The definition of MPI function `name` that follows tnbc's: a PMPI tool
 * preloaded after tnbc (Darshan, mpiP: each is one PMPI layer), or MPI's
 * own, whose PMPI_ entry `pmpi` is then returned (the same code). */
void *tnbc_next_mpi(const char *name, void *pmpi);
/* The function a wrapper of MPI_x passes the call on to: TNBC_NEXT(MPI_x)
 * (args). Calling it rather than PMPI_x lets a tool preloaded after tnbc
 * see the calls tnbc does not transform: MPI_Init and MPI_Finalize (a
 * tool that never saw them writes no log), I/O, point-to-point. Resolved
 * once per call site. */
#define TNBC_NEXT(fn) (*({                                                      \
    static __typeof__(&P##fn) tnbc_next_;                                       \
    __typeof__(&P##fn) tnbc_f_ = __atomic_load_n(&tnbc_next_, __ATOMIC_RELAXED); \
    if (!tnbc_f_) {                                                             \
        tnbc_f_ = (__typeof__(&P##fn))tnbc_next_mpi(#fn, (void *)&P##fn);       \
        __atomic_store_n(&tnbc_next_, tnbc_f_, __ATOMIC_RELAXED);               \
    }                                                                           \
    tnbc_f_;                                                                    \
}))
/* Lift every guard (waiting for in-flight data in replay): for a buffer
 * whose footprint cannot be computed. */
void tnbc_release_all(enum tnbc_release_reason why);
/* Common initialisation behind MPI_Init, MPI_Init_thread and Fortran's. */
int tnbc_init(int *argc, char ***argv, int required, int *provided);
int tnbc_finalize(void);
int tnbc_is_active(void);     /* initialised and not disabled */
/* Whether the process's free() is tnbc's wrapper (core/wrap_libc.c). A
 * program that defines free() itself (an allocator linked into it) hands
 * memory back without tnbc seeing it: NULL when so, else the reason. */
const char *tnbc_foreign_free(void);
/* RMA windows (core/wrap_windows.c): memory a window exposes is never
 * guarded. release: before it is exposed, pending data in it lands. */
void tnbc_window_release(const void *base, MPI_Aint size);
void tnbc_window_exposes(MPI_Win win, const void *base, MPI_Aint size);
void tnbc_window_hides(MPI_Win win, const void *base);   /* base NULL: all */

#endif
