// SPDX-License-Identifier: BSD-3-Clause
/* Own case: pending buffers handed, right after the call, to the C
 * library's calls that give memory to the kernel later or in bulk: POSIX
 * asynchronous I/O (aio_write of a received block as a checkpoint,
 * aio_read into one, lio_listio of two, the large-file names), sendmmsg
 * and recvmmsg, vmsplice into a pipe, and process_vm_readv/writev on the
 * process itself, a path reopening a stream (freopen), and SysV message
 * queues. glibc's aio threads write through its own internal
 * pwrite, and the others are single system calls: a guarded page there
 * made the kernel answer EFAULT and the data never moved. Buffers are
 * at odd offsets, blocks of 4 MiB so that data is still on its
 * way when the call is made. */
#include "tt.h"
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define BLK (4 << 20)

static char *sbuf, *rbuf;

/* An Alltoall of iteration `it`'s pattern into rbuf, with `path` (NULL:
 * none) at PATH_OFF of every block. */
#define PATH_OFF (3 * (1 << 20) + 11)
static void exchange_with(int it, const char *path)
{
    tt_exchange_pattern(sbuf, rbuf, BLK, it, path, PATH_OFF);
}

static void exchange(int it)
{
    exchange_with(it, NULL);
}

/* The peer's block's first byte at or after `off` that begins a page of
 * 32 KiB pieces (the piece size replay cuts at, in the receiver's address
 * space), less `back`: so that what lies past it is still arriving. */
static char *at_piece(size_t off, size_t back)
{
    uintptr_t a = (uintptr_t)(rbuf + (size_t)(1 - tt_rank) * BLK + off);
    return (char *)((a + 32767) / 32768 * 32768 - back);
}

static void report(const char *what, int it, long got)
{
    tt_out("rank %d it %d %s %ld %016llx\n", tt_rank, it, what, got,
           (unsigned long long)tt_hash(rbuf, 2 * (size_t)BLK));
}

/* Waits for one request; its byte count, or -errno. */
static long aio_done(struct aiocb *cb)
{
    const struct aiocb *list[1] = { cb };
    while (aio_error(cb) == EINPROGRESS)
        aio_suspend(list, 1, NULL);
    int e = aio_error(cb);
    long n = (long)aio_return(cb);
    return e ? -e : n;
}

/* The file's bytes [off, off + n) hashed, read with plain pread. */
static uint64_t file_hash(int fd, off_t off, size_t n)
{
    char *tmp = malloc(n);
    ssize_t got = tmp ? pread(fd, tmp, n, off) : -1;
    uint64_t h = got == (ssize_t)n ? tt_hash(tmp, n) : 0;
    free(tmp);
    return h;
}

static void async_writes(int fd, int it)
{
    /* A received block written out as a checkpoint while the program
     * goes on; the file then holds exactly the block. */
    exchange(it);
    struct aiocb cb = { .aio_fildes = fd, .aio_buf = rbuf + BLK - 4096, .aio_nbytes = 8192 + 333 };
    long w = aio_write(&cb) == 0 ? aio_done(&cb) : -1;
    tt_out("rank %d it %d aio_write %ld %d\n", tt_rank, it, w,
           file_hash(fd, 0, cb.aio_nbytes) == tt_hash(rbuf + BLK - 4096, cb.aio_nbytes));

    exchange(it + 10);
    struct aiocb64 cb64 = { .aio_fildes = fd, .aio_buf = rbuf + 5, .aio_nbytes = BLK, .aio_offset = 8192 };
    w = aio_write64(&cb64) == 0 ? aio_done((struct aiocb *)&cb64) : -1;
    tt_out("rank %d it %d aio_write64 %ld %d\n", tt_rank, it, w,
           file_hash(fd, 8192, BLK) == tt_hash(rbuf + 5, BLK));

    /* Two blocks at once: the peer's and the own. */
    exchange(it + 20);
    struct aiocb a = { .aio_fildes = fd, .aio_lio_opcode = LIO_WRITE, .aio_buf = rbuf + 1,
                       .aio_nbytes = 100000, .aio_offset = 0 };
    struct aiocb b = { .aio_fildes = fd, .aio_lio_opcode = LIO_WRITE, .aio_buf = rbuf + BLK + 99,
                       .aio_nbytes = 100000, .aio_offset = 200000 };
    struct aiocb *list[2] = { &a, &b };
    int rc = lio_listio(LIO_WAIT, list, 2, NULL);
    tt_out("rank %d it %d lio_listio %d %ld %ld %d %d\n", tt_rank, it, rc, aio_done(&a), aio_done(&b),
           file_hash(fd, 0, 100000) == tt_hash(rbuf + 1, 100000),
           file_hash(fd, 200000, 100000) == tt_hash(rbuf + BLK + 99, 100000));
}

static void async_reads(int fd, int it)
{
    /* The file read back over a received block (it had been saved). */
    exchange(it + 30);
    struct aiocb cb = { .aio_fildes = fd, .aio_buf = rbuf + 3 * 4096 + 17, .aio_nbytes = 100000 };
    long r = aio_read(&cb) == 0 ? aio_done(&cb) : -1;
    report("aio_read", it, r);
    exchange(it + 40);
    struct aiocb64 cb64 = { .aio_fildes = fd, .aio_buf = rbuf + BLK + 3, .aio_nbytes = 300000 };
    r = aio_read64(&cb64) == 0 ? aio_done((struct aiocb *)&cb64) : -1;
    report("aio_read64", it, r);
    exchange(it + 50);
    struct aiocb a = { .aio_fildes = fd, .aio_lio_opcode = LIO_READ, .aio_buf = rbuf + 11,
                       .aio_nbytes = 50000, .aio_offset = 0 };
    struct aiocb *list[1] = { &a };
    int rc = lio_listio64(LIO_WAIT, (struct aiocb64 *const *)list, 1, NULL);
    report("lio_listio64", it, rc == 0 ? aio_done(&a) : -1);
}

