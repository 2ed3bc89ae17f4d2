// SPDX-License-Identifier: BSD-3-Clause
#include "runinfo.h"
#include "clock.h"
#include "config.h"
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char host[MPI_MAX_PROCESSOR_NAME];
static char cmdline[4096];

static void read_cmdline(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        snprintf(cmdline, sizeof cmdline, "?");
        return;
    }
    cmdline[n] = '\0';
    for (ssize_t i = 0; i < n - 1; i++)
        if (cmdline[i] == '\0')
            cmdline[i] = ' ';
}

/* The copy measurement's 32 MiB, backed by transparent huge pages where the
 * kernel has them. What costs in that measurement is not the copies (about
 * 3 ms) but the first touch of 8192 small pages: 115-160 ms per rank at
 * every start of a tnbc auto run on a VM that shadows the page tables,
 * most of auto's fixed cost on a short run (2026-11-28). On 2 MiB pages
 * the same measurement took 8-20 ms (73 once, where the kernel compacted
 * memory first) and gave the same rate within its spread (16 MiB copies,
 * 5 runs each: 21-27 GB/s, small pages 18-31). Where the kernel has no
 * huge pages the advice is ignored and the small pages are touched. */
struct copy_arena {
    void *map;
    size_t len;
};

static char *copy_arena_map(struct copy_arena *arena, size_t bytes)
{
    const size_t huge = 2u << 20;
    arena->len = bytes + huge;
    arena->map = mmap(NULL, arena->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena->map == MAP_FAILED)
        return NULL;
    char *aligned = (char *)(((uintptr_t)arena->map + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE
    (void)madvise(aligned, bytes, MADV_HUGEPAGE);   /* advice: without it, small pages */
#endif
    return aligned;
}

static void copy_arena_unmap(struct copy_arena *arena)
{
    if (munmap(arena->map, arena->len) != 0)
        tnbc_warn("runinfo: munmap of the copy measurement's memory failed: %s", strerror(errno));
}

/* Memory copy bandwidth in bytes/s, on a buffer larger than the caches the
 * copy of a send buffer would typically see, as the early return copies:
 * between pages used before. The first copy is left out of the timing:
 * under a hypervisor that shadows the page tables it ran at 0.2-1 GB/s
 * against 12-24 GB/s for every later one (the pages' first accesses after
 * the memsets, not the copy; 2026-11-28, this project's test VM), and
 * Tinit's copy term came out 10-25x too long. The fastest of the timed
 * copies: one whose CPU another rank took is no copy rate. */
static double measure_copy_bw(void)
{
    const size_t n = 16u << 20;
    struct copy_arena arena;
    char *a = copy_arena_map(&arena, 2 * n), *b = a + n;
    double bw = 0;
    if (a) {
        memset(a, 1, n);
        memset(b, 2, n);
        memcpy(b, a, n);
        for (int i = 0; i < 5; i++) {
            uint64_t t0 = tnbc_ns_now();
            memcpy(b, a, n);
            a[i] = b[n - 1 - (size_t)i];    /* keep the copies observable */
            uint64_t t1 = tnbc_ns_now();
            double one = t1 > t0 ? (double)n * 1e9 / (double)(t1 - t0) : 0;
            bw = one > bw ? one : bw;
        }
        copy_arena_unmap(&arena);
    }
    return bw;
}

void tnbc_runinfo_collect(struct tnbc_run_info *r, const char *mode)
{
    int len = 0;
    struct timespec now;

    memset(r, 0, sizeof *r);
    PMPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &r->world_size);
    PMPI_Get_processor_name(host, &len);
    read_cmdline();
    clock_gettime(CLOCK_REALTIME, &now);
    r->pid = (int)getpid();
    r->host = host;
    r->command_line = cmdline;
    r->mode = mode;
    r->clock_source = tnbc_clock_source();
    r->start_unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    r->start_tsc = (int64_t)tnbc_ticks();
    r->tsc_hz = tnbc_ticks_hz();
    r->page_size = (int)tnbc_page_size();
    /* The machine's costs (about 30 ms: 16 MiB copies, page faults) are
     * measured once per process: tnbc auto and the replay's summary both
     * collect at start. */
    static struct {
        int have;
        double copy_bw, mprotect_ns, fault_ns, mprotect_page_ns, retouch_ns;
    } machine;
    if (!machine.have) {
        machine.copy_bw = measure_copy_bw();
        machine.mprotect_ns = tnbc_guard_measure_mprotect_ns();
        machine.fault_ns = tnbc_guard_measure_fault_ns();
        tnbc_guard_measure_page_costs(&machine.mprotect_page_ns, &machine.retouch_ns);
        machine.have = 1;
    }
    r->copy_bw = machine.copy_bw;
    r->mprotect_ns = machine.mprotect_ns;
    r->fault_ns = machine.fault_ns;
    r->mprotect_page_ns = machine.mprotect_page_ns;
    r->retouch_ns = machine.retouch_ns;
}

static int make_dir(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return (mkdir(path, 0777) == 0 || errno == EEXIST) ? 0 : -1;
}

struct tnbc_db *tnbc_rank_db_open(const char *dir, const struct tnbc_run_info *r)
{
    char path[1200];
    struct tnbc_db *db;

    if (make_dir(dir) != 0) {
        tnbc_warn("cannot create the trace directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    snprintf(path, sizeof path, "%s/rank-%06d.db", dir, r->rank);
    /* A rerun into the same directory starts afresh. */
    for (const char *const *ext = (const char *const[]){ "", "-wal", "-shm", NULL }; *ext; ext++) {
        char old[1300];
        snprintf(old, sizeof old, "%s%s", path, *ext);
        unlink(old);
    }
    db = tnbc_db_open(path);
    if (!db)
        return NULL;
    tnbc_db_begin(db);
    char v[32];
    snprintf(v, sizeof v, "%d", TNBC_SCHEMA_VERSION);
    tnbc_db_meta(db, "schema_version", v);
    tnbc_db_meta(db, "tnbc_version", "0.1");
    tnbc_db_run(db, r);
    tnbc_db_commit(db);
    return db;
}
