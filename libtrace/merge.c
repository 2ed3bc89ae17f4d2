// SPDX-License-Identifier: BSD-3-Clause
/* tnbc-merge: fold per-rank trace databases into one.
 *
 *   tnbc-merge OUT.db DIR|FILE...
 *
 * A directory contributes its rank-*.db files. call_id is renumbered so it
 * stays unique; everything else is copied as is. A file that is not a tnbc
 * trace of this schema version is reported in one line and skipped; the
 * exit status is then 1, but what could be merged is kept. */
#include "config.h"
#include "tracedb.h"

#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char tnbc_schema_sql[];

static int exec(sqlite3 *db, const char *sql, const char *what)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK)
        return 0;
    fprintf(stderr, "tnbc-merge: %s: %s\n", what, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    return -1;
}

static int check_version(sqlite3 *db, const char *file)
{
    sqlite3_stmt *st;
    char want[16];
    int ok = 0;
    /* Only this version: the merged tables are this version's columns. */
    snprintf(want, sizeof want, "%d", TNBC_SCHEMA_VERSION);
    if (sqlite3_prepare_v2(db, "SELECT value FROM src.meta WHERE key = 'schema_version'", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        ok = strcmp((const char *)sqlite3_column_text(st, 0), want) == 0;
    else
        fprintf(stderr, "tnbc-merge: %s: not a tnbc trace database (no meta table)\n", file);
    sqlite3_finalize(st);
    if (!ok)
        fprintf(stderr, "tnbc-merge: %s: unsupported schema version (this merge reads %s), skipped\n",
                file, want);
    return ok ? 0 : -1;
}

static const char merge_sql[] =
    "INSERT OR IGNORE INTO meta SELECT * FROM src.meta;"
    "INSERT OR REPLACE INTO run SELECT * FROM src.run;"
    "INSERT OR REPLACE INTO site SELECT * FROM src.site;"
    "CREATE TEMP TABLE IF NOT EXISTS shift(n INTEGER);"
    "DELETE FROM shift;"
    "INSERT INTO shift SELECT IFNULL(MAX(call_id), 0) FROM main.call;"
    "INSERT INTO call SELECT call_id + (SELECT n FROM shift), rank, site, invocation, op,"
    " comm_size, comm_rank, root, send_type_size, recv_type_size, send_bytes, recv_bytes,"
    " block_bytes, nsub, chunks, entry_tsc, return_tsc, wait_ns FROM src.call;"
    "INSERT INTO submsg SELECT call_id + (SELECT n FROM shift), side, idx, peer, addr_offset,"
    " bytes, guard FROM src.submsg;"
    "INSERT INTO touch SELECT call_id + (SELECT n FROM shift), side, idx, ord, tsc, how,"
    " tail_tsc FROM src.touch;";

/* Rank databases written before the fidelity table existed have none. */
static const char merge_fidelity_sql[] =
    "INSERT INTO fidelity(call_id, faults, steps, observer_ns, span_ns, dropped, refill_ns)"
    " SELECT call_id + (SELECT n FROM shift), faults, steps, observer_ns, span_ns, dropped,"
    " refill_ns FROM src.fidelity;";

/* Replay summaries written before the activity tables existed have none. */
static const char merge_activity_sql[] =
    "INSERT INTO arrival SELECT call_id + (SELECT n FROM shift), piece, idx, peer, bytes, tsc,"
    " by FROM src.arrival;"
    "INSERT INTO fault_wait SELECT call_id + (SELECT n FROM shift), piece, idx, peer, bytes,"
    " start_tsc, end_tsc, how FROM src.fault_wait;"
    "INSERT INTO progress SELECT * FROM src.progress;"
    "INSERT OR REPLACE INTO activity SELECT * FROM src.activity;";

/* Replay summaries written before the early_cost table existed have none. */
static const char merge_early_cost_sql[] = "INSERT INTO early_cost SELECT * FROM src.early_cost;";

static int src_has(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND"
                               " name = ?1", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK)
        yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static int merge_one(sqlite3 *db, const char *file)
{
    char *sql = sqlite3_mprintf("ATTACH %Q AS src", file);
    int rc = exec(db, sql, file);
    sqlite3_free(sql);
    if (rc)
        return -1;
    rc = check_version(db, file);
    if (!rc) {
        exec(db, "BEGIN", "begin");
        rc = exec(db, merge_sql, file);
        if (!rc && src_has(db, "fidelity"))
            rc = exec(db, merge_fidelity_sql, file);
        if (!rc && src_has(db, "activity"))
            rc = exec(db, merge_activity_sql, file);
        if (!rc && src_has(db, "early_cost"))
            rc = exec(db, merge_early_cost_sql, file);
        exec(db, rc ? "ROLLBACK" : "COMMIT", "commit");
    }
    exec(db, "DETACH src", "detach");
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int merge_dir(sqlite3 *db, const char *dir, int *nfiles)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int n = 0, cap = 0, bad = 0;
    if (!d) {
        fprintf(stderr, "tnbc-merge: %s: cannot open directory\n", dir);
        return 1;
    }
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "rank-", 5) != 0 || len < 4 || strcmp(e->d_name + len - 3, ".db"))
            continue;
        if (n == cap) {
            char **more = realloc(names, (size_t)(cap ? 2 * cap : 64) * sizeof *names);
            if (!more)
                break;
            names = more;
            cap = cap ? 2 * cap : 64;
        }
        if (!(names[n] = malloc(strlen(dir) + len + 2)))
            break;
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    if (e) {
        fprintf(stderr, "tnbc-merge: %s: out of memory\n", dir);
        bad = 1;
    }
    closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        bad |= merge_one(db, names[i]) != 0;
        free(names[i]);
    }
    free(names);
    *nfiles += n;
    return bad;
}

