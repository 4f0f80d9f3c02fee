/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_pacer.c - every pacer on one seeded workload, in one process; JSON lines out.
 *
 * Sweeps (all by default, --sweep to choose):
 *   cost      flows 1..1M (--flows), rate weights log-uniform over six decades, scaled so the
 *             rates (each at least 100 Kbps) sum to 95% of the link (at 1M flows the floor
 *             alone is 100% of it), 64 B frames, virtual clock; the TSC
 *             clock rows (overloaded link, so the pacer's own speed is the limit) include
 *             rte_sched, which reads the TSC itself and cannot follow a virtual clock;
 *   accuracy  per rate decade 10^5..10^11 bps: flows with rates uniform in [10^d, 2 10^d) (at
 *             most the link), as many as fit in 90% of the link up to --flows, 1500 B frames;
 *             virtual clock, plus the TSC clock on a 10 Gbps link for decades up to 10^9;
 *   sizes     16K flows, 64 / 1500 / 9000 B and a per-flow mix of the three.
 * Each row runs twice on the same workload: a cost pass with nothing recorded (mpps, ns_per_pkt
 * from thread CPU time) and a metrics pass. --instr adds instr_per_pkt by running the cost pass
 * again under `valgrind --tool=callgrind` (instrumentation on for the dequeue loop only).
 *
 * Output: one JSON object per line: one per (impl, flows, rate_decade) with rate_decade "all"
 * for the whole run, then "ratio" lines (tassel over each baseline at the same flows).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "sl_dp.h"
#include "pacer_harness.h"
#include "sl_rng.h"
#include "sl_time.h"

#define IMPLS_ALL "tassel,tassel-heap,heap,carousel,cffs,tbucket,rte_sched"
#define FLOWS_ALL "1,1000,16384,65536,262144,1048576"
#define FLOWS_QUICK "1000,16384"
#define MAX_LIST 16u
#define MIN_PKTS_FOR_RATE 3u
#define WIRE_OVERHEAD 24u /**< preamble + SFD + IFG 20 B, FCS 4 B */

enum wl { WL_MIX, WL_EQUAL, WL_DECADE };

struct opts {
	char *impls[MAX_LIST];
	unsigned n_impls;
	uint32_t flows[MAX_LIST];
	unsigned n_flows;
	bool quick, instr, callgrind;
	bool sweep_cost, sweep_acc, sweep_sizes;
	int clock;           /**< -1: per sweep default, else enum ph_clock */
	int size;            /**< frame bytes, 0: mix; -1: per sweep default */
	uint64_t pkts;       /**< departures per run */
	uint64_t instr_pkts; /**< departures per callgrind run (--instr) */
	uint64_t step_ns;
	unsigned burst;
	uint64_t link_bps;
	double load;
	uint64_t seed;
	uint64_t lookahead_ns;
	const char *self;
};

struct row {
	const char *impl;
	const char *sweep;
	enum ph_clock clock;
	enum wl wl;
	unsigned decade; /**< WL_DECADE */
	uint32_t flows;
	int size; /**< 0: mix */
	uint64_t link_bps;
};

struct cost {
	double mpps;
	double instr_per_pkt; /**< NAN when not measured */
};

/* Tassel's Mpps per flows for the ratio lines. */
struct ratio_key {
	char impl[SL_PACER_NAME_MAX];
	enum ph_clock clock;
	uint32_t flows;
	double mpps;
};
static struct ratio_key ratios[256];
static unsigned n_ratios;
static bool eal_ready;

static unsigned
split(char *s, char **out, unsigned max)
{
	unsigned n = 0;

	for (char *tok = strtok(s, ","); tok != NULL && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

/*
 * The workload of a row; returns the flow count actually used. *end_ns: the run's end, for
 * o->pkts departures on the virtual clock, or tsc_ns of real time on the TSC clock.
 */
static uint32_t
build(const struct opts *o, const struct row *w, struct ph_flow_spec *fs, uint64_t *end_ns,
      uint64_t tsc_ns)
{
	static const uint32_t mix_len[3] = {64, 1500, 9000};
	struct sl_rng rng;
	uint32_t n = w->flows;
	double sum_w = 0, pkt_rate = 0; /* packets per ns */
	uint64_t decade_bps = 1;

	sl_rng_seed(&rng, o->seed ^ ((uint64_t)w->flows << 20) ^ w->decade);
	for (unsigned i = 0; i < w->decade; i++)
		decade_bps *= 10;
	if (w->wl == WL_DECADE) /* as many as fit in 90% of the link at 2 x 10^d each */
		n = (uint32_t)SL_MAX(SL_MIN((uint64_t)n, w->link_bps * 9 / 10 / (2 * decade_bps)),
				     1);
	for (uint32_t i = 0; i < n; i++) {
		double u = sl_rng_double(&rng);

		fs[i].len_bytes = w->size > 0 ? (uint32_t)w->size : mix_len[sl_rng_below(&rng, 3)];
		switch (w->wl) {
		case WL_MIX:
			fs[i].rate_bps = (uint64_t)(pow(10.0, 6.0 * u) * 1e3); /* weight */
			sum_w += (double)fs[i].rate_bps;
			break;
		case WL_EQUAL:
			fs[i].rate_bps = (uint64_t)((double)w->link_bps * o->load / n);
			break;
		case WL_DECADE:
			fs[i].rate_bps = (uint64_t)((double)decade_bps * (1.0 + u));
			break;
		}
	}
	if (w->wl == WL_MIX) { /* weights to rates summing to load x link with each >= 100 Kbps */
		double scale = (double)w->link_bps * o->load / sum_w, lo = 0, hi = scale;

		for (unsigned it = 0; it < 60; it++) { /* bisect: raising flows to the floor */
			double total = 0, mid = (lo + hi) / 2;

			for (uint32_t i = 0; i < n; i++)
				total += SL_MAX((double)fs[i].rate_bps * mid,
						(double)SL_PACER_RATE_MIN_BPS);
			if (total > (double)w->link_bps * o->load)
				hi = mid;
			else
				lo = mid;
		}
		for (uint32_t i = 0; i < n; i++)
			fs[i].rate_bps = (uint64_t)((double)fs[i].rate_bps * lo);
	}
	for (uint32_t i = 0; i < n; i++) {
		fs[i].rate_bps = SL_MIN(SL_MAX(fs[i].rate_bps, SL_PACER_RATE_MIN_BPS), w->link_bps);
		pkt_rate += (double)fs[i].rate_bps / (8e9 * (fs[i].len_bytes + WIRE_OVERHEAD));
	}
	*end_ns = w->clock == PH_CLOCK_TSC ? tsc_ns : (uint64_t)((double)o->pkts / pkt_rate);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t wire = fs[i].len_bytes + WIRE_OVERHEAD;
		uint64_t gap = sl_tx_ns_ceil(wire, fs[i].rate_bps);

		/* A random phase within the first gap: the steady state from the start. */
		fs[i].start_ns = sl_rng_below(&rng, SL_MAX(gap, 1));
		fs[i].npkts = ph_pkts_for(fs[i].rate_bps, wire, fs[i].start_ns, *end_ns);
	}
	return n;
}

static void
conf_for(const struct opts *o, const struct row *w, uint64_t end_ns, struct ph_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->pacer.impl = w->impl;
	c->pacer.max_flows = w->flows;
	c->pacer.link_bps = w->link_bps;
	c->pacer.wire_overhead_bytes = WIRE_OVERHEAD;
	c->pacer.lookahead_ns = o->lookahead_ns;
	c->clock = w->clock;
	c->end_ns = end_ns;
	c->step_ns = o->step_ns;
	c->burst = o->burst;
}

/* instr_per_pkt: rerun this row's cost pass under callgrind. NAN if that fails. */
static double
instr_per_pkt(const struct opts *o, const struct row *w)
{
	char out[64], cmd[1024], line[512];
	unsigned long long ir = 0, dep = 0;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/bench-pacer-cg.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=%s %s "
		 "--callgrind --impl %s --flows %u --pkts %llu --size %d --seed %llu "
		 "--step-ns %llu --burst %u --link-gbps %g --load %g --workload %s --decade %u "
		 "2>/dev/null",
		 out, o->self, w->impl, w->flows, (unsigned long long)o->instr_pkts, w->size,
		 (unsigned long long)o->seed, (unsigned long long)o->step_ns, o->burst,
		 (double)w->link_bps / 1e9, o->load,
		 w->wl == WL_MIX     ? "mix"
		 : w->wl == WL_EQUAL ? "equal"
				     : "decade",
		 w->decade);
	f = popen(cmd, "r");
	if (f == NULL)
		return NAN;
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *d = strstr(line, "\"departures\":");

		if (d != NULL)
			dep = strtoull(d + 13, NULL, 10);
	}
	if (pclose(f) != 0 || dep == 0)
		return NAN;
	f = fopen(out, "r");
	if (f == NULL)
		return NAN;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "summary:", 8) == 0 || strncmp(line, "totals:", 7) == 0)
			ir = strtoull(line + (line[0] == 's' ? 8 : 7), NULL, 10);
	fclose(f);
	unlink(out);
	return ir ? (double)ir / (double)dep : NAN;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
