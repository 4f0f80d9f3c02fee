/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_stats.c - perftest's statistics, on ns timestamps.
 *
 * Latency (perftest_parameters.c, print_report_lat). A ping-pong test stamps the start of
 * every round trip; the n = iters - 1 differences are the samples. They are sorted and the two
 * largest put aside (LAT_MEASURE_TAIL), leaving m = n - 2: t_typical is their median, t_avg
 * their mean, t_stdev the population standard deviation around it; t_min is sample 0 and
 * t_max, 99 % and 99.9 % are the sorted samples at m, ceil(0.99 m) and ceil(0.999 m), which
 * reach into the two put aside. Every value is divided by rtt_div: WRITE and SEND report half
 * a round trip, READ a whole one. perftest truncates each deviation to an int usec before
 * squaring it (a stdev of 0.00 for sub-usec spreads); sluice-perf keeps doubles.
 *
 * Bandwidth (print_report_bw). Message i (every QP, post order) is posted at posted[i]; a
 * signaled completion tells that messages up to j are done at t_j. The average is
 * n x size / (t_last - posted[0]). The peak is the best per-message time of any stretch of
 * messages: min over i <= j of (t_j - posted[i]) / (j - i + 1), j only where a completion
 * was seen, so it is size / that time. O(n x marks): perftest turns it off above 20000
 * iterations, and so does sluice-perf (perf_args.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "perf_stats.h"

#define NS_PER_US 1000.0
#define NS_PER_S 1e9

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
sl_perf_lat_compute(uint64_t *rtt_ns, size_t n, unsigned rtt_div, uint64_t size_bytes,
		    uint64_t iters, struct sl_perf_lat *out)
{
	double q, sum = 0, var = 0, d;
	size_t m, i99, i999;

	if (n <= SL_PERF_LAT_TAIL || rtt_div == 0)
		return -EINVAL;
	qsort(rtt_ns, n, sizeof(*rtt_ns), cmp_u64);
	m = n - SL_PERF_LAT_TAIL;
	q = NS_PER_US * rtt_div;
	for (size_t i = 0; i < m; i++)
		sum += (double)rtt_ns[i] / q;
	out->t_avg_us = sum / (double)m;
	for (size_t i = 0; i < m; i++) {
		d = (double)rtt_ns[i] / q - out->t_avg_us;
		var += d * d;
	}
	out->t_stdev_us = sqrt(var / (double)m);
	if (m % 2 == 0)
		out->t_typical_us = ((double)rtt_ns[m / 2] + (double)rtt_ns[m / 2 - 1]) / 2 / q;
	else
		out->t_typical_us = (double)rtt_ns[m / 2] / q;
	i99 = (size_t)ceil((double)m * 0.99);
	i999 = (size_t)ceil((double)m * 0.999);
	out->size_bytes = size_bytes;
	out->iters = iters;
	out->t_min_us = (double)rtt_ns[0] / q;
	out->t_max_us = (double)rtt_ns[m] / q;
	out->t_p99_us = (double)rtt_ns[i99] / q;
	out->t_p999_us = (double)rtt_ns[i999] / q;
	return 0;
}

int
sl_perf_lat_dur_compute(uint64_t iters, uint64_t window_ns, unsigned rtt_div, uint64_t size_bytes,
			struct sl_perf_lat_dur *out)
{
	if (window_ns == 0 || rtt_div == 0)
		return -EINVAL;
	out->size_bytes = size_bytes;
	out->iters = iters;
	out->t_avg_us = iters == 0 ? 0 : (double)window_ns / NS_PER_US / rtt_div / (double)iters;
	out->tps = (double)iters * NS_PER_S / (double)window_ns;
	return 0;
}

int
sl_perf_bw_window(uint64_t msgs, uint64_t window_ns, uint64_t size_bytes, struct sl_perf_bw *out)
{
	if (window_ns == 0)
		return -EINVAL;
	out->size_bytes = size_bytes;
	out->iters = msgs;
	out->peak_Bps = 0;
	out->avg_Bps = (double)msgs * (double)size_bytes * NS_PER_S / (double)window_ns;
	out->msg_rate_pps = (double)msgs * NS_PER_S / (double)window_ns;
	return 0;
}

int
sl_perf_bw_compute(const uint64_t *posted_ns, uint64_t first_post_ns, uint64_t n,
		   const struct sl_perf_mark *marks, size_t nmarks, uint64_t size_bytes,
		   struct sl_perf_bw *out)
{
	double best = INFINITY, t;
	size_t k = 0;
	int rc;

	if (n == 0 || nmarks == 0 || marks[nmarks - 1].idx != n - 1 ||
	    marks[nmarks - 1].t_ns <= first_post_ns)
		return -EINVAL;
	rc = sl_perf_bw_window(n, marks[nmarks - 1].t_ns - first_post_ns, size_bytes, out);
	if (rc != 0 || posted_ns == NULL)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		while (marks[k].idx < i)
			k++;
		for (size_t j = k; j < nmarks; j++) {
			t = ((double)marks[j].t_ns - (double)posted_ns[i]) /
			    (double)(marks[j].idx - i + 1);
			if (t < best)
				best = t;
		}
	}
	out->peak_Bps = best > 0 ? (double)size_bytes * NS_PER_S / best : 0;
	return 0;
}

void
sl_perf_bw_add(struct sl_perf_bw *sum, const struct sl_perf_bw *other)
{
	sum->peak_Bps += other->peak_Bps;
	sum->avg_Bps += other->avg_Bps;
	sum->msg_rate_pps += other->msg_rate_pps;
}
