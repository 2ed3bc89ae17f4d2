// SPDX-License-Identifier: BSD-3-Clause
/*
 * am.c - active messages, and the transport of every operation that must run
 * on the target's CPU (remote segment puts, two-address reads).
 *
 * A message is one MPI_Isend on a private communicator; its tag is the
 * handler id (or an internal tag). Handlers run inside library calls on the
 * target (passive progress), one at a time and never nested, which makes
 * them atomic with respect to each other. Counting messages sent and run
 * lets shmem_barrier_all wait until every message has run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define MAX_HANDLERS 1024
#define SEND_WINDOW 1024   /* outstanding sends before we wait for some */

struct send { MPI_Request req; void *buf; };

static shmemx_am_handler_t handlers[MAX_HANDLERS];
static int nhandlers;
static struct send *sends;
static MPI_Request *reqs;
static int nsends, capsends;
static long nsent, nrun;
static int in_handler;
static char *rbuf;
static size_t rcap;

void shmemi_am_init(void)
{
    nhandlers = 0;
    nsent = nrun = 0;
    nsends = 0;
}

long shmemi_msg_balance(void) { return nsent - nrun; }

/* Frees the buffers of completed sends. */
static void reap_sends(void)
{
    int done = 0, *idx;
    if (nsends == 0)
        return;
    idx = malloc(sizeof(int) * nsends);
    for (int i = 0; i < nsends; i++)
        reqs[i] = sends[i].req;
    MPI_Testsome(nsends, reqs, &done, idx, MPI_STATUSES_IGNORE);
    for (int i = 0; i < done && done != MPI_UNDEFINED; i++) {
        free(sends[idx[i]].buf);
        sends[idx[i]].buf = NULL;
    }
    int k = 0;
    for (int i = 0; i < nsends; i++)
        if (sends[i].buf)
            sends[k++] = sends[i];
    nsends = k;
    free(idx);
}

static void msg_send(int pe, int tag, const void *hdr, size_t hlen,
                     const void *data, size_t len);

void shmemi_msg_send(int pe, int tag, const void *hdr, size_t hlen,
                     const void *data, size_t len)
{
    shmemi_lock();
    msg_send(pe, tag, hdr, hlen, data, len);
    shmemi_unlock();
}

static void msg_send(int pe, int tag, const void *hdr, size_t hlen,
                     const void *data, size_t len)
{
    char *buf = malloc(hlen + len + 1);
    if (!buf)
        shmemi_fatal("out of memory for an active message of %zu bytes", len);
    if (hlen)
        memcpy(buf, hdr, hlen);
    if (len)
        memcpy(buf + hlen, data, len);
    if (nsends == capsends) {
        capsends = capsends ? 2 * capsends : 64;
        sends = realloc(sends, capsends * sizeof *sends);
        reqs = realloc(reqs, capsends * sizeof *reqs);
        if (!sends || !reqs)
            shmemi_fatal("out of memory");
    }
    sends[nsends].buf = buf;
    MPI_Isend(buf, (int)(hlen + len), MPI_BYTE, pe, tag, shmemi.am_comm,
              &sends[nsends].req);
    nsends++;
    nsent++;
    /* Bound the memory held by unfinished sends; inside a handler we must not
     * wait (the peer may be waiting on us), so we only reap there. */
    if (nsends >= SEND_WINDOW) {
        reap_sends();
        while (!in_handler && nsends >= SEND_WINDOW) {
            shmemi_am_poll();
            reap_sends();
        }
    }
}

static void dispatch(int src, int tag, const char *buf, size_t len)
{
    if (tag >= 0 && tag < nhandlers)
        handlers[tag](src, buf, len);
    else if (tag == SHMEMI_TAG_SEG)
        shmemi_seg_deliver(src, buf, len);
    else if (tag == SHMEMI_TAG_GETTO)
        shmemi_getto_deliver(src, buf, len);
    else
        fprintf(stderr, "tnbc-shmem: error PE %d: message from PE %d names unknown "
                "handler %d; dropped\n", shmemi.me, src, tag);
}

static int am_poll(void);

int shmemi_am_poll(void)
{
    shmemi_lock();
    int ran = am_poll();
    shmemi_unlock();
    return ran;
}

static int am_poll(void)
{
    int ran = 0, flag, count;
    MPI_Message msg;
    MPI_Status st;
    if (in_handler)
        return 0;
    reap_sends();
    for (;;) {
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, shmemi.am_comm, &flag, &msg, &st);
        if (!flag)
            break;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count + 1 > rcap) {
            rcap = (size_t)count + 1 > 4096 ? (size_t)count + 1 : 4096;
            free(rbuf);
            rbuf = malloc(rcap);
            if (!rbuf)
                shmemi_fatal("out of memory for a %d-byte message", count);
        }
        MPI_Mrecv(rbuf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        in_handler = 1;
        dispatch(st.MPI_SOURCE, st.MPI_TAG, rbuf, (size_t)count);
        in_handler = 0;
        nrun++;
        ran++;
    }
    return ran;
}

int shmemx_am_poll(void)
{
    shmemi_check_init("shmemx_am_poll");
    return shmemi_am_poll();
}

void shmemi_am_fini(void)
{
    for (int i = 0; i < nsends; i++) {
        MPI_Wait(&sends[i].req, MPI_STATUS_IGNORE);
        free(sends[i].buf);
    }
    free(sends);
    free(reqs);
    free(rbuf);
    sends = NULL;
    reqs = NULL;
    rbuf = NULL;
    nsends = capsends = 0;
    rcap = 0;
}

int shmemx_register_handler(shmemx_am_handler_t handler)
{
    int n[2], m[2];
    shmemi_check_init("shmemx_register_handler");
    n[0] = nhandlers;
    n[1] = -nhandlers;
    MPI_Allreduce(n, m, 2, MPI_INT, MPI_MAX, shmemi.comm);
    if (m[0] != -m[1])
        shmemi_fatal("shmemx_register_handler: PEs registered different numbers "
                     "of handlers; registration is collective");
    if (!handler || nhandlers == MAX_HANDLERS) {
        shmemi_warn("shmemx_register_handler: %s", handler ? "too many handlers"
                                                          : "NULL handler");
        return -1;
    }
    handlers[nhandlers] = handler;
    return nhandlers++;
}

void shmemx_send(int pe, int handler, const void *data, size_t len)
{
    shmemi_check_init("shmemx_send");
    if (pe < 0 || pe >= shmemi.npes || handler < 0 || handler >= nhandlers ||
        len > SHMEMX_AM_MAX_BYTES || (len && !data)) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmemx_send(pe %d, handler %d, "
                "%zu bytes) refused: %s\n", shmemi.me, pe, handler, len,
                pe < 0 || pe >= shmemi.npes ? "no such PE"
                : handler < 0 || handler >= nhandlers ? "no such handler"
                : len > SHMEMX_AM_MAX_BYTES ? "longer than SHMEMX_AM_MAX_BYTES"
                : "NULL data");
        return;
    }
    shmemi_msg_send(pe, handler, NULL, 0, data, len);
}
