/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_stats.h - sluice-perf's numbers: latency statistics over round-trip samples and
 * bandwidth (peak, average, message rate) over post and completion times, as perftest
 * defines them. Times are ns from CLOCK_MONOTONIC; results in usec and bytes/s.
 */
#ifndef SL_PERF_STATS_H
#define SL_PERF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_PERF_LAT_TAIL 2 /**< largest samples dropped before statistics (perftest's) */

/* A latency row: usec. */
struct sl_perf_lat {
	uint64_t size_bytes;
	uint64_t iters;
	double t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, t_p99_us, t_p999_us;
};

/* A -D latency row. */
struct sl_perf_lat_dur {
	uint64_t size_bytes;
	uint64_t iters;  /**< round trips in the measured window */
	double t_avg_us; /**< window / iters / rtt_div, usec */
	double tps;      /**< round trips per second */
};

/* A bandwidth row: rates in bytes/s and messages/s (the formatters pick MiB/s or Gb/s). */
struct sl_perf_bw {
	uint64_t size_bytes;
	uint64_t iters;      /**< messages counted, every QP */
	double peak_Bps;     /**< best per-message time over any window, as bytes/s (0: none) */
	double avg_Bps;      /**< bytes / time */
	double msg_rate_pps; /**< messages / time */
};

/*
 * Latency statistics over n round-trip samples (ns), sorted in place; each sample is divided
 * by rtt_div (2: WRITE and SEND report RTT/2; 1: READ). perftest's definitions: the
 * SL_PERF_LAT_TAIL largest are dropped, leaving m; min is the smallest, max the largest left,
 * typical the median of the m (mean of the middle two when m is even), avg and the population
 * stdev over the m; max, the 99 % and the 99.9 % percentiles are the sorted samples at index m,
 * ceil(m x 0.99) and ceil(m x 0.999) (perftest's indexes: max is the largest sample but one). 0, or
 * -EINVAL (n <= SL_PERF_LAT_TAIL, rtt_div 0).
 */
int sl_perf_lat_compute(uint64_t *rtt_ns, size_t n, unsigned rtt_div, uint64_t size_bytes,
			uint64_t iters, struct sl_perf_lat *out);

/* A -D latency row: iters round trips in window_ns. -EINVAL if window_ns or rtt_div is 0. */
int sl_perf_lat_dur_compute(uint64_t iters, uint64_t window_ns, unsigned rtt_div,
			    uint64_t size_bytes, struct sl_perf_lat_dur *out);

/* Completion of message index idx (0-based, every QP counted) seen at t_ns. */
struct sl_perf_mark {
	uint64_t idx;
	uint64_t t_ns;
};

/*
 * Bandwidth over n messages of size_bytes posted at posted_ns[0..n) (post order), whose
 * completions were seen at the nmarks marks (idx increasing, the last one n - 1): average =
 * n x size / (last completion - first post), message rate likewise, and (posted_ns non-NULL)
 * the peak: the least (t_j - posted_i) / (j - i + 1) over every post i and mark j >= i,
 * perftest's "best per-message time in any window", as bytes/s. -EINVAL when n is 0, the marks
 * do not end at n - 1 or time does not advance.
 */
int sl_perf_bw_compute(const uint64_t *posted_ns, uint64_t first_post_ns, uint64_t n,
		       const struct sl_perf_mark *marks, size_t nmarks, uint64_t size_bytes,
		       struct sl_perf_bw *out);

/* A bandwidth row from a count over a window (-D, or a receiver): no peak. */
int sl_perf_bw_window(uint64_t msgs, uint64_t window_ns, uint64_t size_bytes,
		      struct sl_perf_bw *out);

/* Both directions of -b: rates add; the row keeps this side's iterations (perftest's). */
void sl_perf_bw_add(struct sl_perf_bw *sum, const struct sl_perf_bw *other);

#endif /* SL_PERF_STATS_H */
