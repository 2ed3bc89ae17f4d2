// SPDX-License-Identifier: BSD-3-Clause
/* libc calls that pass user memory to the kernel. A guarded page makes the
 * kernel answer EFAULT instead of faulting, so the guards on the buffer are
 * lifted first; the calls are listed in wrap_syscalls.def and generated
 * here. glibc's internal calls (e.g. fwrite's own write) bypass these
 * symbols, which is why fwrite/fread are wrapped themselves. free() lifts
 * guards so that memory handed back to malloc is never guarded; mprotect,
 * mmap, mremap, madvise and munmap lift them before the program changes
 * guarded memory; thread creation registers each thread's stack, which is
 * never guarded (guard.h). */
#include "altstack.h"
#include "entry_patch.h"
#include "guard_keys.h"
#include "intercept.h"

#include <aio.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The C library's checked entries (wrap_syscalls.def), declared by its
 * headers only under _FORTIFY_SOURCE (__open_2: an open whose flags the
 * compiler does not know); the same prototypes. */
extern ssize_t __read_chk(int, void *, size_t, size_t);
extern ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
extern ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);
extern ssize_t __recv_chk(int, void *, size_t, size_t, int);
extern ssize_t __recvfrom_chk(int, void *__restrict, size_t, size_t, int, __SOCKADDR_ARG,
                              socklen_t *__restrict);
extern ssize_t __readlink_chk(const char *__restrict, char *__restrict, size_t, size_t);
extern ssize_t __readlinkat_chk(int, const char *__restrict, char *__restrict, size_t, size_t);
extern char *__getcwd_chk(char *, size_t, size_t);
extern int __poll_chk(struct pollfd *, nfds_t, int, size_t);
extern int __ppoll_chk(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *, size_t);
extern int __open_2(const char *, int);
extern int __open64_2(const char *, int);
extern int __openat_2(int, const char *, int);
extern int __openat64_2(int, const char *, int);
extern size_t __fread_chk(void *__restrict, size_t, size_t, size_t, FILE *__restrict);
extern size_t __fread_unlocked_chk(void *__restrict, size_t, size_t, size_t, FILE *__restrict);

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* The function that does the real work of a wrapper whose entry another
 * library had patched (entry_patch.h): that library's hook, or libc's. */
#define NEXT(name) ((__typeof__(name) *)tnbc_entry_next(TNBC_ENTRY_##name, (void *)real_##name))

static void rel(const void *p, size_t n)
{
    if (tnbc_guard_active() && p)
        tnbc_guard_release_range(p, n, TNBC_REL_IO);
}

/* Memory the kernel only reads (wrap_syscalls.def, MEMR). */
static void rel_r(const void *p, size_t n)
{
    if (tnbc_guard_active() && p)
        tnbc_guard_release_range_read(p, n, TNBC_REL_IO);
}

static void rel_iov(const struct iovec *iov, int n, void (*release)(const void *, size_t))
{
    if (!tnbc_guard_active() || !iov)
        return;
    rel_r(iov, (size_t)(n > 0 ? n : 0) * sizeof *iov);   /* the array itself is read */
    for (int i = 0; i < n; i++)
        release(iov[i].iov_base, iov[i].iov_len);
}

/* The string itself is read here in user mode: a guarded byte faults and
 * is handled before its length is known. (Unused under TSan: see the table.) */
static __attribute__((unused)) void rel_str(const char *s)
{
    if (tnbc_guard_active() && s)
        rel(s, strlen(s) + 1);
}

/* recvmsg writes the header (msg_namelen, msg_flags), the name, the
 * iovecs' memory and the control (release: rel); sendmsg only reads them
 * (rel_r). */
static void rel_msg(const struct msghdr *m, void (*release)(const void *, size_t))
{
    if (!tnbc_guard_active() || !m)
        return;
    release(m, sizeof *m);
    release(m->msg_name, m->msg_namelen);
    rel_iov(m->msg_iov, (int)m->msg_iovlen, release);
    release(m->msg_control, m->msg_controllen);
}

/* sendmmsg and recvmmsg: the kernel writes each header's msg_len (the
 * array is released whole), then each header as rel_msg. */
