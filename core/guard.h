/* SPDX-License-Identifier: BSD-3-Clause */
/* Page guard and fault handler, shared by trace and replay.
 *
 * A guard covers one side (receive or send) of one collective call: the
 * buffer's whole pages are protected (PROT_NONE for receive data, PROT_READ
 * for send data) and the first and last partial pages, which the buffer
 * shares with unrelated data, are left alone (they are the edge pages of the
 * design). When the program touches a protected page, the SIGSEGV handler
 * finds the sub-message at the fault address and calls the guard's event
 * hook (trace: record the first touch; replay: wait until the data is there),
 * then opens every page all of whose sub-messages are open.
 *
 * Invariant: a protected page is opened only when every sub-message with a
 * byte on it is open. Sub-messages' footprints (first to last byte) may
 * interleave (derived types); the test is then made page by page
 * (`interleaved` below), else on a footprint's first and last page only.
 *
 * A page shared with a sub-message that is not open yet is either waited for
 * (GUARD_WAIT_NEIGHBOURS, replay) or opened for exactly one instruction and
 * then re-protected (x86-64 single step; trace), so every first touch is
 * exact. Faults anywhere else go to the handler that was there before us, so
 * real crashes still crash with their usual report.
 *
 * tnbc_guard_release_range lifts guards before memory is handed to the kernel
 * or to MPI (which would otherwise see EFAULT instead of a fault).
 *
 * The trace's receive side may close pages with memory protection keys
 * instead of PROT_NONE (GUARD_KEYS, guard_keys.h): the same states and
 * events, with the calling thread's rights in place of the mprotect calls
 * at arm, first touch and lift. */
#ifndef TNBC_GUARD_H
#define TNBC_GUARD_H

#include "collective.h"
#include "range_index.h"

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

enum tnbc_guard_event {
    TNBC_EV_READ,       /* first touch by a load */
    TNBC_EV_WRITE,      /* first touch by a store */
    TNBC_EV_ACCESS,     /* first touch, kind unknown */
    TNBC_EV_RELEASE,    /* guard lifted without a touch; see reason */
    TNBC_EV_TAIL,       /* GUARD_TAIL: first touch of the sub's tail page */
};

enum tnbc_release_reason {
    TNBC_REL_IO, TNBC_REL_MPI, TNBC_REL_FREE, TNBC_REL_REUSE,
    TNBC_REL_FINALIZE, TNBC_REL_LIMIT, TNBC_REL_NEIGHBOUR, TNBC_REL_DONE,
    TNBC_REL_COUNT
};
const char *tnbc_release_reason_name(enum tnbc_release_reason r);

/* How a sub-message's bytes relate to the protected pages. */
enum tnbc_sub_cover {
    TNBC_COVER_GUARDED,  /* every byte in protected pages */
    TNBC_COVER_PARTIAL,  /* some bytes in unprotected edge pages */
    TNBC_COVER_EDGE,     /* no byte in protected pages */
    TNBC_COVER_EMPTY,    /* zero bytes */
};

#define GUARD_WAIT_NEIGHBOURS 1u   /* flags */
/* The fault handler reads one byte of each page it opens, before the
 * program does (the trace): where the hypervisor shadows the page tables,
 * the first access to a page whose protection changed costs microseconds
 * (3-21 us measured on the 2026-11-27 test VM, against 0.1 us for 16
 * pages on hardware), and paid by the program's reads it made a traced
 * 64 KiB block look read at 0.3-0.4 of its real rate. Paid in the handler
 * it is the observer's time, which program time leaves out (clock.h). */
#define GUARD_PRETOUCH 2u
/* No single step (trace, once a site's first calls were stepped): a fault
 * on a page shared with closed sub-messages that have no page of their own
 * releases them (`limit`) and opens the page, as TNBC_TRACE_REARM_MAX
 * steps would. TNBC_TRACE_EXACT overrides it. */
#define GUARD_NO_STEP 4u
/* The guard's owner lifts it by itself once its sub-messages are open
 * (replay: the progress thread, when the call's data has landed or its
 * sends are done), and the lift makes its pages read-write again. Before
 * the program sets its own protection on those pages (mprotect, mmap
 * MAP_FIXED, munmap), tnbc_guard_release_range_lifted waits for that lift, which
 * would otherwise undo it. Not for guards the program's own thread lifts
 * later (the trace's). */