json_num(const char *key, double v)
{
	if (!isfinite(v)) /* JSON has no NaN or infinity */
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%.6g", key, v);
}

/* One line for decade dec (PH_DECADES: all). */
static void
print_line(const struct row *w, uint32_t n, const struct ph_flow_spec *fs,
	   const struct ph_result *r, const struct cost *cost, unsigned dec, double *errs)
{
	unsigned ne = 0, nflows = 0;
	double sum = 0, burst = 0, pct[3] = {NAN, NAN, NAN};
	uint64_t gap_n = 0, within[4] = {0};
	struct sl_hist gap;

	sl_hist_reset(&gap);
	for (uint32_t i = 0; i < n; i++) {
		const struct ph_flow_metrics *m = &r->fm[i];
		unsigned d = ph_decade(fs[i].rate_bps);

		if (dec != PH_DECADES && d != dec)
			continue;
		nflows++;
		if (m->pkts < MIN_PKTS_FOR_RATE)
			continue;
		errs[ne] = fabs(ph_rate_bps(m) / (double)fs[i].rate_bps - 1.0);
		sum += errs[ne++];
		burst = SL_MAX(burst, m->sigma - m->max_wire);
	}
	if (nflows == 0)
		return;
	for (unsigned d = 0; d < PH_DECADES; d++) {
		if (dec != PH_DECADES && d != dec)
			continue;
		sl_hist_merge(&gap, &r->gap_err[d]);
		gap_n += r->gap_n[d];
		for (unsigned k = 0; k < 4; k++)
			within[k] += r->gap_within[d][k];
	}
	if (ne > 0) {
		qsort(errs, ne, sizeof(*errs), cmp_double);
		pct[0] = sum / ne;
		pct[1] = errs[(unsigned)ceil(0.99 * ne) - 1];
		pct[2] = errs[ne - 1];
	}
	printf("{\"impl\":\"%s\",\"sweep\":\"%s\",\"clock\":\"%s\",\"workload\":\"%s\",", w->impl,
	       w->sweep, w->clock == PH_CLOCK_TSC ? "tsc" : "virtual",
	       w->wl == WL_MIX     ? "mix"
	       : w->wl == WL_EQUAL ? "equal"
				   : "decade");
	if (w->size > 0)
		printf("\"size\":%d,", w->size);
	else
		printf("\"size\":\"mix\",");
	printf("\"flows\":%u,", n);
	if (dec == PH_DECADES)
		printf("\"rate_decade\":\"all\"");
	else
		printf("\"rate_decade\":%u", dec + PH_DECADE_MIN);
	printf(",\"flows_measured\":%u,\"departures\":%llu", ne, (unsigned long long)r->departures);
	json_num("mpps", cost->mpps);
	json_num("ns_per_pkt", 1e3 / cost->mpps);
	json_num("instr_per_pkt", cost->instr_per_pkt);
	json_num("rate_err_mean", pct[0]);
	json_num("rate_err_p99", pct[1]);
	json_num("rate_err_max", pct[2]);
	json_num("gap_err_p50_ns", (double)sl_hist_quantile(&gap, 0.5));
	json_num("gap_err_p99_ns", (double)sl_hist_quantile(&gap, 0.99));
	json_num("gap_err_p999_ns", (double)sl_hist_quantile(&gap, 0.999));
	for (unsigned k = 0; k < 4; k++) {
		char key[32];

		snprintf(key, sizeof(key), "gap_within_%u_ns", 64u << k);
		json_num(key, gap_n ? (double)within[k] / (double)gap_n : NAN);
	}
	json_num("burst_excess_bytes", SL_MAX(burst, 0.0));
	json_num("burst_excess_mtu", SL_MAX(burst, 0.0) / (1500.0 + WIRE_OVERHEAD));
	json_num("late_p99_ns", (double)sl_hist_quantile(&r->late, 0.99));
	json_num("late_max_ns", (double)r->late.max);
	printf(",\"early_departures\":%llu", (unsigned long long)r->early);
	json_num("bytes_per_flow", (double)r->mem_bytes / n);
	/* Below 1 the loop was descheduled: real-clock errors then measure the host, not the pacer.
	 */
	json_num("cpu_share", r->wall_ns ? (double)r->cpu_ns / (double)r->wall_ns : NAN);
	json_num("decisions_per_pkt", r->departures ? (double)r->decisions / r->departures : NAN);
	printf(",\"lookahead_ns\":%llu,\"imminent_full\":%llu}\n",
	       (unsigned long long)r->lookahead_ns, (unsigned long long)r->stats.imminent_full);
}

