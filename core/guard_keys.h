/* SPDX-License-Identifier: BSD-3-Clause */
/* Closing a trace guard's pages with memory protection keys instead of
 * mprotect (internal to core/guard.c).
 *
 * Why: a traced call of an ordinary program closed its receive pages with
 * one mprotect and opened them with one per block at the first touch, and
 * lifted them with one more; each split or merged the process's mappings
 * (4-9 us here), so a traced 16 KiB call cost 1.9-2.5x a plain one. A page
 * whose key the calling thread's rights deny faults as a PROT_NONE page
 * does (SEGV_PKUERR); changing the rights is one instruction (WRPKRU), and
 * in the fault handler an edit of the interrupted thread's saved rights.
 *
 * A key is a property of pages, rights are a property of a thread. So:
 *  - Every arm gives each unit of the guard its own key with one
 *    pkey_mprotect per unit (a "unit" is a run of pages that hold the same
 *    sub-messages: a block's interior pages, or a page two blocks share).
 *    The kernel keeps a mapping whose protection and key do not change
 *    as it is (0.5 us a unit, measured), and a mapping the program freed
 *    and mapped again since the last call gets its keys back: keys are
 *    never assumed to have survived.
 *  - Only the arming thread's rights deny the keys: another thread would
 *    read without a fault, and its first touches would go unseen. So keys
 *    are used only while the program has started no thread of its own
 *    (threads MPI starts inside MPI_Init are MPI's); from its first, the
 *    trace closes with mprotect, which every thread sees. A thread whose
 *    rights still deny a key that no armed guard holds (a signal handler,
 *    which runs with the kernel's default rights) is let through by the
 *    fault handler (tnbc_gkeys_allow_in_frame).
 *  - Keys stay on the pages after the guard is lifted (the next call on the
 *    same buffer needs no change of the mappings); a range whose keys a new
 *    guard needs is given key 0 back first.
 *
 * Only for guards that close with PROT_NONE, do not interleave and land
 * nothing (the trace's receive side): units must be few (at most the
 * keys the kernel gives, 15) and opening a unit must open nothing another
 * sub-message still needs. What the fault handlers call is
 * async-signal-safe: tnbc_gkeys_handler_enter, _selftest_fault, _ours,
 * _any, _allow_in_frame and _set; the rest takes a mutex. */
#ifndef TNBC_CORE_GUARD_KEYS_H
#define TNBC_CORE_GUARD_KEYS_H

#include "guard.h"

#include <signal.h>
#include <stdint.h>

/* Takes up to TNBC_TRACE_KEYS keys (default 8, at most 15; 0: none) from
 * the kernel, allowed in the calling thread and so in every thread it
 * starts later: call it before any thread exists (the trace library's
 * constructor). */
void tnbc_gkeys_reserve(void);
/* Whether any key was taken. */
int tnbc_gkeys_any(void);
/* Around PMPI_Init (inside: 1 before it, 0 after): threads started then
 * are MPI's. */
void tnbc_gkeys_mpi_init(int inside);
/* The thread-creation wrapper, in the creating thread: a thread of the
 * program's ends the use of keys (kept ranges lose theirs at once, live
 * ones at their lift: the new thread inherits its creator's rights). */
void tnbc_gkeys_thread_created(void);
/* How this process's trace guards closed pages, in words (meta row). */
const char *tnbc_gkeys_summary(void);

/* First thing in our signal handlers: the kernel runs a handler with its
 * default rights, which deny every key but 0, and memory the program
 * freed from a kept range may hold the handler's own data by now. */
void tnbc_gkeys_handler_enter(void);

/* 1 when keys work here: the CPU and kernel support them and a fault's
 * saved rights can be edited (a self-test, run once). Not under
 * ThreadSanitizer (it delivers signals with its own frames), or with
 * TNBC_TRACE_KEYS=0. Needs the fault handler installed. */
int tnbc_gkeys_usable(void);

/* Gives g's pages their keys (g->lo, hi, order and interleaved set; the
 * range registered). 1: g->page_key and g->key_bits set, the calling
 * thread's rights still allow them; 0: not keyed (too many units, no key
 * free, a system call refused), close with mprotect. */
int tnbc_gkeys_arm(struct tnbc_guard *g);
/* Forgets g's keys (its pages keep them; see above). */
void tnbc_gkeys_disarm(struct tnbc_guard *g);

/* Opens (allows) or closes (denies) the keys of g's pages in [a, b): in
 * the saved rights of the signal frame `uc`, or the calling thread's when
 * uc is NULL. A unit partly in [a, b) changes whole (units are whole
 * pages of one set of sub-messages, so guard.c never asks for part of
 * one). Where a frame has no saved rights to edit, an opening gives the
 * pages key 0 back instead. 0, or -1 when nothing could be done. */
int tnbc_gkeys_set(const struct tnbc_guard *g, uintptr_t a, uintptr_t b, int open, void *uc);

/* Whether `pkey` is one of the trace's keys; letting a fault on one
 * through by allowing it in the frame's saved rights (0, or -1 when the
 * frame has none). */
int tnbc_gkeys_ours(int pkey);
int tnbc_gkeys_allow_in_frame(int pkey, void *uc);

/* The self-test's fault (tnbc_gkeys_usable): 1 when this fault was it and
 * is dealt with. Called first thing by the SIGSEGV handler. */
int tnbc_gkeys_selftest_fault(const siginfo_t *si, void *uc);

/* Gives every kept range key 0 back (the trace's end). Keys left on the
 * pages of a program that runs on would deny them to the system calls of
 * its signal handlers, which run with the kernel's default rights. */
void tnbc_gkeys_forget_all(void);
/* Before the program frees, unmaps, moves or reprotects [addr, addr+len)
 * (the wrappers): kept ranges there are given key 0 (unless `unmapping`)
 * and dropped; a live one is dropped at its lift. */
void tnbc_gkeys_released(const void *addr, size_t len, int unmapping);
/* How many ranges are kept or live (a quick test for the wrappers). */
int tnbc_gkeys_kept(void);
/* Counts a collective call; kept ranges not armed again within the last
 * 64 are given key 0 back (past the traced calls). */
void tnbc_gkeys_collective(void);

#endif
