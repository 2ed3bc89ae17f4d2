// SPDX-License-Identifier: BSD-3-Clause
/* Own case: receive buffers in RMA window memory that the neighbour reads
 * and writes directly right after the collective: MPI_Get in a fence
 * epoch (MPI_Win_create on malloc'd memory), MPI_Get and MPI_Put in a
 * passive-target epoch the target takes no part in (MPI_Win_allocate),
 * and MPI_Get from memory attached to a dynamic window. Open MPI's
 * shared-memory transport reads and writes a window with
 * process_vm_readv/writev: on a guarded page those fail, and it retries
 * for ever (the trace of this program hung before window memory was
 * kept unguarded). */
#include "tt.h"

#define N 65536     /* ints per rank's receive buffer */

static void fill(int *s, int it, int salt)
{
    for (int i = 0; i < N; i++)
        s[i] = tt_rank * 1000003 + i * 7 + it * 31 + salt;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int peer = (tt_rank + 1) % tt_size, per = N / tt_size;
    int *s = malloc(N * sizeof *s), *got = malloc((size_t)per * sizeof *got);
    int *created = malloc(N * sizeof *created + 24);   /* not page-aligned */
    int *allocated, *attached = malloc(N * sizeof *attached);
    MPI_Win wc, wa, wd;
    MPI_Win_create(created, N * sizeof *created, sizeof *created, MPI_INFO_NULL, MPI_COMM_WORLD, &wc);
    MPI_Win_allocate(N * sizeof *allocated, sizeof *allocated, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &allocated, &wa);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wd);
    MPI_Win_attach(wd, attached, N * sizeof *attached);
    MPI_Aint mine, theirs;
    MPI_Get_address(attached, &mine);
    MPI_Sendrecv(&mine, 1, MPI_AINT, (tt_rank + tt_size - 1) % tt_size, 7, &theirs, 1, MPI_AINT,
                 peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int it = 0; it < 3; it++) {
        fill(s, it, 1);
        MPI_Alltoall(s, per, MPI_INT, created, per, MPI_INT, MPI_COMM_WORLD);
        MPI_Win_fence(0, wc);
        MPI_Get(got, per, MPI_INT, peer, (MPI_Aint)(it % tt_size) * per, per, MPI_INT, wc);
        MPI_Win_fence(0, wc);
        tt_out("rank %d it %d create %016llx\n", tt_rank, it, (unsigned long long)tt_hash(got, per * sizeof *got));

        fill(s, it, 2);
        MPI_Alltoall(s, per, MPI_INT, allocated, per, MPI_INT, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);          /* every rank's data is in: read it remotely */
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, wa);
        MPI_Get(got, per, MPI_INT, peer, (MPI_Aint)((it + 1) % tt_size) * per, per, MPI_INT, wa);
        MPI_Win_unlock(peer, wa);
        MPI_Barrier(MPI_COMM_WORLD);          /* all gets done: now overwrite a block remotely */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, wa);
        MPI_Put(got, per, MPI_INT, peer, 0, per, MPI_INT, wa);
        MPI_Win_unlock(peer, wa);
        MPI_Barrier(MPI_COMM_WORLD);
        tt_out("rank %d it %d allocate %016llx %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(got, per * sizeof *got),
               (unsigned long long)tt_hash(allocated, N * sizeof *allocated));

        fill(s, it, 3);
        MPI_Alltoall(s, per, MPI_INT, attached, per, MPI_INT, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, wd);
        MPI_Get(got, per, MPI_INT, peer, theirs + (MPI_Aint)(it % tt_size) * per * (MPI_Aint)sizeof *got,
                per, MPI_INT, wd);
        MPI_Win_unlock(peer, wd);
        MPI_Barrier(MPI_COMM_WORLD);
        tt_out("rank %d it %d dynamic %016llx\n", tt_rank, it, (unsigned long long)tt_hash(got, per * sizeof *got));
    }
    MPI_Win_detach(wd, attached);
    MPI_Win_free(&wd);
    MPI_Win_free(&wa);
    MPI_Win_free(&wc);
    /* The memory serves collectives again once no window exposes it. */
    fill(s, 9, 4);
    MPI_Alltoall(s, per, MPI_INT, attached, per, MPI_INT, MPI_COMM_WORLD);
    tt_out("rank %d after %016llx\n", tt_rank, (unsigned long long)tt_hash(attached, N * sizeof *attached));
    free(s);
    free(got);
    free(created);
    free(attached);
    tt_finish();
    return 0;
}
