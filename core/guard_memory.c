// SPDX-License-Identifier: BSD-3-Clause
/*
 * Which memory may be guarded (tnbc_guard_memory_ok, guard.h): the
 * process's mappings as read from /proc/self/maps, and the threads'
 * stacks as the thread-creation wrapper registers them. Apart from the
 * guard itself (guard.c) because it answers a different question: not
 * how to watch pages, but whose pages they are and whether mprotect can
 * close 4 KiB of them.
 */
#include "entry_patch.h"
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char not_private_writable[] =
    "buffer not in private writable memory (a stack or a shared mapping)";
/* The guard gives back read and write only: an executable buffer (a JIT's
 * code heap) would lose its execute right. */
static const char executable[] =
    "buffer in executable memory (the guard would take its execute right away)";
static const char huge_pages[] =
    "buffer in huge pages (MAP_HUGETLB or a hugetlbfs file): mprotect cannot close part of a huge page";

/* The process's mappings as last read from /proc/self/maps, each marked
 * guardable (private, anonymous, not the main stack) or not. Read again
 * when a range is not found (malloc's own mmaps and brk bypass the
 * wrappers), and when the program changed, through an interposed call,
 * mappings in the range asked about.
 *
 * Why per range: a change can only alter what the addresses it names are;
 * the table stays true everywhere else. Programs that mmap and munmap a
 * scratch buffer every iteration (or malloc and free one large enough
 * for glibc to mmap it) made every collective read the table again, 0.5 ms
 * per call with MPI's 300 mappings, while the call's own buffers had not
 * moved.
 *
 * Invariant: while valid and read_gen == gen, every change made since the
 * table was read lies in one of dirty[0..ndirty). A change that cannot be
 * recorded (list full, or the lock busy: the wrappers never wait for it)
 * bumps gen instead, which invalidates the whole table. */
/* hugetlbfs mount points, from /proc/self/mounts (read once, with the
 * first map): a private mapping of a file there (libhugetlbfs's heap, as
 * Cray's craype-hugepages modules set it up) is huge pages the map does
 * not label as such. */
#define MAX_HUGE_MOUNTS 8
struct huge_mounts {
    char dir[MAX_HUGE_MOUNTS][256];
    int n;
};

struct map_ent {
    uintptr_t lo, hi;
    const char *unfit;       /* NULL: guardable; else why not */
    int closed;              /* unfit only for want of write access: a
                                guard's closed pages look so (guard.c) */
};
#define MAPS_DIRTY_MAX 32
static struct {
    pthread_mutex_t lock;
    struct map_ent *ent;
    int n, cap;
    atomic_uint gen;         /* bumped for a change not in dirty[] */
    unsigned read_gen;
    int valid;
    struct { uintptr_t lo, hi; } dirty[MAPS_DIRTY_MAX];
    int ndirty;
    atomic_uint reads;       /* times the kernel was asked: whole or one range */
    atomic_uint whole_reads; /* times the whole table was read */
    int query;               /* 1: ask the kernel per range (map_query) */
    struct huge_mounts mounts;
    int mounts_read;
} maps = { .lock = PTHREAD_MUTEX_INITIALIZER, .query = 1 };

void tnbc_guard_maps_changed(const void *addr, size_t len)
{
    uintptr_t lo = tnbc_page_down((uintptr_t)addr), hi = tnbc_page_up((uintptr_t)addr + len);
    if (pthread_mutex_trylock(&maps.lock) != 0) {
        atomic_fetch_add(&maps.gen, 1);
        return;
    }
    if (maps.ndirty < MAPS_DIRTY_MAX && lo < hi) {
        maps.dirty[maps.ndirty].lo = lo;
        maps.dirty[maps.ndirty].hi = hi;
        maps.ndirty++;
    } else {
        atomic_fetch_add(&maps.gen, 1);
    }
    pthread_mutex_unlock(&maps.lock);
}

unsigned tnbc_guard_maps_reads(void) { return atomic_load(&maps.reads); }

unsigned tnbc_guard_maps_whole_reads(void) { return atomic_load(&maps.whole_reads); }

void tnbc_guard_maps_use_query(int on)
{
    pthread_mutex_lock(&maps.lock);
    maps.query = on;
    pthread_mutex_unlock(&maps.lock);
}

int tnbc_guard_maps_query(void)
{
    pthread_mutex_lock(&maps.lock);
    int on = maps.query;
    pthread_mutex_unlock(&maps.lock);
    return on;
}

