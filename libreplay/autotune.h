/* SPDX-License-Identifier: BSD-3-Clause */
/* Self-tuning in one run (TNBC_AUTO=1, `tnbc auto`): the replay runtime
 * learns each call site's read order in place, decides with the
 * analyzer's own code (analyzer/analyze.c: an_site_build), then runs the
 * site as a profile would. One `struct auto_site` per (call site,
 * operation), owned by the replay's site table row; its lifecycle:
 *
 *     LEARN --K agreed learning calls--> DECIDE --analysis: on---> ON <-+
 *       ^                                   \-----analysis: off--> OFF  |
 *       |                                      ON --window: no gain--^  |
 *       |                                      ON --window: gain--------+
 *       \----- after 64, 128, 256... agreed calls off ----------------/
 *
 *   LEARN   the call runs blocking; afterwards its receive pages are
 *           guarded as the trace guards them, and the first touches
 *           (order, time) recorded in a learning record;
 *   DECIDE  at the site's next call every member sends its records to the
 *           communicator's rank 0, which builds the profile site with the
 *           analyzer's code and broadcasts it as profile text; every
 *           member parses the same text, so all hold the same site;
 *   ON      the site runs as that one-site profile says, and checks
 *           itself in windows of 8 x `every` calls: in each run of
 *           `every` calls one (at a position drawn alike on every member)
 *           runs blocking, and the window's last call is blocking and
 *           learns the read order again (a sample); a look at the end
 *           of each run from the third on turns the site OFF when early
 *           calls are clearly slower, and settles the window (no more
 *           checks in it) when they are clearly faster. At the next call the
 *           members take the slowest one's cycle (entry to next entry)
 *           per call, and a one-sided Mann-Whitney test of "the cycles
 *           after early calls are shorter than after blocking ones"
 *           decides: no significant gain, OFF; a gain, the site stays ON
 *           with the order the sample shows (the analysis run again) and
 *           checks half as often (`every` doubles, up to 64);
 *   OFF     the site's calls run blocking. Turned off by a check, it
 *           remembers the read order it lost with; learning the same
 *           order again, it stays OFF whatever the model says.
 *
 * Every transition happens at a call the members agreed on (the replay's
 * per-call agreement carries each member's site key and phase, and a call
 * whose members differ in either runs blocking), so the phases of one
 * site are the same on every member. Not thread-safe: the replay runs
 * collectives from one thread (replay.c: all_ranks_on). */
#ifndef TNBC_AUTOTUNE_H
#define TNBC_AUTOTUNE_H

#include "collective.h"
#include "profile.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum auto_phase { AUTO_LEARN, AUTO_DECIDE, AUTO_ON, AUTO_OFF };

#define AUTO_LEARN_MAX 16          /* TNBC_AUTO_LEARN's upper bound */

struct auto_site;

/* Per communicator and operation: calls that only ran blocking at sites
 * that are off make the stream quiet (no agreement, no site state: the
 * plain call) for a number of its calls that doubles each time. Counted
 * in calls of the operation on the communicator, which every member makes
 * alike, so every member is quiet at the same calls. A stream whose
 * agreed calls all came from one site goes quiet at its first agreed call
 * off (an agreement costs a round trip: 2-19 ms each on 2 x 2 nodes whose
 * ranks share a CPU, 8 of them per site cost pencil 3.5% of 64 calls),
 * and its quiet calls count as that site's calls off; a stream of several
 * sites waits for QUIET_AFTER off calls in a row (autotune.c), so that
 * the other sites get their agreed calls. */
struct auto_stream {
    int off_run;       /* agreed calls in a row that ran blocking, off */
    int quiet_left;    /* calls still to run quiet */
    int quiet_ran;     /* quiet calls since the last agreed one */
    int backoff;       /* the next quiet stretch; 0: not yet set */
    int key;           /* the site key of its agreed calls, while only one */
    int mixed;         /* agreed calls came from several sites (or members differed) */
    int64_t agreed;    /* agreed calls */
};
/* 1 when this call runs quiet (and counts it). */
int autotune_quiet(struct auto_stream *s);
/* After an agreed call: off = it ran blocking because its site is off
 * (or its members differ); key: its site's autotune_key, AUTO_KEY_DIFFER
 * when the members differ (every member passes that then). Returns the
 * calls of the site this call stands for: 1, and on a one-site stream the
 * quiet calls since the last agreed one too (autotune_off_agreed). */
#define AUTO_KEY_DIFFER (-1)
int autotune_agreed(struct auto_stream *s, int off, int key);
/* Its site learns again from the next call: no quiet stretch now. */
void autotune_wake(struct auto_stream *s);

#define AUTO_CHECK_MIN 2           /* TNBC_AUTO_CHECK's bounds */
#define AUTO_CHECK_MAX 64

