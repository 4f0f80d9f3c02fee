/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_exp.c - build a simulation from a scenario, run it, and report: CSV traces while it
 * runs, per-flow results and a JSON summary after.
 *
 * Traces (sim_exp_trace):
 *   flows.csv   t_ns,flow,wnd_segs,rate_bps,tokens_bytes,wnd_start,snd_max,rx_cumack,
 *               segs_sent,segs_rtx,rto_fired  - every trace_interval_ns, every started flow
 *   seq.csv     t_ns,flow,seq,tx_id,len       - every data packet a host sends
 *   events.csv  t_ns,flow,event,seq,tx_id     - drops, trims and ECN marks in the network
 *   ports.csv   t_ns,host,queue_bytes,tx_bytes,drops,trims,ecn_marks,pfc_pauses
 *                                              - the switch port toward each host, and the
 *                                                PAUSEs that host received, every interval
 *   ec.csv      t_ns,host,flow,event,psn,queue_bytes
 *                                              - lib/ec only: every arrival verdict, processed
 *                                                packet and IACK / DACK / NACK (sim_ec.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_exp.h"
#include "sl_rng.h"
#include "sl_time.h"

struct sim_exp {
	struct sim_scenario sc;
	struct sim *s;
	struct sim_recv *rcv;                        /**< the reference receiver, or */
	struct sim_librecv *lrcv;                    /**< lib/recv, or */
	struct sim_ec *ec;                           /**< lib/ec */
	struct sl_recv_stats rx_meas[SIM_MAX_HOSTS]; /**< lib/recv counters at measure_from */
	struct sim_sched_host *host[SIM_MAX_HOSTS];
	uint32_t nflows;
	struct sim_flow_result *res;
	FILE *flows_csv;
	FILE *seq_csv;
	FILE *events_csv;
	FILE *ports_csv;
	FILE *ec_csv;
	sim_exp_sampler sampler;
	void *sampler_ctx;
	uint64_t sampler_ns;
};

struct sim *
sim_exp_sim(struct sim_exp *x)
{
	return x->s;
}

const struct sim_scenario *
sim_exp_scenario(const struct sim_exp *x)
{
	return &x->sc;
}

struct sim_sched_host *
sim_exp_host(struct sim_exp *x, uint32_t host)
{
	return host < SIM_MAX_HOSTS ? x->host[host] : NULL;
}

struct sim_recv *
sim_exp_recv(struct sim_exp *x)
{
	return x->rcv;
}

struct sim_librecv *
sim_exp_librecv(struct sim_exp *x)
{
	return x->lrcv;
}

struct sim_ec *
sim_exp_ec(const struct sim_exp *x)
{
	return x->ec;
}

/* The receiver's counters of a flow, whichever receiver runs. */
static const struct sim_recv_flow_stats *
rx_flow(const struct sim_exp *x, uint32_t fl)
{
	if (x->ec)
		return &sim_ec_flow(x->ec, fl)->rx;
	return x->lrcv ? sim_librecv_flow(x->lrcv, fl) : sim_recv_flow(x->rcv, fl);
}

uint32_t
sim_exp_nflows(const struct sim_exp *x)
{
	return x->nflows;
}

const struct sim_flow_result *
sim_exp_flow(const struct sim_exp *x, uint32_t flow)
{
	return flow < x->nflows ? &x->res[flow] : NULL;
}

void
sim_exp_free(struct sim_exp *x)
{
	if (x == NULL)
		return;
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		sim_sched_host_free(x->host[h]);
	sim_recv_free(x->rcv);
	sim_librecv_free(x->lrcv);
	sim_ec_free(x->ec);
	sim_free(x->s);
	if (x->flows_csv)
		fclose(x->flows_csv);
	if (x->seq_csv)
		fclose(x->seq_csv);
	if (x->events_csv)
		fclose(x->events_csv);
	if (x->ports_csv)
		fclose(x->ports_csv);
	if (x->ec_csv)
		fclose(x->ec_csv);
	free(x->res);
	free(x);
}

/*
 * The DCTCP web-search flow sizes (Alizadeh et al., SIGCOMM'10, Fig. 4; the
 * WebSearch_distribution.txt of the HPCC simulator): bytes at each cumulative probability,
 * interpolated linearly in between. Mean 1.71 MB; 15% of flows are under 10 KB, 3% over 10 MB.
 */
static const struct {
	double bytes, cdf;
} websearch[] = {
	{0, 0},         {10000, 0.15},  {20000, 0.2},     {30000, 0.3},
	{50000, 0.4},   {80000, 0.53},  {200000, 0.6},    {1000000, 0.7},
	{2000000, 0.8}, {5000000, 0.9}, {10000000, 0.97}, {30000000, 1},
};

static double
websearch_bytes(double u)
{
	size_t i = 1;

	while (i < SL_ARRAY_SIZE(websearch) - 1 && u > websearch[i].cdf)
		i++;
	return websearch[i - 1].bytes + (websearch[i].bytes - websearch[i - 1].bytes) *
						(u - websearch[i - 1].cdf) /
						(websearch[i].cdf - websearch[i - 1].cdf);
}

static double
websearch_mean_bytes(void)
{
	double m = 0;

	for (size_t i = 1; i < SL_ARRAY_SIZE(websearch); i++)
		m += (websearch[i].cdf - websearch[i - 1].cdf) *
		     (websearch[i].bytes + websearch[i - 1].bytes) / 2;
	return m;
}

/* Start time and size of flow i of group g; *t_ns is the Poisson clock of the group. */
static void
flow_draw(const struct sim_scenario *sc, const struct sim_flow_group *g, struct sl_rng *rng,
	  uint32_t i, uint64_t *t_ns, struct sim_flow_spec *sp)
{
	double seg = sp->fc.seg_bytes, mean_bytes = (double)sp->size_segs * seg;

	if (g->size_dist == SIM_SIZE_WEBSEARCH) {
		sp->size_segs =
			(uint64_t)SL_MAX(1.0, ceil(websearch_bytes(sl_rng_double(rng)) / seg));
		mean_bytes = websearch_mean_bytes();
	}
	if (g->arrivals == SIM_ARRIVE_STAGGER) {
		sp->start_ns += i * g->stagger_ns;
		return;
	}
	*t_ns += (uint64_t)sl_rng_exponential(
		rng,
		mean_bytes * 8 * 1e9 /
			((double)g->load_ppm / 1e6 * (double)sc->net.host_port[sp->src].rate_bps));
	sp->start_ns = *t_ns;
}

/* Every host's receiver, of the scenario's kind. 0, or an errno. */
static int
receivers_create(struct sim_exp *x)
{
	const struct sim_receiver_ops *ops;
	void *ctx;

	if (x->sc.recv_impl == SIM_RECV_LIB) {
		struct sim_librecv_conf lc = x->sc.lrecv;

		lc.nflows = x->nflows;
		ctx = x->lrcv = sim_librecv_create(x->s, &lc);
		ops = &sim_librecv_ops;
	} else if (x->sc.recv_impl == SIM_RECV_EC) {
		struct sim_ec_conf ec = x->sc.ec;

		ec.nflows = x->nflows;
		ec.measure_from_ns = x->sc.measure_from_ns;
		ec.duration_ns = x->sc.duration_ns;
		ctx = x->ec = sim_ec_create(x->s, &ec);
		ops = &sim_ec_ops;
	} else {
		struct sim_recv_conf rc = x->sc.recv;

		rc.nflows = x->nflows;
		ctx = x->rcv = sim_recv_create(x->s, &rc);
		ops = &sim_recv_ops;
	}
	if (ctx == NULL)
		return errno ? errno : ENOMEM;
	for (uint32_t h = 0; h < x->sc.net.nhosts; h++)
		sim_set_receiver(x->s, h, ops, ctx);
	return 0;
}

struct sim_exp *
sim_exp_create(const struct sim_scenario *sc)
{
	uint32_t per_host[SIM_MAX_HOSTS] = {0};
	struct sim_exp *x;
	uint32_t fl = 0;
	int err = EINVAL;

	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->sc = *sc;
	for (uint32_t g = 0; g < sc->ngroups; g++) {
		const struct sim_flow_spec *sp = &sc->group[g].spec;

		if (sp->src >= sc->net.nhosts || sp->dst >= sc->net.nhosts || sp->src == sp->dst)
			goto fail;
		x->nflows += sc->group[g].count;
		per_host[sp->src] += sc->group[g].count;
	}
	if (x->nflows == 0)
		goto fail;
	err = ENOMEM;
	x->res = calloc(x->nflows, sizeof(*x->res));
	x->s = sim_create(&sc->net);
	if (x->res == NULL || x->s == NULL) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	if ((err = receivers_create(x)) != 0)
		goto fail;
	for (uint32_t h = 0; h < sc->net.nhosts; h++) {
		if (per_host[h] == 0)
			continue;
		struct sl_sched_conf c = sc->sched;
		struct sl_recv_rtx_conf tc = {.window_pkts = sc->lrecv.rc.window_pkts,
					      .pool_bits = sc->lrecv.rc.pool_bits,
					      .block_bits = sc->lrecv.rc.block_bits};

		c.max_flows = per_host[h];
		if (c.link_bps == 0) /* the sender's pacer shares the host's port */
			c.link_bps = sc->net.host_port[h].rate_bps;
		x->host[h] = sim_sched_host_create(x->s, h, &c, x->nflows);
		if (x->host[h] == NULL) {
			err = errno;
			goto fail;
		}
		if (x->lrcv && (err = -sim_sched_host_use_rtx(x->host[h], &tc)) != 0)
			goto fail;
		sim_set_sender(x->s, h, &sim_sched_sender_ops, x->host[h]);
	}
	for (uint32_t g = 0; g < sc->ngroups; g++) {
		struct sl_rng rng;
		uint64_t t_ns = sc->group[g].spec.start_ns;

		sl_rng_seed(&rng, sc->net.seed * 1000003u + g);
		for (uint32_t i = 0; i < sc->group[g].count; i++, fl++) {
			struct sim_flow_spec sp = sc->group[g].spec;
			int r;

			flow_draw(sc, &sc->group[g], &rng, i, &t_ns, &sp);
			if (x->ec) /* the [ec] policy picks the program */
				sim_ec_flow_spec(&sc->ec, &sp);
			x->res[fl].flow = fl;
			x->res[fl].spec = sp;
			r = sim_sched_host_add_flow(x->host[sp.src], fl, &sp);
			if (r == 0 && x->lrcv)
				r = sim_librecv_add_flow(x->lrcv, fl, &sp);
			else if (r == 0 && x->ec)
				r = sim_ec_add_flow(x->ec, fl, &sp);
			else if (r == 0)
				r = sim_recv_add_flow(x->rcv, fl, sp.fc.seg_bytes);
			if (r) {
				err = -r;
				goto fail;
			}
		}
	}
	return x;
fail:
	sim_exp_free(x);
	errno = err;
	return NULL;
}

static void
observe(void *ctx, enum sim_obs what, const struct sim_pkt *p, uint64_t now_ns)
{
	struct sim_exp *x = ctx;

	if (what == SIM_OBS_TX)
		fprintf(x->seq_csv, "%" PRIu64 ",%u,%u,%u,%u\n", now_ns, p->flow, p->seq, p->tx_id,
			p->len_bytes);
	else
		fprintf(x->events_csv, "%" PRIu64 ",%u,%s,%u,%u\n", now_ns, p->flow,
			sim_obs_names[what], p->seq, p->tx_id);
}

static void
trace_sample(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_exp *x = obj;
	uint64_t now = sim_now(s);

	(void)arg;
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_spec *sp = &x->res[fl].spec;
		struct sl_flow_view v;
		struct sl_flow_stats st;

		if (sim_sched_host_view(x->host[sp->src], fl, &v) ||
		    sim_sched_host_flow_stats(x->host[sp->src], fl, &st))
			continue;
		fprintf(x->flows_csv,
			"%" PRIu64 ",%u,%u,%" PRIu64 ",%" PRId64 ",%u,%u,%u,%" PRIu64 ",%" PRIu64
			",%" PRIu64 "\n",
			now, fl, v.wnd_segs, v.rate_bps, v.tokens_bytes, v.wnd_start, v.snd_max,
			rx_flow(x, fl)->cumack, st.segs_sent, st.segs_rtx, st.rto_fired);
	}
	for (uint32_t h = 0; h < x->sc.net.nhosts; h++) {
		const struct sim_port_stats *ps = sim_port_stats(s, h, true);

		fprintf(x->ports_csv,
			"%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 "\n",
			now, h, sim_port_queue_bytes(s, h, true), ps->tx_bytes, ps->drops_full,
			ps->trims, ps->ecn_marks, sim_port_stats(s, h, false)->pfc_pauses);
	}
	sim_schedule(s, now + x->sc.trace_interval_ns, trace_sample, x, 0);
}