/* Whether a recorded change touches [lo, hi). Caller holds maps.lock. */
static int maps_dirty(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < maps.ndirty; i++)
        if (lo < maps.dirty[i].hi && maps.dirty[i].lo < hi)
            return 1;
    return 0;
}

/* Hex digits at *s, advancing it; -1 when there are none. */
static int scan_hex(const char **s, unsigned long *v)
{
    const char *p = *s;
    unsigned long x = 0;
    for (;; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else
            break;
        x = x << 4 | d;
    }
    if (p == *s)
        return -1;
    *s = p;
    *v = x;
    return 0;
}

/* Past one space-separated field and the spaces after it. */
static const char *next_field(const char *s)
{
    while (*s && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    return s;
}

/* The mount points of type hugetlbfs in a /proc/self/mounts text
 * ("source dir type options 0 0" per line). A directory whose name the
 * kernel escaped (a space: \040) or that does not fit is left out. */
static void parse_huge_mounts(const char *text, struct huge_mounts *m)
{
    m->n = 0;
    for (const char *line = text; line && *line && m->n < MAX_HUGE_MOUNTS;) {
        const char *nl = strchr(line, '\n');
        const char *dir = next_field(line), *type = next_field(dir);
        size_t dlen = (size_t)(strchr(dir, ' ') ? strchr(dir, ' ') - dir : 0);
        if ((!nl || type < nl) && strncmp(type, "hugetlbfs ", 10) == 0 && dlen > 0 &&
            dlen < sizeof m->dir[0] && !memchr(dir, '\\', dlen)) {
            memcpy(m->dir[m->n], dir, dlen);
            m->dir[m->n][dlen] = '\0';
            m->n++;
        }
        line = nl ? nl + 1 : NULL;
    }
}

/* A /proc file, whole and NUL-terminated (malloc'd), read with the raw
 * system call: the read wrapper (wrap_libc.c) would look for guards. */
static char *read_proc_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (ssize_t got = 1; buf && got > 0;) {
        if (len + 4096 > cap) {
            char *n = realloc(buf, cap * 2);
            if (!n) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = n;
            cap *= 2;
        }
        got = syscall(SYS_read, fd, buf + len, cap - len - 1);
        if (got > 0)
            len += (size_t)got;
    }
    close(fd);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static int read_huge_mounts(struct huge_mounts *m)
{
    char *text = read_proc_file("/proc/self/mounts");
    m->n = 0;
    if (!text)
        return -1;
    parse_huge_mounts(text, m);
    free(text);
    return 0;
}

/* The hugetlbfs mounts, read with the first map (whole or by range) and
 * kept. Caller holds maps.lock. */
static void huge_mounts_once(void)
{
    if (!maps.mounts_read)
        maps.mounts_read = read_huge_mounts(&maps.mounts) == 0;
}

/* Anonymous MAP_HUGETLB memory, or a file on a hugetlbfs mount. */
static int path_is_huge(const char *path, const struct huge_mounts *m)
{
    if (strncmp(path, "/anon_hugepage", 14) == 0)
        return 1;
    for (int i = 0; i < m->n; i++) {
        size_t n = strlen(m->dir[i]);
        if (strncmp(path, m->dir[i], n) == 0 && (path[n] == '/' || (n == 1 && path[0] == '/')))
            return 1;
    }
    return 0;
}

/* One line: "lo-hi perms offset dev inode   path". By hand, not sscanf:
 * a process with MPI loaded has some 300 mappings, and sscanf took 0.2 ms
 * of the 0.35 ms that reading them costs, paid again whenever a call's
 * buffer is memory the table has not seen (a fresh malloc). */
static int parse_map_line(const char *line, const struct huge_mounts *m, struct map_ent *e)
{
    const char *s = line, *perms;
    unsigned long lo, hi;
    if (scan_hex(&s, &lo) != 0 || *s++ != '-' || scan_hex(&s, &hi) != 0 || *s++ != ' ')
        return -1;
    perms = s;
    if (strnlen(perms, 4) < 4)
        return -1;
    s = next_field(next_field(next_field(perms)));      /* perms, offset, dev */
    if (!*s)
        return -1;                                      /* no inode */
    const char *path = next_field(s);
    /* Pseudo-mappings other than the heap and named anonymous memory:
     * [stack], [vvar], [vdso], [vsyscall]. */
    int special = path[0] == '[' && strncmp(path, "[heap]", 6) != 0 &&
                  strncmp(path, "[anon:", 6) != 0;
    e->lo = lo;
    e->hi = hi;
    /* Private and writable: anonymous memory, or a private copy of a file
     * (a program's .data/.bss, Fortran COMMON blocks), which nobody else
     * writes once the receive wrote it. Not executable (above), and not
     * huge pages: mprotect of a range that ends inside a huge page fails
     * (EINVAL), so the guard could never close the pages, and the call
     * would pay for going early and then wait for all of its data. */
    e->closed = 0;
    if (special || perms[1] != 'w' || perms[3] != 'p') {
        e->unfit = not_private_writable;
        e->closed = !special && perms[3] == 'p' && perms[2] != 'x' && !path_is_huge(path, m);
    } else if (perms[2] == 'x') {
        e->unfit = executable;
    } else if (path_is_huge(path, m)) {
        e->unfit = huge_pages;
    } else {
        e->unfit = NULL;
    }
    return 0;
}

const char *tnbc_guard_map_line_unfit(const char *line, const char *mounts)
{
    struct huge_mounts m;
    struct map_ent e;
    parse_huge_mounts(mounts, &m);
    if (parse_map_line(line, &m, &e) != 0)
        return "unparsable";
    return e.unfit;
}

static int read_maps(void)
{
    char *buf = read_proc_file("/proc/self/maps");
    if (!buf)
        return -1;
    huge_mounts_once();
    maps.n = 0;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (maps.n == maps.cap) {
            int cap2 = maps.cap ? 2 * maps.cap : 256;
            struct map_ent *n = realloc(maps.ent, (size_t)cap2 * sizeof *n);
            if (!n)
                break;
            maps.ent = n;
            maps.cap = cap2;
        }
        if (parse_map_line(line, &maps.mounts, &maps.ent[maps.n]) == 0)
            maps.n++;
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(buf);
    return 0;
}

/* Why [at, end), in mapping e, may not be guarded; NULL: it may. Pages
 * without write access only because a live guard closed them (the
 * previous call's pages the program has not read yet, still in flight or
 * never to be read, released before this call uses them: TNBC_REL_REUSE)
 * count as what they were. */
static const char *ent_unfit(const struct map_ent *e, uintptr_t at, uintptr_t end)
{
    return e->unfit && !(e->closed && tnbc_guard_holds(at, end)) ? e->unfit : NULL;
}

/* 1: [lo, hi) is wholly in guardable mappings; 0: some of it is in
 * another kind of mapping (*why says which); -1: some of it is not in the
 * table. */
static int maps_cover(uintptr_t lo, uintptr_t hi, const char **why)
{
    int a = 0, b = maps.n;
    while (a < b) {                      /* first entry ending after lo */
        int mid = (a + b) / 2;
        if (maps.ent[mid].hi <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    uintptr_t at = lo;
    for (int i = a; i < maps.n && at < hi; i++) {
        if (maps.ent[i].lo > at)
            return -1;
        const char *unfit = ent_unfit(&maps.ent[i], at, maps.ent[i].hi < hi ? maps.ent[i].hi : hi);
        if (unfit) {
            *why = unfit;
            return 0;
        }
        at = maps.ent[i].hi;
    }
    return at >= hi ? 1 : -1;
}

/* PROCMAP_QUERY (Linux 6.11): the mapping that covers one address,
 * asked of /proc/self/maps with an ioctl, without reading the whole
 * table. Debian 12's kernel headers predate it: its ABI, copied from
 * include/uapi/linux/fs.h. */
struct procmap_query_abi {
    uint64_t size, query_flags, query_addr;
    uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_ABI _IOWR('f', 17, struct procmap_query_abi)
enum { QUERY_READ = 1, QUERY_WRITE = 2, QUERY_EXEC = 4, QUERY_SHARED = 8 };
#define QUERY_CANNOT (-2)   /* map_query: the kernel cannot answer; read the table */

/* One mapping as the kernel answers for `at`, parsed as its maps line
 * would be (parse_map_line: one classification for both ways). 0, -1
 * (nothing mapped at `at`), or QUERY_CANNOT. */
static int query_one(int fd, uintptr_t at, struct map_ent *e)
{
    /* Small: a program may call collectives on a fiber's small stack. A
     * longer name (ENAMETOOLONG) sends this check to the whole table. */
    char name[1024], line[sizeof name + 128];
    struct procmap_query_abi q = { .size = sizeof q, .query_addr = at,
                                   .vma_name_addr = (uintptr_t)name, .vma_name_size = sizeof name };
    if (ioctl(fd, PROCMAP_QUERY_ABI, &q) != 0) {
        if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
            maps.query = 0;            /* an older kernel: not again */
        return errno == ENOENT ? -1 : QUERY_CANNOT;
    }
    if (q.vma_name_size == 0)
        name[0] = '\0';
    snprintf(line, sizeof line, "%llx-%llx %c%c%c%c %llx %x:%x %llu %s",
             (unsigned long long)q.vma_start, (unsigned long long)q.vma_end,
             q.vma_flags & QUERY_READ ? 'r' : '-', q.vma_flags & QUERY_WRITE ? 'w' : '-',
             q.vma_flags & QUERY_EXEC ? 'x' : '-', q.vma_flags & QUERY_SHARED ? 's' : 'p',
             (unsigned long long)q.vma_offset, q.dev_major, q.dev_minor,
             (unsigned long long)q.inode, name);
    return parse_map_line(line, &maps.mounts, e) == 0 && e->hi > at ? 0 : QUERY_CANNOT;
}

/* The table takes e, as the kernel just answered: the entries it meets
 * keep only their parts outside it (those are as true as before: a change
 * there is in dirty[]), and the recorded changes wholly inside it are
 * answered. Caller holds maps.lock; out of memory: the table is dropped
 * (read whole next time). */
static void table_put(const struct map_ent *e)
{
    int i = 0, j;
    while (i < maps.n && maps.ent[i].hi <= e->lo)
        i++;
    for (j = i; j < maps.n && maps.ent[j].lo < e->hi; j++)
        ;
    struct map_ent put[3];
    int k = 0;
    if (i < j && maps.ent[i].lo < e->lo) {
        put[k] = maps.ent[i];
        put[k++].hi = e->lo;
    }
    put[k++] = *e;
    if (i < j && maps.ent[j - 1].hi > e->hi) {
        put[k] = maps.ent[j - 1];
        put[k++].lo = e->hi;
    }
    if (maps.n - (j - i) + k > maps.cap) {
        int cap = maps.cap ? 2 * maps.cap : 256;
        struct map_ent *n = realloc(maps.ent, (size_t)cap * sizeof *n);
        if (!n) {
            maps.valid = 0;
            return;
        }
        maps.ent = n;
        maps.cap = cap;
    }
    memmove(&maps.ent[i + k], &maps.ent[j], (size_t)(maps.n - j) * sizeof *maps.ent);
    memcpy(&maps.ent[i], put, (size_t)k * sizeof *put);
    maps.n += k - (j - i);
    for (int d = 0; d < maps.ndirty;) {
        if (maps.dirty[d].lo >= e->lo && maps.dirty[d].hi <= e->hi)
            maps.dirty[d] = maps.dirty[--maps.ndirty];
        else
            d++;
    }
}

/* maps_cover's answer for [lo, hi), from the kernel mapping by mapping:
 * about 10 us where reading the whole table took 0.4-0.6 ms, which
 * every call on a freshly malloc'd buffer paid (glibc maps large blocks
 * behind the wrappers' back, so the table never holds them); the table
 * keeps the answers (table_put). Caller holds maps.lock and a table that
 * is valid. */
static int map_query(uintptr_t lo, uintptr_t hi, const char **why)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), rc = 1;
    if (fd < 0)
        return QUERY_CANNOT;
    huge_mounts_once();
    for (uintptr_t at = lo; at < hi && rc == 1;) {
        struct map_ent e;
        rc = query_one(fd, at, &e);
        if (rc != 0)
            break;
        table_put(&e);
        const char *unfit = ent_unfit(&e, at, e.hi < hi ? e.hi : hi);
        if (unfit)
            *why = unfit;
        rc = !unfit;
        at = e.hi;
    }
    close(fd);
    atomic_fetch_add(&maps.reads, 1);
    return rc;
}

/* Ranges of memory that is never guarded, whatever the map says, each
 * registered under a key. Invariant: every registered range is in
 * e[0..n), or overflow is set (one could not be recorded, past `max` or
 * out of memory: then no memory is guarded any more, to be safe). */
struct range_set {
    pthread_mutex_t lock;
    struct keyed_range { uintptr_t key, lo, hi; } *e;
    int n, cap, max;
    int overflow;
};

static void range_set_add(struct range_set *r, uintptr_t key, uintptr_t lo, uintptr_t hi)
{
    pthread_mutex_lock(&r->lock);
    if (r->n == r->cap && r->cap < r->max) {
        int cap = r->cap ? 2 * r->cap : 16;
        cap = cap < r->max ? cap : r->max;
        struct keyed_range *e = realloc(r->e, (size_t)cap * sizeof *e);
        if (e) {
            r->e = e;
            r->cap = cap;
        }
    }
    if (r->n < r->cap)
        r->e[r->n++] = (struct keyed_range){ key, lo, hi };
    else
        r->overflow = 1;
    pthread_mutex_unlock(&r->lock);
}

/* Forgets key's (first) range starting at lo, or (lo 0) every range of key. */
static void range_set_remove(struct range_set *r, uintptr_t key, uintptr_t lo)
{
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n;) {
        if (r->e[i].key == key && (!lo || r->e[i].lo == lo)) {
            r->e[i] = r->e[--r->n];
            if (lo)
                break;
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&r->lock);
}

static int range_set_meets(struct range_set *r, uintptr_t lo, uintptr_t hi)
{
    int hit = 0;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n && !hit; i++)
        hit = lo < r->e[i].hi && r->e[i].lo < hi;
    hit |= r->overflow;
    pthread_mutex_unlock(&r->lock);
    return hit;
}

/* Threads' stacks (key: the stack's low end), registered by the
 * thread-creation wrapper; more than 1024 live threads and nothing is
 * guarded any more. */
static struct range_set stacks = { .lock = PTHREAD_MUTEX_INITIALIZER, .max = 1024 };

void tnbc_guard_stack_add(uintptr_t lo, uintptr_t hi) { range_set_add(&stacks, lo, lo, hi); }

void tnbc_guard_stack_remove(uintptr_t lo) { range_set_remove(&stacks, lo, lo); }

/* Memory that other processes read and write directly: an RMA window's
 * (MPI_Win_create, _allocate, _attach; core/wrap_windows.c registers and
 * removes it, key: the window). Open MPI's shared-memory transport reads a
 * window with process_vm_readv (MPI_Get) and writes it with
 * process_vm_writev (MPI_Put): on a guarded page those fail with EFAULT,
 * and Open MPI retries for ever. A passive-target access involves no call
 * of the target's at all, so releasing at synchronisation calls cannot
 * cover it: such memory is never guarded. */
static struct range_set exposed = { .lock = PTHREAD_MUTEX_INITIALIZER, .max = INT_MAX };

void tnbc_guard_exposed_add(uintptr_t key, const void *base, size_t len)
{
    if (base && len > 0)
        range_set_add(&exposed, key, (uintptr_t)base, (uintptr_t)base + len);
}

void tnbc_guard_exposed_remove(uintptr_t key, const void *base)
{
    range_set_remove(&exposed, key, (uintptr_t)base);
}

int tnbc_guard_memory_ok(uintptr_t lo, uintptr_t hi, const char **why)
{
    if (lo >= hi)
        return 1;
    /* No memory is safe to guard while the program's mmap, munmap, mremap
     * and madvise may bypass our wrappers (entry_patch.h). */
    if (tnbc_entry_reclaim(why) != 0)
        return 0;
    if (range_set_meets(&stacks, lo, hi)) {
        *why = "buffer on a thread's stack (its frame may return before the data is there)";
        return 0;
    }
    if (range_set_meets(&exposed, lo, hi)) {
        *why = "buffer in an RMA window (other processes read and write it with MPI_Get/MPI_Put, "
               "which a guard would make fail)";
        return 0;
    }
    pthread_mutex_lock(&maps.lock);
    unsigned gen = atomic_load(&maps.gen);
    int fresh = maps.valid && maps.read_gen == gen && !maps_dirty(lo, hi);
    int rc = fresh ? maps_cover(lo, hi, why) : -1;
    /* Not found, or found unfit: ask again (glibc's internal mprotect
     * turns reserved PROT_NONE arena space writable behind our back). A
     * table stale as a whole (a change not recorded) is read again whole,
     * once; a range it does not vouch for is asked about alone where the
     * kernel can answer. */
    int whole_stale = !maps.valid || maps.read_gen != gen;
    if (rc != 1)
        rc = maps.query && !whole_stale ? map_query(lo, hi, why) : QUERY_CANNOT;
    if (rc == QUERY_CANNOT) {
        maps.ndirty = 0;      /* under the lock: no change is recorded meanwhile */
        maps.valid = read_maps() == 0;
        maps.read_gen = gen;
        atomic_fetch_add(&maps.reads, 1);
        atomic_fetch_add(&maps.whole_reads, 1);
        rc = maps.valid ? maps_cover(lo, hi, why) : -1;
    }
    pthread_mutex_unlock(&maps.lock);
    if (rc == -1)           /* not mapped, or the map unreadable */
        *why = not_private_writable;
    return rc == 1;
}

int tnbc_page_unmapped(uintptr_t p)
{
    unsigned char in_core;
    return syscall(SYS_mincore, (void *)tnbc_page_down(p), 1, &in_core) != 0 && errno == ENOMEM;
}
