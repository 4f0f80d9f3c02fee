/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluice-perf/perf_report.c: perftest's table headers and rows (golden strings,
 * tabs included), the banner, the "# sluice:" line, the JSON document's shape, and results
 * through their wire encoding.
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

#include "perf_report.h"

#define MIB 1048576.0
#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define ARGS(a, ...)                                                                               \
	assert_int_equal(                                                                          \
		sl_perf_args_parse(a, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, sizeof(err)), 0)
#define DASHES                                                                                     \
	"---------------------------------------------------------------------------------------"  \
	"\n"

static char err[256];
static char *buf;
static size_t len;

static FILE *
mem(void)
{
	FILE *f;

	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	return f;
}

static const struct sl_perf_result bw_row = {
	.kind = SL_PERF_KIND_BW,
	.bw = {.size_bytes = 65536,
	       .iters = 5000,
	       .peak_Bps = 1024 * MIB,
	       .avg_Bps = 1000 * MIB,
	       .msg_rate_pps = 16000},
};

static const struct sl_perf_result lat_row = {
	.kind = SL_PERF_KIND_LAT,
	.lat = {.size_bytes = 2,
		.iters = 1000,
		.t_min_us = 1,
		.t_max_us = 9,
		.t_typical_us = 4.5,
		.t_avg_us = 4.5,
		.t_stdev_us = 2.29128784747792,
		.t_p99_us = 9,
		.t_p999_us = 9},
};

static void
sl_perf_print_address__perftests_line(void **state)
{
	FILE *f;

	(void)state;
	f = mem();
	sl_perf_print_address(f, "local", 0x11, 0x9a3f01, 0x10002, UINT64_C(0x7f52a8e35000));
	sl_perf_print_address(f, "remote", 0, 0, 0, 0);
	fclose(f);
	/* printf's "%#0Nx" as perftest uses it: 0x counts in the width, and a 0 gets no 0x */
	assert_string_equal(buf, " local address: LID 0000 QPN 0x0011 PSN 0x9a3f01 RKey 0x010002 "
				 "VAddr 0x007f52a8e35000\n"
				 " remote address: LID 0000 QPN 000000 PSN 00000000 RKey 00000000 "
				 "VAddr 0000000000000000\n");
}

static void
sl_perf_print_header__each_table(void **state)
{
	struct sl_perf_args a;
	FILE *f;

	(void)state;
	ARGS(&a, "write_bw");
	f = mem();
	sl_perf_print_header(f, &a);
	fclose(f);
	assert_string_equal(buf, DASHES " #bytes     #iterations    BW peak[MiB/sec]    BW "
					"average[MiB/sec]   MsgRate[Mpps]\n");
	ARGS(&a, "write_bw", "--report_gbits");
	f = mem();
	sl_perf_print_header(f, &a);
	fclose(f);
	assert_string_equal(buf, DASHES " #bytes     #iterations    BW peak[Gb/sec]    BW "
					"average[Gb/sec]   MsgRate[Mpps]\n");
	ARGS(&a, "send_lat");
	f = mem();
	sl_perf_print_header(f, &a);
	fclose(f);
	assert_string_equal(buf, DASHES " #bytes #iterations    t_min[usec]    t_max[usec]  "
					"t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% "
					"percentile[usec]   99.9% percentile[usec] \n");
	ARGS(&a, "send_lat", "-D", "4");
	f = mem();
	sl_perf_print_header(f, &a);
	fclose(f);
	assert_string_equal(buf,
			    DASHES " #bytes        #iterations       t_avg[usec]    tps average\n");
}