int
sim_exp_trace(struct sim_exp *x, const char *dir)
{
	char path[4096];
	FILE **files[] = {&x->flows_csv, &x->seq_csv, &x->events_csv, &x->ports_csv, &x->ec_csv};
	static const char *const names[] = {"flows.csv", "seq.csv", "events.csv", "ports.csv",
					    "ec.csv"};
	static const char *const heads[] = {
		"t_ns,flow,wnd_segs,rate_bps,tokens_bytes,wnd_start,snd_max,rx_cumack,segs_sent,"
		"segs_rtx,rto_fired",
		"t_ns,flow,seq,tx_id,len",
		"t_ns,flow,event,seq,tx_id",
		"t_ns,host,queue_bytes,tx_bytes,drops,trims,ecn_marks,pfc_pauses",
		SIM_EC_TRACE_HEAD,
	};

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(names) - (x->ec == NULL); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		*files[i] = fopen(path, "w");
		if (*files[i] == NULL)
			return -errno;
		fprintf(*files[i], "%s\n", heads[i]);
	}
	if (x->ec)
		sim_ec_set_trace(x->ec, x->ec_csv);
	sim_set_observer(x->s, observe, x);
	sim_schedule(x->s, 0, trace_sample, x, 0);
	return 0;
}

static void
sampler_tick(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_exp *x = obj;

	(void)arg;
	x->sampler(x->sampler_ctx, x, sim_now(s));
	sim_schedule(s, sim_now(s) + x->sampler_ns, sampler_tick, x, 0);
}

