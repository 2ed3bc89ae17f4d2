// SPDX-License-Identifier: BSD-3-Clause
#include "tracedb.h"
#include "config.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* The schema, embedded from core/tracedb_schema.sql at build time. */
extern const char tnbc_schema_sql[];

enum stmt_id { S_META, S_RUN, S_FINISHED, S_CALL, S_WAIT, S_SUB, S_TOUCH, S_TAIL, S_SITE, S_FIDELITY, S_COUNT };

static const char *const stmt_sql[S_COUNT] = {
    [S_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
    [S_RUN] = "INSERT OR REPLACE INTO run(rank, world_size, host, pid, command_line,"
              " start_unix_ns, start_tsc, tsc_hz, clock_source, mode, page_size, copy_bw,"
              " mprotect_ns, fault_ns, finished, machine_ranks, machine_cpus, mprotect_page_ns,"
              " retouch_ns)"
              " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,0,?15,?16,?17,?18)",
    [S_FINISHED] = "UPDATE run SET finished = 1 WHERE rank = ?1",
    [S_CALL] = "INSERT INTO call(rank, site, invocation, op, comm_size, comm_rank, root,"
               " send_type_size, recv_type_size, send_bytes, recv_bytes, block_bytes, nsub,"
               " chunks, entry_tsc, return_tsc, wait_ns)"
               " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)",
    [S_WAIT] = "UPDATE call SET wait_ns = ?2 WHERE call_id = ?1",
    [S_SUB] = "INSERT OR REPLACE INTO submsg(call_id, side, idx, peer, addr_offset, bytes, guard)"
              " VALUES (?1,?2,?3,?4,?5,?6,?7)",
    [S_TOUCH] = "INSERT OR IGNORE INTO touch(call_id, side, idx, ord, tsc, how)"
                " VALUES (?1,?2,?3,?4,?5,?6)",
    [S_TAIL] = "UPDATE touch SET tail_tsc = ?4 WHERE call_id = ?1 AND side = ?2 AND idx = ?3",
    [S_SITE] = "INSERT OR REPLACE INTO site(rank, site, module, offset, symbol, op, calls,"
               " traced, total_ns, bytes, comm_shape, fallback)"
               " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    [S_FIDELITY] = "INSERT OR REPLACE INTO fidelity(call_id, faults, steps, observer_ns, span_ns,"
                   " dropped, refill_ns) VALUES (?1,?2,?3,?4,?5,?6,?7)",
};

struct tnbc_db {
    sqlite3 *h;
    sqlite3_stmt *st[S_COUNT];
    char path[512];
    int failed;          /* warned once already */
};

static int fail(struct tnbc_db *db, const char *what)
{
    if (!db->failed) {
        db->failed = 1;
        tnbc_warn("trace database %s: %s: %s", db->path, what, sqlite3_errmsg(db->h));
    }
    return -1;
}

struct tnbc_db *tnbc_db_open(const char *path)
{
    struct tnbc_db *db = calloc(1, sizeof *db);
    char *err = NULL;

    if (!db)
        return NULL;
    snprintf(db->path, sizeof db->path, "%s", path);
    if (sqlite3_open(path, &db->h) != SQLITE_OK) {
        fail(db, "cannot open");
        goto bad;
    }
    sqlite3_busy_timeout(db->h, 5000);
    if (sqlite3_exec(db->h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;", NULL, NULL, &err) != SQLITE_OK ||
        sqlite3_exec(db->h, tnbc_schema_sql, NULL, NULL, &err) != SQLITE_OK) {
        tnbc_warn("trace database %s: cannot create the schema: %s", path, err ? err : "?");
        sqlite3_free(err);
        goto bad;
    }
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v2(db->h, stmt_sql[i], -1, &db->st[i], NULL) != SQLITE_OK) {
            fail(db, "cannot prepare a statement");
            goto bad;
        }
    return db;
bad:
    tnbc_db_close(db);
    return NULL;
}

void tnbc_db_close(struct tnbc_db *db)
{
    if (!db)
        return;
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(db->st[i]);
    sqlite3_close(db->h);
    free(db);
}

static int exec(struct tnbc_db *db, const char *sql)
{
    return sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(db, sql);
}

int tnbc_db_begin(struct tnbc_db *db) { return exec(db, "BEGIN"); }
int tnbc_db_commit(struct tnbc_db *db) { return exec(db, "COMMIT"); }

/* Runs statement `id` after binding; resets it either way. */
static int step(struct tnbc_db *db, enum stmt_id id)
{
    int rc = sqlite3_step(db->st[id]);
    sqlite3_reset(db->st[id]);
    sqlite3_clear_bindings(db->st[id]);
    return rc == SQLITE_DONE ? 0 : fail(db, stmt_sql[id]);
}

#define TXT(st, i, v) sqlite3_bind_text(st, i, (v) ? (v) : "", -1, SQLITE_TRANSIENT)

int tnbc_db_meta(struct tnbc_db *db, const char *key, const char *value)
{
    sqlite3_stmt *s = db->st[S_META];
    TXT(s, 1, key);
    TXT(s, 2, value);
    return step(db, S_META);
}

int tnbc_db_run(struct tnbc_db *db, const struct tnbc_run_info *r)
{
    sqlite3_stmt *s = db->st[S_RUN];
    sqlite3_bind_int(s, 1, r->rank);
    sqlite3_bind_int(s, 2, r->world_size);
    TXT(s, 3, r->host);
    sqlite3_bind_int(s, 4, r->pid);
    TXT(s, 5, r->command_line);
    sqlite3_bind_int64(s, 6, r->start_unix_ns);
    sqlite3_bind_int64(s, 7, r->start_tsc);
    sqlite3_bind_double(s, 8, r->tsc_hz);
    TXT(s, 9, r->clock_source);
    TXT(s, 10, r->mode);
    sqlite3_bind_int(s, 11, r->page_size);
    sqlite3_bind_double(s, 12, r->copy_bw);
    sqlite3_bind_double(s, 13, r->mprotect_ns);
    sqlite3_bind_double(s, 14, r->fault_ns);
    sqlite3_bind_int(s, 15, r->machine_ranks);
    sqlite3_bind_int(s, 16, r->machine_cpus);
    sqlite3_bind_double(s, 17, r->mprotect_page_ns);
    sqlite3_bind_double(s, 18, r->retouch_ns);
    return step(db, S_RUN);
}

int tnbc_db_run_finished(struct tnbc_db *db, int rank)
{
    sqlite3_bind_int(db->st[S_FINISHED], 1, rank);
    return step(db, S_FINISHED);
}

int64_t tnbc_db_call(struct tnbc_db *db, const struct tnbc_call_row *c)
{
    sqlite3_stmt *s = db->st[S_CALL];
    sqlite3_bind_int(s, 1, c->rank);
    TXT(s, 2, c->site);
    sqlite3_bind_int(s, 3, c->invocation);
    TXT(s, 4, c->op);
    sqlite3_bind_int(s, 5, c->comm_size);
    sqlite3_bind_int(s, 6, c->comm_rank);
    sqlite3_bind_int(s, 7, c->root);
    sqlite3_bind_int(s, 8, c->send_type_size);
    sqlite3_bind_int(s, 9, c->recv_type_size);
    sqlite3_bind_int64(s, 10, c->send_bytes);
    sqlite3_bind_int64(s, 11, c->recv_bytes);
    sqlite3_bind_int64(s, 12, c->block_bytes);
    sqlite3_bind_int(s, 13, c->nsub);
    sqlite3_bind_int(s, 14, c->chunks);
    sqlite3_bind_int64(s, 15, c->entry_tsc);
    sqlite3_bind_int64(s, 16, c->return_tsc);
    sqlite3_bind_int64(s, 17, c->wait_ns);
    if (step(db, S_CALL) != 0)
        return -1;
    return sqlite3_last_insert_rowid(db->h);
}

int tnbc_db_call_wait(struct tnbc_db *db, int64_t call_id, int64_t wait_ns)
{
    sqlite3_bind_int64(db->st[S_WAIT], 1, call_id);
    sqlite3_bind_int64(db->st[S_WAIT], 2, wait_ns);
    return step(db, S_WAIT);
}

int tnbc_db_submsg(struct tnbc_db *db, int64_t call_id, const char *side, int idx,
                   int peer, int64_t offset, int64_t bytes, const char *guard)
{
    sqlite3_stmt *s = db->st[S_SUB];
    sqlite3_bind_int64(s, 1, call_id);
    TXT(s, 2, side);
    sqlite3_bind_int(s, 3, idx);
    sqlite3_bind_int(s, 4, peer);
    sqlite3_bind_int64(s, 5, offset);
    sqlite3_bind_int64(s, 6, bytes);
    TXT(s, 7, guard);
    return step(db, S_SUB);
}

int tnbc_db_touch(struct tnbc_db *db, int64_t call_id, const char *side, int idx,
                  int ord, int64_t tsc, const char *how)
{
    sqlite3_stmt *s = db->st[S_TOUCH];
    sqlite3_bind_int64(s, 1, call_id);
    TXT(s, 2, side);
    sqlite3_bind_int(s, 3, idx);
    if (ord >= 0)
        sqlite3_bind_int(s, 4, ord);
    else
        sqlite3_bind_null(s, 4);
    sqlite3_bind_int64(s, 5, tsc);
    TXT(s, 6, how);
    return step(db, S_TOUCH);
}

int tnbc_db_touch_tail(struct tnbc_db *db, int64_t call_id, const char *side, int idx, int64_t tsc)
{
    sqlite3_stmt *s = db->st[S_TAIL];
    sqlite3_bind_int64(s, 1, call_id);
    TXT(s, 2, side);
    sqlite3_bind_int(s, 3, idx);
    sqlite3_bind_int64(s, 4, tsc);
    return step(db, S_TAIL);
}

int tnbc_db_site(struct tnbc_db *db, const struct tnbc_site_row *r)
{
    sqlite3_stmt *s = db->st[S_SITE];
    sqlite3_bind_int(s, 1, r->rank);
    TXT(s, 2, r->site);
    TXT(s, 3, r->module);
    sqlite3_bind_int64(s, 4, (int64_t)r->offset);
    TXT(s, 5, r->symbol);
    TXT(s, 6, r->op);
    sqlite3_bind_int64(s, 7, r->calls);
    sqlite3_bind_int64(s, 8, r->traced);
    sqlite3_bind_int64(s, 9, r->total_ns);
    sqlite3_bind_int64(s, 10, r->bytes);
    TXT(s, 11, r->shape ? r->shape : "world");
    TXT(s, 12, r->fallback ? r->fallback : "");
    return step(db, S_SITE);
}

int tnbc_db_fidelity(struct tnbc_db *db, const struct tnbc_fidelity_row *f)
{
    sqlite3_stmt *s = db->st[S_FIDELITY];
    sqlite3_bind_int64(s, 1, f->call_id);
    sqlite3_bind_int64(s, 2, f->faults);
    sqlite3_bind_int64(s, 3, f->steps);
    sqlite3_bind_int64(s, 4, f->observer_ns);
    sqlite3_bind_int64(s, 5, f->span_ns);
    sqlite3_bind_int64(s, 6, f->dropped);
    sqlite3_bind_int64(s, 7, f->refill_ns);
    return step(db, S_FIDELITY);
}

struct sqlite3 *tnbc_db_handle(struct tnbc_db *db)
{
    return db->h;
}