static void
sl_perf_print_row__bw_mib_and_gbits(void **state)
{
	struct sl_perf_args a;
	struct sl_perf_result small = {.kind = SL_PERF_KIND_BW,
				       .bw = {.size_bytes = 2,
					      .iters = 1000,
					      .peak_Bps = 0.05 * 125e6,
					      .avg_Bps = 0.04 * 125e6,
					      .msg_rate_pps = 2500}};
	FILE *f;

	(void)state;
	ARGS(&a, "write_bw");
	f = mem();
	sl_perf_print_row(f, &a, &bw_row);
	fclose(f);
	assert_string_equal(buf, " 65536      5000             1024.00            1000.00\t\t     "
				 "0.016000\n");
	ARGS(&a, "write_bw", "--report_gbits");
	f = mem();
	sl_perf_print_row(f, &a, &bw_row);
	fclose(f);
	/* 1024 MiB/s = 8.589934592 Gb/s; 1000 MiB/s = 8.388608 */
	assert_string_equal(buf, " 65536      5000             8.59               8.39   \t\t     "
				 "0.016000\n");
	/* under 0.1 Gb/s: perftest's six-decimal row */
	f = mem();
	sl_perf_print_row(f, &a, &small);
	fclose(f);
	assert_string_equal(buf, " 2          1000           0.050000            0.040000       "
				 "     0.002500\n");
}

static void
sl_perf_print_row__lat_and_duration(void **state)
{
	struct sl_perf_args a;
	struct sl_perf_result dur = {
		.kind = SL_PERF_KIND_LAT_DUR,
		.dur = {.size_bytes = 64, .iters = 12345, .t_avg_us = 1.5, .tps = 333333.3333}};
	FILE *f;

	(void)state;
	ARGS(&a, "write_lat");
	f = mem();
	sl_perf_print_row(f, &a, &lat_row);
	fclose(f);
	assert_string_equal(buf, " 2       1000          1.00           9.00         4.50     \t  "
				 "     4.50        \t2.29   \t\t9.00    \t\t9.00   \n");
	f = mem();
	sl_perf_print_row(f, &a, &dur);
	fclose(f);
	assert_string_equal(buf, " 64            12345            1.50           333333.33\n");
}

static void
sl_perf_print_footer__sluice_line(void **state)
{
	struct sl_perf_args a;
	FILE *f;

	(void)state;
	ARGS(&a, "write_bw", "-q", "4", "--program=dcqcn", "--pacer=tassel", "--receiver=gbn");
	f = mem();
	sl_perf_print_footer(f, &a, 1000000000);
	fclose(f);
	assert_string_equal(buf, DASHES "# sluice: qps=4 program=dcqcn pacer=tassel receiver=gbn "
					"rate_limit=1000000000bps\n");
	ARGS(&a, "write_lat");
	f = mem();
	sl_perf_print_footer(f, &a, 0);
	fclose(f);
	assert_string_equal(buf, DASHES "# sluice: qps=1 program=default pacer=default "
					"receiver=melo rate_limit=none\n");
}

static void
sl_perf_print_banner__client_and_server(void **state)
{
	struct sl_perf_args a;
	FILE *f;

	(void)state;
	ARGS(&a, "write_bw", "-b", "-n", "30000", "host");
	f = mem();
	sl_perf_print_banner(f, &a, "h1");
	fclose(f);
	assert_non_null(strstr(buf, " WARNING: BW peak won't be measured in this run.\n" DASHES
				    "                    RDMA_Write Bidirectional BW Test\n"
				    " Dual-port       : OFF\t\tDevice         : h1\n"
				    " Number of qps   : 1\t\tTransport type : sluice\n"));
	assert_non_null(strstr(buf, " TX depth        : 128\n"));
	assert_non_null(strstr(buf, " CQ Moderation   : 100\n"));
	assert_null(strstr(buf, "RX depth"));
	ARGS(&a, "send_lat");
	f = mem();
	sl_perf_print_banner(f, &a, "h2");
	fclose(f);
	assert_non_null(strstr(buf, "                    Send Latency Test\n"));
	assert_non_null(strstr(buf, " RX depth        : 16\n"));
	assert_null(strstr(buf, "TX depth"));
	assert_null(strstr(buf, "WARNING"));
	ARGS(&a, "read_bw", "h");
	f = mem();
	sl_perf_print_banner(f, &a, "h3");
	fclose(f);
	assert_non_null(strstr(buf, "                    RDMA_Read BW Test\n"));
	assert_non_null(strstr(buf, " Outstand reads  : 128\n"));
}