void
sim_exp_set_sampler(struct sim_exp *x, uint64_t interval_ns, sim_exp_sampler fn, void *ctx)
{
	x->sampler = fn;
	x->sampler_ctx = ctx;
	x->sampler_ns = interval_ns ? interval_ns : 1;
	sim_schedule(x->s, 0, sampler_tick, x, 0);
}

/* Snapshot received bytes at measure_from_ns. */
static void
measure_start(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_exp *x = obj;

	(void)s;
	(void)arg;
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		struct sim_flow_result *r = &x->res[fl];
		struct sl_flow_stats st = {0};

		sim_sched_host_flow_stats(x->host[r->spec.src], fl, &st);
		r->rx_bytes_meas = rx_flow(x, fl)->bytes;
		r->rtx_segs_meas = st.segs_rtx;
	}
	for (uint32_t h = 0; x->lrcv && h < SIM_MAX_HOSTS; h++)
		sim_librecv_host_stats(x->lrcv, h, &x->rx_meas[h]);
}

int
sim_exp_run(struct sim_exp *x)
{
	uint64_t end = x->sc.duration_ns, from = SL_MIN(x->sc.measure_from_ns, end);

	sim_schedule(x->s, from, measure_start, x, 0);
	sim_run(x->s, end);
	if (sim_error(x->s))
		return -sim_error(x->s);
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		struct sim_flow_result *r = &x->res[fl];
		struct sim_sched_host *h = x->host[r->spec.src];
		const struct sim_recv_flow_stats *rs = rx_flow(x, fl);
		uint64_t t0 = SL_MAX(from, r->spec.start_ns), t1 = end;

		r->started = sim_sched_host_view(h, fl, &r->view) == 0;
		sim_sched_host_flow_stats(h, fl, &r->st);
		r->done_ns = sim_sched_host_done_ns(h, fl);
		r->rx_bytes = rs->bytes;
		r->rx_cumack = rs->cumack;
		r->rx_bytes_meas = rs->bytes - r->rx_bytes_meas;
		r->rtx_segs_meas = r->st.segs_rtx - r->rtx_segs_meas;
		if (r->done_ns != SIM_NEVER)
			t1 = SL_MAX(r->done_ns, t0);
		r->goodput_bps = t1 > t0 ? sl_rate_bps(r->rx_bytes_meas, t1 - t0) : 0;
	}
	{
		FILE *files[] = {x->flows_csv, x->seq_csv, x->events_csv, x->ports_csv, x->ec_csv};

		for (unsigned i = 0; i < SL_ARRAY_SIZE(files); i++)
			if (files[i] && fflush(files[i]))
				return -errno;
	}
	return 0;
}