static void messages(int it)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) {
        tt_out("rank %d socketpair failed\n", tt_rank);
        return;
    }
    /* Two received pieces sent as two datagrams, then received into two
     * other places of a block still arriving. */
    exchange(it + 60);
    struct iovec out[2] = { { rbuf + 100, 20000 }, { rbuf + BLK + 100, 30000 } };
    struct mmsghdr m[2] = { { .msg_hdr = { .msg_iov = &out[0], .msg_iovlen = 1 } },
                            { .msg_hdr = { .msg_iov = &out[1], .msg_iovlen = 1 } } };
    int sent = sendmmsg(sv[0], m, 2, 0);
    uint64_t want = tt_hash(rbuf + 100, 20000) ^ tt_hash(rbuf + BLK + 100, 30000);
    exchange(it + 70);
    struct iovec in[2] = { { rbuf + 4096 * 7 + 1, 20000 }, { rbuf + BLK + 4096 * 9 + 2, 30000 } };
    struct mmsghdr r[2] = { { .msg_hdr = { .msg_iov = &in[0], .msg_iovlen = 1 } },
                            { .msg_hdr = { .msg_iov = &in[1], .msg_iovlen = 1 } } };
    int got = recvmmsg(sv[1], r, 2, MSG_DONTWAIT, NULL);
    tt_out("rank %d it %d mmsg %d %d %u %u %d\n", tt_rank, it, sent, got, m[0].msg_len, r[1].msg_len,
           (tt_hash(rbuf + 4096 * 7 + 1, 20000) ^ tt_hash(rbuf + BLK + 4096 * 9 + 2, 30000)) == want);
    report("recvmmsg", it, got);
    close(sv[0]);
    close(sv[1]);
}

static void splices(int it)
{
    int p[2];
    if (pipe(p) != 0) {
        tt_out("rank %d pipe failed\n", tt_rank);
        return;
    }
    exchange(it + 80);
    struct iovec v = { rbuf + BLK + 4097, 30000 };
    ssize_t n = vmsplice(p[1], &v, 1, 0);
    char back[30000];
    ssize_t m = n > 0 ? read(p[0], back, (size_t)n) : -1;
    tt_out("rank %d it %d vmsplice %zd %zd %d\n", tt_rank, it, n, m,
           m == 30000 && memcmp(back, rbuf + BLK + 4097, 30000) == 0);
    close(p[0]);
    close(p[1]);

    /* The process copies between its own pending buffers through the
     * kernel, as a debugger or a checkpoint library does. */
    exchange(it + 90);
    struct iovec local = { rbuf + 50000, 200000 }, remote = { rbuf + BLK + 3, 200000 };
    ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    report("process_vm_readv", it, r == 200000 ? r : -errno);
    exchange(it + 95);
    local = (struct iovec){ rbuf + 7, 100000 };
    remote = (struct iovec){ rbuf + BLK + 300000, 100000 };
    ssize_t w = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
    report("process_vm_writev", it, w == 100000 ? w : -errno);
}

/* A path that arrives in the call reopens a stream at once (glibc opens it
 * with its internal open); SysV messages sent from and received into
 * blocks still arriving (the message's type is the block's last word
 * before a piece boundary, its text the pieces after it). */
static void paths_and_queues(int it)
{
    exchange_with(it + 100, "/dev/null");
    FILE *f = freopen(rbuf + (size_t)(1 - tt_rank) * BLK + PATH_OFF, "r", tmpfile());
    tt_out("rank %d it %d freopen %d\n", tt_rank, it, f != NULL);
    if (f)
        fclose(f);

    int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    if (q < 0) {
        tt_out("rank %d msgget failed\n", tt_rank);
        return;
    }
    exchange(it + 110);
    char *m = at_piece(BLK - 400000, sizeof(long));
    *(long *)m = 7;               /* a user-mode write: this page is released */
    int sent = msgsnd(q, m, 4000, 0);
    uint64_t want = tt_hash(m + sizeof(long), 4000);
    exchange(it + 120);
    char *r = at_piece(BLK - 200000, sizeof(long));
    ssize_t got = msgrcv(q, r, 4000, 0, IPC_NOWAIT);
    tt_out("rank %d it %d msgsnd %d msgrcv %zd %ld %d\n", tt_rank, it, sent, got, *(long *)r,
           got == 4000 && tt_hash(r + sizeof(long), 4000) == want);
    report("msgrcv", it, (long)got);
    msgctl(q, IPC_RMID, NULL);
}

int main(int argc, char **argv)
{
    if (!tt_init_ranks(&argc, &argv, 2))
        return 0;
    /* The receive buffer at a fixed offset from a 64 KiB boundary, so that
     * at_piece's places, and with them the output, do not depend on where
     * malloc put it (the preload library's own allocations move the heap). */
    char *s = malloc(2 * (size_t)BLK + 64), *r = NULL;
    if (!s || posix_memalign((void **)&r, 1 << 16, 2 * (size_t)BLK + 64) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    sbuf = s + 24;
    rbuf = r + 40;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tnbc-torture-kernel-io.%d.%d", (int)getpid(), tt_rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd < 0)
        tt_out("rank %d cannot open %s\n", tt_rank, path);
    for (int it = 0; it < 2 && fd >= 0; it++) {
        async_writes(fd, it);
        async_reads(fd, it);
        messages(it);
        splices(it);
        paths_and_queues(it);
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(s);
    free(r);
    tt_finish();
    return 0;
}
