/* SPDX-License-Identifier: BSD-3-Clause */
/* Call-site identity: a name for "this collective call in the program" that
 * is the same in every run of the same binary, despite ASLR.
 *
 * A site is the caller's return address expressed as module+0xOFFSET (the
 * ELF object's file name and the offset from its load base, via dladdr),
 * with up to TNBC_SITE_DEPTH frames joined by ';' when the collective is
 * reached through a helper function of the application. Lookups are cached
 * by return address, so the cost after the first call is a hash probe. */
#ifndef TNBC_CALLSITE_H
#define TNBC_CALLSITE_H

#include <stddef.h>
#include <stdint.h>

#define TNBC_SITE_ID_MAX 512

struct tnbc_site {
    char id[TNBC_SITE_ID_MAX];  /* module+0xoff[;module+0xoff...] */
    char module[128];           /* innermost frame's object file name */
    uint64_t offset;            /* innermost frame's offset in it */
    char symbol[128];           /* enclosing exported symbol, or "" */
    int index;                  /* dense per-process number, from 0 */
    uint32_t shape;             /* communicator shape key; 0 for the plain site */
    struct tnbc_site *variants; /* this code address on other shapes (a list) */
};

/* The site of the application code that called into the MPI wrapper whose
 * immediate return address is `caller`. Never NULL: an unresolvable address
 * becomes "?+0xADDRESS". Not async-signal-safe. */
const struct tnbc_site *tnbc_site_of(void *caller);
int tnbc_site_count(void);
/* The length of the module name that starts a site id `module+0xOFF...`
 * (the whole id when it has no '+'). */
size_t tnbc_site_module_len(const char *id);
/* The variant of a plain site for a communicator shape (comm_shape.h):
 * same code address, id "<base id>@<name>", its own index; created on
 * first use. `base` itself when out of memory or unresolved. */
/* The shape name of a site: "world" for a plain one, else its id's suffix. */
const char *tnbc_site_shape(const struct tnbc_site *site);
const struct tnbc_site *tnbc_site_variant(const struct tnbc_site *base, uint32_t shape,
                                          const char *name);

/* A table of per-site records (the trace's and the replay's statistics),
 * indexed by tnbc_site.index and grown on demand; new rows are zeroed. */
struct tnbc_site_table {
    void *rows;
    int nrows;
    size_t row_size;      /* set before first use */
};
/* The row of `site`, or NULL (unresolved site or out of memory). */
void *tnbc_site_row(struct tnbc_site_table *t, const struct tnbc_site *site);
const struct tnbc_site *tnbc_site_by_index(int index);

#endif
