/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/parse.c: every unit, bounds, overflow, signs, junk, reasons. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_common.h"
#include "sl_parse.h"

static const struct sl_parse_spec any_ns = {.qty = SL_QTY_NS, .max = UINT64_MAX};
static const struct sl_parse_spec any_bps = {.qty = SL_QTY_BPS, .max = UINT64_MAX};
static const struct sl_parse_spec any_bytes = {.qty = SL_QTY_BYTES, .max = UINT64_MAX};

/* The value of s under spec, failing the test when it does not parse. */
static uint64_t
ok(const char *s, const struct sl_parse_spec *spec)
{
	char why[SL_PARSE_WHY_MAX] = "";
	uint64_t v = 0;
	int rc = sl_parse_qty(s, spec, &v, why, sizeof(why));

	if (rc != 0)
		fail_msg("'%s': %d %s", s, rc, why);
	return v;
}

/* The return code for s, and the reason in why. */
static int
bad(const char *s, const struct sl_parse_spec *spec, char *why)
{
	uint64_t v = 12345;
	int rc;

	why[0] = '\0';
	rc = sl_parse_qty(s, spec, &v, why, SL_PARSE_WHY_MAX);
	assert_int_equal(v, 12345); /* untouched on error */
	assert_true(rc == -EINVAL || rc == -ERANGE);
	assert_true(strlen(why) > 0);
	return rc;
}

static void
sl_parse_qty__every_duration_unit(void **state)
{
	(void)state;
	assert_int_equal(ok("7ns", &any_ns), 7);
	assert_int_equal(ok("7us", &any_ns), 7 * SL_NS_PER_US);
	assert_int_equal(ok("7ms", &any_ns), 7 * SL_NS_PER_MS);
	assert_int_equal(ok("7s", &any_ns), 7 * SL_NS_PER_S);
	assert_int_equal(ok("7 ms", &any_ns), 7 * SL_NS_PER_MS);
	assert_int_equal(ok("7\tus", &any_ns), 7 * SL_NS_PER_US);
}

static void
sl_parse_qty__every_rate_unit(void **state)
{
	(void)state;
	assert_int_equal(ok("3bps", &any_bps), 3);
	assert_int_equal(ok("3Kbps", &any_bps), 3000);
	assert_int_equal(ok("3Mbps", &any_bps), 3000000);
	assert_int_equal(ok("3Gbps", &any_bps), 3000000000ull);
	assert_int_equal(ok("3gbps", &any_bps), 3000000000ull);
	assert_int_equal(ok("3 GBPS", &any_bps), 3000000000ull);
	/* net_impair's rate_bps=10G spelling */
	assert_int_equal(ok("10G", &any_bps), 10000000000ull);
	assert_int_equal(ok("5k", &any_bps), 5000);
	assert_int_equal(ok("10M", &any_bps), 10000000);
}

static void
sl_parse_qty__every_size_unit(void **state)
{
	(void)state;
	assert_int_equal(ok("9B", &any_bytes), 9);
	assert_int_equal(ok("9bytes", &any_bytes), 9);
	assert_int_equal(ok("9K", &any_bytes), 9000);
	assert_int_equal(ok("9KB", &any_bytes), 9000);
	assert_int_equal(ok("9kb", &any_bytes), 9000);
	assert_int_equal(ok("9M", &any_bytes), 9000000);
	assert_int_equal(ok("9MB", &any_bytes), 9000000);
	assert_int_equal(ok("9G", &any_bytes), 9000000000ull);
	assert_int_equal(ok("9GB", &any_bytes), 9000000000ull);
	assert_int_equal(ok("9KiB", &any_bytes), 9 * 1024);
	assert_int_equal(ok("9MiB", &any_bytes), 9 * 1024 * 1024);
	assert_int_equal(ok("9GiB", &any_bytes), 9ull << 30);
}

