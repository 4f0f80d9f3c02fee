/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fidelity (Tonic section 6.2.1, Fig. 3a/3b): the newreno program on lib/sched against an
 * independent TCP NewReno sender written here from the RFC text (RFC 5681 slow start,
 * congestion avoidance and limited transmit per RFC 3042; RFC 6582 fast retransmit, fast
 * recovery with partial acks and the ack heuristic; RFC 6298 timer rules with a 200 ms floor and
 * back-off). It shares no code with the program or the engine: it keeps snd_una/snd_nxt and an
 * inflated cwnd the RFC way.
 *
 * Both senders run, one after the other, in the same simulated network (scenario
 * newreno_single.ini: 10 Gbps, RTT 10 us, drops keyed by segment and transmission so both meet
 * the same losses). Sampled every 100 us: the cumulative ack (the sequence trace), the highest
 * segment sent and cwnd (the program's user cwnd; the reference's cwnd without the recovery
 * inflation, i.e. ssthresh during fast recovery, which is what appendix F keeps in cwnd).
 * The test prints one JSON line with the comparison and fails when the traces part.
 *
 * The same reference, one instance per flow and served round-robin per host, also runs the
 * 2 x 100 flow experiment (Fig. 3c, newreno_2x100.ini): the goodput CDFs and retransmission
 * counts of the program and the reference are printed side by side and must stay close.
 */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_exp.h"
#include "sl_newreno.h"
#include "sl_time.h"

#define SAMPLE_NS SL_NS_PER_US
#define MAX_SAMPLES 200000u
#define SEQ_STEP 10u                 /**< compare cwnd every SEQ_STEP acked segments */
#define REF_SEGS (UINT32_C(1) << 22) /**< transmissions counted per segment, up to this seq */

static const char *scenario_dir = SIM_SCENARIO_DIR;

struct sample {
	uint32_t una;  /**< cumulative ack, segments */
	uint32_t max;  /**< highest segment sent + 1 */
	uint32_t cwnd; /**< segments */
};

struct trace {
	struct sample s[MAX_SAMPLES];
	uint32_t n;
	uint64_t rtx;      /**< retransmitted segments */
	uint64_t fast_rtx; /**< entries into fast recovery */
	uint64_t rtos;
};

/* ---- the reference sender (RFC 5681 / 3042 / 6582 / 6298) ---- */

struct ref_tcp {
	struct sim *s;
	uint32_t host, dst, flow, seg_bytes, wmax;
	uint32_t una, nxt, max;  /**< snd_una, snd_nxt, highest sent + 1 */
	uint32_t cwnd, ssthresh; /**< segments; cwnd inflated during fast recovery */
	uint32_t ca_acks;        /**< acks since cwnd last grew in congestion avoidance */
	uint32_t dupacks, recover, prev_highest_ack;
	bool in_fr, rtx_una, first_partial_done;
	bool armed; /**< the retransmission timer runs */
	uint64_t rto_ns, rto_min_ns, rto_gen;
	uint8_t *txc;                 /**< transmissions per segment */
	uint32_t txc_len;             /**< segments tracked: the flow stops there */
	uint64_t rtx, fast_rtx, rtos; /**< retransmissions, fast retransmits, timeouts */
	struct trace *tr;             /**< samples (flow 0 of the single-flow run), or NULL */
};

/* A host's reference flows, served one packet each in turn (like the engine's ready set). */
struct ref_host {
	struct ref_tcp **by_flow; /**< global flow id -> flow, shared by all hosts */
	struct ref_tcp **f;       /**< this host's flows */
	uint32_t n, rr;
};

static void ref_rto(struct sim *s, void *obj, uint64_t gen);

static void
ref_arm(struct ref_tcp *r)
{
	r->rto_gen++;
	r->armed = true;
	sim_schedule(r->s, sim_now(r->s) + r->rto_ns, ref_rto, r, r->rto_gen);
}

static void
ref_disarm(struct ref_tcp *r)
{
	r->rto_gen++;
	r->armed = false;
}

static void
ref_rto(struct sim *s, void *obj, uint64_t gen)
{
	struct ref_tcp *r = obj;

	if (gen != r->rto_gen || !r->armed || r->una == r->max)
		return;
	r->rtos++;
	r->ssthresh = SL_MAX((r->max - r->una) / 2, 2u); /* RFC 5681 eq. 4 */
	r->cwnd = 1;
	r->recover = r->max - 1; /* RFC 6582 s3.2 step 4 */
	r->in_fr = false;
	r->dupacks = 0;
	r->nxt = r->una; /* go back N */
	r->rtx_una = false;
	r->rto_ns = SL_MIN(r->rto_ns * 2, 60 * SL_NS_PER_S); /* RFC 6298 5.5 */
	ref_arm(r);
	sim_host_kick(s, r->host);
}

