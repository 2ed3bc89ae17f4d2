// SPDX-License-Identifier: BSD-3-Clause
#include "typemap.h"
#include "dtype.h"

#include <stdlib.h>
#include <string.h>

const char typemap_oom[] = "out of memory";

static size_t map_bytes(int nruns)
{
    return sizeof(struct typemap) + (size_t)nruns * sizeof(struct typemap_run);
}

/* The runs of one element of t, by unpacking bytes of all ones into a
 * zeroed copy of its true extent. */
static struct typemap *probe(MPI_Datatype t, const char **why)
{
    MPI_Aint lb, ext, tlb, text;
    int size, pos = 0;
    if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_size(t, &size) != MPI_SUCCESS || ext <= 0 || size < 0) {
        *why = "a datatype whose extent is not positive";
        return NULL;
    }
    if (text > TYPEMAP_MAX_SPAN) {
        *why = "a datatype whose element spans more than 64 MiB";
        return NULL;
    }
    unsigned char *elem = calloc((size_t)text + 1, 1), *ones = malloc((size_t)size + 1);
    struct typemap *m = NULL;
    if (!elem || !ones)
        goto out;
    memset(ones, 0xff, (size_t)size);
    if (PMPI_Unpack(ones, size, &pos, elem - tlb, 1, t, MPI_COMM_SELF) != MPI_SUCCESS) {
        *why = "MPI_Unpack failed on the datatype";
        goto out;
    }
    int nruns = 0;
    for (MPI_Aint i = 0; i < text; i++)
        nruns += elem[i] && (i == 0 || !elem[i - 1]);
    m = malloc(map_bytes(nruns));
    if (!m)
        goto out;
    m->extent = ext;
    m->nruns = 0;
    for (MPI_Aint i = 0; i < text; i++) {
        if (!elem[i])
            continue;
        if (i == 0 || !elem[i - 1])
            m->run[m->nruns++] = (struct typemap_run){ tlb + i, 0 };
        m->run[m->nruns - 1].len++;
    }
    m->lo = m->nruns ? m->run[0].off : 0;
    m->hi = m->nruns ? m->run[m->nruns - 1].off + m->run[m->nruns - 1].len : 0;
out:
    if (!m && !*why)
        *why = typemap_oom;
    free(elem);
    free(ones);
    return m;
}

static struct typemap *copy_of(const struct typemap *m)
{
    struct typemap *c = malloc(map_bytes(m->nruns));
    if (c)
        memcpy(c, m, map_bytes(m->nruns));
    return c;
}

static int cache_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t; (void)keyval; (void)extra;
    free(value);
    return MPI_SUCCESS;
}

/* Derived types only: a named type's attributes would outlive the library's
 * interest, and its map is small to probe. */
struct typemap *typemap_of(MPI_Datatype t, const char **why)
{
    static int keyval = MPI_KEYVAL_INVALID;
    struct typemap *cached = NULL;
    int found = 0, named = tnbc_type_is_named(t);

    *why = NULL;
    if (!named && keyval == MPI_KEYVAL_INVALID &&
        PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, cache_delete, &keyval, NULL) != MPI_SUCCESS)
        keyval = MPI_KEYVAL_INVALID;
    if (!named && keyval != MPI_KEYVAL_INVALID &&
        PMPI_Type_get_attr(t, keyval, &cached, &found) == MPI_SUCCESS && found)
        return copy_of(cached);
    struct typemap *m = probe(t, why);
    if (!m || named || keyval == MPI_KEYVAL_INVALID)
        return m;
    struct typemap *keep = copy_of(m);
    if (keep && PMPI_Type_set_attr(t, keyval, keep) != MPI_SUCCESS)
        free(keep);
    return m;
}

void typemap_free(struct typemap *m)
{
    free(m);
}
