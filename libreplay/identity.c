// SPDX-License-Identifier: BSD-3-Clause
#include "identity.h"
#include "callsite.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#define BUILD_ID_MAX 64   /* bytes; GNU ld writes 20 (SHA-1) */

struct build_id { char hex[2 * BUILD_ID_MAX + 1]; };

/* The NT_GNU_BUILD_ID note in one PT_NOTE segment, as lowercase hex. */
static int note_build_id(const char *note, size_t size, size_t align, struct build_id *out)
{
    size_t off = 0;
    while (off + sizeof(ElfW(Nhdr)) <= size) {
        const ElfW(Nhdr) *nh = (const void *)(note + off);
        size_t name_at = off + sizeof *nh;
        size_t desc_at = name_at + ((nh->n_namesz + align - 1) & ~(align - 1));
        size_t next = desc_at + ((nh->n_descsz + align - 1) & ~(align - 1));
        if (desc_at > size || nh->n_descsz > size - desc_at)
            return 0;
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
            memcmp(note + name_at, "GNU", 4) == 0 && nh->n_descsz > 0 &&
            nh->n_descsz <= BUILD_ID_MAX) {
            const unsigned char *d = (const unsigned char *)note + desc_at;
            for (size_t i = 0; i < nh->n_descsz; i++)
                snprintf(out->hex + 2 * i, 3, "%02x", d[i]);
            return 1;
        }
        off = next;
    }
    return 0;
}

/* dl_iterate_phdr lists the main program first (empty name). */
static int main_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct build_id *id = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE &&
            note_build_id((const char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
                          ph->p_align >= 8 ? 8 : 4, id))
            break;
    }
    return 1;     /* the first object only */
}

/* Does the site id `module+0xOFF[@c...]` name the module `name`? */
static int site_in(const char *site, const char *name)
{
    size_t n = tnbc_site_module_len(site);
    return site[n] == '+' && strlen(name) == n && strncmp(site, name, n) == 0;
}

int identity_check(struct tnbc_profile *p, char *why, size_t whylen)
{
    char name[256], want[160];
    struct build_id have = { "" };
    if (!p || !p->program || sscanf(p->program, "%255s %159s", name, want) != 2)
        return 0;
    const char *exe = strrchr(program_invocation_name, '/');
    exe = exe ? exe + 1 : program_invocation_name;
    if (strcmp(exe, name) != 0 || strncmp(want, "build-id:", 9) != 0)
        return 0;    /* another program of the job, or a sha256 identity */
    dl_iterate_phdr(main_build_id, &have);
    if (!have.hex[0] || strcmp(have.hex, want + 9) == 0)
        return 0;
    int off = 0;
    for (int i = 0; i < p->nsites; i++)
        if (p->sites[i].on && site_in(p->sites[i].site, name)) {
            p->sites[i].on = 0;
            off++;
        }
    snprintf(why, whylen, "%s was made for another build of %s (%s; this one is build-id:%s): "
             "its %d call site%s in %s that were on run blocking", p->path, name, want, have.hex,
             off, off == 1 ? "" : "s", name);
    return 1;
}
