/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluice-perf/perf_rate.c: decimals as typed, the units' letters, and the exact
 * conversion to bits/s (Gbit/s x 10^9, MiB/s x 8 x 2^20, pps x message bytes x 8).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perf_rate.h"

static uint64_t
bps(const char *v, enum sl_perf_rate_units u, uint64_t msg_bytes)
{
	struct sl_perf_dec d;
	uint64_t out = 0;

	assert_int_equal(sl_perf_dec_parse(v, &d), 0);
	assert_int_equal(sl_perf_rate_bps(&d, u, msg_bytes, &out), 0);
	return out;
}

static void
sl_perf_dec_parse__forms(void **state)
{
	struct sl_perf_dec d;

	(void)state;
	assert_int_equal(sl_perf_dec_parse("5", &d), 0);
	assert_int_equal(d.mant, 5);
	assert_int_equal(d.scale, 0);
	assert_int_equal(sl_perf_dec_parse("0.1", &d), 0);
	assert_int_equal(d.mant, 1);
	assert_int_equal(d.scale, 1);
	assert_int_equal(sl_perf_dec_parse("2.250", &d), 0);
	assert_int_equal(d.mant, 2250);
	assert_int_equal(d.scale, 3);
	assert_int_equal(sl_perf_dec_parse(".5", &d), 0);
	assert_int_equal(d.mant, 5);
	assert_int_equal(sl_perf_dec_parse("7.", &d), 0);
	assert_int_equal(d.mant, 7);
	assert_int_equal(d.scale, 0);
}

static void
sl_perf_dec_parse__bad(void **state)
{
	static const char *const bad[] = {"", ".", "-1", "+1", "1e9", "1.2.3", "abc", "1 ", " 1"};
	struct sl_perf_dec d;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sl_perf_dec_parse(bad[i], &d), -EINVAL);
	assert_int_equal(sl_perf_dec_parse(NULL, &d), -EINVAL);
	assert_int_equal(sl_perf_dec_parse("99999999999999999999", &d), -ERANGE);
	assert_int_equal(sl_perf_dec_parse("0.0000000000000000001", &d), -ERANGE);
}

static void
sl_perf_rate_units_parse__letters(void **state)
{
	enum sl_perf_rate_units u;

	(void)state;
	assert_int_equal(sl_perf_rate_units_parse("g", &u), 0);
	assert_int_equal(u, SL_PERF_RATE_GBPS);
	assert_int_equal(sl_perf_rate_units_parse("M", &u), 0);
	assert_int_equal(u, SL_PERF_RATE_MIBPS);
	assert_int_equal(sl_perf_rate_units_parse("p", &u), 0);
	assert_int_equal(u, SL_PERF_RATE_PPS);
	assert_int_equal(sl_perf_rate_units_parse("G", &u), -EINVAL);
	assert_int_equal(sl_perf_rate_units_parse("m", &u), -EINVAL);
	assert_int_equal(sl_perf_rate_units_parse("gb", &u), -EINVAL);
	assert_int_equal(sl_perf_rate_units_parse("", &u), -EINVAL);
}

static void
sl_perf_rate_bps__gbits_exact(void **state)
{
	(void)state;
	assert_int_equal(bps("1", SL_PERF_RATE_GBPS, 0), UINT64_C(1000000000));
	assert_int_equal(bps("0.1", SL_PERF_RATE_GBPS, 0), UINT64_C(100000000));
	assert_int_equal(bps("5", SL_PERF_RATE_GBPS, 0), UINT64_C(5000000000));
	assert_int_equal(bps("2.5", SL_PERF_RATE_GBPS, 0), UINT64_C(2500000000));
	assert_int_equal(bps("0.000000001", SL_PERF_RATE_GBPS, 0), 1);
	assert_int_equal(bps("100", SL_PERF_RATE_GBPS, 0), UINT64_C(100000000000));
}

static void
sl_perf_rate_bps__mibytes_exact(void **state)
{
	(void)state;
	assert_int_equal(bps("1", SL_PERF_RATE_MIBPS, 0), UINT64_C(8) << 20);
	assert_int_equal(bps("100", SL_PERF_RATE_MIBPS, 0), UINT64_C(100) * 8 * 1048576);
	assert_int_equal(bps("1.5", SL_PERF_RATE_MIBPS, 0), UINT64_C(12582912));
	/* 0.1 MiB/s = 838860.8 bits/s: rounded once, to the nearest */
	assert_int_equal(bps("0.1", SL_PERF_RATE_MIBPS, 0), UINT64_C(838861));
}

static void
sl_perf_rate_bps__pps_times_size(void **state)
{
	(void)state;
	assert_int_equal(bps("1000", SL_PERF_RATE_PPS, 64), UINT64_C(512000));
	assert_int_equal(bps("1000000", SL_PERF_RATE_PPS, 4096), UINT64_C(32768000000));
	assert_int_equal(bps("0.5", SL_PERF_RATE_PPS, 1), 4);
}

static void
sl_perf_rate_bps__rounding_and_limits(void **state)
{
	struct sl_perf_dec d;
	uint64_t out;

	(void)state;
	/* half a bit/s rounds up; below it is no rate at all */
	assert_int_equal(bps("0.0000000005", SL_PERF_RATE_GBPS, 0), 1);
	assert_int_equal(sl_perf_dec_parse("0.0000000004", &d), 0);
	assert_int_equal(sl_perf_rate_bps(&d, SL_PERF_RATE_GBPS, 0, &out), -EINVAL);
	assert_int_equal(sl_perf_dec_parse("0", &d), 0);
	assert_int_equal(sl_perf_rate_bps(&d, SL_PERF_RATE_GBPS, 0, &out), -EINVAL);
	assert_int_equal(sl_perf_dec_parse("10", &d), 0);
	assert_int_equal(sl_perf_rate_bps(&d, SL_PERF_RATE_PPS, 0, &out), -EINVAL);
	assert_int_equal(sl_perf_dec_parse("18446744073709551615", &d), 0);
	assert_int_equal(sl_perf_rate_bps(&d, SL_PERF_RATE_GBPS, 0, &out), -ERANGE);
	assert_int_equal(sl_perf_rate_bps(&d, (enum sl_perf_rate_units)9, 0, &out), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_perf_dec_parse__forms),
		cmocka_unit_test(sl_perf_dec_parse__bad),
		cmocka_unit_test(sl_perf_rate_units_parse__letters),
		cmocka_unit_test(sl_perf_rate_bps__gbits_exact),
		cmocka_unit_test(sl_perf_rate_bps__mibytes_exact),
		cmocka_unit_test(sl_perf_rate_bps__pps_times_size),
		cmocka_unit_test(sl_perf_rate_bps__rounding_and_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