static __attribute__((unused)) void rel_mmsg(const struct mmsghdr *v, unsigned int n,
                                             void (*release)(const void *, size_t))
{
    if (!tnbc_guard_active() || !v)
        return;
    rel(v, (size_t)n * sizeof *v);
    for (unsigned int i = 0; i < n; i++)
        rel_msg(&v[i].msg_hdr, release);
}

/* The 64-bit names take the same control block where off_t is 64 bits,
 * as on every target built here. */
_Static_assert(sizeof(struct aiocb64) == sizeof(struct aiocb) &&
               offsetof(struct aiocb64, aio_buf) == offsetof(struct aiocb, aio_buf) &&
               offsetof(struct aiocb64, aio_nbytes) == offsetof(struct aiocb, aio_nbytes) &&
               offsetof(struct aiocb64, aio_lio_opcode) == offsetof(struct aiocb, aio_lio_opcode),
               "struct aiocb64 is laid out as struct aiocb");

/* An aio request: the C library writes its state into the control block;
 * its helper thread later writes the buffer (LIO_READ) or reads it
 * (LIO_WRITE) with its own internal calls, which no wrapper sees. */
static __attribute__((unused)) void rel_aiocb(const struct aiocb *cb, int op)
{
    if (!tnbc_guard_active() || !cb)
        return;
    rel(cb, sizeof *cb);
    const void *buf = (const void *)(uintptr_t)cb->aio_buf;
    if (op == LIO_READ)
        rel(buf, cb->aio_nbytes);
    else if (op == LIO_WRITE)
        rel_r(buf, cb->aio_nbytes);
}

static __attribute__((unused)) void rel_lio(struct aiocb *const *list, int n)
{
    if (!tnbc_guard_active() || !list || n <= 0)
        return;
    rel_r(list, (size_t)n * sizeof *list);
    for (int i = 0; i < n; i++)
        if (list[i])
            rel_aiocb(list[i], list[i]->aio_lio_opcode);
}

/* process_vm_readv/writev: the remote iovecs are this process's memory
 * where pid is this process (a self-copy through the kernel). */
static __attribute__((unused)) void rel_own_iov(pid_t pid, const struct iovec *iov,
                                                unsigned long n,
                                                void (*release)(const void *, size_t))
{
    if (tnbc_guard_active() && iov && pid == getpid())
        rel_iov(iov, n > INT_MAX ? INT_MAX : (int)n, release);
}

#define MEM(p, n) rel((p), (n))
#define MEMR(p, n) rel_r((p), (n))
#define IOV(v, n) rel_iov((v), (n), rel)
#define IOVR(v, n) rel_iov((v), (n), rel_r)
#define STR(s) rel_str(s)
#define MSG(m) rel_msg((m), rel)
#define MSGR(m) rel_msg((m), rel_r)
#define MMSG(v, n) rel_mmsg((v), (n), rel)
#define MMSGR(v, n) rel_mmsg((v), (n), rel_r)
#define AIOCB(cb, op) rel_aiocb((const struct aiocb *)(cb), (op))
#define LIO(list, n) rel_lio((struct aiocb *const *)(list), (n))
#define OWN_IOV(pid, v, n) rel_own_iov((pid), (v), (n), rel)
#define OWN_IOVR(pid, v, n) rel_own_iov((pid), (v), (n), rel_r)
#define SYSCALL(ret, name, params, args, releases) \
    ret name params \
    { \
        REAL(name); \
        if (tnbc_guard_active()) { \
            releases; \
        } \
        return real_##name args; \
    }
#if defined(__SANITIZE_THREAD__)
#define TNBC_WRAP_BASIC_ONLY 1
#endif
#include "wrap_syscalls.def"
#undef SYSCALL

#if !defined(__SANITIZE_THREAD__)
/* open and openat take a mode only with O_CREAT or O_TMPFILE (variadic;
 * O_TMPFILE includes O_DIRECTORY's bit, hence the full comparison). */
