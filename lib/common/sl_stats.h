/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_stats.h - counters and latency histograms.
 *
 * Counters: each module keeps a plain struct of uint64_t members and a table of
 * struct sl_stat_desc (name, help, offset) built with SL_STAT(); telemetry and tests walk the
 * table, so adding a counter is one member and one table line, and nothing is exported by hand.
 * Cores keep counters instead of logging on the fast path.
 *
 * Histogram: log-linear buckets (HdrHistogram-style): values below 2^SL_HIST_SUB_BITS are exact,
 * above that each power of two is split into 2^SL_HIST_SUB_BITS buckets, so any quantile is
 * reported within 1/2^SL_HIST_SUB_BITS (6.25%) of the true value. Recording is O(1) and
 * allocation-free; values are in whatever unit the owner names (recovery_ns, ...).
 */
#ifndef SL_STATS_H
#define SL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "sl_common.h"

struct sl_stat_desc {
	const char *name;
	const char *help;
	size_t offset; /**< byte offset of the uint64_t counter in its stats struct */
};

#define SL_STAT(type, member, help_text)                                                           \
	{                                                                                          \
		.name = #member, .help = help_text, .offset = offsetof(type, member)               \
	}

static inline uint64_t
sl_stat_get(const void *stats, const struct sl_stat_desc *d)
{
	return *(const uint64_t *)((const char *)stats + d->offset);
}

#define SL_HIST_SUB_BITS 4u
#define SL_HIST_SUB (1u << SL_HIST_SUB_BITS)
#define SL_HIST_BUCKETS ((64u - SL_HIST_SUB_BITS + 1u) * SL_HIST_SUB)

struct sl_hist {
	uint64_t count;                   /**< values recorded */
	uint64_t sum;                     /**< sum of values (saturating) */
	uint64_t max;                     /**< largest value */
	uint64_t bucket[SL_HIST_BUCKETS]; /**< counts per log-linear bucket */
};

void sl_hist_reset(struct sl_hist *h);
void sl_hist_add(struct sl_hist *h, uint64_t value);

/*
 * Value at quantile q in [0, 1]: the upper edge of the bucket holding it, capped by max
 * (0 when empty).
 */
uint64_t sl_hist_quantile(const struct sl_hist *h, double q);

/* Add every value of src to dst. */
void sl_hist_merge(struct sl_hist *dst, const struct sl_hist *src);

#endif /* SL_STATS_H */