#define GUARD_OWNER_LIFTS 8u
/* Close with memory protection keys where they work and the layout allows
 * (the trace's receive side; guard_keys.h): the arming thread's first
 * touches fault without an mprotect per arm, opening and lift. */
#define GUARD_KEYS 16u
/* Also report when the code first needs a sub-message's end (the trace's
 * receive side): after its first touch, the last page only it fills stays
 * closed, and the first touch there is reported (TNBC_EV_TAIL, one fault
 * more per sub-message). A code that reads a block in several passes needs
 * all of it within the first: its first touch and the next block's say
 * when it started and how long it worked on it, not how soon it needed
 * the block's last byte. Not where the guard is keyed or its sub-messages
 * interleave; a sub-message needs two whole pages of its own. */
#define GUARD_TAIL 32u

/* closed_prot for pages left readable and writable but given the memory
 * protection key of tnbc_guard_use_pkey: every thread whose key rights
 * deny it faults on them as on PROT_NONE (SEGV_PKUERR), the kernel's
 * copies for its system calls fail with EFAULT, and a thread that allows
 * the key (replay's progress thread, libreplay/land.c) writes them with a
 * plain copy. Not a PROT_* bit. */
#define TNBC_PROT_KEYED 0x40000000

struct tnbc_guard;
/* Called once per sub-message before its bytes become accessible, in the
 * faulting thread (signal context: async-signal-safe code only) or in the
 * thread calling a release function. */
typedef void (*tnbc_guard_hook)(struct tnbc_guard *g, int sub,
                                enum tnbc_guard_event ev,
                                enum tnbc_release_reason why, uint64_t tick);
/* Asked by tnbc_guard_arm for each sub-message: non-zero when its data is
 * in place already, so it is open from the start and the pages only it
 * covers are never protected (no hook call for it). */
typedef int (*tnbc_guard_landed)(const struct tnbc_guard *g, int sub);

struct tnbc_guard {
    struct tnbc_range_obj obj;         /* must be first */
    const struct tnbc_layout *layout;  /* base, span, sub-messages */
    int closed_prot;                   /* PROT_NONE, PROT_READ or TNBC_PROT_KEYED */
    unsigned flags;
    tnbc_guard_hook hook;
    tnbc_guard_landed landed;          /* NULL: every sub closed at arm */
    void *user;
    /* set by tnbc_guard_arm */
    uintptr_t lo, hi;                  /* protected pages */
    size_t max_bytes;                  /* longest sub-message (bounds range walks) */
    int *order;                        /* sub indices sorted by offset */
    atomic_uchar *open;                /* per sub: bytes may be exposed */
    unsigned char *cover;              /* per sub: enum tnbc_sub_cover */
    atomic_int lock;                   /* serialises mprotect on this guard:
                                          0 free, 1 held, 2 held and a
                                          thread may sleep on it (guard.c) */
    atomic_int *page_rearms;           /* per protected page: single steps */
    /* Per protected page, 1 while this guard's mprotect holds it closed
     * (not keyed); changed under `lock` once armed. The lift skips its
     * mprotect where none is: a traced call's blocks, all touched, left
     * every page open, and opening them again cost one system call of
     * the four per traced call. */
    unsigned char *page_closed;
    /* GUARD_TAIL: per sub, its tail page while not yet touched, else 0
     * (NULL: no tails). */
    _Atomic uintptr_t *tail;
    /* Trace: per sub, 1 when it has a protected page no other sub-message
     * shares, so its first touch is seen there: a shared page need not be
     * single-stepped for its sake (TNBC_TRACE_EXACT=1 steps anyway). */
    unsigned char *alone;
    /* 1 when some sub-message's pages between its first and last hold
     * another's bytes (derived types whose blocks interleave: a struct of
     * absolute addresses at MPI_BOTTOM, a type resized to overlap its
     * neighbours): a sub's pages are then opened one by one as each is
     * ready, not all of its interior at once. */
    int interleaved;
    /* Why tnbc_guard_arm left the memory unguarded (the layout's page_holes, or tnbc_guard_memory_ok:
     * a stack, shared, huge-page or executable mapping, an RMA window),
     * else NULL. */
    const char *refused;
    atomic_uint faults, steps;         /* what observing this guard cost */
    atomic_ullong refill_ticks;        /* GUARD_PRETOUCH's reads: observer time measured,
                                          not estimated (fidelity.refill_ns) */
    int armed;
    /* Set by tnbc_guard_disarm, under `lock`, once every page is open and
     * before g leaves the range index; cleared by tnbc_guard_arm. From
     * then on this guard changes no protection: a fault handler that
     * looked g up before and still holds its pin (tnbc_range_remove waits
     * for it) may reach its mprotect only after a later guard has closed
     * the same pages again, for a call whose data has not arrived.
     * (A keyed guard's opening changes the faulting thread's rights, not
     * the pages: it is not marked.) */
    int lifted;
    /* GUARD_KEYS granted (guard_keys.h): each protected page's key (0: a
     * page no sub-message meets, never closed), and the rights bits of
     * them all. */
    int keyed;
    unsigned char *page_key;
    uint32_t key_bits;
    struct tnbc_guard *next_active;
};

