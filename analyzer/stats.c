// SPDX-License-Identifier: BSD-3-Clause
/* Rank statistics for comparing two samples of timings (tnbc auto's
 * self-check, libreplay/autotune.c). */
#include "analyzer.h"

#include <math.h>

/* The Mann-Whitney U statistic of "x tends to be smaller than y" (pairs
 * with x < y count 1, ties 1/2), as a one-sided z: normal approximation
 * with continuity correction, variance without the tie correction
 * (timings in ns seldom tie). Pair counting, O(nx * ny): the samples are
 * a few hundred at most. */
double an_mann_whitney_z(const double *x, int nx, const double *y, int ny)
{
    if (nx <= 0 || ny <= 0)
        return 0;
    double u = 0;
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            u += x[i] < y[j] ? 1 : x[i] == y[j] ? 0.5 : 0;
    double mu = 0.5 * nx * ny, sd = sqrt((double)nx * ny * (nx + ny + 1) / 12.0);
    return (u - mu - 0.5) / sd;
}
