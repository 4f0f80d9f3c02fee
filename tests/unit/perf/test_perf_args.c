/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluice-perf/perf_args.c: the test from argv[0] or argv[1], perftest's
 * defaults, every flag, bad values, the rules across flags, the -a size list, --help, and the
 * parameters both sides compare.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf_args.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, err, ...)                                                                         \
	sl_perf_args_parse(a, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, sizeof(err))

static struct sl_perf_args a;
static char err[512];

static void
sl_perf_args_parse__defaults_per_test(void **state)
{
	(void)state;
	assert_int_equal(PARSE(&a, err, "sluice-perf", "write_bw"), 0);
	assert_int_equal(a.action, SL_PERF_RUN);
	assert_int_equal(a.test, SL_PERF_WRITE_BW);
	assert_int_equal(a.size_bytes, 65536);
	assert_int_equal(a.iters, 5000);
	assert_int_equal(a.tx_depth, 128);
	assert_int_equal(a.cq_mod, 100);
	assert_int_equal(a.qps, 1);
	assert_int_equal(a.port, 18515);
	assert_int_equal(a.rate_type, SL_PERF_RATE_OFF);
	assert_string_equal(a.json_file, "perftest_out.json");
	assert_string_equal(a.server, "");
	assert_false(a.no_peak);

	assert_int_equal(PARSE(&a, err, "sluice-perf", "send_bw", "host1"), 0);
	assert_int_equal(a.iters, 1000);
	assert_int_equal(a.rx_depth, 512);
	assert_string_equal(a.server, "host1");

	assert_int_equal(PARSE(&a, err, "sluice-perf", "read_lat"), 0);
	assert_int_equal(a.test, SL_PERF_READ_LAT);
	assert_int_equal(a.size_bytes, 2);
	assert_int_equal(a.iters, 1000);
	assert_int_equal(a.tx_depth, 1);
	assert_int_equal(sl_perf_test_verb(a.test), SL_PERF_READ);
	assert_true(sl_perf_test_is_lat(a.test));
}

static void
sl_perf_args_parse__test_from_argv0(void **state)
{
	(void)state;
	assert_int_equal(PARSE(&a, err, "/build/app/sluice-perf/write_lat", "-s", "64"), 0);
	assert_int_equal(a.test, SL_PERF_WRITE_LAT);
	assert_int_equal(a.size_bytes, 64);
	assert_int_equal(PARSE(&a, err, "ib_send_lat", "srv"), 0);
	assert_int_equal(a.test, SL_PERF_SEND_LAT);
	assert_string_equal(a.server, "srv");
	for (int t = 0; t < SL_PERF_TEST_COUNT; t++) {
		char *argv[] = {(char *)sl_perf_test_name((enum sl_perf_test)t), NULL};

		assert_int_equal(sl_perf_args_parse(&a, 1, argv, err, sizeof(err)), 0);
		assert_int_equal(a.test, t);
	}
	assert_null(sl_perf_test_name(SL_PERF_TEST_COUNT));
}

