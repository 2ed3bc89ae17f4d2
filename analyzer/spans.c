// SPDX-License-Identifier: BSD-3-Clause
/* The time a rank spent inside recorded collectives between two instants
 * of its program time: what of a call's CURC is communication.
 *
 * A call's CURC (return to first need) hides its communication only with
 * the code's own work. Another collective in between moves its own bytes
 * over the same links: u10's in-place allreduce of 320 KB (2 x 1 at 1
 * Gbit/s) was followed by an allgather before its buffer was read, the
 * trace's TCURC of 3.2 ms held that allgather, 1.3 ms per call was
 * predicted saved, and the tuned run was 1.6 ms per call slower than
 * plain: the two calls' bytes shared the link. The trace records the first
 * calls of every site (K per site), those of one loop in the same
 * iterations, so the calls inside a traced call's CURC are mostly there.
 *
 * Loaded once per trace: every call row as (rank, entry, return), sorted
 * by rank and entry; a query is a binary search and a short walk. tnbc
 * auto adds the spans its learning calls saw one by one, then sorts (which
 * drops repeats). */
#include "analyzer.h"

#include <sqlite3.h>
#include <stdlib.h>

struct an_span {
    int rank;
    int64_t entry, ret;
};

static int span_cmp(const struct an_span *a, int rank, int64_t entry)
{
    if (a->rank != rank)
        return a->rank < rank ? -1 : 1;
    return a->entry < entry ? -1 : a->entry > entry;
}

/* Room for one more span: the array grows at powers of two from 16. */
static int spans_grow(struct an_trace *t)
{
    int n = t->nspans;
    if (n != 0 && (n < 16 || (n & (n - 1)) != 0))
        return 0;
    size_t cap = n ? 2 * (size_t)n : 16;
    struct an_span *v = realloc(t->spans, cap * sizeof *v);
    if (!v)
        return -1;
    t->spans = v;
    return 0;
}

int an_spans_add(struct an_trace *t, int rank, int64_t entry, int64_t ret)
{
    if (spans_grow(t) < 0)
        return -1;
    t->spans[t->nspans++] = (struct an_span){rank, entry, ret};
    return 0;
}

static int span_order(const void *x, const void *y)
{
    const struct an_span *a = x, *b = y;
    return span_cmp(a, b->rank, b->entry);
}

/* Sorted, and each span once: tnbc auto's learning calls that are live
 * at the same time each keep the collectives after them, so one call can
 * come from several of them (and counted twice it would take its time
 * out of TCURC twice). */
void an_spans_sort(struct an_trace *t)
{
    if (t->nspans < 2)
        return;
    qsort(t->spans, (size_t)t->nspans, sizeof *t->spans, span_order);
    int kept = 1;
    for (int i = 1; i < t->nspans; i++) {
        const struct an_span *a = &t->spans[kept - 1], *b = &t->spans[i];
        if (a->rank != b->rank || a->entry != b->entry || a->ret != b->ret)
            t->spans[kept++] = *b;
    }
    t->nspans = kept;
}

int an_spans_load(struct an_trace *t)
{
    sqlite3_stmt *st;
    int rc;
    t->spans = NULL;
    t->nspans = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT rank, entry_tsc, return_tsc FROM call "
                                  "ORDER BY rank, entry_tsc", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (an_spans_add(t, sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1),
                         sqlite3_column_int64(st, 2)) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        an_spans_free(t);
        return -1;
    }
    return 0;
}

void an_spans_free(struct an_trace *t)
{
    free(t->spans);
    t->spans = NULL;
    t->nspans = 0;
}

/* The first span at or after (rank, from). */
static int first_at(const struct an_trace *t, int rank, int64_t from)
{
    int lo = 0, hi = t->nspans;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (span_cmp(&t->spans[mid], rank, from) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t an_spans_next_entry(const struct an_trace *t, int rank, int64_t from)
{
    int i = first_at(t, rank, from);
    return i < t->nspans && t->spans[i].rank == rank ? t->spans[i].entry : -1;
}

int64_t an_spans_within(const struct an_trace *t, int rank, int64_t from, int64_t to)
{
    int64_t sum = 0;
    if (to <= from)
        return 0;
    for (int i = first_at(t, rank, from);
         i < t->nspans && t->spans[i].rank == rank && t->spans[i].entry < to; i++)
        if (t->spans[i].ret <= to && t->spans[i].ret > t->spans[i].entry)
            sum += t->spans[i].ret - t->spans[i].entry;
    return sum;
}
