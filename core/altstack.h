/* SPDX-License-Identifier: BSD-3-Clause */
/* Alternate signal stacks for the guard's handlers.
 *
 * A fault on a guarded page is delivered on the faulting thread's own
 * stack unless the thread has an alternate one. Where that stack lies in
 * guarded memory, the kernel cannot push the signal frame and kills the
 * process: user-level threads (makecontext/swapcontext, fibers) run on
 * stacks from malloc, which tnbc cannot tell from heap, and a fiber that
 * receives into a local array and finishes leaves its pages guarded under
 * the next fiber's frames. The handlers therefore run with SA_ONSTACK,
 * and every thread tnbc knows gets an alternate stack of its own: the one
 * that initialises the guard, and those started through pthread_create.
 * A thread that has one already (the program's, a sanitizer's) keeps it.
 *
 * Lifecycle, per thread: none -> (tnbc_altstack_add) own -> (thread exit:
 * tnbc_altstack_remove) none. A program that installs its own alternate
 * stack later replaces ours; ours is then unmapped at the thread's exit. */
#ifndef TNBC_ALTSTACK_H
#define TNBC_ALTSTACK_H

/* Gives the calling thread an alternate signal stack unless it has one.
 * Returns 0, or -1 when none could be made (the handlers then run on the
 * thread's stack, as before). */
int tnbc_altstack_add(void);
/* Takes the calling thread's own alternate stack away (thread exit). */
void tnbc_altstack_remove(void);

#endif