static bool
ref_next_pkt(void *ctx, uint64_t now_ns, struct sim_pkt *p)
{
	struct ref_tcp *r = ctx;
	uint32_t seq, allow;

	(void)now_ns;
	if (r->rtx_una) {
		seq = r->una;
		r->rtx_una = false;
	} else {
		allow = r->cwnd + (!r->in_fr && r->dupacks < 3 ? r->dupacks : 0); /* RFC 3042 */
		if (r->nxt - r->una >= SL_MIN(allow, r->wmax))
			return false;
		seq = r->nxt++;
		if (sl_seq_gt(r->nxt, r->max))
			r->max = r->nxt;
	}
	if (seq >= r->txc_len)
		return false;
	p->flow = r->flow;
	p->dst = (uint16_t)r->dst;
	p->seq = seq;
	p->len_bytes = r->seg_bytes;
	p->tx_id = (uint8_t)SL_MIN(r->txc[seq], 3);
	if (r->txc[seq] < UINT8_MAX)
		r->txc[seq]++;
	if (p->tx_id)
		r->rtx++;
	if (!r->armed) /* RFC 6298 5.1: start the timer if it is not running */
		ref_arm(r);
	return true;
}

static uint64_t
ref_next_ns(void *ctx, uint64_t now_ns)
{
	(void)ctx;
	(void)now_ns;
	return SIM_NEVER; /* ack-clocked; the RTO schedules itself */
}

static void
ref_new_ack(struct ref_tcp *r, uint32_t a)
{
	uint32_t newly = a - r->una;
	bool restart = true;

	if (r->in_fr && sl_seq_gt(a, r->recover)) {
		r->in_fr = false; /* full ack: RFC 6582 s3.2 step 3, option 2 */
		r->cwnd = r->ssthresh;
	} else if (r->in_fr) {
		r->rtx_una = true; /* partial ack: retransmit the first unacked segment */
		r->cwnd = (r->cwnd > newly ? r->cwnd - newly : 0) + 1;
		restart = !r->first_partial_done;
		r->first_partial_done = true;
	} else if (r->cwnd < r->ssthresh) {
		r->cwnd++; /* slow start: cwnd += min(N, SMSS) */
	} else if (++r->ca_acks >= r->cwnd) {
		r->cwnd++; /* congestion avoidance: one SMSS per cwnd of acks */
		r->ca_acks = 0;
	}
	r->prev_highest_ack = r->una;
	r->una = a;
	r->dupacks = 0;
	if (sl_seq_lt(r->nxt, r->una))
		r->nxt = r->una;
	r->rto_ns = r->rto_min_ns;
	if (r->una == r->max)
		ref_disarm(r);
	else if (restart)
		ref_arm(r);
}

static void
ref_input(void *ctx, const struct sim_pkt *p, uint64_t now_ns)
{
	struct ref_tcp *r = ctx;
	uint32_t a = p->cumack;

	(void)now_ns;
	if (p->type != SIM_PKT_ACK || p->flow != r->flow)
		return;
	if (sl_seq_gt(a, r->una)) {
		ref_new_ack(r, a);
		return;
	}
	if (a != r->una || r->una == r->max)
		return;
	if (r->in_fr) {
		r->cwnd++; /* inflate */
		return;
	}
	if (++r->dupacks != 3)
		return;
	if (sl_seq_gt(a - 1, r->recover) || (r->cwnd > 1 && a - r->prev_highest_ack <= 4)) {
		r->fast_rtx++;
		r->recover = r->max - 1;
		r->ssthresh = SL_MAX((r->max - r->una) / 2, 2u);
		r->cwnd = r->ssthresh + 3;
		r->in_fr = true;
		r->first_partial_done = false;
		r->rtx_una = true;
	}
}

static bool
host_next_pkt(void *ctx, uint64_t now_ns, struct sim_pkt *p)
{
	struct ref_host *h = ctx;

	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t k = (h->rr + i) % h->n;

		if (ref_next_pkt(h->f[k], now_ns, p)) {
			h->rr = (k + 1) % h->n;
			return true;
		}
	}
	return false;
}

static void
host_input(void *ctx, const struct sim_pkt *p, uint64_t now_ns)
{
	struct ref_host *h = ctx;

	ref_input(h->by_flow[p->flow], p, now_ns);
}