void
sim_exp_sched_stats(const struct sim_exp *x, struct sl_sched_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++) {
		struct sl_sched_stats one;
		uint64_t *d = (uint64_t *)st;
		const uint64_t *o = (const uint64_t *)&one;

		if (x->host[h] == NULL)
			continue;
		sim_sched_host_stats(x->host[h], &one);
		for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
			d[i] += o[i];
	}
}

uint32_t
sim_exp_start_failures(const struct sim_exp *x)
{
	uint32_t n = 0;

	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		if (x->host[h])
			n += sim_sched_host_start_failures(x->host[h]);
	return n;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Jain's fairness index of the per-flow goodputs (0 when every flow got nothing). */
static double
jain_index(const struct sim_exp *x)
{
	double sum = 0, sumsq = 0;

	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		double g = (double)x->res[fl].goodput_bps;

		sum += g;
		sumsq += g * g;
	}
	return sumsq > 0 ? sum * sum / (x->nflows * sumsq) : 0;
}

/* Settling after a drain step took a longer than b (-1: never, the longest). */
static bool
slower(int64_t a, int64_t b)
{
	return b >= 0 && (a < 0 || a > b);
}

/* The fields of m, each as ", \"key\": value" (the summary and the sweep line). */
static void
ec_json_fields(const struct sim_exp *x, const struct sim_exp_ec *m, FILE *out)
{
	fprintf(out,
		", \"policy\": \"%s\", \"drain_pct\": %u, \"payload_bytes\": %u, "
		"\"retransmissions\": %" PRIu64 ", \"retransmissions_warmup\": %" PRIu64
		", \"rtx_norm\": %.6f, \"goodput_norm\": %.6f",
		sim_ec_policy_name(x->sc.ec.policy), x->sc.ec.drain_pct,
		x->sc.group[0].spec.fc.seg_bytes, m->retransmissions, m->retransmissions_warmup,
		m->rtx_norm, m->goodput_norm);
	fprintf(out,
		", \"target_drop_full\": %" PRIu64 ", \"target_drop_order\": %" PRIu64
		", \"target_drop_dup\": %" PRIu64 ", \"iacks\": %" PRIu64 ", \"dacks\": %" PRIu64
		", \"nacks\": %" PRIu64 ", \"dacks_suppressed\": %" PRIu64
		", \"iacks_coalesced\": %" PRIu64 ", \"sr_pkts\": %u",
		m->drop_full, m->drop_order, m->drop_dup, m->iacks, m->dacks, m->nacks,
		m->dacks_suppressed, m->iacks_coalesced, x->sc.ec.q.sr_pkts);
	fprintf(out,
		", \"target_queue_max_bytes\": %" PRIu64 ", \"target_queue_mean_bytes\": %.1f"
		", \"host_idle_frac\": %.6f, \"rate_diff_max\": %.6f, \"first_dack_ns\": %" PRId64,
		m->queue_max_bytes, m->queue_mean_bytes, m->host_idle_frac, m->rate_diff_max,
		m->first_dack_ns == SIM_NEVER ? (int64_t)-1 : (int64_t)m->first_dack_ns);
	fprintf(out, ", \"ctrl_lost\": %" PRIu64, sim_stats(x->s)->drops_ctrl);
	if (x->sc.ec.nsteps == 0)
		return;
	fprintf(out, ", \"steps\": [");
	for (uint32_t k = 0; k < x->sc.ec.nsteps; k++) {
		struct sim_ec_step_result r = {0}, hr;
		bool any = false;

		/* the slowest target host's reaction (never settling is the slowest) */
		for (uint32_t h = 0; h < x->sc.net.nhosts; h++)
			if (sim_ec_step_result(x->ec, h, k, &hr) == 0 &&
			    (!any || slower(hr.settle_ns, r.settle_ns))) {
				r = hr;
				any = true;
			}
		if (!any)
			continue;
		fprintf(out,
			"%s{\"at_us\": %" PRIu64 ", \"from_pct\": %u, \"to_pct\": %u, "
			"\"settle_us\": %.1f}",
			k ? ", " : "", r.at_ns / SL_NS_PER_US, r.from_pct, r.to_pct,
			r.settle_ns < 0 ? -1.0 : (double)r.settle_ns / SL_NS_PER_US);
	}
	fprintf(out, "]");
}

