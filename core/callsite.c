// SPDX-License-Identifier: BSD-3-Clause
#include "callsite.h"
#include "config.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4

struct slot {
    void *key;
    int site;          /* index into sites, -1 when empty */
};

static struct slot *table;
static size_t table_cap;            /* power of two */
static struct tnbc_site **sites;
static int nsites, sites_cap;
static int depth = -1;

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : (path ? path : "?");
}

/* module+0xoff for one return address; the symbol when the object has one. */
static void describe_frame(void *addr, char *out, size_t len, struct tnbc_site *s)
{
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname) {
        uint64_t off = (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_fbase);
        snprintf(out, len, "%s+0x%llx", base_name(info.dli_fname), (unsigned long long)off);
        if (s) {
            snprintf(s->module, sizeof s->module, "%s", base_name(info.dli_fname));
            s->offset = off;
            snprintf(s->symbol, sizeof s->symbol, "%s", info.dli_sname ? info.dli_sname : "");
        }
    } else {
        snprintf(out, len, "?+0x%llx", (unsigned long long)(uintptr_t)addr);
        if (s) {
            snprintf(s->module, sizeof s->module, "?");
            s->offset = (uint64_t)(uintptr_t)addr;
            s->symbol[0] = '\0';
        }
    }
}

/* Outer frames for TNBC_SITE_DEPTH > 1: the frames above `caller` in the
 * current stack, skipping everything up to and including caller itself. */
static void append_outer_frames(void *caller, struct tnbc_site *s)
{
    void *frames[32];
    int n = backtrace(frames, 32), i, found = -1, added = 0;
    for (i = 0; i < n; i++)
        if (frames[i] == caller) {
            found = i;
            break;
        }
    if (found < 0)
        return;
    for (i = found + 1; i < n && added < depth - 1; i++, added++) {
        size_t used = strlen(s->id);
        if (used + 2 >= sizeof s->id)
            return;
        s->id[used] = ';';
        describe_frame(frames[i], s->id + used + 1, sizeof s->id - used - 1, NULL);
    }
}

/* Appends s to the dense table; its index, or -1. */
static int add_site(struct tnbc_site *s)
{
    if (nsites == sites_cap) {
        int cap = sites_cap ? 2 * sites_cap : 64;
        struct tnbc_site **grown = realloc(sites, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(s);
            return -1;
        }
        sites = grown;
        sites_cap = cap;
    }
    s->index = nsites;
    sites[nsites] = s;
    return nsites++;
}

static int new_site(void *caller)
{
    struct tnbc_site *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    describe_frame(caller, s->id, sizeof s->id, s);
    if (depth > 1)
        append_outer_frames(caller, s);
    return add_site(s);
}

size_t tnbc_site_module_len(const char *id)
{
    const char *plus = strchr(id, '+');
    return plus ? (size_t)(plus - id) : strlen(id);
}

const char *tnbc_site_shape(const struct tnbc_site *site)
{
    const char *at = site->shape ? strrchr(site->id, '@') : NULL;
    return at ? at + 1 : "world";
}

const struct tnbc_site *tnbc_site_variant(const struct tnbc_site *base, uint32_t shape,
                                          const char *name)
{
    if (base->index < 0)
        return base;
    struct tnbc_site *b = sites[base->index], *v;
    for (v = b->variants; v; v = v->variants)
        if (v->shape == shape)
            return v;
    v = malloc(sizeof *v);
    if (!v)
        return base;
    *v = *b;
    v->shape = shape;
    size_t used = strlen(v->id);
    if (used + 2 + strlen(name) > sizeof v->id) {
        /* No room for the suffix: the shape stays apart in the tables,
         * but the id cannot say so; keep the plain site instead. */
        free(v);
        return base;
    }
    snprintf(v->id + used, sizeof v->id - used, "@%s", name);
    if (add_site(v) < 0)
        return base;      /* add_site freed it */
    v->variants = b->variants;
    b->variants = v;
    return v;
}

