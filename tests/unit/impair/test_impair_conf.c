/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/net/impair/impair_conf.c: defaults, every key's accepted range, errors that
 * name the key, drop_idx lists, cross-key checks and the printed form.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "impair_engine.h"

static void
sl_impair_conf_init__everything_off(void **state)
{
	struct sl_impair_conf c;
	char err[128];

	(void)state;
	sl_impair_conf_init(&c);
	assert_true(c.loss == 0 && c.ge_p == 0 && c.ber == 0 && c.dup == 0 && c.reorder == 0);
	assert_true(c.ge_k == 1.0 && c.ge_h == 0.0);
	assert_int_equal(c.delay_ns, 0);
	assert_int_equal(c.rate_bps, 0);
	assert_int_equal(c.n_drop_idx, 0);
	assert_int_equal(c.corrupt, SL_IMPAIR_CORRUPT_DROP);
	assert_int_equal(sl_impair_conf_check(&c, err, sizeof(err)), 0);
}

static void
sl_impair_conf_set__accepts_every_key(void **state)
{
	static const char *const kv[][2] = {
		{"seed", "42"},        {"loss", "0.25"},         {"ge_p", "0.01"},
		{"ge_r", "0.5"},       {"ge_h", "0.1"},          {"ge_k", "0.99"},
		{"ber", "1e-6"},       {"corrupt", "deliver"},   {"dup", "1"},
		{"reorder", "0.1"},    {"reorder_gap", "4"},     {"delay_ns", "100000"},
		{"jitter_ns", "5000"}, {"rate_bps", "10G"},      {"burst_bytes", "9000"},
		{"queue_bytes", "0"},  {"queue_frames", "1024"}, {"drop_idx", "3"},
	};
	struct sl_impair_conf c;
	char err[128];
	unsigned n_keys = 0;

	(void)state;
	sl_impair_conf_init(&c);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(kv); i++)
		assert_int_equal(sl_impair_conf_set(&c, kv[i][0], kv[i][1], err, sizeof(err)), 0);
	while (sl_impair_conf_keys[n_keys] != NULL)
		n_keys++;
	assert_int_equal(n_keys, SL_ARRAY_SIZE(kv));
	assert_int_equal(c.seed, 42);
	assert_true(c.loss == 0.25 && c.ber == 1e-6 && c.dup == 1.0);
	assert_int_equal(c.corrupt, SL_IMPAIR_CORRUPT_DELIVER);
	assert_int_equal(c.reorder_gap, 4);
	assert_int_equal(c.rate_bps, 10000000000ull);
	assert_int_equal(c.queue_frames, 1024);
	assert_int_equal(sl_impair_conf_check(&c, err, sizeof(err)), 0);
}