static void
sl_perf_args_parse__every_flag(void **state)
{
	(void)state;
	assert_int_equal(PARSE(&a, err, "sluice-perf", "write_bw", "-s", "4096", "-n", "777", "-q",
			       "4", "-t", "64", "-Q", "32", "-b", "-p", "9999", "-F",
			       "--report_gbits", "--rate_limit", "2.5", "--rate_units", "g",
			       "--rate_limit_type", "SW", "--burst_size", "16", "--out_json",
			       "--out_json_file", "/tmp/x.json", "--program", "dcqcn", "--pacer",
			       "tassel", "--receiver", "gbn", "-S", "/run/s.sock", "10.0.0.2"),
			 0);
	assert_int_equal(a.size_bytes, 4096);
	assert_int_equal(a.iters, 777);
	assert_int_equal(a.qps, 4);
	assert_int_equal(a.tx_depth, 64);
	assert_int_equal(a.cq_mod, 32);
	assert_true(a.bidir);
	assert_int_equal(a.port, 9999);
	assert_true(a.report_gbits);
	assert_int_equal(a.rate_type, SL_PERF_RATE_SW);
	assert_int_equal(a.rate_limit.mant, 25);
	assert_int_equal(a.rate_limit.scale, 1);
	assert_int_equal(a.rate_units, SL_PERF_RATE_GBPS);
	assert_int_equal(a.burst_size, 16);
	assert_true(a.out_json);
	assert_string_equal(a.json_file, "/tmp/x.json");
	assert_string_equal(a.program, "dcqcn");
	assert_string_equal(a.pacer, "tassel");
	assert_int_equal(a.receiver, 1);
	assert_string_equal(a.socket, "/run/s.sock");
	assert_string_equal(a.server, "10.0.0.2");

	/* the long spellings, and --opt=value */
	assert_int_equal(PARSE(&a, err, "read_bw", "--size=128", "--iters=10", "--qp=2",
			       "--tx-depth=8", "--bidirectional", "--port=1234", "--CPU-freq",
			       "--socket=/s", "--rate_limit=100", "--rate_units=M", "--all"),
			 -EINVAL); /* -a with -s */
	assert_int_equal(PARSE(&a, err, "read_bw", "--size=128", "--iters=10", "--qp=2",
			       "--tx-depth=8", "--bidirectional", "--port=1234", "--CPU-freq",
			       "--socket=/s", "--rate_limit=100", "--rate_units=M"),
			 0);
	assert_int_equal(a.size_bytes, 128);
	assert_int_equal(a.iters, 10);
	assert_int_equal(a.qps, 2);
	assert_int_equal(a.tx_depth, 8);
	assert_true(a.bidir);
	assert_int_equal(a.port, 1234);
	assert_string_equal(a.socket, "/s");
	assert_int_equal(a.rate_units, SL_PERF_RATE_MIBPS);
	assert_int_equal(a.rate_type, SL_PERF_RATE_SW); /* --rate_limit alone: sluice's pacer */
	assert_int_equal(a.burst_size, 8);              /* tx depth, as perftest's */
	assert_int_equal(PARSE(&a, err, "send_lat", "--receiver=melo", "-D", "8"), 0);
	assert_int_equal(a.receiver, 0);
	assert_int_equal(a.duration_s, 8);
	assert_int_equal(a.margin_s, 2);
	assert_int_equal(PARSE(&a, err, "sluice-perf", "write_bw", "-t", "64", "-Q", "100"), 0);
	assert_int_equal(a.cq_mod, 64); /* at most the tx depth, as perftest has it */
}

static void
sl_perf_args_parse__rate_limit_bps(void **state)
{
	uint64_t bps;

	(void)state;
	assert_int_equal(PARSE(&a, err, "write_bw", "--rate_limit=1"), 0);
	assert_int_equal(sl_perf_args_rate_bps(&a, 65536, &bps), 0);
	assert_int_equal(bps, UINT64_C(1000000000));
	assert_int_equal(
		PARSE(&a, err, "write_bw", "-s", "64", "--rate_limit=1000", "--rate_units=p"), 0);
	assert_int_equal(sl_perf_args_rate_bps(&a, 64, &bps), 0);
	assert_int_equal(bps, 512000);
	assert_int_equal(PARSE(&a, err, "write_bw"), 0);
	assert_int_equal(sl_perf_args_rate_bps(&a, 64, &bps), 0);
	assert_int_equal(bps, 0);
}

static void
expect_bad(int argc, char **argv, const char *why)
{
	memset(err, 0, sizeof(err));
	assert_int_equal(sl_perf_args_parse(&a, argc, argv, err, sizeof(err)), -EINVAL);
	if (strstr(err, why) == NULL)
		fail_msg("'%s': expected '%s' in the error", err, why);
}

#define BAD(why, ...) expect_bad(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), why)

static void
sl_perf_args_parse__bad_values(void **state)
{
	(void)state;
	BAD("unknown test 'write_xx'", "sluice-perf", "write_xx");
	BAD("no test named", "sluice-perf");
	BAD("no test named", "sluice-perf", "-s", "2");
	BAD("bad -s/--size '0'", "write_bw", "-s", "0");
	BAD("bad -s/--size '8388609'", "write_bw", "-s", "8388609");
	BAD("bad -s/--size '1k'", "write_bw", "-s", "1k");
	BAD("bad -n/--iters '4'", "write_bw", "-n", "4");
	BAD("bad -n/--iters '-5'", "write_bw", "-n", "-5");
	BAD("bad -D/--duration '0'", "write_bw", "-D", "0");
	BAD("bad -q/--qp '0'", "write_bw", "-q", "0");
	BAD("bad -q/--qp '4097'", "write_bw", "-q", "4097");
	BAD("bad -t/--tx-depth '0'", "write_bw", "-t", "0");
	BAD("bad -Q/--cq-mod '0'", "write_bw", "-Q", "0");
	BAD("bad -p/--port '65536'", "write_bw", "-p", "65536");
	BAD("bad --rate_limit '0'", "write_bw", "--rate_limit=0");
	BAD("bad --rate_limit 'x'", "write_bw", "--rate_limit=x");
	BAD("bad --rate_units 'G'", "write_bw", "--rate_limit=1", "--rate_units=G");
	BAD("bad --rate_limit_type 'XX'", "write_bw", "--rate_limit=1", "--rate_limit_type=XX");
	BAD("bad --burst_size '0'", "write_bw", "--rate_limit=1", "--burst_size=0");
	BAD("bad --receiver 'sack'", "write_bw", "--receiver=sack");
	BAD("bad --program 'a_name_far_too_long'", "write_bw", "--program=a_name_far_too_long");
	BAD("unknown option", "write_bw", "--frobnicate");
	BAD("unknown option", "write_bw", "-Z");
	BAD("needs a value", "write_bw", "-s");
	BAD("one server host at most ('h2' is extra)", "write_bw", "h1", "h2");
}