static int grow_table(void)
{
    size_t cap = table_cap ? 2 * table_cap : 256, i;
    struct slot *t = malloc(cap * sizeof *t);
    if (!t)
        return -1;
    for (i = 0; i < cap; i++)
        t[i].site = -1;
    for (i = 0; i < table_cap; i++) {
        if (table[i].site < 0)
            continue;
        size_t h = ((uintptr_t)table[i].key >> 2) & (cap - 1);
        while (t[h].site >= 0)
            h = (h + 1) & (cap - 1);
        t[h] = table[i];
    }
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

/* MPI's own language bindings (MPICH's libmpichfort for `use mpi_f08`)
 * call the C entry points themselves, so the address that called us is
 * the binding's, the same for one operation from anywhere in the program:
 * every such call was one site. The site is the first frame outside MPI's
 * libraries (libmpi*: libmpi, libmpich, libmpichfort, libmpifort, ...).
 * Binding addresses are few; they are remembered, and only their calls
 * pay for the backtrace. */
#define MAX_BINDING_CALLERS 64
static void *binding_callers[MAX_BINDING_CALLERS];
static int nbinding_callers;

static int in_mpi_library(void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_fname &&
           strncmp(base_name(info.dli_fname), "libmpi", 6) == 0;
}

static int is_binding_caller(void *caller)
{
    for (int i = 0; i < nbinding_callers; i++)
        if (binding_callers[i] == caller)
            return 1;
    if (!in_mpi_library(caller))
        return 0;
    if (nbinding_callers < MAX_BINDING_CALLERS)
        binding_callers[nbinding_callers++] = caller;
    return 1;
}

static void *past_mpi_bindings(void *caller)
{
    void *frames[32];
    int n = backtrace(frames, 32), i = 0;
    while (i < n && frames[i] != caller)
        i++;
    for (; i < n; i++)
        if (!in_mpi_library(frames[i]))
            return frames[i];
    return caller;        /* no frame outside MPI: the binding's address */
}

/* A caller that is not in the site table yet may be a binding's. */
static void *program_caller(void *caller)
{
    return is_binding_caller(caller) ? past_mpi_bindings(caller) : caller;
}

const struct tnbc_site *tnbc_site_of(void *caller)
{
    static struct tnbc_site unknown = { .id = "?", .module = "?", .index = -1 };
    size_t h;

    if (depth < 0)
        depth = (int)tnbc_env_long("TNBC_SITE_DEPTH", 1, 1, MAX_DEPTH);
    /* With depth > 1 the same return address may belong to several sites;
     * they are then told apart by the outer frames, never cached. */
    if (depth > 1) {
        int idx = new_site(program_caller(caller));
        if (idx < 0)
            return &unknown;
        for (int i = 0; i < idx; i++)
            if (strcmp(sites[i]->id, sites[idx]->id) == 0) {
                free(sites[idx]);
                nsites--;
                return sites[i];
            }
        return sites[idx];
    }
    if ((size_t)(nsites + 1) * 2 > table_cap && grow_table() < 0)
        return &unknown;
    h = ((uintptr_t)caller >> 2) & (table_cap - 1);
    while (table[h].site >= 0) {
        if (table[h].key == caller)
            return sites[table[h].site];
        h = (h + 1) & (table_cap - 1);
    }
    void *outer = program_caller(caller);
    if (outer != caller)
        return tnbc_site_of(outer);     /* outside MPI: cached under its own address */
    int idx = new_site(caller);
    if (idx < 0)
        return &unknown;
    table[h].key = caller;
    table[h].site = idx;
    return sites[idx];
}

int tnbc_site_count(void) { return nsites; }

const struct tnbc_site *tnbc_site_by_index(int index)
{
    return (index >= 0 && index < nsites) ? sites[index] : NULL;
}

void *tnbc_site_row(struct tnbc_site_table *t, const struct tnbc_site *site)
{
    if (site->index < 0)
        return NULL;
    if (site->index >= t->nrows) {
        int n = site->index + 16;
        char *grown = realloc(t->rows, (size_t)n * t->row_size);
        if (!grown)
            return NULL;
        memset(grown + (size_t)t->nrows * t->row_size, 0, (size_t)(n - t->nrows) * t->row_size);
        t->rows = grown;
        t->nrows = n;
    }
    return (char *)t->rows + (size_t)site->index * t->row_size;
}
