/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bitmap.c - ring find-first-set from a head (Tonic appendix C) and range operations with wrap,
 * a word at a time. See sl_bitmap.h for the model.
 */
#include "sl_bitmap.h"

uint32_t
sl_bitmap_ffs_from(const uint64_t *w, uint32_t nbits, uint32_t head)
{
	uint32_t nwords = nbits / 64;
	uint32_t hw = head / 64;
	uint64_t first = w[hw] & (~UINT64_C(0) << (head % 64));

	if (first)
		return hw * 64 + (uint32_t)__builtin_ctzll(first);
	for (uint32_t i = hw + 1; i < nwords; i++)
		if (w[i])
			return i * 64 + (uint32_t)__builtin_ctzll(w[i]);
	/* Wrap: words before the head's word, then the head word's bits below head. */
	for (uint32_t i = 0; i <= hw; i++)
		if (w[i])
			return i * 64 + (uint32_t)__builtin_ctzll(w[i]);
	return SL_BITMAP_NONE;
}

/* Mask of bits [lo, lo + n) within one word; n in [1, 64], lo + n <= 64. */
static inline uint64_t
word_mask(uint32_t lo, uint32_t n)
{
	return (n == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << n) - 1)) << lo;
}

void
sl_bitmap_clear_range(uint64_t *w, uint32_t nbits, uint32_t start, uint32_t count)
{
	while (count) {
		uint32_t lo = start % 64;
		uint32_t n = SL_MIN(count, 64 - lo);

		w[start / 64] &= ~word_mask(lo, n);
		count -= n;
		start += n;
		if (start == nbits)
			start = 0;
	}
}

uint32_t
sl_bitmap_count_range(const uint64_t *w, uint32_t nbits, uint32_t start, uint32_t count)
{
	uint32_t total = 0;

	while (count) {
		uint32_t lo = start % 64;
		uint32_t n = SL_MIN(count, 64 - lo);

		total += (uint32_t)__builtin_popcountll(w[start / 64] & word_mask(lo, n));
		count -= n;
		start += n;
		if (start == nbits)
			start = 0;
	}
	return total;
}
