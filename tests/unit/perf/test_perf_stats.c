/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluice-perf/perf_stats.c: perftest's latency statistics (tail of two, median,
 * mean, stdev, percentile indexes) and its bandwidth peak and average, over known samples.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perf_stats.h"

#define EPS 1e-9

/* a and b agree to eps relative (absolute below 1). */
#define assert_near(a, b, eps)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (fabs(a_ - b_) > (eps) * (fabs(b_) > 1 ? fabs(b_) : 1))                         \
			fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                        \
	} while (0)

static void
sl_perf_lat_compute__even_m(void **state)
{
	/* 1..10 us, shuffled: the two largest (9, 10) put aside, m = 8 */
	uint64_t s[] = {7000, 2000, 10000, 1000, 9000, 4000, 3000, 8000, 6000, 5000};
	struct sl_perf_lat l;

	(void)state;
	assert_int_equal(sl_perf_lat_compute(s, 10, 1, 64, 11, &l), 0);
	assert_int_equal(l.size_bytes, 64);
	assert_int_equal(l.iters, 11);
	assert_near(l.t_min_us, 1.0, EPS);
	assert_near(l.t_max_us, 9.0, EPS); /* index m: perftest's max */
	assert_near(l.t_typical_us, 4.5, EPS);
	assert_near(l.t_avg_us, 4.5, EPS);
	assert_near(l.t_stdev_us, sqrt(5.25), EPS);
	assert_near(l.t_p99_us, 9.0, EPS);  /* ceil(7.92) = 8 */
	assert_near(l.t_p999_us, 9.0, EPS); /* ceil(7.992) = 8 */
	assert_int_equal(s[0], 1000);       /* sorted in place */
}

static void
sl_perf_lat_compute__odd_m_and_half_rtt(void **state)
{
	uint64_t s[] = {50000, 10000, 40000, 30000, 20000};
	struct sl_perf_lat l;

	(void)state;
	assert_int_equal(sl_perf_lat_compute(s, 5, 2, 2, 6, &l), 0);
	/* m = 3: 10, 20, 30 us; halved */
	assert_near(l.t_min_us, 5.0, EPS);
	assert_near(l.t_typical_us, 10.0, EPS);
	assert_near(l.t_avg_us, 10.0, EPS);
	assert_near(l.t_stdev_us, sqrt(50.0 / 3), EPS);
	assert_near(l.t_max_us, 20.0, EPS);
	assert_near(l.t_p99_us, 20.0, EPS);
}

static void
sl_perf_lat_compute__percentile_indexes(void **state)
{
	static uint64_t s[1002];
	struct sl_perf_lat l;

	(void)state;
	for (size_t i = 0; i < 1002; i++)
		s[i] = (1002 - i) * 1000; /* 1..1002 us, reversed */
	assert_int_equal(sl_perf_lat_compute(s, 1002, 1, 2, 1003, &l), 0);
	/* m = 1000: 99 % is sorted[990] = 991 us, 99.9 % sorted[999] = 1000 us */
	assert_near(l.t_p99_us, 991.0, EPS);
	assert_near(l.t_p999_us, 1000.0, EPS);
	assert_near(l.t_max_us, 1001.0, EPS);
	assert_near(l.t_typical_us, 500.5, EPS);
	assert_near(l.t_avg_us, 500.5, EPS);
}

static void
sl_perf_lat_compute__too_few(void **state)
{
	uint64_t s[] = {1, 2, 3};
	struct sl_perf_lat l;

	(void)state;
	assert_int_equal(sl_perf_lat_compute(s, 2, 1, 2, 3, &l), -EINVAL);
	assert_int_equal(sl_perf_lat_compute(s, 3, 0, 2, 4, &l), -EINVAL);
	assert_int_equal(sl_perf_lat_compute(s, 3, 1, 2, 4, &l), 0);
}