static void
sl_parse_qty__bare_number_counts_in_the_callers_unit(void **state)
{
	const struct sl_parse_spec us = {.qty = SL_QTY_NS, .unit = 1000, .max = UINT64_MAX};
	const struct sl_parse_spec mbps = {.qty = SL_QTY_BPS, .unit = 1000000, .max = UINT64_MAX};

	(void)state;
	assert_int_equal(ok("100", &us), 100000);
	assert_int_equal(ok("100ns", &us), 100);
	assert_int_equal(ok("2ms", &us), 2000000);
	assert_int_equal(ok("10000", &mbps), 10000000000ull);
	assert_int_equal(ok("1.5Gbps", &mbps), 1500000000);
	assert_int_equal(ok("100", &any_ns), 100); /* unit 0 means the base unit */
}

static void
sl_parse_qty__fractions_are_exact(void **state)
{
	const struct sl_parse_spec us_frac = {
		.qty = SL_QTY_NS, .unit = 1000, .max = UINT64_MAX, .bare_frac = true};
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(ok("65.536", &us_frac), 65536);
	assert_int_equal(ok("1048.576", &us_frac), 1048576);
	assert_int_equal(ok("1.5ms", &any_ns), 1500000);
	assert_int_equal(ok(".5us", &any_ns), 500);
	assert_int_equal(ok("2.50s", &any_ns), 2500000000ull);
	assert_int_equal(ok("1e3us", &any_ns), 1000000);
	assert_int_equal(ok("1.25e-3s", &any_ns), 1250000);
	assert_int_equal(ok("1.5KiB", &any_bytes), 1536);
	assert_int_equal(ok("0.000001s", &any_ns), 1000);
	/* a fraction of the base unit is refused, never rounded */
	assert_int_equal(bad("1.5ns", &any_ns, why), -EINVAL);
	assert_non_null(strstr(why, "not a whole number of ns"));
	assert_int_equal(bad("0.0000000001s", &any_ns, why), -EINVAL);
	assert_int_equal(bad("1e-40s", &any_ns, why), -EINVAL);
	assert_int_equal(bad("0.0001", &us_frac, why), -EINVAL);
	assert_int_equal(ok("0.0s", &any_ns), 0);
	assert_int_equal(ok("0e-99999s", &any_ns), 0);
}

static void
sl_parse_qty__bare_fraction_only_where_allowed(void **state)
{
	const struct sl_parse_spec us = {.qty = SL_QTY_NS, .unit = 1000, .max = 10000000000};
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(bad("1.5", &us, why), -EINVAL);
	assert_string_equal(why, "expected a whole number in [0, 10000000]");
	assert_int_equal(bad("1e3", &us, why), -EINVAL);
	assert_int_equal(ok("1.5us", &us), 1500); /* with a unit it may */
}

static void
sl_parse_qty__bounds_are_inclusive(void **state)
{
	const struct sl_parse_spec keepalive = {
		.qty = SL_QTY_NS, .unit = 1000, .min = 1000, .max = 10 * SL_NS_PER_S};
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(ok("1", &keepalive), 1000);
	assert_int_equal(ok("10000000", &keepalive), 10 * SL_NS_PER_S);
	assert_int_equal(ok("10s", &keepalive), 10 * SL_NS_PER_S);
	assert_int_equal(ok("1000ns", &keepalive), 1000);
	/* a bare number is answered in the key's own unit, as sluiced's messages always were */
	assert_int_equal(bad("0", &keepalive, why), -ERANGE);
	assert_string_equal(why, "expected a whole number in [1, 10000000]");
	assert_int_equal(bad("10000001", &keepalive, why), -ERANGE);
	/* a number with a unit, in units */
	assert_int_equal(bad("999ns", &keepalive, why), -ERANGE);
	assert_string_equal(why, "expected a duration in [1us, 10s]");
	assert_int_equal(bad("10000000001ns", &keepalive, why), -ERANGE);
	assert_string_equal(why, "expected a duration in [1us, 10s]");
}

