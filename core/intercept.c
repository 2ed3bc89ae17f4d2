// SPDX-License-Identifier: BSD-3-Clause
/* Common entry points behind the wrappers: initialisation, finalisation,
 * the collective dispatcher and typed release. */
#include "intercept.h"
#include "config.h"
#include "entry_patch.h"
#include "guard_keys.h"

#include <dlfcn.h>
#include <stdatomic.h>

static int active;       /* initialised, enabled, handlers installed */
static int init_seen;    /* tnbc_init ran (enabled or not) */
static int got_for_program = -1;   /* the thread level the program was told */
static int disabled = -1;

int tnbc_is_active(void) { return active; }

static int is_disabled(void)
{
    if (disabled < 0)
        disabled = tnbc_env_bool("TNBC_DISABLE", 0);
    return disabled;
}

int tnbc_init(int *argc, char ***argv, int required, int *provided)
{
    int level = is_disabled() ? required : tnbc_mode_thread_level(required);
    int got = MPI_THREAD_SINGLE, rank = -1, rc;

    init_seen = 1;

    tnbc_gkeys_mpi_init(1);          /* threads started now are MPI's */
    rc = TNBC_NEXT(MPI_Init_thread)(argc, argv, level, &got);
    tnbc_gkeys_mpi_init(0);
    /* MPI's transport may have patched our memory wrappers (UCX's hooks):
     * ours again before the program's first call. */
    const char *lost;
    if (tnbc_entry_reclaim(&lost) != 0 && !is_disabled())
        tnbc_warn("%s; tnbc guards no memory from now on", lost);
    /* The program sees the level it would have got without us: a mode
     * that asked for more (replay's MPI_THREAD_MULTIPLE) does not change
     * what the program may assume, nor what MPI_Query_thread says. */
    if (level > required && got > required)
        got_for_program = required;
    else
        got_for_program = got;
    if (provided)
        *provided = got_for_program;
    if (rc != MPI_SUCCESS || is_disabled())
        return rc;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tnbc_set_log_rank(rank);
    if (tnbc_guard_init() != 0) {
        tnbc_warn("%s disabled: cannot install the fault handler; collectives run unchanged",
                  tnbc_mode_name);
        return rc;
    }
    active = tnbc_mode_init(got);
    return rc;
}

int MPI_Query_thread(int *level)
{
    if (got_for_program < 0 || !level)
        return TNBC_NEXT(MPI_Query_thread)(level);
    *level = got_for_program;
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv)
{
    return tnbc_init(argc, argv, MPI_THREAD_SINGLE, NULL);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return tnbc_init(argc, argv, required, provided);
}

int tnbc_finalize(void)
{
    if (active) {
        tnbc_mode_quiesce(NULL);
        tnbc_mode_finalize();
        active = 0;
    }
    return TNBC_NEXT(MPI_Finalize)();
}

int MPI_Finalize(void) { return tnbc_finalize(); }

int MPI_Comm_free(MPI_Comm *comm)
{
    if (active && comm)
        tnbc_mode_quiesce(comm);
    return TNBC_NEXT(MPI_Comm_free)(comm);
}

void *tnbc_next_mpi(const char *name, void *pmpi)
{
    Dl_info next_at, pmpi_at;
    void *next = dlsym(RTLD_NEXT, name);
    if (!next || !dladdr(next, &next_at) || !dladdr(pmpi, &pmpi_at) ||
        next_at.dli_fbase == pmpi_at.dli_fbase)
        return pmpi;
    return next;
}

/* The module whose definition of `name` the process's calls reach. */
static const char *first_definer(const char *name)
{
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, name);
    return f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "?";
}

/* MPI initialised, but not through tnbc_init: the program (a tool linked
 * into it, as Darshan or Score-P are) or a library preloaded before tnbc
 * defines MPI_Init itself and calls PMPI_Init. tnbc then has no state
 * and stays off; said once, naming who did. */
static void say_init_missed(void)
{
    static int said;
    int flag = 0;
    if (said || init_seen || is_disabled() || PMPI_Initialized(&flag) != MPI_SUCCESS || !flag)
        return;
    said = 1;
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tnbc_set_log_rank(rank);
    tnbc_warn("MPI was initialised without tnbc's MPI_Init (MPI_Init is %s's, MPI_Init_thread "
              "%s's: a tool linked into the program or preloaded before tnbc); tnbc stays off",
              first_definer("MPI_Init"), first_definer("MPI_Init_thread"));
}

int tnbc_collective(const struct tnbc_args *a, void *caller)
{
    if (!active) {
        say_init_missed();
        return tnbc_pmpi_collective(a);
    }
    return tnbc_mode_collective(a, caller);
}

void tnbc_release_typed(const void *buf, long count, MPI_Datatype type,
                        enum tnbc_release_reason why)
{
    MPI_Aint lb, extent, true_lb, true_extent;

    if (!tnbc_guard_active() || !buf || count <= 0 || buf == MPI_IN_PLACE ||
        type == MPI_DATATYPE_NULL)
        return;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return;
    (void)lb;
    /* Footprint in 64-bit arithmetic; a type with a negative or zero
     * extent, or an overflowing product, releases everything guarded
     * rather than a wrong range. */
    MPI_Aint span;
    if (extent < 0 || true_extent <= 0 ||
        __builtin_mul_overflow((MPI_Aint)(count - 1), extent, &span) ||
        __builtin_add_overflow(span, true_extent, &span)) {
        tnbc_release_all(why);
        return;
    }
    tnbc_guard_release_range((const char *)buf + true_lb, (size_t)span, why);
}

void tnbc_release_all(enum tnbc_release_reason why)
{
    /* Every guarded page lies above the first page and below the top of
     * the address space: one range covering them all. */
    size_t ps = tnbc_page_size();
    if (tnbc_guard_active())
        tnbc_guard_release_range((const void *)ps, ((size_t)-1 >> 1) - ps, why);
}
