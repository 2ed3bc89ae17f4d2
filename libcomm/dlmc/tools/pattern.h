/* SPDX-License-Identifier: BSD-3-Clause */
/* pattern.h - reproducible message contents and a checksum, so a receiver
 * can verify every byte of message i without the sender's help. */
#ifndef TNBC_DLMC_PATTERN_H
#define TNBC_DLMC_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline void pattern_fill(uint8_t *p, size_t len, uint32_t i)
{
	for (size_t j = 0; j < len; j++)
		p[j] = (uint8_t)(i * 131u + j * 7u + (j >> 8) * 13u + (j >> 16));
}

/* Index of the first wrong byte, or len if all are right. */
static inline size_t pattern_check(const uint8_t *p, size_t len, uint32_t i)
{
	for (size_t j = 0; j < len; j++)
		if (p[j] != (uint8_t)(i * 131u + j * 7u + (j >> 8) * 13u + (j >> 16)))
			return j;
	return len;
}

/* FNV-1a, 64-bit. */
static inline uint64_t pattern_fnv(const uint8_t *p, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t j = 0; j < len; j++)
		h = (h ^ p[j]) * 1099511628211ull;
	return h;
}

#endif
