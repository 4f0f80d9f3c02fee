/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ffs.h - a hierarchical find-first-set bitmap over a circular index space, as in
 * Eiffel's cFFS (Saeed et al., NSDI'19, section 4): level 0 has one bit per bucket, each level
 * above one bit per non-zero word below, so finding the first non-empty bucket at or after any
 * index takes at most 2 x levels word operations (4 levels cover 16M buckets). The search wraps
 * past the end, which is what makes a timing wheel of buckets circular: the owner keeps every
 * live bucket within one revolution of its current index.
 *
 * Used by Tassel's packet-tier timing wheel, the Carousel wheel's timer and the cFFS baseline.
 */
#ifndef PACER_FFS_H
#define PACER_FFS_H

#include <stdint.h>

#include "sl_common.h"

#define SL_PACER_FFS_LEVELS_MAX 4u
#define SL_PACER_FFS_NONE UINT32_MAX

struct sl_pacer_ffs {
	uint64_t *lvl[SL_PACER_FFS_LEVELS_MAX]; /**< lvl[0] one bit per bucket */
	uint32_t nbits;                         /**< buckets: a power of two >= 64 */
	uint32_t nlevels;
};

/* nbits: power of two in [64, 2^24]. 0, -EINVAL or -ENOMEM. */
int sl_pacer_ffs_init(struct sl_pacer_ffs *b, uint32_t nbits);
void sl_pacer_ffs_fini(struct sl_pacer_ffs *b);
size_t sl_pacer_ffs_mem_bytes(const struct sl_pacer_ffs *b);

static inline bool
sl_pacer_ffs_test(const struct sl_pacer_ffs *b, uint32_t i)
{
	return (b->lvl[0][i / 64] >> (i % 64)) & 1;
}

/*
 * Set bit i. The levels above change only when its word was empty, so the common case is one
 * read-modify-write of a level-0 word (there is always a level 0).
 */
static inline void
sl_pacer_ffs_set(struct sl_pacer_ffs *b, uint32_t i)
{
	uint64_t *w = &b->lvl[0][i / 64];
	uint64_t was = *w;

	*w = was | (UINT64_C(1) << (i % 64));
	if (sl_likely(was != 0))
		return;
	for (uint32_t l = 1; l < b->nlevels; l++) {
		i /= 64;
		w = &b->lvl[l][i / 64];
		was = *w;
		*w = was | (UINT64_C(1) << (i % 64));
		if (was != 0)
			return;
	}
}

static inline void
sl_pacer_ffs_clear(struct sl_pacer_ffs *b, uint32_t i)
{
	for (uint32_t l = 0; l < b->nlevels; l++) {
		uint64_t *w = &b->lvl[l][i / 64];

		*w &= ~(UINT64_C(1) << (i % 64));
		if (*w != 0)
			return;
		i /= 64;
	}
}

/* First set bit >= i (no wrap), or SL_PACER_FFS_NONE. */
static inline uint32_t
sl_pacer_ffs_find_ge(const struct sl_pacer_ffs *b, uint32_t i)
{
	uint32_t l = 0, bits = b->nbits;
	uint64_t m;

	for (;;) {
		if (i >= bits)
			return SL_PACER_FFS_NONE;
		m = b->lvl[l][i / 64] & (~UINT64_C(0) << (i % 64));
		if (m != 0)
			break;
		if (l + 1 == b->nlevels)
			return SL_PACER_FFS_NONE;
		i = i / 64 + 1;
		bits = SL_DIV_ROUND_UP(bits, 64);
		l++;
	}
	i = (i & ~63u) + (uint32_t)__builtin_ctzll(m);
	while (l-- > 0)
		i = i * 64 + (uint32_t)__builtin_ctzll(b->lvl[l][i]);
	return i;
}

/* First set bit at or after i, wrapping to the bits before i; SL_PACER_FFS_NONE when empty. */
static inline uint32_t
sl_pacer_ffs_from(const struct sl_pacer_ffs *b, uint32_t i)
{
	uint32_t r = sl_pacer_ffs_find_ge(b, i);

	return r != SL_PACER_FFS_NONE ? r : sl_pacer_ffs_find_ge(b, 0);
}

/*
 * Clear bit i and return the first set bit after it, wrapping; SL_PACER_FFS_NONE when empty.
 * The same as sl_pacer_ffs_clear() then sl_pacer_ffs_from(i + 1), without the search when the
 * next bit is in the same word.
 */
static inline uint32_t
sl_pacer_ffs_clear_next(struct sl_pacer_ffs *b, uint32_t i)
{
	uint64_t *w = &b->lvl[0][i / 64];
	uint64_t rest;

	*w &= ~(UINT64_C(1) << (i % 64));
	rest = *w & (~UINT64_C(1) << (i % 64)); /* bits above i */
	if (rest != 0)
		return (i & ~63u) + (uint32_t)__builtin_ctzll(rest);
	if (*w == 0)
		sl_pacer_ffs_clear(b, i); /* the word is empty: clear it in the levels above */
	return sl_pacer_ffs_from(b, (i + 1) & (b->nbits - 1));
}

#endif /* PACER_FFS_H */