static int takes_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* The optional mode argument of the variadic caller whose last named
 * parameter is `flags` (a macro: va_start needs the caller's frame). */
#define OPEN_MODE(flags, mode)                                  \
    do {                                                        \
        va_list ap_;                                            \
        va_start(ap_, flags);                                   \
        (mode) = takes_mode(flags) ? va_arg(ap_, mode_t) : 0;   \
        va_end(ap_);                                            \
    } while (0)

/* open and its large-file twin; openat and its. */
#define WRAP_OPEN(name)                                       \
    int name(const char *path, int flags, ...)                \
    {                                                         \
        REAL(name);                                           \
        mode_t mode;                                          \
        OPEN_MODE(flags, mode);                               \
        rel_str(path);                                        \
        return real_##name(path, flags, mode);                \
    }
#define WRAP_OPENAT(name)                                     \
    int name(int dir, const char *path, int flags, ...)       \
    {                                                         \
        REAL(name);                                           \
        mode_t mode;                                          \
        OPEN_MODE(flags, mode);                               \
        rel_str(path);                                        \
        return real_##name(dir, path, flags, mode);           \
    }
WRAP_OPEN(open)
WRAP_OPEN(open64)
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
#endif

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    REAL(fwrite);
    rel_r(p, size * n);
    return real_fwrite(p, size, n, f);
}

size_t fread(void *p, size_t size, size_t n, FILE *f)
{
    REAL(fread);
    rel(p, size * n);
    return real_fread(p, size, n, f);
}

/* The unlocked and checked (_FORTIFY_SOURCE) forms move large counts
 * (parenthesised: stdio.h may make the unlocked ones macros)
 * straight between the buffer and the descriptor as fwrite and fread do. */
size_t (fwrite_unlocked)(const void *p, size_t size, size_t n, FILE *f)
{
    REAL(fwrite_unlocked);
    rel_r(p, size * n);
    return real_fwrite_unlocked(p, size, n, f);
}

size_t (fread_unlocked)(void *p, size_t size, size_t n, FILE *f)
{
    REAL(fread_unlocked);
    rel(p, size * n);
    return real_fread_unlocked(p, size, n, f);
}

size_t __fread_chk(void *__restrict p, size_t plen, size_t size, size_t n, FILE *__restrict f)
{
    REAL(__fread_chk);
    rel(p, size * n);
    return real___fread_chk(p, plen, size, n, f);
}

size_t __fread_unlocked_chk(void *__restrict p, size_t plen, size_t size, size_t n,
                            FILE *__restrict f)
{
    REAL(__fread_unlocked_chk);
    rel(p, size * n);
    return real___fread_unlocked_chk(p, plen, size, n, f);
}

/* ---- the program closes or replaces descriptors --------------------------- */

int close(int fd)
{
    REAL(close);
    tnbc_guard_fds_closing(fd, fd);
    return real_close(fd);
}

int dup2(int from, int to)
{
    REAL(dup2);
    tnbc_guard_fds_closing(to, to);
    return real_dup2(from, to);
}

int dup3(int from, int to, int flags)
{
    REAL(dup3);
    tnbc_guard_fds_closing(to, to);
    return real_dup3(from, to, flags);
}

int close_range(unsigned int lo, unsigned int hi, int flags)
{
    REAL(close_range);
    if (!(flags & CLOSE_RANGE_CLOEXEC))
        tnbc_guard_fds_closing(lo, hi);
    return real_close_range(lo, hi, flags);
}

void closefrom(int lo)
{
    REAL(closefrom);
    tnbc_guard_fds_closing(lo, INT_MAX);
    real_closefrom(lo);
}

/* ---- the program changes its memory ------------------------------------ */

int munmap(void *addr, size_t len)
{
    REAL(munmap);
    if (tnbc_guard_active())   /* or the lift may open a later mapping there */
        tnbc_guard_release_range_lifted(addr, len, TNBC_REL_FREE);
    tnbc_gkeys_released(addr, len, 1);
    int rc = NEXT(munmap)(addr, len);
    tnbc_guard_maps_changed(addr, len);
    return rc;
}

#if !defined(__SANITIZE_THREAD__)
/* (ThreadSanitizer intercepts mmap, mremap and pthread_create itself; our
 * versions would go around it. Under TSan, mappings are noticed when the
 * cached map lacks them, and thread stacks are not known.) */