/* Every signal but the synchronous ones a faulting instruction raises
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP): what our handlers and
 * threads block. */
void tnbc_async_signals(sigset_t *set);
/* Install the SIGSEGV/SIGTRAP handlers (after MPI_Init, so we chain to Open
 * MPI's). Idempotent. Returns 0 or -1 with a warning printed. */
int tnbc_guard_init(void);
size_t tnbc_page_size(void);
/* The page boundary at or below / at or above a. */
static inline uintptr_t tnbc_page_down(uintptr_t a) { return a & ~(uintptr_t)(tnbc_page_size() - 1); }
static inline uintptr_t tnbc_page_up(uintptr_t a) { return tnbc_page_down(a + tnbc_page_size() - 1); }
/* The whole pages inside l's footprint, [*lo, *hi) (the pages a guard
 * over l protects); 1 when there is at least one. */
int tnbc_layout_whole_pages(const struct tnbc_layout *l, uintptr_t *lo, uintptr_t *hi);

/* Protect the guard's pages. g->layout, closed_prot, flags, hook, landed,
 * user must be set. Returns the number of protected bytes (0: nothing could be
 * guarded, g is not armed), or -1 on error. */
long tnbc_guard_arm(struct tnbc_guard *g);
/* Lift the guard entirely: hook(RELEASE, why) for every sub-message not yet
 * open, pages made read-write, g forgotten. Safe on an unarmed guard. */
void tnbc_guard_disarm(struct tnbc_guard *g, enum tnbc_release_reason why);
/* Open every sub-message that has a byte in [addr, addr+len) or in a page
 * shared with those bytes, with hook(RELEASE, why). Cheap when nothing is
 * guarded. Returns the number of sub-messages released. */
int tnbc_guard_release_range(const void *addr, size_t len, enum tnbc_release_reason why);
/* The same before a system call that only reads [addr, addr+len) (write,
 * send): guards whose closed pages stay readable (closed_prot PROT_READ,
 * replay's send guard) are left as they are. Waiting for those made a
 * program thread that pushed MPI's queued TCP fragments (any MPI call)
 * wait, inside MPI's locks, for sends the progress thread could then not
 * make. */
int tnbc_guard_release_range_read(const void *addr, size_t len, enum tnbc_release_reason why);
/* tnbc_guard_release_range, then waits until no GUARD_OWNER_LIFTS guard
 * meets [addr, addr+len) any more: before the program sets its own
 * protection or mapping there. Not in an exempt thread (below). */
void tnbc_guard_release_range_lifted(const void *addr, size_t len, enum tnbc_release_reason why);
/* The calling thread never hands guarded memory to the kernel or to MPI
 * to be written (replay's progress thread: MPI receives into private
 * shadows there and sends from private copies or from pages a send guard
 * holds read-only, which the kernel may read): the release functions do
 * nothing in it. Without this, the thread's own MPI writev of a send
 * from those pages would wait for that very send (send_guard.h). */
void tnbc_guard_thread_exempt(void);
/* The same for both sides of a call's layout (a new call reusing memory). */
void tnbc_guard_release_layout(const struct tnbc_call_layout *l, enum tnbc_release_reason why);
/* Mark sub-message `sub` open and open the pages that became ready (replay:
 * called when its data has landed, so later reads do not fault). */
void tnbc_guard_open_sub(struct tnbc_guard *g, int sub);
int tnbc_guard_active(void);   /* number of armed guards */
/* 1 when every sub-message of g is open (nothing left to see or wait for),
 * or g is not armed. */
int tnbc_guard_all_open(const struct tnbc_guard *g);
/* Whether the armed guard has a sub-message without a page of its own,
 * whose first touch only a single step can tell from its neighbours'. */
