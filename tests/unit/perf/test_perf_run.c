/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluice-perf/perf_run.c on fake_sluice.c (sluice.h in one process): a server
 * thread and a client thread run each test as the command lines say, over TCP on the
 * loopback, and their tables, JSON and the QPs' attributes are checked; a mismatch stops
 * both sides. The real daemon's runs are the integration suite's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_sluice.h"
#include "perf_args.h"
#include "perf_run.h"

#define MAXARG 24

static unsigned port_next;
static char out_path[] = "/tmp/sluice-perf-run-XXXXXX";
static char *out; /* both sides' stdout of the last run */

struct side {
	struct sl_perf_args a;
	int rc;
};

static void *
side_main(void *p)
{
	struct side *s = p;

	s->rc = sl_perf_run(&s->a);
	return NULL;
}

/* Parse "test flags..." for a side; the client gets the loopback as its host. */
static void
parse(struct side *s, const char *cmd, bool client, unsigned port)
{
	char line[512], err[256], portarg[32], *argv[MAXARG + 1], *save = NULL;
	int argc = 0;

	snprintf(line, sizeof(line), "%s", cmd);
	argv[argc++] = "sluice-perf";
	for (char *t = strtok_r(line, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	snprintf(portarg, sizeof(portarg), "--port=%u", port);
	argv[argc++] = portarg;
	if (client)
		argv[argc++] = "127.0.0.1";
	argv[argc] = NULL;
	assert_true(argc <= MAXARG);
	if (sl_perf_args_parse(&s->a, argc, argv, err, sizeof(err)) != 0)
		fail_msg("%s: %s", cmd, err);
}

/* Run server_cmd and client_cmd against each other; their exit codes, stdout in `out`. */
static void
run_pair(const char *server_cmd, const char *client_cmd, int *server_rc, int *client_rc)
{
	struct side srv, cli;
	pthread_t ts, tc;
	unsigned port = port_next++;
	int fd, saved;
	long n;
	FILE *f;

	parse(&srv, server_cmd, false, port);
	parse(&cli, client_cmd, true, port);
	fflush(stdout);
	saved = dup(1);
	fd = open(out_path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 1);
	close(fd);
	assert_int_equal(pthread_create(&ts, NULL, side_main, &srv), 0);
	assert_int_equal(pthread_create(&tc, NULL, side_main, &cli), 0);
	pthread_join(ts, NULL);
	pthread_join(tc, NULL);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	f = fopen(out_path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	free(out);
	out = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(out, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*server_rc = srv.rc;
	*client_rc = cli.rc;
}

static unsigned
count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void
run_ok(const char *cmd_server, const char *cmd_client)
{
	int rs, rc;

	run_pair(cmd_server, cmd_client, &rs, &rc);
	if (rs != 0 || rc != 0)
		fail_msg("'%s': server %d, client %d\n%s", cmd_client, rs, rc, out);
}

static void
sl_perf_run__write_bw_both_print_the_clients_row(void **state)
{
	(void)state;
	run_ok("write_bw -s 4096 -n 1000", "write_bw -s 4096 -n 1000");
	assert_int_equal(count(out, " 4096       1000       "), 2);
	assert_int_equal(count(out, "BW peak[MiB/sec]"), 2);
	assert_int_equal(count(out, "# sluice: qps=1 program=default"), 2);
	assert_int_equal(count(out, "* Waiting for client to connect... *"), 1);
	assert_int_equal(count(out, " 0.00 "), 0); /* a peak was measured */
}

static void
sl_perf_run__send_bw_qps_and_read_bw_bidir(void **state)
{
	(void)state;
	run_ok("send_bw -q 3 -n 500 -s 64", "send_bw -q 3 -n 500 -s 64");
	assert_int_equal(count(out, " 64         1500       "), 2); /* iterations x QPs */
	assert_int_equal(count(out, " WARNING: BW peak won't be measured"), 1); /* its server */
	run_ok("read_bw -b -n 300 -t 16 --report_gbits", "read_bw -b -n 300 -t 16 --report_gbits");
	assert_int_equal(count(out, "RDMA_Read Bidirectional BW Test"), 2);
	assert_int_equal(count(out, "BW average[Gb/sec]"), 2);
	assert_int_equal(count(out, " 65536      300        "), 2);
	assert_int_equal(fake_sluice_flushes, 0);
}

static void
sl_perf_run__lat_tests(void **state)
{
	(void)state;
	run_ok("write_lat -n 200 -s 32", "write_lat -n 200 -s 32");
	assert_int_equal(count(out, " 32      200          "), 2);
	run_ok("send_lat -n 200", "send_lat -n 200");
	assert_int_equal(count(out, " 2       200          "), 2);
	run_ok("read_lat -n 100 -s 64", "read_lat -n 100 -s 64");
	assert_int_equal(count(out, " 64      100          "), 2);
	assert_int_equal(count(out, "t_typical[usec]"), 2);
}

/* -e: every wait sleeps on the event fds, and the completions wake it (a broken arm or
 * signal would leave each wait to its 100 ms timeout: the 10 s silence check fails it). */
static void
sl_perf_run__events_sleep_on_the_cqs(void **state)
{
	unsigned before = fake_sluice_events;

	(void)state;
	run_ok("send_bw -e -n 2000 -s 64 -t 8", "send_bw -e -n 2000 -s 64 -t 8");
	assert_int_equal(count(out, " 64         2000       "), 2);
	run_ok("send_lat -e -n 200", "send_lat -e -n 200");
	run_ok("read_lat -e -n 100 -s 64", "read_lat -e -n 100 -s 64");
	assert_int_equal(count(out, " 64      100          "), 2);
	run_ok("write_lat -e -n 150 -s 32", "write_lat -e -n 150 -s 32");
	assert_int_equal(count(out, " 32      150          "), 2);
	assert_true(fake_sluice_events > before);
}

static void
sl_perf_run__sweep_writes_one_json_each(void **state)
{
	char s_cmd[256], c_cmd[256], path[64];
	FILE *f;
	char buf[65536];
	size_t n;

	(void)state;
	snprintf(s_cmd, sizeof(s_cmd), "write_bw -a -n 20 --out_json --out_json_file=%s.s",
		 out_path);
	snprintf(c_cmd, sizeof(c_cmd), "write_bw -a -n 20 --out_json --out_json_file=%s.c",
		 out_path);
	run_ok(s_cmd, c_cmd);
	assert_int_equal(count(out, " 8388608    20         "), 2);
	assert_int_equal(count(out, " 2          20         "), 2);
	for (int side = 0; side < 2; side++) {
		snprintf(path, sizeof(path), "%s.%c", out_path, side ? 'c' : 's');
		f = fopen(path, "r");
		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		unlink(path);
		assert_int_equal(count(buf, "\"MsgSize\""), 23);
		assert_non_null(strstr(buf, "\"results\": [\n"));
		assert_non_null(strstr(buf, "\"MsgSize\": 8388608,\n\"n_iterations\": 20,\n"));
	}
}

static void
sl_perf_run__duration_mode(void **state)
{
	(void)state;
	run_ok("write_bw -D 1 -s 1024", "write_bw -D 1 -s 1024");
	assert_int_equal(count(out, " 1024       "), 2);
	assert_int_equal(count(out, "0.00               "), 2); /* no peak in -D */
	run_ok("write_lat -D 1", "write_lat -D 1");
	assert_int_equal(count(out, "t_avg[usec]    tps average"), 2);
}

static void
sl_perf_run__rate_limit_and_names_reach_the_qp(void **state)
{
	(void)state;
	run_ok("write_bw -n 50 --rate_limit=2.5 --program=dcqcn",
	       "write_bw -n 50 --rate_limit=2.5 --program=dcqcn");
	assert_int_equal(fake_sluice_rate_bps, UINT64_C(2500000000));
	assert_string_equal(fake_sluice_program, "dcqcn");
	assert_int_equal(count(out, "program=dcqcn pacer=default receiver=melo "
				    "rate_limit=2500000000bps"),
			 2);
	run_ok("write_bw -n 50 -s 100 --rate_limit=1000 --rate_units=p",
	       "write_bw -n 50 -s 100 --rate_limit=1000 --rate_units=p");
	assert_int_equal(fake_sluice_rate_bps, 800000);
}

static void
sl_perf_run__mismatch_stops_both(void **state)
{
	int rs, rc;
	char err_path[64];
	char buf[1024] = {0};
	int fd, saved;
	FILE *f;

	(void)state;
	snprintf(err_path, sizeof(err_path), "%s.err", out_path);
	fflush(stderr);
	saved = dup(2);
	fd = open(err_path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	dup2(fd, 2);
	close(fd);
	run_pair("write_bw -n 100", "send_bw -n 100 -q 2", &rs, &rc);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(rs, -1);
	assert_int_equal(rc, -1);
	f = fopen(err_path, "r");
	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	unlink(err_path);
	assert_non_null(strstr(buf, "parameters differ from the client's: test write_bw here, "
				    "send_bw there"));
	assert_non_null(strstr(buf, "parameters differ from the server's: test send_bw here, "
				    "write_bw there"));
	assert_non_null(strstr(buf, "QPs 1 here, 2 there"));
}

static int
setup(void **state)
{
	int fd = mkstemp(out_path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	port_next = 20000 + (unsigned)getpid() % 20000;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(out_path);
	free(out);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_perf_run__write_bw_both_print_the_clients_row),
		cmocka_unit_test(sl_perf_run__send_bw_qps_and_read_bw_bidir),
		cmocka_unit_test(sl_perf_run__lat_tests),
		cmocka_unit_test(sl_perf_run__events_sleep_on_the_cqs),
		cmocka_unit_test(sl_perf_run__sweep_writes_one_json_each),
		cmocka_unit_test(sl_perf_run__duration_mode),
		cmocka_unit_test(sl_perf_run__rate_limit_and_names_reach_the_qp),
		cmocka_unit_test(sl_perf_run__mismatch_stops_both),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
