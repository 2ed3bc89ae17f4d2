// SPDX-License-Identifier: BSD-3-Clause
/* Own case: user-level threads as tasking runtimes build them,
 * makecontext/swapcontext on a stack from malloc (which tnbc cannot tell
 * from heap, so a receive buffer there is guarded). A fiber receives an
 * alltoall into a local array, reads its first block and finishes; the
 * next fiber runs on the same stack memory with a deep frame, so its stack
 * pointer and locals fall in the pages still guarded. Without an alternate
 * signal stack the kernel could not push the fault's signal frame there
 * and killed the process (trace, tuned and forced runs). The fibers run
 * in the main thread, then in a thread of the program's own
 * (MPI_THREAD_SERIALIZED: the main thread waits in pthread_join). */
#include "tt.h"

#include <pthread.h>
#include <ucontext.h>

#define N 2048                   /* doubles per block */
#define MAXP 8
#define STACK (512 * 1024)

static ucontext_t main_ctx, fiber_ctx;
static double acc;

static void __attribute__((noinline)) receiver(int it)
{
    double r[MAXP * N], s[MAXP * N];
    for (int i = 0; i < tt_size * N; i++)
        s[i] = tt_rank * 1000.0 + i + it;
    MPI_Alltoall(s, N, MPI_DOUBLE, r, N, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = N - 1; i >= 0; i -= 7)      /* the first block only */
        acc += r[i];
}

static double __attribute__((noinline)) leaf(double x)
{
    volatile double pad[64];
    pad[0] = x;
    return pad[0] * 1.5;
}

static void __attribute__((noinline)) worker(int it)
{
    double big[30000];                       /* down into the receiver's pages */
    for (int i = 29999; i >= 0; i--)
        big[i] = leaf(i + it);
    for (int i = 0; i < 30000; i += 97)
        acc += big[i] * 1e-6;
}

static void run_fiber(char *stack, void (*fn)(int), int it)
{
    getcontext(&fiber_ctx);
    fiber_ctx.uc_stack.ss_sp = stack;
    fiber_ctx.uc_stack.ss_size = STACK;
    fiber_ctx.uc_link = &main_ctx;
    makecontext(&fiber_ctx, (void (*)(void))fn, 1, it);
    swapcontext(&main_ctx, &fiber_ctx);
}

static void *fibers(void *stack)
{
    static int it;
    for (int k = 0; k < 6; k++, it++) {
        run_fiber(stack, receiver, it);
        run_fiber(stack, worker, it);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = tt_init_thread(&argc, &argv, MPI_THREAD_SERIALIZED);
    if (tt_size > MAXP || provided < MPI_THREAD_SERIALIZED)
        MPI_Abort(MPI_COMM_WORLD, 1);
    char *stack = malloc(STACK);
    pthread_t t;
    fibers(stack);
    if (pthread_create(&t, NULL, fibers, stack) != 0 || pthread_join(t, NULL) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    tt_out("rank %d: acc %.6f\n", tt_rank, acc);
    free(stack);
    tt_finish();
    return 0;
}