/* The program's own protection replaces ours: the data lands first. */
int mprotect(void *addr, size_t len, int prot)
{
    REAL(mprotect);
    if (tnbc_guard_active())   /* or the lift would undo it */
        tnbc_guard_release_range_lifted(addr, len, TNBC_REL_IO);
    tnbc_gkeys_released(addr, len, 0);
    int rc = real_mprotect(addr, len, prot);
    tnbc_guard_maps_changed(addr, len);     /* writable or not */
    return rc;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    REAL(mmap);
    if ((flags & MAP_FIXED) && tnbc_guard_active())
        tnbc_guard_release_range_lifted(addr, len, TNBC_REL_FREE);
    if (flags & MAP_FIXED)
        tnbc_gkeys_released(addr, len, 1);
    void *p = NEXT(mmap)(addr, len, prot, flags, fd, off);
    /* A failed MAP_FIXED may have unmapped what was at addr. */
    tnbc_guard_maps_changed(p != MAP_FAILED ? p : addr, len);
    return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return mmap(addr, len, prot, flags, fd, (off_t)off);
}

/* mremap needs its old range to be one kernel mapping (VMA). Guarding
 * splits a buffer's mapping by protection, and the pieces do not always
 * merge again once opened (each piece first written while its neighbours
 * were protected gets an anon_vma of its own), so the program's mremap of
 * a buffer tnbc guarded can fail with EFAULT where the blocking run's
 * succeeds. For private writable memory that may move, it is done by hand
 * then: a new mapping, the bytes copied, the old one unmapped (shrinking:
 * the tail unmapped). Returns MAP_FAILED (errno EFAULT) otherwise. */
static void *mremap_split(void *old, size_t old_len, size_t new_len, int flags)
{
    const char *why;
    uintptr_t lo = (uintptr_t)old;
    if ((flags & ~MREMAP_MAYMOVE) || !tnbc_guard_memory_ok(lo, lo + old_len, &why)) {
        errno = EFAULT;
        return MAP_FAILED;
    }
    if (new_len <= old_len) {
        munmap((char *)old + new_len, old_len - new_len);
        return old;
    }
    if (!(flags & MREMAP_MAYMOVE)) {
        errno = ENOMEM;            /* as mremap says when it cannot grow in place */
        return MAP_FAILED;
    }
    void *p = mmap(NULL, new_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return p;
    memcpy(p, old, old_len);
    munmap(old, old_len);
    return p;
}

/* The pages move with their protection: the guard is lifted first. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    REAL(mremap);
    void *to = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        to = va_arg(ap, void *);
        va_end(ap);
    }
    if (tnbc_guard_active()) {
        tnbc_guard_release_range(old, old_len, TNBC_REL_FREE);
        if (to)
            tnbc_guard_release_range(to, new_len, TNBC_REL_FREE);
    }
    tnbc_gkeys_released(old, old_len, 0);     /* the pages move with their keys */
    if (to)
        tnbc_gkeys_released(to, new_len, 1);
    void *p = NEXT(mremap)(old, old_len, new_len, flags, to);
    if (p == MAP_FAILED && errno == EFAULT)
        p = mremap_split(old, old_len, new_len, flags);
    tnbc_guard_maps_changed(old, old_len);
    if (p != MAP_FAILED)
        tnbc_guard_maps_changed(p, new_len);
    else if (to)
        tnbc_guard_maps_changed(to, new_len);
    return p;
}

/* MADV_DONTNEED and friends discard the pages: what they held must be
 * there (and then gone) as in the blocking run. */
int madvise(void *addr, size_t len, int advice)
{
    REAL(madvise);
    if (tnbc_guard_active())
        tnbc_guard_release_range(addr, len, TNBC_REL_FREE);
    return NEXT(madvise)(addr, len, advice);
}

int posix_madvise(void *addr, size_t len, int advice)
{
    REAL(posix_madvise);
    if (tnbc_guard_active())
        tnbc_guard_release_range(addr, len, TNBC_REL_FREE);
    return real_posix_madvise(addr, len, advice);
}

/* A vfork child runs on the parent's memory and stack until it calls
 * exec; the guards would need lifting before it, and a wrapper cannot
 * return twice from a frame the child shares. POSIX lets vfork be fork,
 * whose pthread_atfork handler lifts them (guard.c). */
pid_t vfork(void)
{
    return fork();
}

/* ---- thread stacks -------------------------------------------------------- */

struct thread_start {
    void *(*fn)(void *);
    void *arg;
};

