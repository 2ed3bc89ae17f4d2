// SPDX-License-Identifier: BSD-3-Clause
/*
 * Is the running executable the build the profile was made for?
 *
 * `tnbc analyze` writes `# program NAME ID` into the profile (FORMAT.md);
 * `tnbc run` compares it before the job starts. A job started without the
 * front door (TNBC_PROFILE and LD_PRELOAD set by hand or by a launcher)
 * gets the same check here, in the runtime: when this process's executable
 * is NAME and its ELF build-id differs from ID, the profile's sites in NAME
 * are turned off. Only build-ids are compared: a `sha256:` ID (an
 * executable without a build-id note) is left to the front door.
 */
#ifndef TNBC_REPLAY_IDENTITY_H
#define TNBC_REPLAY_IDENTITY_H

#include "profile.h"

#include <stddef.h>

/* 1 when p was made for another build of this process's executable: its
 * sites in that executable are then off and `why` says so (one line, for
 * the caller to print once); 0 otherwise (same build, another program, no
 * identity recorded, or nothing comparable). */
int identity_check(struct tnbc_profile *p, char *why, size_t whylen);

#endif