static const struct sim_sender_ops ref_ops = {
	.next_pkt = host_next_pkt,
	.next_ns = ref_next_ns,
	.input = host_input,
};

static void
ref_sample(struct sim *s, void *obj, uint64_t arg)
{
	struct ref_tcp *r = obj;
	struct trace *t = r->tr;

	(void)arg;
	if (t->n < MAX_SAMPLES)
		t->s[t->n++] = (struct sample){r->una, r->max, r->in_fr ? r->ssthresh : r->cwnd};
	sim_schedule(s, sim_now(s) + SAMPLE_NS, ref_sample, r, 0);
}

/* Outcome of one reference flow. */
struct ref_result {
	uint64_t rx_bytes, rtx, fast_rtx, rtos;
};

/*
 * Run every flow of the scenario with the reference sender (backlogged, started at time 0);
 * samples of flow 0 go to t when t is not NULL; per-flow outcomes to res.
 */
static void
run_reference(const struct sim_scenario *sc, struct trace *t, struct ref_result *res,
	      uint32_t txc_len)
{
	struct sim_recv_conf rc = sc->recv;
	struct ref_host hosts[SIM_MAX_HOSTS] = {0};
	struct ref_tcp *flows, **by_flow;
	uint32_t n = 0, fl = 0;
	struct sim_recv *rcv;
	struct sim *s;

	for (uint32_t g = 0; g < sc->ngroups; g++)
		n += sc->group[g].count;
	flows = calloc(n, sizeof(*flows));
	by_flow = calloc(n, sizeof(*by_flow));
	assert_true(flows && by_flow);
	s = sim_create(&sc->net);
	assert_non_null(s);
	rc.nflows = n;
	rcv = sim_recv_create(s, &rc);
	assert_non_null(rcv);
	for (uint32_t g = 0; g < sc->ngroups; g++) {
		const struct sim_flow_spec *sp = &sc->group[g].spec;

		for (uint32_t i = 0; i < sc->group[g].count; i++, fl++) {
			struct ref_tcp *r = &flows[fl];
			struct ref_host *h = &hosts[sp->src];

			assert_int_equal(sim_recv_add_flow(rcv, fl, sp->fc.seg_bytes), 0);
			r->txc = calloc(txc_len, 1);
			assert_non_null(r->txc);
			r->txc_len = txc_len;
			r->s = s;
			r->flow = fl;
			r->host = sp->src;
			r->dst = sp->dst;
			r->seg_bytes = sp->fc.seg_bytes;
			r->wmax = sc->sched.wnd_segs ? sc->sched.wnd_segs : SL_SCHED_WND_DEFAULT;
			r->cwnd = sp->fc.init_wnd_segs;
			r->ssthresh = UINT32_MAX;
			r->recover = UINT32_MAX; /* the "initial send sequence number", before 0 */
			r->rto_ns = r->rto_min_ns = sp->fc.rto_ns;
			by_flow[fl] = r;
			h->f = realloc(h->f, (h->n + 1) * sizeof(*h->f));
			assert_non_null(h->f);
			h->f[h->n++] = r;
			h->by_flow = by_flow;
		}
	}
	for (uint32_t h = 0; h < sc->net.nhosts; h++) {
		sim_set_receiver(s, h, &sim_recv_ops, rcv);
		if (hosts[h].n) {
			sim_set_sender(s, h, &ref_ops, &hosts[h]);
			sim_host_kick(s, h);
		}
	}
	if (t) {
		flows[0].tr = t;
		sim_schedule(s, 0, ref_sample, &flows[0], 0);
	}
	sim_run(s, sc->duration_ns);
	assert_int_equal(sim_error(s), 0);
	for (fl = 0; fl < n; fl++) {
		res[fl] = (struct ref_result){sim_recv_flow(rcv, fl)->bytes, flows[fl].rtx,
					      flows[fl].fast_rtx, flows[fl].rtos};
		free(flows[fl].txc);
	}
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		free(hosts[h].f);
	sim_recv_free(rcv);
	sim_free(s);
	free(by_flow);
	free(flows);
}

/* ---- the program on lib/sched ---- */

static void
prog_sample(void *ctx, struct sim_exp *x, uint64_t now_ns)
{
	struct trace *t = ctx;
	const struct newreno *nr = sim_sched_host_priv(sim_exp_host(x, 0), 0);
	struct sl_flow_view v;

	(void)now_ns;
	if (t->n >= MAX_SAMPLES)
		return;
	if (nr == NULL || sim_sched_host_view(sim_exp_host(x, 0), 0, &v)) {
		t->s[t->n++] = (struct sample){0, 0, 0}; /* not started yet */
		return;
	}
	t->s[t->n++] = (struct sample){v.wnd_start, v.snd_max, nr->cwnd};
}