static void
sl_perf_json_write__one_size_is_perftests(void **state)
{
	struct sl_perf_args a;
	FILE *f;

	(void)state;
	ARGS(&a, "write_bw", "h");
	f = mem();
	assert_int_equal(sl_perf_json_write(f, &a, "h\"1", 0, &bw_row, 1), 0);
	fclose(f);
	assert_true(strncmp(buf, "{\n\"test_info\": {\n\"test\": \"RDMA_Write_BW_Test\",\n", 47) ==
		    0);
	assert_non_null(strstr(buf, "\"Device\": \"h\\\"1\",\n"));
	assert_non_null(strstr(buf, "\"Number_of_qps\": 1,\n"));
	assert_non_null(strstr(buf, "\"TX_depth\": 128,\n"));
	assert_non_null(strstr(buf, "\"CQ_Moderation\": 100,\n"));
	assert_non_null(strstr(buf, "\"Data_ex_method\": \"Ethernet\",\n"));
	assert_non_null(strstr(buf, "\"sluice_rate_limit_bps\": 0\n},\n"));
	assert_non_null(strstr(buf, "\"results\": {\n\"MsgSize\": 65536,\n\"n_iterations\": 5000,\n"
				    "\"BW_peak\": 1024.00,\n\"BW_average\": 1000.00,\n"
				    "\"MsgRate\": 0.016000\n}\n}\n"));
}

static void
sl_perf_json_write__sweep_is_an_array(void **state)
{
	struct sl_perf_result r[3] = {lat_row, lat_row, lat_row};
	struct sl_perf_args a;
	FILE *f;

	(void)state;
	r[1].lat.size_bytes = 4;
	r[2].lat.size_bytes = 8;
	ARGS(&a, "send_lat", "-a");
	f = mem();
	assert_int_equal(sl_perf_json_write(f, &a, "h", 0, r, 3), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"test\": \"Send_Latency_Test\",\n"));
	assert_non_null(strstr(buf, "\"RX_depth\": 16,\n"));
	assert_non_null(strstr(buf,
			       "\"results\": [\n{\n\"MsgSize\": 2,\n\"n_iterations\": 1000,\n"
			       "\"t_min\": 1.00,\n\"t_max\": 9.00,\n\"t_typical\": 4.50,\n"
			       "\"t_avg\": 4.50,\n\"t_stdev\": 2.29,\n\"percentile_99\": 9.00,\n"
			       "\"percentile_99.9\": 9.00\n},\n{\n\"MsgSize\": 4,\n"));
	assert_non_null(strstr(buf, "\"MsgSize\": 8,\n"));
	assert_non_null(strstr(buf, "\"percentile_99.9\": 9.00\n}\n]\n}\n"));
}

static void
sl_perf_result_encode__round_trip(void **state)
{
	uint8_t b[SL_PERF_RESULT_BYTES];
	struct sl_perf_result out;

	(void)state;
	sl_perf_result_encode(&bw_row, b);
	assert_int_equal(sl_perf_result_decode(b, &out), 0);
	assert_int_equal(out.kind, SL_PERF_KIND_BW);
	assert_memory_equal(&out.bw, &bw_row.bw, sizeof(out.bw));
	sl_perf_result_encode(&lat_row, b);
	assert_int_equal(sl_perf_result_decode(b, &out), 0);
	assert_int_equal(out.kind, SL_PERF_KIND_LAT);
	assert_memory_equal(&out.lat, &lat_row.lat, sizeof(out.lat));
	assert_int_equal(b[7], SL_PERF_KIND_LAT); /* network order */
	b[7] = 9;
	assert_int_equal(sl_perf_result_decode(b, &out), -EPROTO);
}

static int
teardown(void **state)
{
	(void)state;
	free(buf);
	buf = NULL;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_perf_print_address__perftests_line),
		cmocka_unit_test(sl_perf_print_header__each_table),
		cmocka_unit_test(sl_perf_print_row__bw_mib_and_gbits),
		cmocka_unit_test(sl_perf_print_row__lat_and_duration),
		cmocka_unit_test(sl_perf_print_footer__sluice_line),
		cmocka_unit_test(sl_perf_print_banner__client_and_server),
		cmocka_unit_test(sl_perf_json_write__one_size_is_perftests),
		cmocka_unit_test(sl_perf_json_write__sweep_is_an_array),
		cmocka_unit_test(sl_perf_result_encode__round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
