// SPDX-License-Identifier: BSD-3-Clause
/* Communicator shapes (comm_shape.h). Computed once per communicator with
 * group translation and kept as an attribute whose delete callback frees
 * it, so a freed communicator's handle, if MPI reuses it, starts afresh. */
#include "comm_shape.h"

#include <stdio.h>
#include <stdlib.h>

static int keyval = MPI_KEYVAL_INVALID;

static int shape_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm; (void)key; (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static uint32_t fnv(uint32_t h, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        h ^= (v >> (8 * i)) & 0xffu;
        h *= 16777619u;
    }
    return h;
}

/* Folds the world ranks of g's members, in group-rank order, into *h;
 * *ident stays 1 while member i is world rank i. Returns 0, or -1. */
static int fold_group(MPI_Group g, uint32_t *h, int *ident)
{
    MPI_Group wg;
    int n = 0, rc = -1;
    PMPI_Group_size(g, &n);
    int *in = malloc((size_t)n * sizeof *in + 1), *out = malloc((size_t)n * sizeof *out + 1);
    if (in && out && PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            in[i] = i;
        PMPI_Group_translate_ranks(g, n, in, wg, out);
        *h = fnv(*h, (uint32_t)n);
        for (int i = 0; i < n; i++) {
            *h = fnv(*h, (uint32_t)out[i]);
            *ident &= out[i] == i;
        }
        PMPI_Group_free(&wg);
        rc = 0;
    }
    free(in);
    free(out);
    return rc;
}

/* Members' world ranks, in comm-rank order; an inter-communicator's
 * remote group is folded in too, and its name starts with 'i'. */
static int compute(MPI_Comm comm, struct tnbc_comm_shape *s)
{
    MPI_Group g;
    int wsize = 0, inter = 0, rc;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    PMPI_Group_size(g, &s->size);
    s->hash = 2166136261u;
    s->world = !inter && s->size == wsize;
    rc = fold_group(g, &s->hash, &s->world);
    PMPI_Group_free(&g);
    if (rc == 0 && inter) {
        int ident = 1;
        rc = PMPI_Comm_remote_group(comm, &g) == MPI_SUCCESS ? fold_group(g, &s->hash, &ident) : -1;
        if (rc == 0)
            PMPI_Group_free(&g);
    }
    if (s->world)
        snprintf(s->name, sizeof s->name, "world");
    else
        snprintf(s->name, sizeof s->name, "%c%d.%08x", inter ? 'i' : 'c', s->size,
                 (unsigned)s->hash);
    return rc;
}

const struct tnbc_comm_shape *tnbc_comm_shape(MPI_Comm comm)
{
    struct tnbc_comm_shape *s = NULL;
    int found = 0;
    if (comm == MPI_COMM_NULL)
        return NULL;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, shape_delete, &keyval, NULL) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &s, &found) == MPI_SUCCESS && found)
        return s;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (compute(comm, s) != 0 || PMPI_Comm_set_attr(comm, keyval, s) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

const struct tnbc_site *tnbc_site_on(void *caller, MPI_Comm comm)
{
    const struct tnbc_site *base = tnbc_site_of(caller);
    if (comm == MPI_COMM_WORLD)
        return base;
    const struct tnbc_comm_shape *s = tnbc_comm_shape(comm);
    if (!s || s->world)
        return base;
    return tnbc_site_variant(base, s->hash, s->name);
}