void
sim_exp_summary_json(const struct sim_exp *x, const char *name, FILE *out)
{
	const struct sim_stats *ns = sim_stats(x->s);
	static const double qs[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
	uint64_t *gp = malloc(x->nflows * sizeof(*gp)), rtx = 0, rto = 0, total = 0;
	struct sl_sched_stats st;

	sim_exp_sched_stats(x, &st);
	fprintf(out,
		"{\"scenario\": \"%s\", \"seed\": %" PRIu64 ", \"duration_ns\": %" PRIu64
		", \"measure_from_ns\": %" PRIu64 ", \"events\": %" PRIu64 ", \"flows\": %u",
		name, x->sc.net.seed, x->sc.duration_ns, x->sc.measure_from_ns, ns->events,
		x->nflows);
	fprintf(out, ", \"per_flow\": [");
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_result *r = &x->res[fl];

		if (gp)
			gp[fl] = r->goodput_bps;
		total += r->goodput_bps;
		rtx += r->st.segs_rtx;
		rto += r->st.rto_fired;
		fprintf(out,
			"%s{\"flow\": %u, \"proto\": \"%s\", \"src\": %u, \"dst\": %u, "
			"\"goodput_bps\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			", \"segs_sent\": %" PRIu64 ", \"segs_rtx\": %" PRIu64
			", \"rto_fired\": %" PRIu64 ", \"nacks\": %" PRIu64 ", \"cnps\": %" PRIu64
			", \"pulls\": %" PRIu64 ", \"done_ns\": %" PRId64 ", \"wnd_segs\": %u"
			", \"rate_bps\": %" PRIu64 "}",
			fl ? ", " : "", fl, r->spec.proto, r->spec.src, r->spec.dst, r->goodput_bps,
			r->rx_bytes, r->st.segs_sent, r->st.segs_rtx, r->st.rto_fired, r->st.nacks,
			r->st.cnps, r->st.pulls,
			r->done_ns == SIM_NEVER ? (int64_t)-1 : (int64_t)r->done_ns,
			r->view.wnd_segs, r->view.rate_bps);
	}
	fprintf(out, "], \"goodput_total_bps\": %" PRIu64, total);
	if (gp) {
		qsort(gp, x->nflows, sizeof(*gp), cmp_u64);
		fprintf(out, ", \"goodput_cdf_bps\": {");
		for (size_t i = 0; i < SL_ARRAY_SIZE(qs); i++)
			fprintf(out, "%s\"p%d\": %" PRIu64, i ? ", " : "", (int)(qs[i] * 100),
				gp[(size_t)(qs[i] * (x->nflows - 1) + 0.5)]);
		fprintf(out, "}");
		free(gp);
	}
	fprintf(out, ", \"jain_fairness\": %.6f", jain_index(x));
	if (x->ec) {
		struct sim_exp_ec m;

		sim_exp_ec_stats(x, &m);
		ec_json_fields(x, &m, out);
	}
	fprintf(out,
		", \"segs_rtx\": %" PRIu64 ", \"rto_fired\": %" PRIu64 ", \"drops_queue\": %" PRIu64
		", \"drops_random\": %" PRIu64 ", \"drops_scripted\": %" PRIu64
		", \"trims\": %" PRIu64 ", \"ecn_marks\": %" PRIu64,
		rtx, rto, ns->drops_queue, ns->drops_random, ns->drops_scripted, ns->trims,
		ns->ecn_marks);
	fprintf(out,
		", \"ctrl_rx\": {\"ack\": %" PRIu64 ", \"nack\": %" PRIu64 ", \"pull\": %" PRIu64
		", \"cnp\": %" PRIu64 "}",
		ns->ctrl_pkts[SIM_PKT_ACK], ns->ctrl_pkts[SIM_PKT_NACK],
		ns->ctrl_pkts[SIM_PKT_PULL], ns->ctrl_pkts[SIM_PKT_CNP]);
	fprintf(out, ", \"max_queue_bytes\": [");
	for (uint32_t h = 0; h < x->sc.net.nhosts; h++)
		fprintf(out, "%s%" PRIu64, h ? ", " : "",
			sim_port_stats(x->s, h, true)->max_q_bytes);
	fprintf(out,
		"], \"sched\": {\"decisions\": %" PRIu64 ", \"pace_unused\": %" PRIu64
		", \"bad_events\": %" PRIu64 ", \"rto_fired\": %" PRIu64
		", \"rto_dropped_by_ack\": %" PRIu64 ", \"start_failures\": %u}}\n",
		st.decisions, st.pace_unused, st.bad_events, st.rto_fired, st.rto_dropped_by_ack,
		sim_exp_start_failures(x));
}

