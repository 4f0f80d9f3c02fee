/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_stats.h - counters and latency histograms.
 *
 * Counters: each module keeps a plain struct of uint64_t members (struct sl_<m>_stats) and
 * describes each member once, in a table of struct sl_stat_desc (name, help, offset) built with
 * SL_STAT() and published as `const struct sl_stat_table sl_<m>_stat_table` with
 * SL_STAT_TABLE_DEFINE(), whose static_assert fails the build when a member has no line.
 * Telemetry, the exit JSON, the tests and docs/counters.md (rendered from the tables, checked
 * by tests/unit/stats) walk the tables, so a counter added in one place appears in all of them.
 * A module's counters are read with `sl_<m>_stats_get(obj, &out)`, a snapshot copied out (per
 * flow: `sl_<m>_flow_stats_get(obj, flow, &out)`, 0 or a negative errno for an unknown flow).
 * Cores keep counters instead of logging on the fast path.
 *
 * Histogram: log-linear buckets (HdrHistogram-style): values below 2^SL_HIST_SUB_BITS are exact,
 * above that each power of two is split into 2^SL_HIST_SUB_BITS buckets, so any quantile is
 * reported within 1/2^SL_HIST_SUB_BITS (6.25%) of the true value. Recording is O(1) and
 * allocation-free; values are in whatever unit the owner names (recovery_ns, ...).
 */
#ifndef SL_STATS_H
#define SL_STATS_H

#include <assert.h>
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

/* The counters of one stats struct, in member order. */
struct sl_stat_table {
	const char *name;                /**< the struct's C name, "struct sl_recv_stats" */
	const struct sl_stat_desc *desc; /**< [n] */
	unsigned int n;                  /**< counters, = sizeof the struct / 8 */
};

/* Publish var, a table of the counters of type described by desc_array (a static array). */
#define SL_STAT_TABLE_DEFINE(var, type, desc_array)                                                \
	static_assert(sizeof(type) == SL_ARRAY_SIZE(desc_array) * sizeof(uint64_t),                \
		      #type ": every member is a uint64_t counter with one line in " #desc_array); \
	const struct sl_stat_table var = {                                                         \
		.name = #type, .desc = desc_array, .n = SL_ARRAY_SIZE(desc_array)}

static inline uint64_t
sl_stat_get(const void *stats, const struct sl_stat_desc *d)
{
	return *(const uint64_t *)((const char *)stats + d->offset);
}

/*
 * Add n to a counter that only the calling thread writes and another may read (telemetry): a
 * relaxed atomic store, so the reader never sees a torn value. The writer side of
 * sl_stats_snapshot().
 */
static inline void
sl_stat_add(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

/*
 * Copy a stats struct of n_counters uint64_t counters that another thread may be counting in,
 * each counter read whole (relaxed atomic loads): the body of a copy-out getter.
 */
static inline void
sl_stats_snapshot(void *dst, const void *src, unsigned int n_counters)
{
	for (unsigned int i = 0; i < n_counters; i++)
		((uint64_t *)dst)[i] = __atomic_load_n((const uint64_t *)src + i, __ATOMIC_RELAXED);
}

/*
 * Add every counter of table t in src into dst (which only the calling thread writes, and
 * another may read): the counters of a life that ended, kept beside the next one's.
 */
static inline void
sl_stats_accumulate(void *dst, const void *src, const struct sl_stat_table *t)
{
	for (unsigned int i = 0; i < t->n; i++)
		sl_stat_add((uint64_t *)((char *)dst + t->desc[i].offset),
			    sl_stat_get(src, &t->desc[i]));
}

/* One counter through a module's copy-out getter, for tests and slow paths. */
#define SL_STAT_READ(getter, type, obj, member)                                                    \
	__extension__({                                                                            \
		type s_;                                                                           \
		getter(obj, &s_);                                                                  \
		s_.member;                                                                         \
	})

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