static void
sl_parse_qty__overflow(void **state)
{
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(ok("18446744073709551615", &any_bytes), UINT64_MAX);
	assert_int_equal(bad("18446744073709551616", &any_bytes, why), -ERANGE);
	assert_int_equal(bad("99999999999999999999999", &any_bytes, why), -ERANGE);
	assert_int_equal(bad("18446744073709551615K", &any_bytes, why), -ERANGE);
	assert_int_equal(bad("18446744074s", &any_ns, why), -ERANGE);
	assert_int_equal(ok("18446744073s", &any_ns), 18446744073000000000ull);
	assert_int_equal(bad("1e20bps", &any_bps, why), -ERANGE);
	assert_int_equal(bad("1e99999999999s", &any_ns, why), -ERANGE);
	assert_int_equal(ok("100000000000000000000e-10s", &any_ns), 10000000000000000000ull);
	assert_int_equal(ok("0xffffffffffffffff", &any_bytes), UINT64_MAX);
	assert_int_equal(bad("0x10000000000000000", &any_bytes, why), -ERANGE);
}

static void
sl_parse_qty__negative(void **state)
{
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(bad("-1", &any_ns, why), -ERANGE);
	assert_int_equal(bad("-1us", &any_ns, why), -ERANGE);
	assert_int_equal(bad("-0.5ms", &any_ns, why), -ERANGE);
	assert_int_equal(bad("-", &any_ns, why), -EINVAL);
	assert_int_equal(bad("--1", &any_ns, why), -EINVAL);
	assert_int_equal(ok("-0", &any_ns), 0);
}

static void
sl_parse_qty__empty_and_junk(void **state)
{
	static const char *const junk[] = {
		"",     " ",   "x",     "1x",  "1 ",    " 1",   "+1",     "1us ",  "1 2",
		"1..2", ".",   "1e",    "1e+", "0x",    "0x1s", "0x1.5",  "nan",   "inf",
		"1ss",  "1Ms", "1 u s", "1,5", "1_000", "1us1", "1.2.3s", "1e5e5",
	};
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(junk); i++)
		if (bad(junk[i], &any_ns, why) != -EINVAL)
			fail_msg("'%s' is not -EINVAL", junk[i]);
	assert_int_equal(bad("many", &any_ns, why), -EINVAL);
	assert_string_equal(why, "expected a whole number in [0, 18446744073709551615] or a "
				 "duration in [0ns, 18446744073709551615ns] (units: ns, us, ms, "
				 "s)");
}

static void
sl_parse_qty__unit_of_another_kind(void **state)
{
	const struct sl_parse_spec rate = {
		.qty = SL_QTY_BPS, .unit = 1000000, .min = 1000000, .max = 400000000000};
	char why[SL_PARSE_WHY_MAX];

	(void)state;
	assert_int_equal(bad("10us", &rate, why), -EINVAL);
	assert_string_equal(why, "expected a rate in [1Mbps, 400Gbps] (units: bps, Kbps, Mbps, "
				 "Gbps)");
	assert_int_equal(bad("10KiB", &rate, why), -EINVAL);
	assert_int_equal(bad("10ns", &any_bytes, why), -EINVAL);
	assert_int_equal(bad("10MB", &any_ns, why), -EINVAL);
}

