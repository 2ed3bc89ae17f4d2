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

/* Members' world ranks, in comm-rank order (the local group of an
 * inter-communicator). Returns 0, or -1. */
static int compute(MPI_Comm comm, struct tnbc_comm_shape *s)
{
    MPI_Group g, wg;
    int wsize = 0, rc = -1;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    PMPI_Group_size(g, &s->size);
    int *in = malloc((size_t)s->size * sizeof *in), *out = malloc((size_t)s->size * sizeof *out);
    if (in && out) {
        for (int i = 0; i < s->size; i++)
            in[i] = i;
        PMPI_Group_translate_ranks(g, s->size, in, wg, out);
        s->hash = fnv(2166136261u, (uint32_t)s->size);
        s->world = s->size == wsize;
        for (int i = 0; i < s->size; i++) {
            s->hash = fnv(s->hash, (uint32_t)out[i]);
            s->world &= out[i] == i;
        }
        if (s->world)
            snprintf(s->name, sizeof s->name, "world");
        else
            snprintf(s->name, sizeof s->name, "c%d.%08x", s->size, (unsigned)s->hash);
        rc = 0;
    }
    free(in);
    free(out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
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
