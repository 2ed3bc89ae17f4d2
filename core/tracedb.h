/* SPDX-License-Identifier: BSD-3-Clause */
/* Writer of the per-rank trace database (schema: core/tracedb_schema.sql,
 * docs/schema.md). Used by libtrace and by libreplay's summaries. Not
 * thread-safe and not async-signal-safe: call from the application thread. */
#ifndef TNBC_TRACEDB_H
#define TNBC_TRACEDB_H

#include <stdint.h>

#define TNBC_SCHEMA_VERSION 5

struct tnbc_db;

struct tnbc_run_info {
    int rank, world_size, pid;
    const char *host, *command_line, *mode, *clock_source;
    int64_t start_unix_ns, start_tsc;
    double tsc_hz, copy_bw, mprotect_ns, fault_ns;
    double mprotect_page_ns, retouch_ns; /* schema 4: per page (guard.h) */
    int page_size;
    int machine_ranks, machine_cpus; /* crowding.h; 0: not counted */
};

struct tnbc_call_row {
    int rank, invocation, comm_size, comm_rank, root;
    const char *site, *op;
    int send_type_size, recv_type_size, nsub, chunks;
    int64_t send_bytes, recv_bytes, block_bytes;
    int64_t entry_tsc, return_tsc, wait_ns;
};

struct tnbc_site_row {
    int rank;
    const char *site, *module, *symbol, *op;
    const char *shape;        /* communicator shape; NULL: "world" */
    uint64_t offset;
    int64_t calls, traced, total_ns, bytes;
    const char *fallback;   /* replay: "reason:count ..." of blocking calls; NULL: '' */
};

/* Opens (creating) `path`, creates the schema. NULL with a one-line warning
 * on failure. */
struct tnbc_db *tnbc_db_open(const char *path);
void tnbc_db_close(struct tnbc_db *db);
int tnbc_db_begin(struct tnbc_db *db);
int tnbc_db_commit(struct tnbc_db *db);
int tnbc_db_meta(struct tnbc_db *db, const char *key, const char *value);
int tnbc_db_run(struct tnbc_db *db, const struct tnbc_run_info *r);
int tnbc_db_run_finished(struct tnbc_db *db, int rank);
/* Returns the new call_id, or -1. */
int64_t tnbc_db_call(struct tnbc_db *db, const struct tnbc_call_row *c);
int tnbc_db_call_wait(struct tnbc_db *db, int64_t call_id, int64_t wait_ns);
int tnbc_db_submsg(struct tnbc_db *db, int64_t call_id, const char *side, int idx,
                   int peer, int64_t offset, int64_t bytes, const char *guard);
/* ord < 0 stores NULL (a release). */
int tnbc_db_touch(struct tnbc_db *db, int64_t call_id, const char *side, int idx,
                  int ord, int64_t tsc, const char *how);
/* The first touch of the sub-message's tail page (GUARD_TAIL), on its row. */
int tnbc_db_touch_tail(struct tnbc_db *db, int64_t call_id, const char *side, int idx, int64_t tsc);
int tnbc_db_site(struct tnbc_db *db, const struct tnbc_site_row *s);

/* What a traced call's trace could not measure cleanly (table fidelity). */
struct tnbc_fidelity_row {
    int64_t call_id, faults, steps, observer_ns, span_ns, dropped;
    int64_t refill_ns;  /* of observer_ns: the handler's measured page refills */
};
int tnbc_db_fidelity(struct tnbc_db *db, const struct tnbc_fidelity_row *f);

/* The open SQLite handle, for writers of tables of their own (libreplay's
 * activity.c). */
struct sqlite3 *tnbc_db_handle(struct tnbc_db *db);

#endif