static void
sl_perf_lat_dur_compute__window(void **state)
{
	struct sl_perf_lat_dur d;

	(void)state;
	/* 250000 round trips in 2.5 s: 10 us each, 5 us one way, 100000 per second */
	assert_int_equal(sl_perf_lat_dur_compute(250000, 2500000000u, 2, 64, &d), 0);
	assert_near(d.t_avg_us, 5.0, EPS);
	assert_near(d.tps, 100000.0, EPS);
	assert_int_equal(d.iters, 250000);
	assert_int_equal(sl_perf_lat_dur_compute(1, 0, 2, 64, &d), -EINVAL);
}

static void
sl_perf_bw_compute__peak_and_average(void **state)
{
	/* 4 messages of 1000 B posted at 0, 0, 2000, 2000 ns; done: 0-1 at 1000, 2-3 at 2500 */
	const uint64_t posted[] = {0, 0, 2000, 2000};
	const struct sl_perf_mark marks[] = {{1, 1000}, {3, 2500}};
	struct sl_perf_bw bw;

	(void)state;
	assert_int_equal(sl_perf_bw_compute(posted, 0, 4, marks, 2, 1000, &bw), 0);
	assert_int_equal(bw.size_bytes, 1000);
	assert_int_equal(bw.iters, 4);
	assert_near(bw.avg_Bps, 4000 / 2500e-9, EPS);
	assert_near(bw.msg_rate_pps, 4 / 2500e-9, EPS);
	/* best window: messages 2..3, (2500 - 2000) / 2 = 250 ns each */
	assert_near(bw.peak_Bps, 1000 / 250e-9, EPS);
}

static void
sl_perf_bw_compute__no_peak_and_bad_marks(void **state)
{
	const struct sl_perf_mark marks[] = {{1, 1000}, {3, 2500}};
	const struct sl_perf_mark short_marks[] = {{1, 1000}};
	struct sl_perf_bw bw;

	(void)state;
	assert_int_equal(sl_perf_bw_compute(NULL, 500, 4, marks, 2, 1000, &bw), 0);
	assert_near(bw.peak_Bps, 0, EPS);
	assert_near(bw.avg_Bps, 4000 / 2000e-9, EPS);
	assert_int_equal(sl_perf_bw_compute(NULL, 0, 4, short_marks, 1, 1000, &bw), -EINVAL);
	assert_int_equal(sl_perf_bw_compute(NULL, 0, 0, marks, 2, 1000, &bw), -EINVAL);
	assert_int_equal(sl_perf_bw_compute(NULL, 3000, 4, marks, 2, 1000, &bw), -EINVAL);
}

static void
sl_perf_bw_window__and_add(void **state)
{
	struct sl_perf_bw a, b;

	(void)state;
	assert_int_equal(sl_perf_bw_window(1000000, 1000000000u, 4096, &a), 0);
	assert_near(a.avg_Bps, 4096e6, EPS);
	assert_near(a.msg_rate_pps, 1e6, EPS);
	assert_near(a.peak_Bps, 0, EPS);
	assert_int_equal(sl_perf_bw_window(500000, 1000000000u, 4096, &b), 0);
	b.peak_Bps = 1;
	sl_perf_bw_add(&a, &b);
	assert_near(a.avg_Bps, 4096e6 * 1.5, EPS);
	assert_near(a.msg_rate_pps, 1.5e6, EPS);
	assert_near(a.peak_Bps, 1, EPS);
	assert_int_equal(a.iters, 1000000); /* this side's, as perftest prints */
	assert_int_equal(sl_perf_bw_window(1, 0, 1, &a), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_perf_lat_compute__even_m),
		cmocka_unit_test(sl_perf_lat_compute__odd_m_and_half_rtt),
		cmocka_unit_test(sl_perf_lat_compute__percentile_indexes),
		cmocka_unit_test(sl_perf_lat_compute__too_few),
		cmocka_unit_test(sl_perf_lat_dur_compute__window),
		cmocka_unit_test(sl_perf_bw_compute__peak_and_average),
		cmocka_unit_test(sl_perf_bw_compute__no_peak_and_bad_marks),
		cmocka_unit_test(sl_perf_bw_window__and_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