static void
prog_observe(void *ctx, enum sim_obs what, const struct sim_pkt *p, uint64_t now_ns)
{
	struct trace *t = ctx;

	(void)now_ns;
	if (what == SIM_OBS_TX && p->tx_id)
		t->rtx++;
}

static void
run_program(const struct sim_scenario *sc, struct trace *t)
{
	struct sim_exp *x = sim_exp_create(sc);
	const struct sim_flow_result *r;
	struct sl_sched_stats st;

	assert_non_null(x);
	sim_exp_set_sampler(x, SAMPLE_NS, prog_sample, t);
	sim_set_observer(sim_exp_sim(x), prog_observe, t);
	assert_int_equal(sim_exp_run(x), 0);
	r = sim_exp_flow(x, 0);
	t->rtos = r->st.rto_fired;
	sim_exp_sched_stats(x, &st);
	sim_exp_free(x);
}

static void
load(struct sim_scenario *sc, const char *name)
{
	char path[1024], err[512];

	snprintf(path, sizeof(path), "%s/%s", scenario_dir, name);
	sim_scenario_defaults(sc);
	if (sim_scenario_load(sc, path, err, sizeof(err)))
		fail_msg("%s", err);
}

/* Index of the first sample whose cumulative ack reached seq, from *i on (monotone). */
static uint32_t
first_at(const struct trace *t, uint32_t n, uint32_t *i, uint32_t seq)
{
	while (*i < n && t->s[*i].una < seq)
		(*i)++;
	return *i;
}

static void
newreno__matches_rfc6582_reference(void **state)
{
	static struct trace prog, ref;
	struct ref_result rr;
	struct sim_scenario sc;
	uint32_t n, npts = 0, cw_close = 0, ip = 0, ir = 0, end;
	uint64_t seq_worst_t = 0;
	double seq_worst = 0, cw_absdiff = 0, cw_ref_sum = 0;

	(void)state;
	load(&sc, "newreno_single.ini");
	run_program(&sc, &prog);
	run_reference(&sc, &ref, &rr, REF_SEGS);
	ref.rtx = rr.rtx;
	ref.fast_rtx = rr.fast_rtx;
	ref.rtos = rr.rtos;
	n = SL_MIN(prog.n, ref.n);
	assert_true(n > 1000);
	/* Sequence trace in time: the cumulative acks at equal times. */
	for (uint32_t i = 0; i < n; i++) {
		const struct sample *a = &prog.s[i], *b = &ref.s[i];
		double d = fabs((double)a->una - (double)b->una) / SL_MAX(b->una, 1u);

		if (d > seq_worst && b->una >= 1000) {
			seq_worst = d;
			seq_worst_t = (uint64_t)i * SAMPLE_NS;
		}
	}
	/* Congestion window trace by sequence: cwnd when each side's cumack reached seq. */
	end = SL_MIN(prog.s[prog.n - 1].una, ref.s[ref.n - 1].una);
	for (uint32_t seq = SEQ_STEP; seq < end; seq += SEQ_STEP) {
		uint32_t a = first_at(&prog, prog.n, &ip, seq), b = first_at(&ref, ref.n, &ir, seq);
		double dc = fabs((double)prog.s[a].cwnd - (double)ref.s[b].cwnd);

		npts++;
		cw_absdiff += dc;
		cw_ref_sum += ref.s[b].cwnd;
		cw_close += dc <= SL_MAX(2.0, 0.1 * ref.s[b].cwnd);
	}
	assert_true(npts > 1000);
	printf("{\"test\": \"newreno_vs_rfc6582\", \"sample_ns\": %" PRIu64 ", \"samples\": %u"
	       ", \"final_cumack_prog\": %u, \"final_cumack_ref\": %u"
	       ", \"seq_max_rel_diff\": %.5f, \"seq_max_rel_diff_at_ns\": %" PRIu64
	       ", \"cwnd_points\": %u, \"cwnd_mean_abs_diff_segs\": %.3f"
	       ", \"cwnd_mean_ref_segs\": %.3f, \"cwnd_points_within_10pct_or_2\": %.4f"
	       ", \"rtx_prog\": %" PRIu64 ", \"rtx_ref\": %" PRIu64 ", \"fast_rtx_ref\": %" PRIu64
	       ", \"rto_prog\": %" PRIu64 ", \"rto_ref\": %" PRIu64 "}\n",
	       SAMPLE_NS, n, prog.s[n - 1].una, ref.s[n - 1].una, seq_worst, seq_worst_t, npts,
	       cw_absdiff / npts, cw_ref_sum / npts, (double)cw_close / npts, prog.rtx, ref.rtx,
	       ref.fast_rtx, prog.rtos, ref.rtos);
	/* The same losses are met and repaired by fast retransmit on both sides. */
	assert_true(ref.fast_rtx > 20);
	assert_int_equal(prog.rtos, 0);
	assert_int_equal(ref.rtos, 0);
	assert_true(prog.rtx >= ref.fast_rtx && prog.rtx <= ref.rtx + ref.rtx / 10);
	/* Sequence traces: the cumulative acks never drift apart by more than 2%. */
	assert_true(seq_worst < 0.02);
	/* Congestion window traces: 90% of points within 10% (or 2 segments). */
	assert_true((double)cw_close / npts >= 0.90);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort v[n] and return its q-quantile. */
static uint64_t
quantile(uint64_t *v, uint32_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(uint32_t)(q * (n - 1) + 0.5)];
}

