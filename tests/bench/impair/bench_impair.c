/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_impair.c - cost of net_impair per frame (docs/impair.md) and the engine's measured
 * statistics against their settings (the closing note), as JSON lines.
 *
 * Cost: one process, EAL without hugepages, a bare net_null port (the baseline) and one
 * net_impair port per configuration, each over its own net_null. The TX loop allocates 32 mbufs
 * and sends them; the RX loop receives 32 and frees them; both are identical on every port,
 * so the difference to the bare port is what the PMD adds. Costs are per frame moved: sent
 * (accepted by tx_burst) or delivered to the application. Measurements of all ports are
 * interleaved in rounds (2 shared cores are noisy); each line reports medians over the rounds:
 * ns_per_frame, the bare port's, their difference and ratio. Configurations: off (the bypass
 * path), each impairment alone, and all together. With --callgrind one more run of every case
 * under valgrind, collecting only inside bench_impair_measured, adds instr_per_frame (and the
 * bare port's): repeatable where wall time is not.
 * The goal (docs/impair.md): off adds at most 10 ns per frame; timed here, and bounded in
 * instructions by the bench-smoke check (tests/bench/check_smoke.py).
 *
 * Statistics: the engine alone over 10^6 frames per setting: measured rate, setting, and the
 * 99.9% binomial interval.
 *
 *   bench-impair [--quick] [--rounds N] [--bursts N] [--callgrind] [--no-stats]
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#ifdef BENCH_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

#include "sl_dp.h"
#include "bench_callgrind.h"
#include "impair_engine.h"

#define BURST 32
#define MAX_ROUNDS 64
#define FRAME_BYTES 64

struct config {
	const char *name;
	const char *args; /**< net_impair devargs after dev= (both directions) */
};

static const struct config configs[] = {
	{"bare", NULL},
	{"off", ""},
	{"loss", "loss=0.01"},
	{"ge", "ge_p=0.01,ge_r=0.25"},
	{"ber_drop", "ber=1e-6"},
	{"ber_deliver", "ber=1e-6,corrupt=deliver"},
	{"dup", "dup=0.01"},
	{"reorder", "reorder=0.01,reorder_gap=3"},
	{"delay", "delay_ns=1000"},
	{"rate", "rate_bps=1000G,burst_bytes=1048576"},
	{"drop_idx", "drop_idx=1000-1999"},
	{"all", "loss=0.01,ge_p=0.01,ge_r=0.25,ber=1e-6,dup=0.01,reorder=0.01,reorder_gap=3,"
		"delay_ns=1000,rate_bps=1000G,burst_bytes=1048576,drop_idx=1000-1999"},
};
#define N_CONFIGS (sizeof(configs) / sizeof(configs[0]))

enum dir { DIR_TX, DIR_RX };
static const char *const dir_name[] = {"tx", "rx"};

static struct rte_mempool *pool;
static uint16_t port_of[N_CONFIGS];

static int
port_start(uint16_t port)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, 512, rte_socket_id(), NULL, pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, 512, rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

static int
ports_create(void)
{
	for (unsigned i = 0; i < N_CONFIGS; i++) {
		char null_name[32], impair_name[32], args[512];
		const char *name = null_name;
		int rc;

		snprintf(null_name, sizeof(null_name), "net_null%u", i);
		rc = rte_vdev_init(null_name, "");
		if (rc == 0 && configs[i].args != NULL) {
			snprintf(impair_name, sizeof(impair_name), "net_impair%u", i);
			snprintf(args, sizeof(args), "dev=%s%s%s", null_name,
				 configs[i].args[0] ? "," : "", configs[i].args);
			rc = rte_vdev_init(impair_name, args);
			name = impair_name;
		}
		if (rc == 0)
			rc = rte_eth_dev_get_port_by_name(name, &port_of[i]);
		if (rc == 0)
			rc = port_start(port_of[i]);
		if (rc != 0) {
			fprintf(stderr, "bench-impair: %s (%s): %s\n", name,
				configs[i].args ? configs[i].args : "", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Impaired ports first: closing one stops its underlying port and gives it back. */
static void
ports_close(void)
{
	for (unsigned i = N_CONFIGS; i-- > 0;) {
		rte_eth_dev_stop(port_of[i]);
		rte_eth_dev_close(port_of[i]);
	}
}

/*
 * The measured loop: bursts of 32 through one port in one direction. Returns the frames moved:
 * sent (accepted by tx_burst) or received (returned by rx_burst).
 */
__attribute__((noinline)) uint64_t bench_impair_measured(uint16_t port, enum dir d,
							 uint64_t bursts);
__attribute__((noinline)) uint64_t
bench_impair_measured(uint16_t port, enum dir d, uint64_t bursts)
{
	struct rte_mbuf *m[BURST];
	uint64_t frames = 0;

	for (uint64_t b = 0; b < bursts; b++) {
		uint16_t n;

		if (d == DIR_TX) {
			if (rte_pktmbuf_alloc_bulk(pool, m, BURST) != 0)
				continue;
			for (unsigned i = 0; i < BURST; i++)
				rte_pktmbuf_append(m[i], FRAME_BYTES);
			n = rte_eth_tx_burst(port, 0, m, BURST);
			if (n < BURST)
				rte_pktmbuf_free_bulk(m + n, BURST - n);
		} else {
			n = rte_eth_rx_burst(port, 0, m, BURST);
			rte_pktmbuf_free_bulk(m, n);
		}
		frames += n;
	}
	return frames;
}

static int eal_start(const char *self);

static double
measure_ns(uint16_t port, enum dir d, uint64_t bursts)
{
	uint64_t t0 = rte_rdtsc_precise(), frames = bench_impair_measured(port, d, bursts);
	uint64_t t1 = rte_rdtsc_precise();

	return (double)(t1 - t0) * 1e9 / (double)rte_get_tsc_hz() /
	       (double)RTE_MAX(frames, (uint64_t)1);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Instructions per frame for every (config, direction), from one run of this binary under
 * callgrind: the child (--cg-child) counts only inside bench_impair_measured and dumps the
 * counters after each case (CALLGRIND_DUMP_STATS, one part per case, in case order) and
 * writes the frames each case moved to <out>.frames. Fills ir[][] (-1 where unavailable).
 */
static void
callgrind_all(const char *self, uint64_t bursts, double ir[][2])
{
	char out[96], bursts_s[24], file[112];
	char *const argv[] = {(char *)self, "--cg-child", bursts_s, out, NULL};
	unsigned long long frames[2 * N_CONFIGS];
	double totals[2 * N_CONFIGS];
	int parts;
	FILE *f;

	for (unsigned c = 0; c < N_CONFIGS; c++)
		ir[c][0] = ir[c][1] = -1;
#ifndef BENCH_HAVE_CALLGRIND_H
	fprintf(stderr,
		"bench-impair: built without valgrind/callgrind.h, no instruction counts\n");
	bursts = 0;
#endif
	if (bursts == 0)
		return;
	snprintf(out, sizeof(out), "/tmp/bench-impair.%d", (int)getpid());
	snprintf(bursts_s, sizeof(bursts_s), "%llu", (unsigned long long)bursts);
	parts = bench_callgrind("bench_impair_measured", argv, totals, 2 * N_CONFIGS);
	snprintf(file, sizeof(file), "%s.frames", out);
	f = fopen(file, "r");
	for (unsigned k = 0; k < 2 * N_CONFIGS; k++)
		if (f == NULL || fscanf(f, "%llu", &frames[k]) != 1)
			frames[k] = 0;
	if (f != NULL)
		fclose(f);
	unlink(file);
	for (int k = 0; k < parts; k++)
		if (frames[k] > 0 && totals[k] >= 0)
			ir[k / 2][k % 2] = totals[k] / (double)frames[k];
}

/* The child under callgrind: every case once, a dump after each, frame counts to a file. */
static int
callgrind_child(const char *self, uint64_t bursts, const char *out)
{
	char path[112];
	FILE *f;

	snprintf(path, sizeof(path), "%s.frames", out);
	if (eal_start(self) != 0 || (f = fopen(path, "w")) == NULL)
		return 1;
	for (unsigned c = 0; c < N_CONFIGS; c++)
		for (int d = 0; d < 2; d++) {
			uint64_t frames = bench_impair_measured(port_of[c], (enum dir)d, bursts);

#ifdef BENCH_HAVE_CALLGRIND_H
			CALLGRIND_DUMP_STATS;
#endif
			fprintf(f, "%llu\n", (unsigned long long)frames);
		}
	ports_close();
	sl_dp_eal_cleanup();
	return fclose(f) == 0 ? 0 : 1;
}

/* ---- engine statistics against settings ---- */

static void
stat_free(void *ctx, void *h)
{
	(void)ctx;
	(void)h;
}

static void *
stat_clone(void *ctx, void *h)
{
	(void)ctx;
	return h;
}

static void *
stat_corrupt(void *ctx, void *h, const uint32_t *off, unsigned n)
{
	(void)ctx;
	(void)off;
	(void)n;
	return h;
}

static const struct sl_impair_ops stat_ops = {stat_free, stat_clone, stat_corrupt};

static void
stat_line(const char *what, uint64_t k, uint64_t n, double p)
{
	double sd = sqrt((double)n * p * (1 - p)), ci = 3.2905 * sd / (double)n;
	double rate = (double)k / (double)n;

	printf("{\"bench\":\"impair\",\"kind\":\"stats\",\"impairment\":\"%s\",\"trials\":%llu,"
	       "\"events\":%llu,\"measured\":%.6g,\"setting\":%.6g,\"ci999_half\":%.3g,"
	       "\"inside_ci\":%s}\n",
	       what, (unsigned long long)n, (unsigned long long)k, rate, p, ci,
	       fabs(rate - p) <= ci ? "true" : "false");
}

static void
stats_lines(void)
{
	const unsigned frames = 1000000, len = 1000;
	struct sl_impair_frame f[BURST];
	struct sl_impair_conf c;
	struct sl_impair_stats st;
	struct sl_impair *e;
	void *out[2 * BURST];

	sl_impair_conf_init(&c);
	c.seed = 2026;
	c.loss = 0.01;
	c.ber = 1e-6;
	c.dup = 0.01;
	c.reorder = 0.01;
	c.reorder_gap = 3;
	e = sl_impair_create(&c, &stat_ops, NULL);
	if (e == NULL)
		return;
	for (unsigned i = 0; i < BURST; i++)
		f[i] = (struct sl_impair_frame){(void *)(uintptr_t)(i + 1), len};
	for (unsigned i = 0; i < frames; i += BURST) {
		unsigned k;

		sl_impair_admit(e, f, BURST, 0);
		do {
			k = sl_impair_peek(e, 0, out, SL_ARRAY_SIZE(out));
			sl_impair_consume(e, k);
		} while (k == SL_ARRAY_SIZE(out));
	}
	sl_impair_stats_get(e, &st);
	/* Each stage sees the frames the earlier stages let through. */
	stat_line("loss", st.drop_loss, st.frames, c.loss);
	stat_line("ber_bits", st.bits_flipped, (st.frames - st.drop_loss) * len * 8, c.ber);
	stat_line("dup", st.duplicated, st.frames - st.drop_loss - st.drop_corrupt, c.dup);
	stat_line("reorder", st.reordered,
		  st.frames - st.drop_loss - st.drop_corrupt + st.duplicated, c.reorder);
	sl_impair_free(e);

	/* Gilbert-Elliott: mean loss-burst length against 1/ge_r, loss rate against p/(p+r). */
	sl_impair_conf_init(&c);
	c.seed = 2026;
	c.ge_p = 0.01;
	c.ge_r = 0.25;
	e = sl_impair_create(&c, &stat_ops, NULL);
	if (e == NULL)
		return;
	{
		uint64_t bursts = 0, lost = 0, run = 0, prev = 0;
		double pi_bad = c.ge_p / (c.ge_p + c.ge_r), mean_len, sd_len;

		for (unsigned i = 0; i < frames; i++) {
			sl_impair_admit(e, f, 1, 0);
			sl_impair_consume(e, sl_impair_peek(e, 0, out, 1));
			if (sl_impair_stat(e, drop_ge) != prev) {
				run++;
			} else if (run > 0) {
				bursts++;
				lost += run;
				run = 0;
			}
			prev = sl_impair_stat(e, drop_ge);
		}
		mean_len = (double)lost / (double)bursts;
		sd_len = sqrt((1 - c.ge_r) / (c.ge_r * c.ge_r) / (double)bursts);
		printf("{\"bench\":\"impair\",\"kind\":\"stats\",\"impairment\":\"ge_burst_len\","
		       "\"bursts\":%llu,\"measured\":%.4f,\"model\":%.4f,\"ci999_half\":%.4f,"
		       "\"inside_ci\":%s,\"loss_measured\":%.6f,\"loss_model\":%.6f}\n",
		       (unsigned long long)bursts, mean_len, 1 / c.ge_r, 3.2905 * sd_len,
		       fabs(mean_len - 1 / c.ge_r) <= 3.2905 * sd_len ? "true" : "false",
		       (double)sl_impair_stat(e, drop_ge) / frames, pi_bad);
	}
	sl_impair_free(e);
}

static int
eal_start(const char *self)
{
	char prefix[64];
	char *eal[] = {(char *)self,    "--no-huge", "-m", "256", "--no-pci",
		       "--file-prefix", prefix,      "-l", "0",   "--log-level",
		       "lib.eal:error", NULL};

	snprintf(prefix, sizeof(prefix), "bench_impair_%d", (int)getpid());
	if (rte_eal_init((int)SL_ARRAY_SIZE(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench-impair: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	sl_dp_eal_remove_on_signal();
	pool = rte_pktmbuf_pool_create("bench", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (pool == NULL || ports_create() != 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned rounds = 9;
	uint64_t bursts = 100000;
	bool quick = false, callgrind = false, stats = true;
	static double ns[N_CONFIGS][2][MAX_ROUNDS], diff[N_CONFIGS][2][MAX_ROUNDS];
	double ir[N_CONFIGS][2];

	if (argc == 4 && strcmp(argv[1], "--cg-child") == 0)
		return callgrind_child(argv[0], strtoull(argv[2], NULL, 10), argv[3]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = (unsigned)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--bursts") == 0 && i + 1 < argc) {
			bursts = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--callgrind") == 0) {
			callgrind = true;
		} else if (strcmp(argv[i], "--no-stats") == 0) {
			stats = false;
		} else {
			fprintf(stderr,
				"usage: %s [--quick] [--rounds N] [--bursts N] "
				"[--callgrind] [--no-stats]\n",
				argv[0]);
			return 2;
		}
	}
	if (quick) {
		rounds = 3;
		bursts = 5000;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || bursts == 0) {
		fprintf(stderr, "bench-impair: --rounds in [1, %d], --bursts > 0\n", MAX_ROUNDS);
		return 2;
	}
	if (eal_start(argv[0]) != 0)
		return 1;
	/* Warm up every port and path once, then interleave the rounds. */
	for (unsigned c = 0; c < N_CONFIGS; c++)
		for (int d = 0; d < 2; d++)
			measure_ns(port_of[c], (enum dir)d, bursts / 10 + 1);
	for (unsigned r = 0; r < rounds; r++)
		for (int d = 0; d < 2; d++)
			for (unsigned c = 0; c < N_CONFIGS; c++)
				ns[c][d][r] = measure_ns(port_of[c], (enum dir)d, bursts);
	for (unsigned c = 0; c < N_CONFIGS; c++)
		for (int d = 0; d < 2; d++)
			for (unsigned r = 0; r < rounds; r++)
				diff[c][d][r] = ns[c][d][r] - ns[0][d][r];
	callgrind_all(argv[0], callgrind ? (quick ? 2000 : 20000) : 0, ir);
	for (int d = 0; d < 2; d++) {
		double bare = median(ns[0][d], rounds);

		for (unsigned c = 1; c < N_CONFIGS; c++) {
			double t = median(ns[c][d], rounds), over = median(diff[c][d], rounds);

			printf("{\"bench\":\"impair\",\"kind\":\"cost\",\"dir\":\"%s\",\"config\":"
			       "\"%s\","
			       "\"burst\":%d,\"frame_bytes\":%d,\"rounds\":%u,\"bursts\":%llu,"
			       "\"ns_per_frame\":%.2f,\"bare_ns_per_frame\":%.2f,"
			       "\"overhead_ns_per_frame\":%.2f,\"ratio\":%.3f",
			       dir_name[d], configs[c].name, BURST, FRAME_BYTES, rounds,
			       (unsigned long long)bursts, t, bare, over, t / bare);
			if (ir[c][d] >= 0 && ir[0][d] >= 0)
				printf(",\"instr_per_frame\":%.1f,\"bare_instr_per_frame\":%.1f,"
				       "\"overhead_instr_per_frame\":%.1f",
				       ir[c][d], ir[0][d], ir[c][d] - ir[0][d]);
			printf("}\n");
		}
		printf("{\"bench\":\"impair\",\"kind\":\"goal\",\"dir\":\"%s\","
		       "\"goal\":\"off adds <= 10 ns/frame\",\"overhead_ns_per_frame\":%.2f,"
		       "\"met\":%s",
		       dir_name[d], median(diff[1][d], rounds),
		       median(diff[1][d], rounds) <= 10.0 ? "true" : "false");
		if (ir[1][d] >= 0 && ir[0][d] >= 0)
			printf(",\"overhead_instr_per_frame\":%.1f", ir[1][d] - ir[0][d]);
		printf("}\n");
	}
	if (stats)
		stats_lines();
	ports_close();
	sl_dp_eal_cleanup();
	return 0;
}