static void
sl_impair_conf_set__rejects_bad_values_naming_the_key(void **state)
{
	static const char *const kv[][2] = {
		{"loss", "1.5"},
		{"loss", "-0.1"},
		{"loss", "0.1x"},
		{"loss", ""},
		{"ber", "1"},
		{"ge_r", "nan"},
		{"corrupt", "keep"},
		{"seed", "-1"},
		{"delay_ns", "1Gbps"},
		{"delay_ns", "11s"},
		{"queue_bytes", "1ns"},
		{"rate_bps", "10T"},
		{"rate_bps", "2000G"},
		{"burst_bytes", "10"},
		{"reorder_gap", "0"},
		{"reorder_gap", "1025"},
		{"queue_frames", "1000"},
		{"queue_frames", "32"},
		{"drop_idx", "5-3"},
		{"drop_idx", "1::2"},
		{"drop_idx", "1:"},
		{"drop_idx", "0-5000"},
		{"drop_idx", "18446744073709551616"},
		{"drop_idx", "1-18446744073709551616"},
	};
	struct sl_impair_conf c;
	char err[128];

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(kv); i++) {
		sl_impair_conf_init(&c);
		err[0] = '\0';
		assert_int_equal(sl_impair_conf_set(&c, kv[i][0], kv[i][1], err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, kv[i][0]));
	}
	assert_int_equal(sl_impair_conf_set(&c, "los", "0.1", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'los'"));
}

static void
sl_impair_conf_set__drop_idx_sorted_unique_ranges(void **state)
{
	static const uint64_t expect[] = {1, 2, 3, 4, 9, 1000000000000};
	struct sl_impair_conf c;
	char err[128];

	(void)state;
	sl_impair_conf_init(&c);
	assert_int_equal(
		sl_impair_conf_set(&c, "drop_idx", "9:1000000000000:2-4:1:3", err, sizeof(err)), 0);
	assert_int_equal(c.n_drop_idx, SL_ARRAY_SIZE(expect));
	assert_memory_equal(c.drop_idx, expect, sizeof(expect));
}

static void
sl_impair_conf_check__cross_key_constraints(void **state)
{
	struct sl_impair_conf c;
	char err[128];

	(void)state;
	sl_impair_conf_init(&c);
	c.ge_p = 0.1;
	assert_int_equal(sl_impair_conf_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ge_r"));
	c.ge_r = 0.5;
	c.jitter_ns = 10;
	assert_int_equal(sl_impair_conf_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "jitter_ns"));
	c.delay_ns = 10;
	assert_int_equal(sl_impair_conf_check(&c, err, sizeof(err)), 0);
}

static void
sl_impair_conf_format__round_trips(void **state)
{
	struct sl_impair_conf c, d;
	char buf[512], err[128], *save = NULL;

	(void)state;
	sl_impair_conf_init(&c);
	assert_int_equal(sl_impair_conf_set(&c, "loss", "0.3", err, sizeof(err)), 0);
	assert_int_equal(sl_impair_conf_set(&c, "rate_bps", "1G", err, sizeof(err)), 0);
	assert_int_equal(sl_impair_conf_set(&c, "drop_idx", "2:7", err, sizeof(err)), 0);
	assert_int_equal(sl_impair_conf_set(&c, "ber", "0.001", err, sizeof(err)), 0);
	assert_true(sl_impair_conf_format(&c, buf, sizeof(buf)) < (int)sizeof(buf));
	assert_non_null(strstr(buf, "loss=0.3,")); /* shortest form that reads back */
	assert_non_null(strstr(buf, "drop_idx=2:7"));
	sl_impair_conf_init(&d);
	for (char *kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		assert_non_null(eq);
		*eq = '\0';
		assert_int_equal(sl_impair_conf_set(&d, kv, eq + 1, err, sizeof(err)), 0);
	}
	assert_memory_equal(&c, &d, sizeof(c));
	/* Truncation reports the full length, as snprintf does. */
	assert_int_equal(sl_impair_conf_format(&c, buf, 4), sl_impair_conf_format(&c, NULL, 0));
}

/* A bare number counts in the key's unit; a unit of the key's kind may be written instead. */
static void
sl_impair_conf_set__units(void **state)
{
	static const struct {
		const char *key, *value;
		size_t offset;
		uint64_t want;
	} cases[] = {
		{"delay_ns", "50us", offsetof(struct sl_impair_conf, delay_ns), 50000},
		{"delay_ns", "1.5ms", offsetof(struct sl_impair_conf, delay_ns), 1500000},
		{"jitter_ns", "10 us", offsetof(struct sl_impair_conf, jitter_ns), 10000},
		{"rate_bps", "2.5Gbps", offsetof(struct sl_impair_conf, rate_bps), 2500000000},
		{"rate_bps", "100Mbps", offsetof(struct sl_impair_conf, rate_bps), 100000000},
		{"rate_bps", "10g", offsetof(struct sl_impair_conf, rate_bps), 10000000000},
		{"burst_bytes", "64KiB", offsetof(struct sl_impair_conf, burst_bytes), 65536},
		{"queue_bytes", "1MB", offsetof(struct sl_impair_conf, queue_bytes), 1000000},
		{"queue_bytes", "4096", offsetof(struct sl_impair_conf, queue_bytes), 4096},
	};
	struct sl_impair_conf c;
	char err[160];

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		sl_impair_conf_init(&c);
		assert_int_equal(
			sl_impair_conf_set(&c, cases[i].key, cases[i].value, err, sizeof(err)), 0);
		assert_int_equal(*(uint64_t *)((char *)&c + cases[i].offset), cases[i].want);
	}
	assert_int_equal(sl_impair_conf_set(&c, "delay_ns", "11s", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "delay_ns=11s: expected a duration in [0ns, 10s]");
}

/* Found by fuzz-impair-conf: a range ending at UINT64_MAX looped forever past the list. */
static void
sl_impair_conf_set__drop_idx_at_uint64_max(void **state)
{
	struct sl_impair_conf c;
	char err[128];

	(void)state;
	sl_impair_conf_init(&c);
	assert_int_equal(
		sl_impair_conf_set(&c, "drop_idx", "18446744073709551615", err, sizeof(err)), 0);
	assert_int_equal(c.n_drop_idx, 1);
	assert_int_equal(c.drop_idx[0], UINT64_MAX);
	assert_int_equal(sl_impair_conf_set(&c, "drop_idx",
					    "7:18446744073709551614-18446744073709551615", err,
					    sizeof(err)),
			 0);
	assert_int_equal(c.n_drop_idx, 3);
	assert_int_equal(c.drop_idx[0], 7);
	assert_int_equal(c.drop_idx[2], UINT64_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_impair_conf_set__drop_idx_at_uint64_max),
		cmocka_unit_test(sl_impair_conf_init__everything_off),
		cmocka_unit_test(sl_impair_conf_set__accepts_every_key),
		cmocka_unit_test(sl_impair_conf_set__rejects_bad_values_naming_the_key),
		cmocka_unit_test(sl_impair_conf_set__drop_idx_sorted_unique_ranges),
		cmocka_unit_test(sl_impair_conf_set__units),
		cmocka_unit_test(sl_impair_conf_check__cross_key_constraints),
		cmocka_unit_test(sl_impair_conf_format__round_trips),
	};

	return cmocka_run_group_tests_name("impair_conf", tests, NULL, NULL);
}