/* The q-quantile of n sorted values (nearest rank), 0 when n is 0. */
static double
quantile(const uint64_t *v, uint32_t n, double q)
{
	uint32_t k;

	if (n == 0)
		return 0;
	k = (uint32_t)ceil(q * n);
	return (double)v[k ? k - 1 : 0];
}

static void
fct_stats(const struct sim_exp *x, struct sim_exp_melo *m)
{
	uint64_t *fct = malloc((x->nflows + 1) * sizeof(*fct));
	double sum = 0;
	uint32_t n = 0;

	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_result *r = &x->res[fl];

		if (r->spec.size_segs == 0)
			continue;
		if (r->done_ns == SIM_NEVER) {
			m->fct_unfinished++;
			continue;
		}
		if (fct)
			fct[n] = r->done_ns - r->spec.start_ns;
		sum += (double)(r->done_ns - r->spec.start_ns);
		n++;
	}
	m->fct_done = n;
	if (fct == NULL || n == 0) {
		free(fct);
		return;
	}
	qsort(fct, n, sizeof(*fct), cmp_u64);
	m->fct_mean_us = sum / n / 1e3;
	m->fct_p50_us = quantile(fct, n, 0.5) / 1e3;
	m->fct_p99_us = quantile(fct, n, 0.99) / 1e3;
	m->fct_p999_us = quantile(fct, n, 0.999) / 1e3;
	free(fct);
}

