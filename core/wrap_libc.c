/* libc calls that pass user memory to the kernel. A guarded page makes the
 * kernel answer EFAULT instead of faulting, so the guards on the buffer are
 * lifted first. glibc's internal calls (e.g. fwrite's own write) bypass
 * these symbols, which is why fwrite/fread are wrapped themselves. free()
 * lifts guards so that memory handed back to malloc is never guarded. */
#include "intercept.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static void rel(const void *p, size_t n)
{
    if (tnbc_guard_active())
        tnbc_guard_release_range(p, n, TNBC_REL_IO);
}

static void rel_iov(const struct iovec *iov, int n)
{
    if (!tnbc_guard_active() || !iov)
        return;
    for (int i = 0; i < n; i++)
        tnbc_guard_release_range(iov[i].iov_base, iov[i].iov_len, TNBC_REL_IO);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(write);
    rel(buf, n);
    return real_write(fd, buf, n);
}

ssize_t read(int fd, void *buf, size_t n)
{
    REAL(read);
    rel(buf, n);
    return real_read(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(pwrite);
    rel(buf, n);
    return real_pwrite(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(pread);
    rel(buf, n);
    return real_pread(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    REAL(writev);
    rel_iov(iov, n);
    return real_writev(fd, iov, n);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
    REAL(readv);
    rel_iov(iov, n);
    return real_readv(fd, iov, n);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    REAL(send);
    rel(buf, n);
    return real_send(fd, buf, n, flags);
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    REAL(recv);
    rel(buf, n);
    return real_recv(fd, buf, n, flags);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a, socklen_t l)
{
    REAL(sendto);
    rel(buf, n);
    return real_sendto(fd, buf, n, flags, a, l);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *l)
{
    REAL(recvfrom);
    rel(buf, n);
    return real_recvfrom(fd, buf, n, flags, a, l);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    REAL(sendmsg);
    if (m)
        rel_iov(m->msg_iov, (int)m->msg_iovlen);
    return real_sendmsg(fd, m, flags);
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    REAL(recvmsg);
    if (m)
        rel_iov(m->msg_iov, (int)m->msg_iovlen);
    return real_recvmsg(fd, m, flags);
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    REAL(fwrite);
    rel(p, size * n);
    return real_fwrite(p, size, n, f);
}

size_t fread(void *p, size_t size, size_t n, FILE *f)
{
    REAL(fread);
    rel(p, size * n);
    return real_fread(p, size, n, f);
}

int munmap(void *addr, size_t len)
{
    REAL(munmap);
    if (tnbc_guard_active())
        tnbc_guard_release_range(addr, len, TNBC_REL_FREE);
    return real_munmap(addr, len);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* The allocator's own free/realloc/malloc_usable_size: the next definitions
 * (glibc's, or those of an allocator such as jemalloc that the program
 * links), looked up once. dlsym may itself free memory while we look them
 * up; such a nested call uses glibc's entry points directly. */
extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);

static struct {
    void (*free)(void *);
    void *(*realloc)(void *, size_t);
    size_t (*usable)(void *);
    int state;            /* 0 not looked up, 1 looking up, 2 done */
} next_alloc;

static void lookup_allocator(void)
{
    if (next_alloc.state)
        return;
    next_alloc.state = 1;
    next_alloc.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    next_alloc.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_alloc.usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    next_alloc.state = 2;
}

/* At load time, while the process is still single-threaded. */
__attribute__((constructor)) static void lookup_allocator_early(void) { lookup_allocator(); }

/* Lift guards on the block being handed back to the allocator. */
static void release_block(void *p)
{
    if (p && tnbc_guard_active() && next_alloc.usable)
        tnbc_guard_release_range(p, next_alloc.usable(p), TNBC_REL_FREE);
}

void free(void *p)
{
    lookup_allocator();
    if (next_alloc.state != 2 || !next_alloc.free) {
        __libc_free(p);
        return;
    }
    release_block(p);
    next_alloc.free(p);
}

void *realloc(void *p, size_t n)
{
    lookup_allocator();
    if (next_alloc.state != 2 || !next_alloc.realloc)
        return __libc_realloc(p, n);
    release_block(p);
    return next_alloc.realloc(p, n);
}
#endif /* sanitizers bring their own allocator */
