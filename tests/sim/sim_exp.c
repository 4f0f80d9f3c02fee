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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_exp.h"
#include "sl_time.h"

struct sim_exp {
	struct sim_scenario sc;
	struct sim *s;
	struct sim_recv *rcv;
	struct sim_sched_host *host[SIM_MAX_HOSTS];
	uint32_t nflows;
	struct sim_flow_result *res;
	FILE *flows_csv;
	FILE *seq_csv;
	FILE *events_csv;
	FILE *ports_csv;
	sim_exp_sampler sampler;
	void *sampler_ctx;
	uint64_t sampler_ns;
};

struct sim *
sim_exp_sim(struct sim_exp *x)
{
	return x->s;
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
	sim_free(x->s);
	if (x->flows_csv)
		fclose(x->flows_csv);
	if (x->seq_csv)
		fclose(x->seq_csv);
	if (x->events_csv)
		fclose(x->events_csv);
	if (x->ports_csv)
		fclose(x->ports_csv);
	free(x->res);
	free(x);
}

struct sim_exp *
sim_exp_create(const struct sim_scenario *sc)
{
	uint32_t per_host[SIM_MAX_HOSTS] = {0};
	struct sim_recv_conf rc;
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
	rc = sc->recv;
	rc.nflows = x->nflows;
	if (x->res == NULL || x->s == NULL || (x->rcv = sim_recv_create(x->s, &rc)) == NULL) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	for (uint32_t h = 0; h < sc->net.nhosts; h++) {
		sim_set_receiver(x->s, h, &sim_recv_ops, x->rcv);
		if (per_host[h] == 0)
			continue;
		struct sl_sched_conf c = sc->sched;

		c.max_flows = per_host[h];
		x->host[h] = sim_sched_host_create(x->s, h, &c, x->nflows);
		if (x->host[h] == NULL) {
			err = errno;
			goto fail;
		}
		sim_set_sender(x->s, h, &sim_sched_sender_ops, x->host[h]);
	}
	for (uint32_t g = 0; g < sc->ngroups; g++) {
		for (uint32_t i = 0; i < sc->group[g].count; i++, fl++) {
			struct sim_flow_spec sp = sc->group[g].spec;
			int r;

			sp.start_ns += i * sc->group[g].stagger_ns;
			x->res[fl].flow = fl;
			x->res[fl].spec = sp;
			r = sim_sched_host_add_flow(x->host[sp.src], fl, &sp);
			if (r == 0)
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
			sim_recv_flow(x->rcv, fl)->cumack, st.segs_sent, st.segs_rtx, st.rto_fired);
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
	FILE **files[] = {&x->flows_csv, &x->seq_csv, &x->events_csv, &x->ports_csv};
	static const char *const names[] = {"flows.csv", "seq.csv", "events.csv", "ports.csv"};
	static const char *const heads[] = {
		"t_ns,flow,wnd_segs,rate_bps,tokens_bytes,wnd_start,snd_max,rx_cumack,segs_sent,"
		"segs_rtx,rto_fired",
		"t_ns,flow,seq,tx_id,len",
		"t_ns,flow,event,seq,tx_id",
		"t_ns,host,queue_bytes,tx_bytes,drops,trims,ecn_marks,pfc_pauses",
	};

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		*files[i] = fopen(path, "w");
		if (*files[i] == NULL)
			return -errno;
		fprintf(*files[i], "%s\n", heads[i]);
	}
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
	for (uint32_t fl = 0; fl < x->nflows; fl++)
		x->res[fl].rx_bytes_meas = sim_recv_flow(x->rcv, fl)->bytes;
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
		const struct sim_recv_flow_stats *rs = sim_recv_flow(x->rcv, fl);
		uint64_t t0 = SL_MAX(from, r->spec.start_ns), t1 = end;

		r->started = sim_sched_host_view(h, fl, &r->view) == 0;
		sim_sched_host_flow_stats(h, fl, &r->st);
		r->done_ns = sim_sched_host_done_ns(h, fl);
		r->rx_bytes = rs->bytes;
		r->rx_cumack = rs->cumack;
		r->rx_bytes_meas = rs->bytes - r->rx_bytes_meas;
		if (r->done_ns != SIM_NEVER)
			t1 = SL_MAX(r->done_ns, t0);
		r->goodput_bps = t1 > t0 ? sl_rate_bps(r->rx_bytes_meas, t1 - t0) : 0;
	}
	{
		FILE *files[] = {x->flows_csv, x->seq_csv, x->events_csv, x->ports_csv};

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

void
sim_exp_summary_json(const struct sim_exp *x, const char *name, FILE *out)
{
	const struct sim_stats *ns = sim_stats(x->s);
	static const double qs[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
	uint64_t *gp = malloc(x->nflows * sizeof(*gp)), rtx = 0, rto = 0, total = 0;
	double sum = 0, sumsq = 0;
	struct sl_sched_stats st;

	sim_exp_sched_stats(x, &st);
	fprintf(out, "{\"scenario\": \"%s\", \"seed\": %" PRIu64 ", \"duration_ns\": %" PRIu64
		     ", \"measure_from_ns\": %" PRIu64 ", \"events\": %" PRIu64 ", \"flows\": %u",
		name, x->sc.net.seed, x->sc.duration_ns, x->sc.measure_from_ns, ns->events,
		x->nflows);
	fprintf(out, ", \"per_flow\": [");
	for (uint32_t fl = 0; fl < x->nflows; fl++) {
		const struct sim_flow_result *r = &x->res[fl];

		if (gp)
			gp[fl] = r->goodput_bps;
		sum += (double)r->goodput_bps;
		sumsq += (double)r->goodput_bps * (double)r->goodput_bps;
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
			r->done_ns == SIM_NEVER ? (int64_t)-1 : (int64_t)r->done_ns, r->view.wnd_segs,
			r->view.rate_bps);
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
	fprintf(out, ", \"jain_fairness\": %.6f", sumsq > 0 ? sum * sum / (x->nflows * sumsq) : 0);
	fprintf(out,
		", \"segs_rtx\": %" PRIu64 ", \"rto_fired\": %" PRIu64 ", \"drops_queue\": %" PRIu64
		", \"drops_random\": %" PRIu64 ", \"drops_scripted\": %" PRIu64
		", \"trims\": %" PRIu64 ", \"ecn_marks\": %" PRIu64,
		rtx, rto, ns->drops_queue, ns->drops_random, ns->drops_scripted, ns->trims,
		ns->ecn_marks);
	fprintf(out,
		", \"ctrl_rx\": {\"ack\": %" PRIu64 ", \"nack\": %" PRIu64 ", \"pull\": %" PRIu64
		", \"cnp\": %" PRIu64 "}",
		ns->ctrl_pkts[SIM_PKT_ACK], ns->ctrl_pkts[SIM_PKT_NACK], ns->ctrl_pkts[SIM_PKT_PULL],
		ns->ctrl_pkts[SIM_PKT_CNP]);
	fprintf(out, ", \"max_queue_bytes\": [");
	for (uint32_t h = 0; h < x->sc.net.nhosts; h++)
		fprintf(out, "%s%" PRIu64, h ? ", " : "", sim_port_stats(x->s, h, true)->max_q_bytes);
	fprintf(out,
		"], \"sched\": {\"decisions\": %" PRIu64 ", \"credit_violations\": %" PRIu64
		", \"bad_events\": %" PRIu64 ", \"rto_fired\": %" PRIu64
		", \"rto_dropped_by_ack\": %" PRIu64 ", \"start_failures\": %u}}\n",
		st.decisions, st.credit_violations, st.bad_events, st.rto_fired,
		st.rto_dropped_by_ack, sim_exp_start_failures(x));
}
