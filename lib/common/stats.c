/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - log-linear histogram (see sl_stats.h): bucket index from the value's leading bit
 * and the SL_HIST_SUB_BITS bits after it.
 */
#include <string.h>

#include "sl_stats.h"

static uint32_t
bucket_of(uint64_t v)
{
	uint32_t msb, shift;

	if (v < SL_HIST_SUB)
		return (uint32_t)v;
	msb = 63u - (uint32_t)__builtin_clzll(v);
	shift = msb - SL_HIST_SUB_BITS;
	/* Group (shift + 1) holds [2^msb, 2^(msb+1)) in SL_HIST_SUB steps of 2^shift. */
	return (shift + 1) * SL_HIST_SUB + (uint32_t)((v >> shift) - SL_HIST_SUB);
}

/* Largest value that falls in bucket b. */
static uint64_t
bucket_upper(uint32_t b)
{
	uint32_t group = b / SL_HIST_SUB, sub = b % SL_HIST_SUB, shift;

	if (group == 0)
		return sub;
	shift = group - 1;
	return (((uint64_t)(SL_HIST_SUB + sub) + 1) << shift) - 1;
}

void
sl_hist_reset(struct sl_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
sl_hist_add(struct sl_hist *h, uint64_t value)
{
	h->bucket[bucket_of(value)]++;
	h->count++;
	h->sum = h->sum + value < h->sum ? UINT64_MAX : h->sum + value;
	if (value > h->max)
		h->max = value;
}

uint64_t
sl_hist_quantile(const struct sl_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (q <= 0)
		q = 0;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)(q * (double)h->count) + 1;
	if (rank > h->count)
		rank = h->count;
	for (uint32_t b = 0; b < SL_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank)
			return SL_MIN(bucket_upper(b), h->max);
	}
	return h->max;
}

void
sl_hist_merge(struct sl_hist *dst, const struct sl_hist *src)
{
	for (uint32_t b = 0; b < SL_HIST_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
	dst->count += src->count;
	dst->sum = dst->sum + src->sum < dst->sum ? UINT64_MAX : dst->sum + src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
}