static int
ensure_eal(void)
{
	char prefix[64];
	char *argv[] = {"bench-pacer", "--no-huge",         "-m",
			"512",         "--no-pci",          "--file-prefix",
			prefix,        "--log-level=error", "--no-shconf",
			NULL};

	if (eal_ready)
		return 0;
	snprintf(prefix, sizeof(prefix), "bench-pacer-%d", (int)getpid());
	if (rte_eal_init((int)SL_ARRAY_SIZE(argv) - 1, argv) < 0)
		return -1;
	sl_dp_eal_remove_on_signal();
	eal_ready = true;
	return 0;
}

static void
run_row(const struct opts *o, struct row *w)
{
	struct ph_flow_spec *fs = calloc(w->flows, sizeof(*fs));
	double *errs = calloc(w->flows, sizeof(*errs));
	struct cost cost = {.instr_per_pkt = NAN};
	struct ph_result r;
	struct ph_conf c;
	uint64_t end_ns;
	uint32_t n;
	int rc;

	if (fs == NULL || errs == NULL)
		goto out;
	if (strcmp(w->impl, "rte_sched") == 0) {
		if (w->clock != PH_CLOCK_TSC) {
			printf("{\"impl\":\"rte_sched\",\"sweep\":\"%s\",\"clock\":\"virtual\","
			       "\"flows\":%u,\"skipped\":\"reads the TSC itself: see the tsc "
			       "rows\"}\n",
			       w->sweep, w->flows);
			goto out;
		}
		if (ensure_eal() != 0) {
			printf("{\"impl\":\"rte_sched\",\"flows\":%u,\"skipped\":\"EAL init "
			       "failed\"}\n",
			       w->flows);
			goto out;
		}
	}
	n = build(o, w, fs, &end_ns, o->quick ? 50 * SL_NS_PER_MS : 500 * SL_NS_PER_MS);
	w->flows = n;
	conf_for(o, w, end_ns, &c);
	c.callgrind = o->callgrind;
	rc = ph_run(&c, fs, n, &r);
	if (rc != 0) {
		printf("{\"impl\":\"%s\",\"flows\":%u,\"error\":\"%s\"}\n", w->impl, n,
		       strerror(-rc));
		goto out;
	}
	cost.mpps = r.cpu_ns ? (double)r.departures * 1e3 / (double)r.cpu_ns : NAN;
	if (o->callgrind) {
		printf("{\"impl\":\"%s\",\"flows\":%u,\"departures\":%llu}\n", w->impl, n,
		       (unsigned long long)r.departures);
		goto out;
	}
	if (o->instr)
		cost.instr_per_pkt = instr_per_pkt(o, w);
	if (n_ratios < SL_ARRAY_SIZE(ratios) && strcmp(w->sweep, "cost") == 0) {
		snprintf(ratios[n_ratios].impl, SL_PACER_NAME_MAX, "%s", w->impl);
		ratios[n_ratios].clock = w->clock;
		ratios[n_ratios].flows = n;
		ratios[n_ratios++].mpps = cost.mpps;
	}
	c.record = true;
	rc = ph_run(&c, fs, n, &r);
	if (rc != 0)
		goto out;
	if (w->wl == WL_DECADE) /* every flow of the run is in that decade */
		print_line(w, n, fs, &r, &cost, w->decade - PH_DECADE_MIN, errs);
	else
		for (unsigned d = 0; d <= PH_DECADES; d++)
			print_line(w, n, fs, &r, &cost, d, errs);
	ph_result_free(&r);
out:
	fflush(stdout);
	free(fs);
	free(errs);
}

