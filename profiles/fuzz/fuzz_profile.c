// SPDX-License-Identifier: BSD-3-Clause
/*
 * libFuzzer target for the profile reader: any input must give a profile or
 * a one-line "NAME:LINE: ..." message, never a crash, a leak or a hang. An
 * accepted profile is written back and re-read: the writer's output must be
 * accepted too (the round trip the analyzer and replay rely on).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[TNBC_PROFILE_ERRLEN] = "";
    struct tnbc_profile *p = tnbc_profile_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (!p) {
        if (strncmp(err, "fuzz:", 5) != 0 || strchr(err, '\n'))
            abort(); /* every refusal names the input and fits on one line */
        return 0;
    }
    for (int i = 0; i < p->nsites; i++) {
        const struct tnbc_profile_site *s = &p->sites[i];
        if (tnbc_profile_find(p, s->site, s->op) != s)
            abort();
        for (int r = 0; r < s->comm_size && r < 64; r++) {
            for (int j = 0; j < s->nsub && j < 64; j++)
                (void)tnbc_profile_recv_prio(s, r, j);
            (void)tnbc_profile_node_phase(s, r);
        }
        (void)tnbc_profile_check(p, s, s->comm_size, s->block_bytes, 0, NULL, err, sizeof err);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        FILE *saved = stdout;
        stdout = f; /* tnbc_profile_write("-") writes to stdout */
        int rc = tnbc_profile_write(p, "-", err, sizeof err);
        stdout = saved;
        fclose(f);
        struct tnbc_profile *q = rc == 0 ? tnbc_profile_parse(buf, len, "again", err, sizeof err) : NULL;
        if (rc == 0 && !q)
            abort(); /* what the writer writes, the reader must read */
        tnbc_profile_free(q);
        free(buf);
    }
    tnbc_profile_free(p);
    return 0;
}
