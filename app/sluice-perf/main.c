/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-perf: perftest's write_bw, write_lat, send_bw, send_lat, read_bw and read_lat on
 * sluiced's queue pairs. The test is the first argument, or the name the binary was run by.
 * Exit status: 0 done, 1 the run failed (what failed is printed), 2 a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perf_args.h"
#include "perf_run.h"

int
main(int argc, char **argv)
{
	struct sl_perf_args a;
	char err[512];

	if (sl_perf_args_parse(&a, argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "sluice-perf: %s\n", err);
		return 2;
	}
	if (a.action == SL_PERF_HELP) {
		sl_perf_usage(stdout, argc > 0 ? argv[0] : "sluice-perf");
		return 0;
	}
	if (a.action == SL_PERF_VERSION) {
		printf("sluice-perf %s\n", SLUICE_VERSION);
		return 0;
	}
	return sl_perf_run(&a) == 0 ? 0 : 1;
}
