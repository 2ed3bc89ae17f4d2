// SPDX-License-Identifier: BSD-3-Clause
/* Private duplicates per user communicator (comms.h). */
#include "comms.h"
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct comm_state {
    struct comm_priv priv;
    MPI_Comm user;
    struct comm_state *prev, *next;   /* live states, for comms_finalize */
};

static int keyval = MPI_KEYVAL_INVALID;
/* Threads of an MPI_THREAD_MULTIPLE program may set up and free states of
 * different communicators at once: the list is locked, never across an MPI
 * call (a collective waits for other ranks). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct comm_state *live;
static void (*before_free)(void);
static size_t agree_elem;

/* The user's communicator is being freed (MPI_Comm_free, MPI_Comm_disconnect,
 * or comms_finalize): nothing may still travel on its duplicates. */
static int state_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    struct comm_state *s = value;
    (void)comm; (void)key; (void)extra;
    if (before_free)
        before_free();
    PMPI_Comm_free(&s->priv.data);
    PMPI_Comm_free(&s->priv.agree);
    free(s->priv.agree_out);   /* agree_got lies in the same block */
    free(s->priv.node_of);
    pthread_mutex_lock(&live_lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        live = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&live_lock);
    free(s);
    return MPI_SUCCESS;
}

void comms_init(void (*hook)(void), size_t elem)
{
    before_free = hook;
    agree_elem = elem;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, state_delete, &keyval, NULL) != MPI_SUCCESS)
        keyval = MPI_KEYVAL_INVALID;
}

static struct comm_state *lookup(MPI_Comm comm)
{
    struct comm_state *s = NULL;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &s, &found) != MPI_SUCCESS || !found)
        return NULL;
    return s;
}

int comms_known(MPI_Comm comm) { return lookup(comm) != NULL; }

/* node_of[r] = the lowest rank of member r's node, every member computing
 * the same array (collective on `comm`). */
static int node_map(MPI_Comm comm, int size, int *node_of)
{
    MPI_Comm shm = MPI_COMM_NULL;
    int me = 0, leader = 0;
    if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shm) != MPI_SUCCESS)
        return -1;
    int rc = PMPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, shm);
    PMPI_Comm_free(&shm);
    if (rc != MPI_SUCCESS || PMPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm) != MPI_SUCCESS)
        return -1;
    for (int r = 0; r < size; r++)
        assert(node_of[r] >= 0 && node_of[r] <= r);
    return 0;
}

struct comm_priv *comms_get(MPI_Comm comm, const char **why)
{
    struct comm_state *s = lookup(comm);
    int inter = 0;
    if (s)
        return &s->priv;
    if (keyval == MPI_KEYVAL_INVALID) {
        *why = "no attribute key for per-communicator state";
        return NULL;
    }
    /* Every member answers the same: no member dups alone. */
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        *why = "an inter-communicator (only intra-communicators are transformed)";
        return NULL;
    }
    int size = 0;
    s = calloc(1, sizeof *s);
    if (s && PMPI_Comm_size(comm, &size) == MPI_SUCCESS && size > 0 &&
        (s->priv.agree_out = calloc(2 * (size_t)size, agree_elem ? agree_elem : 1)))
        s->priv.agree_got = (struct edge_req *)((char *)s->priv.agree_out + (size_t)size * agree_elem);
    if (s && s->priv.agree_out)
        s->priv.node_of = calloc((size_t)size, sizeof *s->priv.node_of);
    if (!s || !s->priv.agree_out || !s->priv.node_of) {
        tnbc_warn("out of memory for a communicator's state");
        PMPI_Abort(MPI_COMM_WORLD, 1);   /* the other members are in the dup */
    }
    if (PMPI_Comm_dup(comm, &s->priv.data) != MPI_SUCCESS ||
        PMPI_Comm_dup(comm, &s->priv.agree) != MPI_SUCCESS ||
        node_map(s->priv.agree, size, s->priv.node_of) != 0 ||
        PMPI_Comm_set_attr(comm, keyval, s) != MPI_SUCCESS) {
        tnbc_warn("cannot set up a communicator for the progress thread (duplicate or node map)");
        PMPI_Abort(MPI_COMM_WORLD, 1);   /* the members no longer agree */
    }
    s->user = comm;
    pthread_mutex_lock(&live_lock);
    s->next = live;
    if (live)
        live->prev = s;
    live = s;
    pthread_mutex_unlock(&live_lock);
    return &s->priv;
}

void comms_finalize(void)
{
    while (live) {
        struct comm_state *s = live;
        if (PMPI_Comm_delete_attr(s->user, keyval) != MPI_SUCCESS)
            live = s->next;       /* cannot happen for a live state; never loop */
    }
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
}
