// SPDX-License-Identifier: BSD-3-Clause
/* Built with _FORTIFY_SOURCE=2 (test/module.mk): receive buffers of known
 * size (static arrays) handed, right after the call, to read, pread, recv,
 * recvfrom, readlink, getcwd, fread and fread_unlocked with lengths known
 * only at run time, so the compiler calls the C library's checked entries
 * (__read_chk, ...); and to stdio's unlocked fread and fwrite. Paths that
 * arrive in the call, opened at once through __open_2 and the large-file
 * names (open64, fopen64, preadv64v2, ...). Those reach the kernel through the library's own
 * read, not the symbol: before they were wrapped, the kernel met the
 * guarded pages and the reads came back short (EFAULT) with stale data.
 * Blocks of 4 MiB, so that data is still on its way when the call is made.
 * test/torture.sh checks the binary imports the checked entries. */
#include "tt.h"
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define BLK (4 << 20)
#define FILE_BYTES (2 * BLK)

static char sbuf[2 * BLK];
static char rbuf[2 * BLK];
static char filedata[FILE_BYTES];
static volatile size_t runtime_len = 2 * BLK;   /* unknown to the compiler */

/* The Alltoall of iteration `it`'s send pattern into rbuf, with `path`
 * (NULL: none) at PATH_OFF of every block. */
#define PATH_OFF (3 * (1 << 20) + 11)
static void exchange_with(int it, const char *path)
{
    tt_exchange_pattern(sbuf, rbuf, BLK, it, path, PATH_OFF);
}

static void exchange(int it)
{
    exchange_with(it, NULL);
}

/* "/dev/null" arrives in the call, in the peer's block, and is opened at
 * once. */
static const char *exchange_path(int it)
{
    exchange_with(it, "/dev/null");
    return rbuf + (size_t)(1 - tt_rank) * BLK + PATH_OFF;
}

static int opened(int fd)
{
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

static volatile int runtime_flags = O_RDONLY;   /* unknown: open calls __open_2 */

static void report(const char *what, int it, long got)
{
    tt_out("rank %d it %d %s %ld %016llx\n", tt_rank, it, what, got,
           (unsigned long long)tt_hash(rbuf, sizeof rbuf));
}

int main(int argc, char **argv)
{
    if (!tt_init_ranks(&argc, &argv, 2))
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tnbc-torture-fortify.%d.%d", (int)getpid(), tt_rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    for (size_t i = 0; i < sizeof filedata; i++)
        filedata[i] = (char)(i * 31 + 5);
    if (fd < 0 || write(fd, filedata, sizeof filedata) != (ssize_t)sizeof filedata)
        tt_out("rank %d cannot write %s\n", tt_rank, path);
    FILE *f = fdopen(dup(fd), "r");
    int sv[2] = { -1, -1 };
    int sp = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    for (int it = 0; it < 3; it++) {
        size_t n = runtime_len;
        exchange(it);
        report("read", it, lseek(fd, 0, SEEK_SET) == 0 ? (long)read(fd, rbuf, n) : -2);
        exchange(it + 10);
        report("pread", it, (long)pread(fd, rbuf + 100, n - 100, 0));

        exchange(it + 15);
        struct iovec v = { rbuf + 77, n - 77 };
        report("preadv64v2", it, (long)preadv64v2(fd, &v, 1, 0, 0));

        exchange(it + 20);
        long sent = sp == 0 ? (long)write(sv[0], filedata, 65536) : -1;
        long got = sp == 0 ? (long)recv(sv[1], rbuf + 5000, n / 128, MSG_WAITALL) : -1;
        report("recv", it, sent == got ? got : -3);
        exchange(it + 30);
        sent = sp == 0 ? (long)write(sv[0], filedata + 7, 65536) : -1;
        got = sp == 0 ? (long)recvfrom(sv[1], rbuf + BLK - 3000, n / 128, MSG_WAITALL, NULL, NULL) : -1;
        report("recvfrom", it, sent == got ? got : -3);

        exchange(it + 40);
        char own[4096];
        ssize_t ol = readlink("/proc/self/exe", own, sizeof own);
        ssize_t rl = readlink("/proc/self/exe", rbuf + 3 * 4096 + 7, n / 512);
        tt_out("rank %d it %d readlink %d\n", tt_rank, it,
               ol > 0 && rl == ol && memcmp(own, rbuf + 3 * 4096 + 7, (size_t)ol) == 0);
        exchange(it + 50);
        char cwd[4096];
        char *c = getcwd(rbuf + 9000, n / 512);
        tt_out("rank %d it %d getcwd %d\n", tt_rank, it,
               c && getcwd(cwd, sizeof cwd) && strcmp(c, cwd) == 0);

        exchange(it + 60);
        rewind(f);
        report("fread", it, (long)fread(rbuf + 1, 1, n - 1, f));
        exchange(it + 70);
        rewind(f);
        report("fread_unlocked_chk", it, (long)fread_unlocked(rbuf + 3, 1, n - 3, f));
        /* The unchecked unlocked forms (through a pointer, which
         * _FORTIFY_SOURCE leaves alone) move large counts straight too.
         * (volatile: else the compiler calls the checked form again) */
        size_t (*volatile fread_u)(void *, size_t, size_t, FILE *) = fread_unlocked;
        exchange(it + 80);
        rewind(f);
        report("fread_unlocked", it, (long)fread_u(rbuf + 5, 1, n - 5, f));
        /* Paths: open with flags the compiler does not know (__open_2,
         * __open64_2, __openat_2), and the large-file names. */
        int o1 = opened(open(exchange_path(it + 100), runtime_flags));
        int o2 = opened(open64(exchange_path(it + 101), runtime_flags));
        int o3 = opened(openat(AT_FDCWD, exchange_path(it + 102), runtime_flags));
        int o4 = opened(open64(exchange_path(it + 103), O_RDONLY));
        int o5 = opened(openat64(AT_FDCWD, exchange_path(it + 104), O_RDONLY));
        FILE *g = fopen64(exchange_path(it + 105), "r");
        tt_out("rank %d it %d open_2 %d open64_2 %d openat_2 %d open64 %d openat64 %d fopen64 %d\n",
               tt_rank, it, o1, o2, o3, o4, o5, g != NULL);
        if (g)
            fclose(g);

        exchange(it + 90);
        FILE *w = tmpfile();
        size_t put = w ? fwrite_unlocked(rbuf, 1, n, w) : 0;
        uint64_t sent_hash = tt_hash(rbuf, n);
        rewind(f);                      /* rbuf is read-back space now */
        size_t back = w && fflush(w) == 0 && fseek(w, 0, SEEK_SET) == 0 ? fread(rbuf, 1, n, w) : 0;
        tt_out("rank %d it %d fwrite_unlocked %zu %zu %d\n", tt_rank, it, put, back,
               back == n && tt_hash(rbuf, n) == sent_hash);
        if (w)
            fclose(w);
    }
    if (f)
        fclose(f);
    if (sp == 0) {
        close(sv[0]);
        close(sv[1]);
    }
    close(fd);
    unlink(path);
    tt_finish();
    return 0;
}