static void
sl_perf_args_parse__hw_pp_refused(void **state)
{
	(void)state;
	BAD("--rate_limit_type=HW not supported: sluice paces in software, use SW", "write_bw",
	    "--rate_limit=1", "--rate_limit_type=HW");
	BAD("--rate_limit_type=PP not supported: sluice paces in software, use SW", "write_bw",
	    "--rate_limit=1", "--rate_limit_type=PP");
}

static void
sl_perf_args_parse__rules_across_flags(void **state)
{
	(void)state;
	BAD("-a and -s exclude each other", "write_bw", "-a", "-s", "64");
	BAD("-D does not run with -a", "write_bw", "-a", "-D", "4");
	BAD("-b applies to bw tests only", "write_lat", "-b");
	BAD("lat tests run one QP", "send_lat", "-q", "2");
	BAD("--rate_limit applies to bw tests only", "read_lat", "--rate_limit=1");
	BAD("--rate_limit needs one message size", "write_bw", "-a", "--rate_limit=10",
	    "--rate_units=p");
	BAD("--rate_limit needs one message size", "write_bw", "-a", "--rate_limit=1");
	BAD("--rate_limit_type=SW needs --rate_limit", "write_bw", "--rate_limit_type=SW");
	BAD("--burst_size needs --rate_limit", "write_bw", "--burst_size=4");
	BAD("--rate_limit out of range", "write_bw", "--rate_limit=100000000000");
}

static void
sl_perf_args_parse__no_peak_rules(void **state)
{
	(void)state;
	assert_int_equal(PARSE(&a, err, "write_bw", "-n", "20000", "h"), 0);
	assert_false(a.no_peak);
	assert_int_equal(PARSE(&a, err, "write_bw", "-n", "20001", "h"), 0);
	assert_true(a.no_peak);
	assert_int_equal(PARSE(&a, err, "write_bw", "-D", "4", "h"), 0);
	assert_true(a.no_peak);
	assert_int_equal(a.margin_s, 1);
	assert_int_equal(PARSE(&a, err, "send_bw"), 0); /* its server counts arrivals */
	assert_true(a.no_peak);
	assert_int_equal(PARSE(&a, err, "send_bw", "h"), 0);
	assert_false(a.no_peak);
	assert_int_equal(PARSE(&a, err, "send_bw", "-b"), 0);
	assert_false(a.no_peak);
}

static void
sl_perf_args_parse__help_version_again(void **state)
{
	(void)state;
	assert_int_equal(PARSE(&a, err, "sluice-perf", "--help"), 0);
	assert_int_equal(a.action, SL_PERF_HELP);
	assert_int_equal(PARSE(&a, err, "sluice-perf", "-V"), 0);
	assert_int_equal(a.action, SL_PERF_VERSION);
	assert_int_equal(PARSE(&a, err, "write_bw", "-h"), 0);
	assert_int_equal(a.action, SL_PERF_HELP);
	/* getopt's state does not leak from one parse into the next */
	assert_int_equal(PARSE(&a, err, "write_bw", "-s", "8"), 0);
	assert_int_equal(a.action, SL_PERF_RUN);
	assert_int_equal(a.size_bytes, 8);
}

static void
sl_perf_sizes__sweep_and_one(void **state)
{
	uint64_t s[SL_PERF_SWEEP_COUNT + 4];
	unsigned n;

	(void)state;
	assert_int_equal(PARSE(&a, err, "write_bw", "-a"), 0);
	n = sl_perf_sizes(&a, s, SL_PERF_SWEEP_COUNT + 4);
	assert_int_equal(n, 23);
	assert_int_equal(s[0], 2);
	for (unsigned i = 1; i < n; i++)
		assert_int_equal(s[i], 2 * s[i - 1]);
	assert_int_equal(s[n - 1], 8388608);
	assert_int_equal(a.size_bytes, 2);
	assert_int_equal(sl_perf_sizes(&a, s, 5), 5);
	assert_int_equal(PARSE(&a, err, "write_bw", "-s", "100"), 0);
	assert_int_equal(sl_perf_sizes(&a, s, SL_PERF_SWEEP_COUNT), 1);
	assert_int_equal(s[0], 100);
}

