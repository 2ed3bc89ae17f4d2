/* SPDX-License-Identifier: BSD-3-Clause */
/* What a rank's trace database says about the run and the machine: the
 * run row (host, command line, clocks) and the measured costs that the
 * model's Tinit needs (copy bandwidth, mprotect, fault). */
#ifndef TNBC_RUNINFO_H
#define TNBC_RUNINFO_H

#include "tracedb.h"

/* Fills r (strings point into static storage). Needs MPI initialised and
 * tnbc_guard_init() done (it measures the fault cost). The copy, mprotect
 * and fault costs are measured at the first call only. Not thread-safe:
 * called from MPI initialisation and a site's decision. */
void tnbc_runinfo_collect(struct tnbc_run_info *r, const char *mode);
/* Opens DIR/rank-NNNNNN.db, creating DIR; writes meta and run rows. */
struct tnbc_db *tnbc_rank_db_open(const char *dir, const struct tnbc_run_info *r);

#endif