/* dst[i] += src[i] over two counter structs made only of uint64_t. */
static void
add_u64s(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

void
sim_exp_melo_stats(const struct sim_exp *x, struct sim_exp_melo *m)
{
	uint64_t from = SL_MIN(x->sc.measure_from_ns, x->sc.duration_ns);
	double span_ns = (double)(x->sc.duration_ns - from);

	memset(m, 0, sizeof(*m));
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_result *r = &x->res[fl];

		m->goodput_gbps += (double)r->goodput_bps / 1e9;
		m->segs_sent += r->st.segs_sent;
		m->segs_rtx += r->st.segs_rtx;
		m->rto_fired += r->st.rto_fired;
		m->nacks += rx_flow(x, fl)->nacks;
	}
	for (uint32_t h = 0; h < x->sc.net.nhosts; h++) {
		struct sl_recv_stats st;
		struct sl_recv_rtx_stats ts;
		uint32_t blocks;

		if (x->host[h]) {
			sim_sched_host_rtx_stats(x->host[h], &ts);
			add_u64s((uint64_t *)&m->tx, (const uint64_t *)&ts, sizeof(ts) / 8);
		}
		if (x->lrcv == NULL || sim_librecv_host_stats(x->lrcv, h, &st) != 0)
			continue;
		blocks = sim_librecv_pool_blocks(x->lrcv, h);
		m->pool_blocks = blocks;
		m->pool_peak_blocks = SL_MAX(m->pool_peak_blocks, st.pool_peak_blocks);
		if (span_ns > 0 && blocks)
			m->pool_mean_frac =
				SL_MAX(m->pool_mean_frac,
				       (double)(st.pool_block_ns - x->rx_meas[h].pool_block_ns) /
					       span_ns / blocks);
		add_u64s((uint64_t *)&m->rx, (const uint64_t *)&st, sizeof(st) / 8);
	}
	fct_stats(x, m);
}

const char *
sim_exp_mode_name(const struct sim_exp *x)
{
	if (x->ec)
		return sim_ec_policy_name(x->sc.ec.policy);
	if (!x->lrcv)
		return "reference";
	if (x->sc.group[0].spec.recovery != SL_RECV_GBN)
		return "melo";
	return x->sc.lrecv.rc.nack_interval_ns ? "gbn-ns3" : "gbn";
}

void
sim_exp_melo_json(const struct sim_exp *x, const char *name, const char *labels, FILE *out)
{
	struct sim_exp_melo m;

	sim_exp_melo_stats(x, &m);
	fprintf(out,
		"{\"scenario\": \"%s\", \"set\": {%s}, \"mode\": \"%s\", \"proto\": \"%s\", "
		"\"loss\": %g, \"conns\": %u, \"pool_bits\": %u, \"duration_ns\": %" PRIu64
		", \"goodput_gbps\": %.4f, \"segs_sent\": %" PRIu64 ", \"segs_rtx\": %" PRIu64
		", \"rto_fired\": %" PRIu64 ", \"nacks\": %" PRIu64,
		name, labels, sim_exp_mode_name(x), x->sc.group[0].spec.proto, x->sc.net.loss,
		x->nflows, x->sc.lrecv.rc.pool_bits, x->sc.duration_ns, m.goodput_gbps, m.segs_sent,
		m.segs_rtx, m.rto_fired, m.nacks);
	fprintf(out,
		", \"pool_blocks\": %" PRIu64 ", \"pool_peak_blocks\": %" PRIu64
		", \"pool_peak_frac\": %.4f, \"pool_mean_frac\": %.4f, \"drop_pool_exhausted\": "
		"%" PRIu64 ", \"drop_middle_access\": %" PRIu64 ", \"drop_out_of_order\": %" PRIu64
		", \"nacks_repeated\": %" PRIu64 ", \"drop_duplicate\": %" PRIu64
		", \"drop_out_of_window\": %" PRIu64 ", \"drop_no_rob\": %" PRIu64
		", \"rtx_redundant_pkts\": %" PRIu64 ", \"tx_pkts_marked\": %" PRIu64
		", \"tx_pkts_repeated\": %" PRIu64 ", \"tx_pool_exhausted\": %" PRIu64,
		m.pool_blocks, m.pool_peak_blocks,
		m.pool_blocks ? (double)m.pool_peak_blocks / m.pool_blocks : 0, m.pool_mean_frac,
		m.rx.drop_pool_exhausted, m.rx.drop_middle_access, m.rx.drop_out_of_order,
		m.rx.nacks_repeated, m.rx.drop_duplicate, m.rx.drop_out_of_window, m.rx.drop_no_rob,
		m.rx.rtx_redundant_pkts, m.tx.pkts_marked, m.tx.pkts_repeated,
		m.tx.pkts_pool_exhausted);
	fprintf(out,
		", \"fct_done\": %u, \"fct_unfinished\": %u, \"fct_mean_us\": %.1f, "
		"\"fct_p50_us\": "
		"%.1f, \"fct_p99_us\": %.1f, \"fct_p999_us\": %.1f}\n",
		m.fct_done, m.fct_unfinished, m.fct_mean_us, m.fct_p50_us, m.fct_p99_us,
		m.fct_p999_us);
}