static void
sl_parse_u64__whole_numbers_only(void **state)
{
	char why[SL_PARSE_WHY_MAX];
	uint64_t v = 0;

	(void)state;
	assert_int_equal(sl_parse_u64("64", 0, 64, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 64);
	assert_int_equal(sl_parse_u64("010", 0, 64, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 10); /* decimal, not octal */
	assert_int_equal(sl_parse_u64("0x40", 0, 64, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 64);
	assert_int_equal(sl_parse_u64("65", 0, 64, &v, why, sizeof(why)), -ERANGE);
	assert_string_equal(why, "expected a whole number in [0, 64]");
	assert_int_equal(sl_parse_u64("many", 0, 64, &v, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "expected a whole number in [0, 64]");
	assert_int_equal(sl_parse_u64("1.0", 0, 64, &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_u64("1K", 0, 64000, &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_u64("-1", 0, 64, &v, why, sizeof(why)), -ERANGE);
	assert_int_equal(sl_parse_u64("", 0, 64, &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(v, 64);
	/* no reason buffer is fine */
	assert_int_equal(sl_parse_u64("x", 0, 64, &v, NULL, 0), -EINVAL);
	{
		/* a count is whole even where bare fractions are allowed */
		const struct sl_parse_spec count = {
			.qty = SL_QTY_COUNT, .max = 64, .bare_frac = true};

		assert_int_equal(sl_parse_qty("2.5", &count, &v, why, sizeof(why)), -EINVAL);
		assert_string_equal(why, "expected a whole number in [0, 64]");
		assert_int_equal(sl_parse_qty("2.0", &count, &v, why, sizeof(why)), 0);
		assert_int_equal(v, 2);
	}
}

static void
sl_parse_qty__reason_is_truncated_safely(void **state)
{
	char why[8];
	uint64_t v;

	(void)state;
	memset(why, 'z', sizeof(why));
	assert_int_equal(sl_parse_qty("x", &any_ns, &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(why[sizeof(why) - 1], '\0');
	assert_string_equal(why, "expecte");
}

static void
sl_parse_real__probabilities(void **state)
{
	const struct sl_parse_real_spec prob = {"a probability", 0, 1, false, false};
	const struct sl_parse_real_spec ber = {"a probability", 0, 1, false, true};
	const struct sl_parse_real_spec load = {"a load", 0, 1, true, false};
	static const char *const junk[] = {"",  " 0.1", "0.1 ", "+0.1", "nan", "inf",
					   "x", "0.1x", ".",    "-",    "e5",  "1,5"};
	char why[SL_PARSE_WHY_MAX];
	double x = 0;

	(void)state;
	assert_int_equal(sl_parse_real("0.01", &prob, &x, why, sizeof(why)), 0);
	assert_true(x == 0.01);
	assert_int_equal(sl_parse_real("1e-6", &ber, &x, why, sizeof(why)), 0);
	assert_true(x == 1e-6);
	assert_int_equal(sl_parse_real(".5", &prob, &x, why, sizeof(why)), 0);
	assert_true(x == 0.5);
	assert_int_equal(sl_parse_real("1", &prob, &x, why, sizeof(why)), 0);
	assert_int_equal(sl_parse_real("0", &prob, &x, why, sizeof(why)), 0);
	assert_int_equal(sl_parse_real("1", &ber, &x, why, sizeof(why)), -ERANGE);
	assert_string_equal(why, "expected a probability in [0, 1)");
	assert_int_equal(sl_parse_real("0", &load, &x, why, sizeof(why)), -ERANGE);
	assert_string_equal(why, "expected a load in (0, 1]");
	assert_int_equal(sl_parse_real("1.0000001", &prob, &x, why, sizeof(why)), -ERANGE);
	assert_int_equal(sl_parse_real("-0.1", &prob, &x, why, sizeof(why)), -ERANGE);
	assert_int_equal(sl_parse_real("1e400", &prob, &x, why, sizeof(why)), -ERANGE);
	assert_int_equal(sl_parse_real("1e-400", &prob, &x, why, sizeof(why)), -ERANGE);
	for (size_t i = 0; i < SL_ARRAY_SIZE(junk); i++)
		if (sl_parse_real(junk[i], &prob, &x, why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' is not -EINVAL", junk[i]);
	assert_string_equal(why, "expected a probability in [0, 1]");
	assert_true(x == 0);
}

static void
sl_parse_unit__names_of_each_kind(void **state)
{
	uint64_t m = 0;

	(void)state;
	assert_int_equal(sl_parse_unit("us", SL_QTY_NS, &m), 0);
	assert_int_equal(m, 1000);
	assert_int_equal(sl_parse_unit("US", SL_QTY_NS, &m), -EINVAL);
	assert_int_equal(sl_parse_unit("gbps", SL_QTY_BPS, &m), 0);
	assert_int_equal(m, SL_BPS_PER_GBPS);
	assert_int_equal(sl_parse_unit("kb", SL_QTY_BYTES, &m), 0);
	assert_int_equal(m, 1000);
	assert_int_equal(sl_parse_unit("bytes", SL_QTY_BYTES, &m), 0);
	assert_int_equal(m, 1);
	assert_int_equal(sl_parse_unit("us", SL_QTY_BPS, &m), -EINVAL);
	assert_int_equal(sl_parse_unit("pkts", SL_QTY_COUNT, &m), -EINVAL);
	assert_string_equal(sl_parse_unit_name(SL_QTY_NS, 1000), "us");
	assert_string_equal(sl_parse_unit_name(SL_QTY_BPS, SL_BPS_PER_MBPS), "Mbps");
	assert_string_equal(sl_parse_unit_name(SL_QTY_BYTES, 1), "B");
	assert_null(sl_parse_unit_name(SL_QTY_NS, 7));
	assert_string_equal(sl_parse_units(SL_QTY_NS), "ns, us, ms, s");
}

static void
sl_parse_format__largest_whole_unit_and_back(void **state)
{
	static const struct {
		uint64_t v;
		enum sl_qty q;
		const char *s;
	} cases[] = {
		{0, SL_QTY_NS, "0ns"},
		{1500, SL_QTY_NS, "1500ns"},
		{10 * SL_NS_PER_S, SL_QTY_NS, "10s"},
		{600 * SL_NS_PER_S, SL_QTY_NS, "600s"},
		{400000000000, SL_QTY_BPS, "400Gbps"},
		{1500000, SL_QTY_BPS, "1500Kbps"},
		{9018, SL_QTY_BYTES, "9018B"},
		{65536, SL_QTY_BYTES, "64KiB"},
		{64000, SL_QTY_BYTES, "64KB"},
		{UINT64_C(1) << 40, SL_QTY_BYTES, "1024GiB"},
		{42, SL_QTY_COUNT, "42"},
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		const struct sl_parse_spec sp = {.qty = cases[i].q, .max = UINT64_MAX};

		sl_parse_format(cases[i].v, cases[i].q, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
		assert_int_equal(ok(buf, &sp), cases[i].v);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_parse_qty__every_duration_unit),
		cmocka_unit_test(sl_parse_qty__every_rate_unit),
		cmocka_unit_test(sl_parse_qty__every_size_unit),
		cmocka_unit_test(sl_parse_qty__bare_number_counts_in_the_callers_unit),
		cmocka_unit_test(sl_parse_qty__fractions_are_exact),
		cmocka_unit_test(sl_parse_qty__bare_fraction_only_where_allowed),
		cmocka_unit_test(sl_parse_qty__bounds_are_inclusive),
		cmocka_unit_test(sl_parse_qty__overflow),
		cmocka_unit_test(sl_parse_qty__negative),
		cmocka_unit_test(sl_parse_qty__empty_and_junk),
		cmocka_unit_test(sl_parse_qty__unit_of_another_kind),
		cmocka_unit_test(sl_parse_u64__whole_numbers_only),
		cmocka_unit_test(sl_parse_qty__reason_is_truncated_safely),
		cmocka_unit_test(sl_parse_real__probabilities),
		cmocka_unit_test(sl_parse_unit__names_of_each_kind),
		cmocka_unit_test(sl_parse_format__largest_whole_unit_and_back),
	};

	return cmocka_run_group_tests_name("common/parse", tests, NULL, NULL);
}