static void
sl_perf_usage__lists_every_test_and_flag(void **state)
{
	static const char *const must[] = {
		"write_bw",          "write_lat",
		"send_bw",           "send_lat",
		"read_bw",           "read_lat",
		"-s, --size",        "-a, --all",
		"-n, --iters",       "-D, --duration",
		"-q, --qp",          "-t, --tx-depth",
		"-Q, --cq-mod",      "-b, --bidirectional",
		"-p, --port",        "-F",
		"--report_gbits",    "--rate_limit=",
		"--rate_units",      "--rate_limit_type",
		"--burst_size",      "--out_json ",
		"--out_json_file",   "--program",
		"--pacer",           "--receiver",
		"-S, --socket",      "-h, --help",
		"-V, --version",     "18515",
		"perftest_out.json", "not supported: sluice paces in software"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	sl_perf_usage(f, "sluice-perf");
	fclose(f);
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (strstr(buf, must[i]) == NULL)
			fail_msg("--help lacks '%s'", must[i]);
	free(buf);
}

static void
sl_perf_wire_check__same_and_each_difference(void **state)
{
	struct sl_perf_args b;
	struct sl_perf_wire w;

	(void)state;
	assert_int_equal(PARSE(&a, err, "write_bw", "-s", "4096", "-q", "2"), 0);
	assert_int_equal(PARSE(&b, err, "write_bw", "-s", "4096", "-q", "2", "-t", "8", "host"), 0);
	sl_perf_wire_encode(&b, &w);
	assert_int_equal(sl_perf_wire_check(&a, &w, true, err, sizeof(err)), 0);

	assert_int_equal(PARSE(&b, err, "send_bw", "-s", "4096", "-q", "2", "-n", "5000"), 0);
	sl_perf_wire_encode(&b, &w);
	assert_int_equal(sl_perf_wire_check(&a, &w, true, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "parameters differ from the client's: test write_bw here, send_bw "
				 "there");

	assert_int_equal(PARSE(&b, err, "write_bw", "-s", "64", "-q", "3", "-n", "99", "-b"), 0);
	sl_perf_wire_encode(&b, &w);
	assert_int_equal(sl_perf_wire_check(&a, &w, false, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "the server's"));
	assert_non_null(strstr(err, "size 4096 here, 64 there"));
	assert_non_null(strstr(err, "QPs 2 here, 3 there"));
	assert_non_null(strstr(err, "iterations 5000 here, 99 there"));
	assert_non_null(strstr(err, "-b off here, on there"));

	assert_int_equal(PARSE(&b, err, "write_bw", "-a", "-q", "2"), 0);
	sl_perf_wire_encode(&b, &w);
	assert_int_equal(sl_perf_wire_check(&a, &w, true, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "-a off here, on there"));

	assert_int_equal(PARSE(&b, err, "write_bw", "-s", "4096", "-q", "2", "-D", "4"), 0);
	sl_perf_wire_encode(&b, &w);
	assert_int_equal(sl_perf_wire_check(&a, &w, true, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "duration 0 s here, 4 s there"));

	w.bytes[0] ^= 0xff; /* not sluice-perf */
	assert_int_equal(sl_perf_wire_check(&a, &w, true, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "is not sluice-perf"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_perf_args_parse__defaults_per_test),
		cmocka_unit_test(sl_perf_args_parse__test_from_argv0),
		cmocka_unit_test(sl_perf_args_parse__every_flag),
		cmocka_unit_test(sl_perf_args_parse__rate_limit_bps),
		cmocka_unit_test(sl_perf_args_parse__bad_values),
		cmocka_unit_test(sl_perf_args_parse__hw_pp_refused),
		cmocka_unit_test(sl_perf_args_parse__rules_across_flags),
		cmocka_unit_test(sl_perf_args_parse__no_peak_rules),
		cmocka_unit_test(sl_perf_args_parse__help_version_again),
		cmocka_unit_test(sl_perf_sizes__sweep_and_one),
		cmocka_unit_test(sl_perf_usage__lists_every_test_and_flag),
		cmocka_unit_test(sl_perf_wire_check__same_and_each_difference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