/*
 * Fig. 3c: 2 hosts x 100 flows on one bottleneck, the program against the reference sender:
 * the goodput CDFs and the retransmission counts side by side.
 */
static void
newreno_2x100__cdf_matches_rfc6582_reference(void **state)
{
	static const double qs[] = {0.1, 0.25, 0.5, 0.75, 0.9};
	struct sim_scenario sc;
	struct ref_result *rr;
	struct sim_exp *x;
	uint64_t *gp, *gr, rtx_p = 0, rtx_r = 0, rto_p = 0, rto_r = 0, tot_p = 0, tot_r = 0;
	double worst = 0;
	uint32_t n;

	(void)state;
	load(&sc, "newreno_2x100.ini");
	x = sim_exp_create(&sc);
	assert_non_null(x);
	assert_int_equal(sim_exp_run(x), 0);
	n = sim_exp_nflows(x);
	rr = calloc(n, sizeof(*rr));
	gp = calloc(n, sizeof(*gp));
	gr = calloc(n, sizeof(*gr));
	assert_true(rr && gp && gr);
	run_reference(&sc, NULL, rr, UINT32_C(1) << 17);
	for (uint32_t fl = 0; fl < n; fl++) {
		const struct sim_flow_result *r = sim_exp_flow(x, fl);

		gp[fl] = r->goodput_bps;
		gr[fl] = sl_rate_bps(rr[fl].rx_bytes, sc.duration_ns);
		tot_p += gp[fl];
		tot_r += gr[fl];
		rtx_p += r->st.segs_rtx;
		rtx_r += rr[fl].rtx;
		rto_p += r->st.rto_fired;
		rto_r += rr[fl].rtos;
	}
	printf("{\"test\": \"newreno_2x100_vs_rfc6582\", \"flows\": %u", n);
	for (size_t i = 0; i < SL_ARRAY_SIZE(qs); i++) {
		uint64_t a = quantile(gp, n, qs[i]), b = quantile(gr, n, qs[i]);
		double d = fabs((double)a - (double)b) / (double)b;

		worst = d > worst ? d : worst;
		printf(", \"p%d_prog_bps\": %" PRIu64 ", \"p%d_ref_bps\": %" PRIu64,
		       (int)(qs[i] * 100), a, (int)(qs[i] * 100), b);
	}
	printf(", \"cdf_worst_rel_diff\": %.4f, \"total_prog_bps\": %" PRIu64
	       ", \"total_ref_bps\": %" PRIu64 ", \"rtx_prog\": %" PRIu64 ", \"rtx_ref\": %" PRIu64
	       ", \"rto_prog\": %" PRIu64 ", \"rto_ref\": %" PRIu64 "}\n",
	       worst, tot_p, tot_r, rtx_p, rtx_r, rto_p, rto_r);
	assert_true(worst < 0.25);
	assert_true(tot_p > tot_r * 95 / 100 && tot_p < tot_r * 105 / 100);
	assert_true(rtx_p < rtx_r * 3 / 2 && rtx_r < rtx_p * 3 / 2);
	free(gp);
	free(gr);
	free(rr);
	sim_exp_free(x);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newreno__matches_rfc6582_reference),
		cmocka_unit_test(newreno_2x100__cdf_matches_rfc6582_reference),
	};

	if (argc > 1)
		scenario_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