void
sim_exp_ec_stats(const struct sim_exp *x, struct sim_exp_ec *m)
{
	const struct sim_conf *net = &x->sc.net;
	uint64_t end = x->sc.duration_ns, from = SL_MIN(x->sc.measure_from_ns, end);
	double link_bps = 0, goodput_bps = 0, rtx_bits = 0, rate_min = 1e300, rate_max = 0;
	bool target[SIM_MAX_HOSTS] = {false};

	memset(m, 0, sizeof(*m));
	m->first_dack_ns = SIM_NEVER;
	if (x->ec == NULL)
		return;
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_result *r = &x->res[fl];
		const struct sim_ec_flow_stats *f = sim_ec_flow(x->ec, fl);
		double rate =
			(double)r->goodput_bps / (double)net->switch_port[r->spec.dst].rate_bps;

		target[r->spec.dst] = true;
		goodput_bps += (double)r->goodput_bps;
		rtx_bits += (double)r->rtx_segs_meas * (r->spec.fc.seg_bytes + net->hdr_bytes) * 8;
		rate_min = SL_MIN(rate_min, rate);
		rate_max = SL_MAX(rate_max, rate);
		m->retransmissions += r->rtx_segs_meas;
		m->retransmissions_warmup += r->st.segs_rtx - r->rtx_segs_meas;
		m->rto_fired += r->st.rto_fired;
		m->drop_full += f->drop_full;
		m->drop_order += f->drop_order;
		m->drop_dup += f->drop_dup;
		m->iacks += f->iacks;
		m->dacks += f->dacks;
		m->nacks += f->rx.nacks;
		m->first_dack_ns = SL_MIN(m->first_dack_ns, f->first_dack_ns);
	}
	for (uint32_t h = 0; h < net->nhosts; h++) {
		struct sim_ec_host_stats hs;

		if (!target[h] || sim_ec_host_stats(x->ec, h, end, &hs) != 0)
			continue;
		link_bps += (double)net->switch_port[h].rate_bps;
		m->dacks_suppressed += hs.q.dacks_suppressed;
		m->iacks_coalesced += hs.q.iacks_coalesced;
		m->queue_max_bytes = SL_MAX(m->queue_max_bytes, hs.q.max_queue_bytes);
		m->queue_mean_bytes = SL_MAX(m->queue_mean_bytes, hs.queue_mean_bytes);
		if (hs.active_ns)
			m->host_idle_frac = SL_MAX(m->host_idle_frac,
						   1 - (double)hs.busy_ns / (double)hs.active_ns);
	}
	m->goodput_gbps = goodput_bps / SL_BPS_PER_GBPS;
	m->goodput_norm = goodput_bps / link_bps;
	m->rtx_norm = end > from ? rtx_bits * SL_NS_PER_S / (link_bps * (double)(end - from)) : 0;
	m->rate_diff_max = rate_max - rate_min;
	m->jain = jain_index(x);
}

void
sim_exp_ec_json(const struct sim_exp *x, const char *name, const char *labels, FILE *out)
{
	struct sim_exp_ec m;

	sim_exp_ec_stats(x, &m);
	fprintf(out,
		"{\"scenario\": \"%s\", \"set\": {%s}, \"flows\": %u, \"duration_ns\": %" PRIu64
		", \"goodput_gbps\": %.4f, \"rto_fired\": %" PRIu64 ", \"jain_fairness\": %.6f",
		name, labels, x->nflows, x->sc.duration_ns, m.goodput_gbps, m.rto_fired, m.jain);
	ec_json_fields(x, &m, out);
	fprintf(out, "}\n");
}

struct sim_exp *
sim_sweep_run(const struct sim_scenario *base, uint32_t run, char *labels, size_t lablen, char *err,
	      size_t errlen, int *status)
{
	struct sim_scenario *sc = malloc(sizeof(*sc));
	struct sim_exp *x = NULL;
	int rc;

	*status = 2;
	if (sc == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	*sc = *base;
	if (sim_sweep_apply(sc, run, labels, lablen, err, errlen) ||
	    sim_scenario_check(sc, err, errlen)) {
		free(sc);
		return NULL;
	}
	x = sim_exp_create(sc);
	free(sc);
	if (x == NULL) {
		snprintf(err, errlen, "cannot build the experiment: %s", strerror(errno));
		return NULL;
	}
	rc = sim_exp_run(x);
	if (rc) {
		snprintf(err, errlen, "the run failed: %s", strerror(-rc));
		sim_exp_free(x);
		*status = 1;
		return NULL;
	}
	*status = 0;
	return x;
}
