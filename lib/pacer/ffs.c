/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ffs.c - allocation of the hierarchical find-first-set bitmap (ffs.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ffs.h"

int
sl_pacer_ffs_init(struct sl_pacer_ffs *b, uint32_t nbits)
{
	uint32_t bits = nbits;

	memset(b, 0, sizeof(*b));
	if (!sl_is_pow2(nbits) || nbits < 64 || nbits > (UINT32_C(1) << 24))
		return -EINVAL;
	b->nbits = nbits;
	do {
		uint32_t words = SL_DIV_ROUND_UP(bits, 64);

		b->lvl[b->nlevels] = calloc(words, sizeof(uint64_t));
		if (b->lvl[b->nlevels] == NULL) {
			sl_pacer_ffs_fini(b);
			return -ENOMEM;
		}
		b->nlevels++;
		bits = words;
	} while (bits > 1);
	return 0;
}

void
sl_pacer_ffs_fini(struct sl_pacer_ffs *b)
{
	for (uint32_t l = 0; l < SL_PACER_FFS_LEVELS_MAX; l++)
		free(b->lvl[l]);
	memset(b, 0, sizeof(*b));
}

size_t
sl_pacer_ffs_mem_bytes(const struct sl_pacer_ffs *b)
{
	size_t total = 0;
	uint32_t bits = b->nbits;

	for (uint32_t l = 0; l < b->nlevels; l++) {
		bits = SL_DIV_ROUND_UP(bits, 64);
		total += (size_t)bits * sizeof(uint64_t);
	}
	return total;
}