static void forget_stack(void *lo)
{
    tnbc_guard_stack_remove((uintptr_t)lo);
    tnbc_altstack_remove();
}

/* Runs in the new thread: its stack is registered, and it has an alternate
 * signal stack (altstack.h), for as long as it runs (until it returns,
 * calls pthread_exit or is cancelled). */
static void *start_thread(void *p)
{
    struct thread_start ts = *(struct thread_start *)p;
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    free(p);
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &lo, &size);
        pthread_attr_destroy(&attr);
    }
    tnbc_guard_stack_add((uintptr_t)lo, (uintptr_t)lo + size);
    tnbc_altstack_add();
    void *ret;
    pthread_cleanup_push(forget_stack, lo);
    ret = ts.fn(ts.arg);
    pthread_cleanup_pop(1);
    return ret;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    REAL(pthread_create);
    tnbc_gkeys_thread_created();
    struct thread_start *ts = malloc(sizeof *ts);
    if (!ts)
        return real_pthread_create(t, attr, fn, arg);   /* cannot happen in practice */
    ts->fn = fn;
    ts->arg = arg;
    int rc = real_pthread_create(t, attr, start_thread, ts);
    if (rc != 0)
        free(ts);
    return rc;
}
#endif /* !__SANITIZE_THREAD__ */

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
    if (p && next_alloc.usable && tnbc_gkeys_kept())
        tnbc_gkeys_released(p, next_alloc.usable(p), 0);
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

/* This file's free(), whatever the process's `free` resolves to. */
extern __typeof__(free) tnbc_own_free __attribute__((alias("free"), copy(free), visibility("hidden")));

const char *tnbc_foreign_free(void)
{
    static int foreign = -1;       /* not looked up yet */
    if (foreign < 0) {
        /* Another definition of free, not merely the executable's
         * canonical PLT entry (an executable that takes free's address,
         * as Python's does, has one: an undefined symbol with a value,
         * which dlsym returns; calls through it reach ours). */
        void *global = dlsym(RTLD_DEFAULT, "free");
        Dl_info di;
        const ElfW(Sym) *sym = NULL;
        foreign = global && global != (void *)tnbc_own_free &&
                  dladdr1(global, &di, (void **)&sym, RTLD_DL_SYMENT) && sym &&
                  sym->st_shndx != SHN_UNDEF;
    }
    return foreign ? "the program defines free() itself (an allocator linked into it): tnbc "
                     "cannot see a buffer handed back while its data is on its way"
                   : NULL;
}

void *realloc(void *p, size_t n)
{
    lookup_allocator();
    if (next_alloc.state != 2 || !next_alloc.realloc)
        return __libc_realloc(p, n);
    release_block(p);
    return next_alloc.realloc(p, n);
}
#else
/* The sanitizers' allocator is the process's; free() is not wrapped there. */
const char *tnbc_foreign_free(void)
{
    return NULL;
}
#endif /* sanitizers bring their own allocator */

/* ---- our entries kept ours (entry_patch.h) -------------------------------- */

/* Our own definitions, not whatever the global scope resolves the names
 * to, registered at load, before any other library can patch them. */
extern __typeof__(munmap) tnbc_own_munmap __attribute__((alias("munmap"), copy(munmap), visibility("hidden")));
#if !defined(__SANITIZE_THREAD__)
extern __typeof__(mmap) tnbc_own_mmap __attribute__((alias("mmap"), copy(mmap), visibility("hidden")));
extern __typeof__(mremap) tnbc_own_mremap __attribute__((alias("mremap"), copy(mremap), visibility("hidden")));
extern __typeof__(madvise) tnbc_own_madvise __attribute__((alias("madvise"), copy(madvise), visibility("hidden")));
#endif

static void __attribute__((constructor)) register_entries(void)
{
    tnbc_entry_register(TNBC_ENTRY_munmap, (void *)tnbc_own_munmap);
#if !defined(__SANITIZE_THREAD__)
    tnbc_entry_register(TNBC_ENTRY_mmap, (void *)tnbc_own_mmap);
    tnbc_entry_register(TNBC_ENTRY_mremap, (void *)tnbc_own_mremap);
    tnbc_entry_register(TNBC_ENTRY_madvise, (void *)tnbc_own_madvise);
#endif
}
