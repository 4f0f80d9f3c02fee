/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-sim - run one scenario of the deterministic simulator and print its JSON summary.
 *
 *   sluice-sim [--trace DIR] [--duration-ms MS] [--seed N] [--set SECTION.KEY=VALUE]...
 *              SCENARIO.ini
 *
 * A scenario with a [sweep] section runs once per combination of the swept values instead and
 * prints one JSON line per run (sim_exp_melo_json: goodput, pool usage, drops, FCTs; with
 * lib/ec's receiver sim_exp_ec_json: goodput, retransmissions, target drops and acks).
 *
 * Exit status: 0 after a run, 1 when the run failed, 2 for a configuration error (the message
 * names the file, line and key).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exp.h"

static void
usage(FILE *out)
{
	fprintf(out, "usage: sluice-sim [--trace DIR] [--duration-ms MS] [--seed N]\n"
		     "                  [--set SECTION.KEY=VALUE]... SCENARIO.ini\n");
}

/* --set sim.loss=0.01 or --set flows.proto=dcqcn (the last [flows] group). */
static int
apply_set(struct sim_scenario *sc, char *arg, char *err, size_t len)
{
	char *eq = strchr(arg, '='), *dot;

	if (eq == NULL)
		return snprintf(err, len, "--set %s: want SECTION.KEY=VALUE", arg), -EINVAL;
	*eq = '\0';
	if (!strncmp(arg, "sweep.", 6)) /* --set sweep.sim.loss=0 0.01: the key has dots */
		return sim_scenario_set(sc, "sweep", arg + 6, eq + 1, err, len);
	dot = strrchr(arg, '.');
	if (dot == NULL)
		return snprintf(err, len, "--set %s: want SECTION.KEY=VALUE", arg), -EINVAL;
	*dot = '\0';
	return sim_scenario_set(sc, arg, dot + 1, eq + 1, err, len);
}

/* One run per combination of the [sweep] values, one JSON line each. */
static int
run_sweep(const struct sim_scenario *base, const char *path)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint32_t runs = sim_sweep_runs(base);
	char labels[512], err[512];
	int rc = 0;

	for (uint32_t i = 0; i < runs && rc == 0; i++) {
		struct sim_exp *x =
			sim_sweep_run(base, i, labels, sizeof(labels), err, sizeof(err), &rc);

		if (x == NULL) {
			fprintf(stderr, "sluice-sim: %s: sweep run %u: %s\n", path, i, err);
			break;
		}
		if (sim_exp_ec(x))
			sim_exp_ec_json(x, name, labels, stdout);
		else
			sim_exp_melo_json(x, name, labels, stdout);
		fflush(stdout);
		sim_exp_free(x);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"trace", required_argument, NULL, 't'},
		{"duration-ms", required_argument, NULL, 'd'},
		{"seed", required_argument, NULL, 's'},
		{"set", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *trace = NULL, *name;
	char *sets[64], err[512], *dur = NULL, *seed = NULL;
	unsigned nsets = 0;
	struct sim_scenario sc;
	struct sim_exp *x;
	int c, rc;

	while ((c = getopt_long(argc, argv, "t:d:s:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			trace = optarg;
			break;
		case 'd':
			dur = optarg;
			break;
		case 's':
			seed = optarg;
			break;
		case 'S':
			if (nsets == SL_ARRAY_SIZE(sets)) {
				fprintf(stderr, "sluice-sim: at most %zu --set options\n",
					SL_ARRAY_SIZE(sets));
				return 2;
			}
			sets[nsets++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	sim_scenario_defaults(&sc);
	rc = sim_scenario_load(&sc, argv[optind], err, sizeof(err));
	for (unsigned i = 0; rc == 0 && i < nsets; i++)
		rc = apply_set(&sc, sets[i], err, sizeof(err));
	if (rc == 0 && dur)
		rc = sim_scenario_set(&sc, "sim", "duration_ms", dur, err, sizeof(err));
	if (rc == 0 && seed)
		rc = sim_scenario_set(&sc, "sim", "seed", seed, err, sizeof(err));
	if (rc == 0 && (rc = sim_scenario_check(&sc, err, sizeof(err))) != 0) {
		fprintf(stderr, "sluice-sim: %s: %s\n", argv[optind], err);
		return 2;
	}
	if (rc) {
		fprintf(stderr, "sluice-sim: %s\n", err);
		return 2;
	}
	if (sc.nsweep && trace) {
		fprintf(stderr, "sluice-sim: %s: --trace records one run, not a sweep\n",
			argv[optind]);
		return 2;
	}
	if (sc.nsweep)
		return run_sweep(&sc, argv[optind]);
	x = sim_exp_create(&sc);
	if (x == NULL) {
		fprintf(stderr, "sluice-sim: %s: cannot build the experiment: %s\n", argv[optind],
			strerror(errno));
		return 2;
	}
	if (trace && (rc = sim_exp_trace(x, trace)) != 0) {
		fprintf(stderr, "sluice-sim: %s: %s\n", trace, strerror(-rc));
		sim_exp_free(x);
		return 1;
	}
	rc = sim_exp_run(x);
	if (rc) {
		fprintf(stderr, "sluice-sim: run failed: %s\n", strerror(-rc));
		sim_exp_free(x);
		return 1;
	}
	name = strrchr(argv[optind], '/');
	sim_exp_summary_json(x, name ? name + 1 : argv[optind], stdout);
	sim_exp_free(x);
	return 0;
}