int tnbc_guard_may_step(const struct tnbc_guard *g);

/* Whether [lo, hi) may be guarded (guard_memory.c): only private writable
 * memory (heap, malloc's mmaps, private copies of files such as
 * .data/.bss) that is no thread's stack, not in an RMA window and not
 * huge pages. Guarding a
 * stack breaks the frames that reuse it (the kernel cannot even push a
 * signal frame there); a shared mapping is written by others whom our
 * protection does not stop, and /proc/self/mem cannot land data in it
 * while protected; mprotect refuses to close part of a huge page.
 * Pages a live guard holds closed count as what they were when it closed
 * them (private writable): the map shows them without write access.
 * Returns 1, or 0 with *why set. tnbc_guard_arm applies it too. */
int tnbc_guard_memory_ok(uintptr_t lo, uintptr_t hi, const char **why);
/* Whether live guards' protected pages cover all of [lo, hi). */
int tnbc_guard_holds(uintptr_t lo, uintptr_t hi);
/* 1 when the page holding p is not mapped at all (mincore's ENOMEM): the
 * program unmapped it behind the C library's back, so an mprotect or a
 * landing there fails for a reason that is no error (guard_memory.c). */
int tnbc_page_unmapped(uintptr_t p);
/* Tests: why a mapping, as one line of /proc/self/maps, may not be
 * guarded (NULL: it may), with `mounts` as /proc/self/mounts. */
const char *tnbc_guard_map_line_unfit(const char *line, const char *mounts);
/* The program changed its mappings (mmap, munmap, mremap) in [addr,
 * addr+len): the cached map of the address space is read again at the next
 * check of a range that meets it. Never blocks. */
void tnbc_guard_maps_changed(const void *addr, size_t len);
/* How many times the kernel was asked for the map so far, the whole
 * table or one range's mappings (tests, costs); of them, whole reads. */
unsigned tnbc_guard_maps_reads(void);
unsigned tnbc_guard_maps_whole_reads(void);
/* 0: always read the whole table, as on kernels before 6.11 (tests);
 * 1 (the default): ask for one range's mappings where the kernel can. */
void tnbc_guard_maps_use_query(int on);
/* Whether ranges are asked about alone (0 once the kernel said it cannot). */
int tnbc_guard_maps_query(void);
/* Memory exposed in an RMA window, registered by the window wrappers
 * under the window's handle (key); remove with base NULL forgets every
 * range of the key. */
void tnbc_guard_exposed_add(uintptr_t key, const void *base, size_t len);
void tnbc_guard_exposed_remove(uintptr_t key, const void *base);
/* The descriptor the landing writes through (replay's /proc/self/mem).
 * Before the program closes that number or puts a file of its own there
 * (close, dup2, dup3, close_range, closefrom: wrap_libc.c), every pending
 * sub-message lands, so that no landing in flight writes into the
 * program's file; the landing checks the descriptor again before its next
 * call (land_check). */
void tnbc_guard_reserve_fd(int fd);
void tnbc_guard_fds_closing(long lo, long hi);
/* Thread stacks, registered by the thread-creation wrapper. */
void tnbc_guard_stack_add(uintptr_t lo, uintptr_t hi);
void tnbc_guard_stack_remove(uintptr_t lo);

/* The key TNBC_PROT_KEYED closes pages with (replay, land.c); while one is
 * set, opening a page also gives it key 0 back. Before any guard is armed. */
void tnbc_guard_use_pkey(int key);
/* Non-NULL: a fault in this thread, whatever its address, jumps to *env
 * (siglongjmp, signal mask left as in the handler) instead of being
 * handled; for a copy into the program's pages that must survive pages
 * unmapped behind our back. NULL to stop. */
void tnbc_guard_fault_escape(sigjmp_buf *env);

/* Self-measured costs for the model's Tinit (ns). */
double tnbc_guard_measure_mprotect_ns(void);
double tnbc_guard_measure_fault_ns(void);
/* Per page, what the early return adds where it guards many pages: a
 * many-page mprotect's cost over its pages, and the program's first read
 * of a page the guard opened again (a hypervisor that shadows the page
 * tables refills its entry then: 3-6 us a page on the project's test VM,
 * nanoseconds on bare metal). Medians of a few rounds over 64 pages. */
void tnbc_guard_measure_page_costs(double *mprotect_page_ns, double *retouch_ns);

#endif