static void
print_ratios(void)
{
	for (unsigned i = 0; i < n_ratios; i++) {
		const struct ratio_key *t = &ratios[i];

		if (strcmp(t->impl, "tassel") != 0)
			continue;
		for (unsigned j = 0; j < n_ratios; j++) {
			const struct ratio_key *b = &ratios[j];

			if (j == i || b->flows != t->flows || b->clock != t->clock ||
			    strcmp(b->impl, "tassel") == 0)
				continue;
			printf("{\"ratio\":\"tassel/"
			       "%s\",\"clock\":\"%s\",\"flows\":%u,\"value\":%.4g}\n",
			       b->impl, t->clock == PH_CLOCK_TSC ? "tsc" : "virtual", t->flows,
			       t->mpps / b->mpps);
		}
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench-pacer [--quick] [--impl a,b,..] [--flows n,..] [--sweep "
			"cost,accuracy,sizes]\n"
			"       [--clock virtual|tsc] [--size 64|1500|9000|0(mix)] [--pkts N] "
			"[--step-ns N]\n"
			"       [--burst N] [--link-gbps G] [--load F] [--seed N] [--lookahead-ns "
			"N] [--instr]\n"
			"       [--instr-pkts N]\n"
			"  impls: " IMPLS_ALL "\n");
}

static struct opts opt = {
	.clock = -1,
	.size = -1,
	.step_ns = 100,
	.burst = 32,
	.link_bps = 100 * SL_BPS_PER_GBPS,
	.load = 0.95,
	.seed = 42,
};

int
main(int argc, char **argv)
{
	static const struct option lo[] = {{"quick", no_argument, NULL, 'q'},
					   {"impl", required_argument, NULL, 'i'},
					   {"flows", required_argument, NULL, 'f'},
					   {"sweep", required_argument, NULL, 'S'},
					   {"clock", required_argument, NULL, 'c'},
					   {"size", required_argument, NULL, 's'},
					   {"pkts", required_argument, NULL, 'p'},
					   {"step-ns", required_argument, NULL, 't'},
					   {"burst", required_argument, NULL, 'b'},
					   {"link-gbps", required_argument, NULL, 'l'},
					   {"load", required_argument, NULL, 'L'},
					   {"seed", required_argument, NULL, 'r'},
					   {"instr", no_argument, NULL, 'I'},
					   {"callgrind", no_argument, NULL, 'C'},
					   {"workload", required_argument, NULL, 'w'},
					   {"decade", required_argument, NULL, 'd'},
					   {"lookahead-ns", required_argument, NULL, 'A'},
					   {"help", no_argument, NULL, 'h'},
					   {"instr-pkts", required_argument, NULL, 'P'},
					   {NULL, 0, NULL, 0}};
	char impls[256] = IMPLS_ALL, flows[256] = "", sweeps[64] = "cost,accuracy,sizes";
	char *fl[MAX_LIST], *sw[4];
	enum wl cg_wl = WL_MIX;
	unsigned cg_decade = 0, nsw;
	int ch;

	opt.self = argv[0];
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'q':
			opt.quick = true;
			break;
		case 'i':
			snprintf(impls, sizeof(impls), "%s", optarg);
			break;
		case 'f':
			snprintf(flows, sizeof(flows), "%s", optarg);
			break;
		case 'S':
			snprintf(sweeps, sizeof(sweeps), "%s", optarg);
			break;
		case 'c':
			opt.clock = strcmp(optarg, "tsc") == 0 ? PH_CLOCK_TSC : PH_CLOCK_VIRTUAL;
			break;
		case 's':
			opt.size = atoi(optarg);
			break;
		case 'p':
			opt.pkts = strtoull(optarg, NULL, 0);
			break;
		case 't':
			opt.step_ns = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			opt.burst = (unsigned)atoi(optarg);
			break;
		case 'l':
			opt.link_bps = (uint64_t)(atof(optarg) * 1e9);
			break;
		case 'L':
			opt.load = atof(optarg);
			break;
		case 'r':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'I':
			opt.instr = true;
			break;
		case 'C':
			opt.callgrind = true;
			break;
		case 'w':
			cg_wl = strcmp(optarg, "decade") == 0  ? WL_DECADE
				: strcmp(optarg, "equal") == 0 ? WL_EQUAL
							       : WL_MIX;
			break;
		case 'd':
			cg_decade = (unsigned)atoi(optarg);
			break;
		case 'A':
			opt.lookahead_ns = strtoull(optarg, NULL, 0);
			break;
		case 'P':
			opt.instr_pkts = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
			return ch == 'h' ? 0 : 2;
		}
	}
	if (opt.link_bps < SL_PACER_RATE_MIN_BPS || opt.load <= 0 || opt.burst == 0) {
		usage();
		return 2;
	}
	if (opt.pkts == 0)
		opt.pkts = opt.quick ? 20000 : 3000000;
	if (opt.instr_pkts == 0)
		opt.instr_pkts = SL_MIN(opt.pkts, 300000);
	if (flows[0] == '\0')
		snprintf(flows, sizeof(flows), "%s", opt.quick ? FLOWS_QUICK : FLOWS_ALL);
	opt.n_impls = split(impls, opt.impls, MAX_LIST);
	{
		unsigned n = split(flows, fl, MAX_LIST);

		for (unsigned i = 0; i < n; i++)
			opt.flows[opt.n_flows++] = (uint32_t)strtoul(fl[i], NULL, 0);
	}
	nsw = split(sweeps, sw, 4);
	for (unsigned i = 0; i < nsw; i++) {
		opt.sweep_cost |= strcmp(sw[i], "cost") == 0;
		opt.sweep_acc |= strcmp(sw[i], "accuracy") == 0;
		opt.sweep_sizes |= strcmp(sw[i], "sizes") == 0;
	}
	if (opt.callgrind) { /* one row, cost pass only, instrumented */
		struct row w = {.impl = opt.impls[0],
				.sweep = "cost",
				.clock = PH_CLOCK_VIRTUAL,
				.wl = cg_wl,
				.decade = cg_decade,
				.flows = opt.flows[0],
				.size = opt.size < 0 ? 64 : opt.size,
				.link_bps = opt.link_bps};

		run_row(&opt, &w);
		return 0;
	}
	if (opt.sweep_cost) {
		for (unsigned f = 0; f < opt.n_flows; f++) {
			for (unsigned i = 0; i < opt.n_impls; i++) {
				struct row w = {.impl = opt.impls[i],
						.sweep = "cost",
						.clock = opt.clock < 0 ? PH_CLOCK_VIRTUAL
								       : opt.clock,
						.wl = WL_MIX,
						.flows = opt.flows[f],
						.size = opt.size < 0 ? 64 : opt.size,
						.link_bps = opt.link_bps};

				if (w.clock == PH_CLOCK_VIRTUAL && strcmp(w.impl, "rte_sched") == 0)
					w.clock = PH_CLOCK_TSC;
				run_row(&opt, &w);
				if (opt.clock < 0 && strcmp(w.impl, "tassel") == 0) {
					w.clock = PH_CLOCK_TSC; /* the pair for rte_sched */
					w.flows = opt.flows[f];
					run_row(&opt, &w);
				}
			}
		}
	}
	if (opt.sweep_acc) {
		uint32_t nf = opt.n_flows ? opt.flows[opt.n_flows - 1] : 1000;

		for (unsigned i = 0; i < opt.n_impls; i++) {
			for (unsigned d = PH_DECADE_MIN; d <= PH_DECADE_MAX; d++) {
				struct row w = {.impl = opt.impls[i],
						.sweep = "accuracy",
						.clock = opt.clock < 0 ? PH_CLOCK_VIRTUAL
								       : opt.clock,
						.wl = WL_DECADE,
						.decade = d,
						.flows = SL_MIN(nf, 1000u),
						.size = opt.size < 0 ? 1500 : opt.size,
						.link_bps = opt.link_bps};

				if (strcmp(w.impl, "rte_sched") == 0 && w.clock == PH_CLOCK_VIRTUAL)
					continue;
				run_row(&opt, &w);
			}
			for (unsigned d = PH_DECADE_MIN; opt.clock < 0 && d <= 9; d++) {
				struct row w = {.impl = opt.impls[i],
						.sweep = "accuracy",
						.clock = PH_CLOCK_TSC,
						.wl = WL_DECADE,
						.decade = d,
						.flows = SL_MIN(nf, 100u),
						.size = opt.size < 0 ? 1500 : opt.size,
						.link_bps = 10 * SL_BPS_PER_GBPS};

				run_row(&opt, &w);
			}
		}
	}
	if (opt.sweep_sizes) {
		static const int sizes[4] = {64, 1500, 9000, 0};

		for (unsigned s = 0; s < 4; s++) {
			for (unsigned i = 0; i < opt.n_impls; i++) {
				struct row w = {.impl = opt.impls[i],
						.sweep = "sizes",
						.clock = opt.clock < 0 ? PH_CLOCK_VIRTUAL
								       : opt.clock,
						.wl = WL_MIX,
						.flows = opt.quick ? 1000 : 16384,
						.size = sizes[s],
						.link_bps = opt.link_bps};

				if (strcmp(w.impl, "rte_sched") == 0)
					w.clock = PH_CLOCK_TSC;
				run_row(&opt, &w);
			}
		}
	}
	print_ratios();
	if (eal_ready)
		sl_dp_eal_cleanup();
	return 0;
}