/* K learning calls per site; calls moving fewer than min_bytes (as every
 * member computes them, autotune_eligible) are left alone; an ON site's
 * first window runs one call in check_every blocking; `crowd`: this rank's
 * machine (crowding.h), which the model's CPU share of communication
 * takes into account. */
struct crowding;
void autotune_configure(int learn_calls, long min_bytes, int check_every,
                        const struct crowding *crowd);
int autotune_learn_calls(void);
/* Whether a call goes through the auto machinery (site lookup, the
 * agreement): a function of arguments every member passes alike, so that
 * every member answers the same. */
int autotune_eligible(const struct tnbc_args *a);
/* The site key the agreement compares: the same on every member exactly
 * when they call from the same site (id) and operation. */
int autotune_key(const char *site_id, enum tnbc_op op);

/* *slot's state, created on first use (NULL when out of memory). */
struct auto_site *autotune_site(struct auto_site **slot);
enum auto_phase autotune_phase(const struct auto_site *s);
/* A learning or sample call's agreement took ns (entry to its end): the
 * shortest is sent with the records and counted in the model's Tinit. */
void autotune_agreement(struct auto_site *s, uint64_t ns);
/* After a learning call's real collective: count it, and guard its receive
 * pages to record the first touches (entry/ret: program ticks). */
void autotune_learned(struct auto_site *s, const struct tnbc_args *a, int64_t invocation,
                      uint64_t entry, uint64_t ret);
/* Learning guards whose every sub-message is open are lifted (before a new
 * call guards memory). */
void autotune_retire_open(void);
/* Any collective of this rank's program ran from entry to ret (program
 * ticks): the live learning calls that returned before it keep it, as
 * time of their TCURC spent in communication. With the runtime's token. */
void autotune_span(uint64_t entry, uint64_t ret);
/* The DECIDE step; collective over `agree` (a private duplicate of the
 * call's communicator). node_of: per member, the lowest rank of its node
 * (comms.h). Leaves the site ON or OFF. */
void autotune_decide(struct auto_site *s, const char *site_id, enum tnbc_op op, MPI_Comm agree,
                     const int *node_of, int64_t calls);
/* What an ON site's next call is: a function of the site's agreed calls,
 * the same on every member. */
enum auto_call {
    AUTO_CALL_EARLY,   /* goes early (when the agreement says all can) */
    AUTO_CALL_CHECK,   /* runs blocking: the window's baseline */
    AUTO_CALL_SAMPLE,  /* runs blocking and learns the read order */
    AUTO_CALL_SETTLE   /* runs blocking just before a check, counted in
                          neither sample: its cycle carries the early
                          call before it (pages whose protection changed,
                          the members' skew), the check's starts as a
                          blocking run's does */
};
enum auto_call autotune_plan(const struct auto_site *s);
/* The step the agreement compares besides the phase: the same on every
 * member exactly when they are at the same call of the site's phase. */
int autotune_step(const struct auto_site *s);
/* An agreed call of an ON site, before it runs: records the previous
 * call's cycle (now_ns: this call's entry) and, when that completed a
 * window, judges it (collective over agree, as autotune_decide). Returns
 * 1 when the site is still ON; 0 when it turned OFF (the call then runs
 * blocking on every member). The profile a candidate of this call was
 * built from stays valid until the site's next call. */
int autotune_on_begin(struct auto_site *s, uint64_t now_ns, const char *site_id, enum tnbc_op op,
                      MPI_Comm agree, const int *node_of, int64_t calls);
/* After it ran: early = 1 when the members agreed it goes early (the
 * agreed verdict, the same on every member), 0 when it ran blocking for
 * another reason (neither kind's sample). A SAMPLE call's record is taken
 * by autotune_sampled (arguments and program ticks as for
 * autotune_learned). */
void autotune_on_end(struct auto_site *s, enum auto_call plan, int early);
void autotune_sampled(struct auto_site *s, const struct tnbc_args *a, int64_t invocation,
                      uint64_t entry, uint64_t ret);
/* One line for people: the site's calls by kind and its last verdict. */
void autotune_describe(const struct auto_site *s, char *out, size_t len);

/* An agreed call at an OFF site, standing for `calls` of its calls
 * (autotune_agreed): after a number of them that doubles each time, the
 * site learns again (the program may have changed). */
int autotune_off_agreed(struct auto_site *s, int calls);
/* The learned one-site profile (NULL before DECIDE, or when it failed). */
const struct tnbc_profile *autotune_profile(const struct auto_site *s);
const char *autotune_reason(const struct auto_site *s);
/* Lifts its learning guards and frees it. */
void autotune_free(struct auto_site *s);
/* MPI_Finalize: every rank's learned sites, merged by world rank 0 into
 * one profile at path (rank 0 writes; the others only send). Collective
 * over MPI_COMM_WORLD. 0, or -1 with a message printed. */
int autotune_write_profile(struct auto_site *const *sites, int n, const char *path);

#endif
