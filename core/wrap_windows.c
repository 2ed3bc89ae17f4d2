// SPDX-License-Identifier: BSD-3-Clause
/* RMA windows: the memory a window exposes is never guarded
 * (tnbc_guard_memory_ok), because other processes read and write it
 * directly (MPI_Get, MPI_Put, with no call of this process's in a
 * passive-target epoch), and on a guarded page Open MPI's shared-memory
 * transport gets EFAULT and retries for ever. Each window's ranges are
 * registered under its handle when it is made (after any pending data in
 * them has arrived: the guards on them are lifted first) and forgotten
 * when it is freed.
 *
 *   created (create, allocate, allocate_shared: one range;
 *            create_dynamic: none) --attach--> one more range
 *   --detach--> one less --free--> forgotten
 *
 * The Fortran bindings (core/wrap_fortran.c) call the same hooks. */
#include "intercept.h"

#include <stdint.h>

static uintptr_t key_of(MPI_Win win) { return (uintptr_t)win; }

void tnbc_window_exposes(MPI_Win win, const void *base, MPI_Aint size)
{
    if (size > 0)
        tnbc_guard_exposed_add(key_of(win), base, (size_t)size);
}

void tnbc_window_hides(MPI_Win win, const void *base)
{
    tnbc_guard_exposed_remove(key_of(win), base);
}

/* Memory about to be exposed: data still pending in it lands first. */
void tnbc_window_release(const void *base, MPI_Aint size)
{
    if (tnbc_guard_active() && base && size > 0)
        tnbc_guard_release_range(base, (size_t)size, TNBC_REL_MPI);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    tnbc_window_release(base, size);
    int rc = TNBC_NEXT(MPI_Win_create)(base, size, disp_unit, info, comm, win);
    if (rc == MPI_SUCCESS)
        tnbc_window_exposes(*win, base, size);
    return rc;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    int rc = TNBC_NEXT(MPI_Win_allocate)(size, disp_unit, info, comm, baseptr, win);
    if (rc == MPI_SUCCESS)
        tnbc_window_exposes(*win, *(void **)baseptr, size);
    return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    int rc = TNBC_NEXT(MPI_Win_allocate_shared)(size, disp_unit, info, comm, baseptr, win);
    if (rc == MPI_SUCCESS)
        tnbc_window_exposes(*win, *(void **)baseptr, size);
    return rc;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    tnbc_window_release(base, size);
    int rc = TNBC_NEXT(MPI_Win_attach)(win, base, size);
    if (rc == MPI_SUCCESS)
        tnbc_window_exposes(win, base, size);
    return rc;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    int rc = TNBC_NEXT(MPI_Win_detach)(win, base);
    if (rc == MPI_SUCCESS)
        tnbc_window_hides(win, base);
    return rc;
}

int MPI_Win_free(MPI_Win *win)
{
    MPI_Win was = *win;       /* MPI_WIN_NULL after the call */
    int rc = TNBC_NEXT(MPI_Win_free)(win);
    if (rc == MPI_SUCCESS)
        tnbc_window_hides(was, NULL);
    return rc;
}