/* The arguments checked before anything is written: no option-like
 * words, inputs that exist, an OUT.db that is not a directory nor one of
 * the inputs (it is replaced, so a mistyped command must not eat a rank's
 * database). 0 when usable. */
static int check_args(int argc, char **argv)
{
    struct stat out, st;
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') {
            fprintf(stderr, "tnbc-merge: unknown option %s (usage: tnbc-merge OUT.db DIR|FILE...)\n", argv[i]);
            return -1;
        }
    int have_out = stat(argv[1], &out) == 0;
    if (have_out && S_ISDIR(out.st_mode)) {
        fprintf(stderr, "tnbc-merge: OUT.db %s is a directory (usage: tnbc-merge OUT.db DIR|FILE...)\n", argv[1]);
        return -1;
    }
    for (int i = 2; i < argc; i++) {
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "tnbc-merge: %s: no such file or directory\n", argv[i]);
            return -1;
        }
        if (have_out && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
            fprintf(stderr, "tnbc-merge: OUT.db %s is also an input; nothing written\n", argv[1]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    sqlite3 *db;
    int bad = 0, nfiles = 0;
    struct stat st;

    if (argc < 3 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 3 ? stderr : stdout, "usage: tnbc-merge OUT.db DIR|FILE...\n");
        return argc < 3 ? 2 : 0;
    }
    if (check_args(argc, argv) != 0)
        return 2;
    /* Written beside OUT.db and renamed over it once complete, so that a
     * failed merge leaves what was there. */
    size_t len = strlen(argv[1]) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
        fprintf(stderr, "tnbc-merge: out of memory\n");
        return 1;
    }
    snprintf(tmp, len, "%s.tmp-%ld", argv[1], (long)getpid());
    remove(tmp);
    if (sqlite3_open(tmp, &db) != SQLITE_OK) {
        fprintf(stderr, "tnbc-merge: %s: %s\n", argv[1], sqlite3_errmsg(db));
        sqlite3_close(db);
        free(tmp);
        return 1;
    }
    if (exec(db, tnbc_schema_sql, "schema")) {
        sqlite3_close(db);
        remove(tmp);
        free(tmp);
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "tnbc-merge: %s: no such file or directory\n", argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= merge_dir(db, argv[i], &nfiles);
        } else {
            bad |= merge_one(db, argv[i]) != 0;
            nfiles++;
        }
    }
    sqlite3_close(db);
    if (nfiles == 0) {
        fprintf(stderr, "tnbc-merge: no rank databases found\n");
        bad = 1;
    }
    if (bad || rename(tmp, argv[1]) != 0) {
        if (!bad)
            fprintf(stderr, "tnbc-merge: %s: %s\n", argv[1], strerror(errno));
        remove(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}
