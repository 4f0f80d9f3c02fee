/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_json_sample DIR: writes the JSON documents sluice-perf writes, one per shape (bw with
 * one size, a bw -a sweep in Gb/s, lat, lat -D, bidirectional read_bw), into DIR, for
 * check_json.py to parse back with Python's json module.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_report.h"

static int
one(const char *dir, const char *name, int argc, char **argv, const struct sl_perf_result *r,
    unsigned n, uint64_t bps)
{
	struct sl_perf_args a;
	char path[512], err[256];
	FILE *f;
	int rc;

	if (sl_perf_args_parse(&a, argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	rc = sl_perf_json_write(f, &a, "host \"one\"", bps, r, n);
	return fclose(f) != 0 || rc != 0;
}

#define ONE(dir, name, r, n, bps, ...)                                                             \
	one(dir, name, (int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)),                    \
	    (char *[]){__VA_ARGS__, NULL}, r, n, bps)

int
main(int argc, char **argv)
{
	struct sl_perf_result bw[SL_PERF_SWEEP_COUNT], lat = {.kind = SL_PERF_KIND_LAT},
						       dur = {.kind = SL_PERF_KIND_LAT_DUR};
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: perf_json_sample DIR\n");
		return 2;
	}
	for (unsigned i = 0; i < SL_PERF_SWEEP_COUNT; i++)
		bw[i] = (struct sl_perf_result){
			.kind = SL_PERF_KIND_BW,
			.bw = {.size_bytes = 2u << i,
			       .iters = 5000,
			       .peak_Bps = 1e6 * (i + 1),
			       .avg_Bps = 0.9e6 * (i + 1),
			       .msg_rate_pps = 0.9e6 * (i + 1) / (2u << i)}};
	lat.lat = (struct sl_perf_lat){2, 1000, 1.1, 9.9, 2.2, 2.5, 0.7, 8.8, 9.9};
	dur.dur = (struct sl_perf_lat_dur){64, 100000, 3.25, 153846.15};
	bad |= ONE(argv[1], "write_bw", bw, 1, 1000000000, "write_bw", "--rate_limit=1", "h");
	bad |= ONE(argv[1], "write_bw_sweep", bw, SL_PERF_SWEEP_COUNT, 0, "write_bw", "-a",
		   "--report_gbits", "h");
	bad |= ONE(argv[1], "send_lat", &lat, 1, 0, "send_lat", "--program=dcqcn");
	bad |= ONE(argv[1], "write_lat_dur", &dur, 1, 0, "write_lat", "-D", "4", "h");
	bad |= ONE(argv[1], "read_bw_bidir", bw, 1, 0, "read_bw", "-b", "-q", "8");
	return bad;
}
