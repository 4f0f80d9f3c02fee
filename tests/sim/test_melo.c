/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MELO's figures (Lu et al., APNet'17, section 4) on the real lib/recv (MELO and go-back-N
 * receivers, the sender-side NACK tracker) and lib/sched (drivers/proto/melo "melo" and "gbn"),
 * each a sweep scenario of tests/sim/scenarios run at reduced length:
 *   - Fig. 5(a), melo-fig5a.ini, 20 ms: at 1% loss MELO keeps >= 95% of its loss-free goodput;
 *     MELO beats go-back-N at every loss from 1e-3 and the ratio grows with loss; below the
 *     loss at which retransmissions get lost, only holes are resent (no redundant resend, one
 *     NACK per hole); go-back-N loses what go-back-N must: one round trip of sending per loss,
 *     within 15% of 1 / (1 + p x BDP).
 *   - Fig. 6(b), melo-fig6b.ini, 10 ms, conns {1, 20} x loss {0.1, 2}%: one connection fills
 *     >= 90% of the pool (paper: 96.9%); more connections use less of it at low loss; usage
 *     grows with loss. melo-fig6b-pool.ini, 20 connections at 2%: drops for pool exhaustion
 *     never grow with the pool, vanish at 2 Kb, and goodput recovers.
 *   - Fig. 5(b), melo-fig5b.ini, 40 web-search flows per sender, loads 0.5 and 0.8, 1% loss:
 *     every flow completes; MELO's p99 FCT is below go-back-N's.
 *     The NS3-faithful go-back-N ("gbn-ns3": NACK repeat interval 500 us, as the DCQCN ns-3
 *     code) repeats NACKs, is slower than RoCE style at 1%, MELO beats it from 1e-3 with a
 *     growing ratio, and its goodput is within 15% of 1 / (1 + p x (BDP + p x interval)). The
 *     paper's >= 10x at 1% holds against neither baseline and is reported, not asserted.
 *   - scripted drops on one 2000-segment flow (melo-fig5a.ini without random loss): MELO resends
 *     exactly the lost segments, a NACK that repeats an open hole marks nothing twice, a lost
 *     resend is recovered by the RTO, go-back-N resends everything sent after the loss; gbn-ns3
 *     with the resend lost too (4000 segments, no RTO) NACKs again only an interval later.
 *   - programs.ini with lib/recv as the receiver: every program of drivers/proto (with the
 *     feedback lib/recv gives it) delivers every segment of its four flows, within credit.
 * Every run also checks the plumbing: no flow failed to start, no segment beyond credit, no
 * event refused, every feedback body encoded and decoded. One JSON line per run (the sweep
 * line of sluice-sim) and one per figure with the ratios.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_exp.h"
#include "sl_proto.h"

#define MAX_POINTS 64

static const char *scenario_dir = SIM_SCENARIO_DIR;

struct override {
	const char *section;
	const char *key;
	const char *value;
};

/* Go-back-N with a NACK repeat interval (melo-fig5a.ini's "gbn-ns3"), as a point's mode. */
#define MODE_GBN_NS3 (SL_RECV_GBN + 1)

/* The mode dimension of melo-fig5a.ini: its keys, and its tuple for each mode. */
#define FIG5A_MODE_KEYS                                                                            \
	"flows.proto,flows.recovery,receiver.nack_interval_us,sched.wnd_segs,flows.rto_us"

/* One run of a sweep: what it was and what it measured. */
struct point {
	uint8_t mode; /**< enum sl_recv_mode of the first group, or MODE_GBN_NS3 */
	double loss;
	uint32_t conns;
	uint32_t pool_bits;
	uint32_t load_ppm;
	struct sim_exp_melo m;
};

static void
assert_clean_run(const struct sim_exp *x, const struct sim_scenario *sc)
{
	struct sl_sched_stats st;

	assert_int_equal(sim_exp_start_failures(x), 0);
	sim_exp_sched_stats(x, &st);
	assert_true(st.decisions > 0);
	assert_int_equal(st.bad_events, 0);
	assert_int_equal(sim_librecv_encode_errors(sim_exp_librecv((struct sim_exp *)x)), 0);
	for (uint32_t h = 0; h < sc->net.nhosts; h++) {
		struct sim_sched_host *sh = sim_exp_host((struct sim_exp *)x, h);

		if (sh)
			assert_int_equal(sim_sched_host_fb_bad(sh), 0);
	}
}

/* Run every point of a sweep scenario with overrides; returns the number of points. */
static unsigned
sweep(const char *name, const struct override *ov, unsigned nov, struct point *pt)
{
	char path[1024], err[512], labels[512];
	struct sim_scenario *base = malloc(sizeof(*base)), *sc = malloc(sizeof(*sc));
	uint32_t runs;

	assert_non_null(base);
	assert_non_null(sc);
	assert_int_equal(sl_proto_register_failures(), 0);
	snprintf(path, sizeof(path), "%s/%s", scenario_dir, name);
	sim_scenario_defaults(base);
	if (sim_scenario_load(base, path, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < nov; i++)
		if (sim_scenario_set(base, ov[i].section, ov[i].key, ov[i].value, err, sizeof(err)))
			fail_msg("%s", err);
	runs = sim_sweep_runs(base);
	assert_true(runs > 0 && runs <= MAX_POINTS);
	for (uint32_t i = 0; i < runs; i++) {
		struct sim_exp *x;

		*sc = *base;
		if (sim_sweep_apply(sc, i, labels, sizeof(labels), err, sizeof(err)) ||
		    sim_scenario_check(sc, err, sizeof(err)))
			fail_msg("%s run %u: %s", name, i, err);
		x = sim_exp_create(sc);
		assert_non_null(x);
		assert_int_equal(sim_exp_run(x), 0);
		assert_clean_run(x, sc);
		pt[i] = (struct point){.mode = sc->group[0].spec.recovery == SL_RECV_GBN &&
							       sc->lrecv.rc.nack_interval_ns
						       ? MODE_GBN_NS3
						       : sc->group[0].spec.recovery,
				       .loss = sc->net.loss,
				       .conns = sim_exp_nflows(x),
				       .pool_bits = sc->lrecv.rc.pool_bits,
				       .load_ppm = sc->group[0].load_ppm};
		sim_exp_melo_stats(x, &pt[i].m);
		sim_exp_melo_json(x, name, labels, stdout);
		sim_exp_free(x);
	}
	free(sc);
	free(base);
	return runs;
}

/* The point with this mode and loss (and conns / pool / load when not 0). */
static const struct point *
find(const struct point *pt, unsigned n, uint8_t mode, double loss, uint32_t conns,
     uint32_t pool_bits, uint32_t load_ppm)
{
	for (unsigned i = 0; i < n; i++)
		if (pt[i].mode == mode && pt[i].loss == loss && (!conns || pt[i].conns == conns) &&
		    (!pool_bits || pt[i].pool_bits == pool_bits) &&
		    (!load_ppm || pt[i].load_ppm == load_ppm))
			return &pt[i];
	fail_msg("no point mode %u loss %g conns %u pool %u load %u", mode, loss, conns, pool_bits,
		 load_ppm);
	return NULL;
}

static void
fig5a__melo_keeps_goodput_under_loss(void **state)
{
	static const double losses[] = {0, 1e-5, 1e-4, 1e-3, 2e-3, 1e-2, 2e-2};
	static const struct override ov[] = {{"sim", "duration_ms", "20"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("melo-fig5a.ini", ov, SL_ARRAY_SIZE(ov), pt);
	const struct point *m0 = find(pt, n, SL_RECV_MELO, 0, 0, 0, 0);
	const struct point *m1 = find(pt, n, SL_RECV_MELO, 1e-2, 0, 0, 0);
	const struct point *g1 = find(pt, n, SL_RECV_GBN, 1e-2, 0, 0, 0);
	const struct point *n1 = find(pt, n, MODE_GBN_NS3, 1e-2, 0, 0, 0);
	/* packets one base RTT of sending holds: 40 Gbps x (16 us + 2 wire times) / 1064 B */
	const double bdp_pkts = 40e9 * 16.4e-6 / (1064 * 8);
	/* packets one ns-3 NACK interval (500 us) of sending holds at 40 Gbps */
	const double nack_int_pkts = 40e9 * 500e-6 / (1064 * 8);
	double prev_ratio = 0, prev_ratio_ns3 = 0;

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(losses); i++) {
		const struct point *m = find(pt, n, SL_RECV_MELO, losses[i], 0, 0, 0);
		const struct point *g = find(pt, n, SL_RECV_GBN, losses[i], 0, 0, 0);
		const struct point *g3 = find(pt, n, MODE_GBN_NS3, losses[i], 0, 0, 0);
		double p = losses[i];
		double ratio = m->m.goodput_gbps / g->m.goodput_gbps;
		double ratio_ns3 = m->m.goodput_gbps / g3->m.goodput_gbps;
		double model = m0->m.goodput_gbps / (1 + p * bdp_pkts);
		/*
		 * ns-3 go-back-N: a loss costs one round trip, and when the resend of RCV.NXT is
		 * lost too (probability p) the NACK waits a whole interval before it repeats.
		 */
		double model_ns3 = m0->m.goodput_gbps / (1 + p * (bdp_pkts + p * nack_int_pkts));

		printf("{\"figure\": \"5a\", \"loss\": %g, \"melo_gbps\": %.4f, \"gbn_gbps\": "
		       "%.4f, \"ratio\": %.3f, \"gbn_model_gbps\": %.4f, \"gbn_ns3_gbps\": %.4f, "
		       "\"ratio_ns3\": %.3f, \"gbn_ns3_model_gbps\": %.4f}\n",
		       p, m->m.goodput_gbps, g->m.goodput_gbps, ratio, model, g3->m.goodput_gbps,
		       ratio_ns3, model_ns3);
		/* RoCE style never repeats a NACK; the ns-3 interval is what repeats them */
		assert_int_equal(g->m.rx.nacks_repeated, 0);
		if (p >= 1e-3) {
			assert_true(ratio > 1);
			assert_true(ratio >= prev_ratio);
			prev_ratio = ratio;
			assert_true(g->m.goodput_gbps > 0.85 * model &&
				    g->m.goodput_gbps < 1.15 * model);
			assert_true(ratio_ns3 > 1);
			assert_true(ratio_ns3 >= prev_ratio_ns3);
			prev_ratio_ns3 = ratio_ns3;
			assert_true(g3->m.goodput_gbps > 0.85 * model_ns3 &&
				    g3->m.goodput_gbps < 1.15 * model_ns3);
		}
		if (losses[i] > 0 && m->m.rto_fired == 0) {
			/* no retransmission lost: every resend filled a hole, one NACK per hole */
			assert_int_equal(m->m.rx.rtx_redundant_pkts, 0);
			assert_int_equal(m->m.segs_rtx, m->m.tx.pkts_marked);
			assert_int_equal(m->m.nacks, m->m.rx.holes_formed);
		}
	}
	printf("{\"figure\": \"5a\", \"melo_keeps_at_1pct\": %.4f, \"melo_over_gbn_at_1pct\": "
	       "%.3f, \"melo_over_gbn_ns3_at_1pct\": %.3f, \"paper_keeps\": 0.990, "
	       "\"paper_ratio\": 14.02}\n",
	       m1->m.goodput_gbps / m0->m.goodput_gbps, m1->m.goodput_gbps / g1->m.goodput_gbps,
	       m1->m.goodput_gbps / n1->m.goodput_gbps);
	assert_true(m0->m.goodput_gbps > 37);
	assert_true(m1->m.goodput_gbps >= 0.95 * m0->m.goodput_gbps);
	/*
	 * The paper's ">= 10x go-back-N at 1%" is not asserted against either baseline: the
	 * NS3-faithful one (the DCQCN ns-3 code's NACK interval, go-back-to-N, no chunks) loses
	 * p x 500 us of sending more per loss than RoCE style, not the ~13 round trips the
	 * paper's 7% implies (docs/sim.md, "MELO's experiments"). Asserted instead: it does
	 * repeat NACKs, and it is the slower of the two go-back-Ns under loss.
	 */
	assert_true(n1->m.rx.nacks_repeated > 0);
	assert_true(n1->m.goodput_gbps < g1->m.goodput_gbps);
}

static void
fig6b__pool_usage_falls_with_connections(void **state)
{
	static const struct override ov[] = {{"sim", "duration_ms", "10"},
					     {"sweep", "flows.count", "1 20"},
					     {"sweep", "sim.loss", "0.001 0.02"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("melo-fig6b.ini", ov, SL_ARRAY_SIZE(ov), pt);
	const struct point *one_lo = find(pt, n, SL_RECV_MELO, 0.001, 1, 0, 0);
	const struct point *one_hi = find(pt, n, SL_RECV_MELO, 0.02, 1, 0, 0);
	const struct point *many_lo = find(pt, n, SL_RECV_MELO, 0.001, 20, 0, 0);
	const struct point *many_hi = find(pt, n, SL_RECV_MELO, 0.02, 20, 0, 0);

	(void)state;
	assert_int_equal(one_lo->m.pool_blocks, 128);
	/* one connection: its bitmap spans a whole BDP (paper: 96.9% at every loss) */
	assert_true(one_lo->m.pool_peak_blocks >= 0.9 * 128);
	assert_true(one_hi->m.pool_peak_blocks >= 0.9 * 128);
	/* 20 connections share the BDP: at low loss few hold bits at once */
	assert_true(many_lo->m.pool_peak_blocks < one_lo->m.pool_peak_blocks / 2);
	assert_true(many_lo->m.pool_mean_frac < one_lo->m.pool_mean_frac);
	/* more loss, more holes held at once */
	assert_true(many_hi->m.pool_mean_frac > many_lo->m.pool_mean_frac);
	assert_true(one_hi->m.pool_mean_frac > one_lo->m.pool_mean_frac);
}

static void
fig6b__larger_pool_ends_exhaustion(void **state)
{
	static const struct override ov[] = {{"sim", "duration_ms", "10"},
					     {"sweep", "receiver.pool_bits", "512 1024 2048"},
					     {"sweep", "flows.count", "20"},
					     {"sweep", "sim.loss", "0.02"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("melo-fig6b-pool.ini", ov, SL_ARRAY_SIZE(ov), pt);
	const struct point *p512 = find(pt, n, SL_RECV_MELO, 0.02, 20, 512, 0);
	const struct point *p1k = find(pt, n, SL_RECV_MELO, 0.02, 20, 1024, 0);
	const struct point *p2k = find(pt, n, SL_RECV_MELO, 0.02, 20, 2048, 0);

	(void)state;
	assert_true(p512->m.rx.drop_pool_exhausted > 0);
	assert_true(p1k->m.rx.drop_pool_exhausted <= p512->m.rx.drop_pool_exhausted);
	assert_int_equal(p2k->m.rx.drop_pool_exhausted, 0);
	assert_true(p2k->m.goodput_gbps > p512->m.goodput_gbps);
	assert_true(p2k->m.goodput_gbps >= p1k->m.goodput_gbps);
}

static void
fig5b__melo_cuts_tail_fct(void **state)
{
	static const struct override ov[] = {
		{"sim", "duration_ms", "150"},
		{"flows.*", "count", "40"},
		{"sweep", "flows.*.load", "0.5 0.8"},
	};
	static const uint32_t loads[] = {500000, 800000};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("melo-fig5b.ini", ov, SL_ARRAY_SIZE(ov), pt);

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(loads); i++) {
		const struct point *m = find(pt, n, SL_RECV_MELO, 0.01, 160, 0, loads[i]);
		const struct point *g = find(pt, n, SL_RECV_GBN, 0.01, 160, 0, loads[i]);

		printf("{\"figure\": \"5b\", \"load\": %.1f, \"melo_p99_us\": %.1f, "
		       "\"gbn_p99_us\": "
		       "%.1f, \"gbn_over_melo\": %.3f, \"paper_ratio\": \"2.11-3.11\"}\n",
		       loads[i] / 1e6, m->m.fct_p99_us, g->m.fct_p99_us,
		       g->m.fct_p99_us / m->m.fct_p99_us);
		assert_int_equal(m->m.fct_unfinished, 0);
		assert_int_equal(m->m.fct_done, 160);
		assert_true(m->m.fct_p99_us < g->m.fct_p99_us);
	}
}

/*
 * One flow of segs segments of melo-fig5a.ini with scripted drops in mode: "melo" or "gbn"
 * (the ini's window and RTO), or a whole tuple of the ini's mode dimension (FIG5A_MODE_KEYS).
 */
static struct point
scripted_segs(const char *mode, const char *drops, const char *segs)
{
	char tuple[64];
	struct override ov[] = {
		{"sim", "duration_ms", "5"}, {"flows", "size_segs", segs},
		{"sim", "drop", drops},      {"sweep", FIG5A_MODE_KEYS, tuple},
		{"sweep", "sim.loss", "0"},
	};
	struct point pt[MAX_POINTS];

	if (strchr(mode, ','))
		snprintf(tuple, sizeof(tuple), "%s", mode);
	else
		snprintf(tuple, sizeof(tuple), "%s,%s,0,1024,65.536", mode, mode);
	assert_int_equal(sweep("melo-fig5a.ini", ov, SL_ARRAY_SIZE(ov), pt), 1);
	assert_int_equal(pt[0].m.fct_done, 1); /* every segment acked */
	assert_int_equal(pt[0].m.rx.delivered_pkts, strtoul(segs, NULL, 10));
	return pt[0];
}

static struct point
scripted(const char *mode, const char *drops)
{
	return scripted_segs(mode, drops, "2000");
}

static void
scripted__melo_resends_only_holes(void **state)
{
	struct point one = scripted("melo", "0:100:0"), two = scripted("melo", "0:100:0, 0:150:0");

	(void)state;
	assert_int_equal(one.m.segs_rtx, 1);
	assert_int_equal(one.m.nacks, 1);
	assert_int_equal(one.m.rto_fired, 0);
	assert_int_equal(one.m.rx.rtx_redundant_pkts, 0);
	/* the second NACK repeats the first hole, still open one round trip later */
	assert_int_equal(two.m.segs_rtx, 2);
	assert_int_equal(two.m.nacks, 2);
	assert_int_equal(two.m.tx.pkts_marked, 2);
	assert_int_equal(two.m.tx.pkts_repeated, 1);
}

static void
scripted__lost_resend_waits_for_rto(void **state)
{
	struct point p = scripted("melo", "0:100:0, 0:100:1");

	(void)state;
	assert_int_equal(p.m.nacks, 1); /* no new hole: the lost resend is not NACKed again */
	assert_int_equal(p.m.rto_fired, 1);
	assert_true(p.m.segs_rtx > 2); /* the RTO resends from the front */
	assert_true(p.m.rx.rtx_redundant_pkts > 0);
}

static void
scripted__gbn_rewinds(void **state)
{
	struct point p = scripted("gbn", "0:100:0");

	(void)state;
	assert_int_equal(p.m.nacks, 1);
	assert_int_equal(p.m.rto_fired, 0);
	/* everything sent in the round trip after the loss was dropped and is sent again */
	assert_true(p.m.rx.drop_out_of_order > 50);
	assert_int_equal(p.m.segs_rtx, p.m.rx.drop_out_of_order + 1);
}

/*
 * gbn-ns3 with its resend lost too and the RTO out of the way (100 ms): nothing is NACKed until
 * the 500 us interval has passed, then the repeated NACK rewinds the sender. 4000 segments, so
 * that data still arrives when the interval ends (ns-3 NACKs only on an arrival).
 */
static void
scripted__gbn_ns3_repeats_nack_after_interval(void **state)
{
	struct point p = scripted_segs("gbn,gbn,500,4096,100000", "0:100:0, 0:100:1", "4000");

	(void)state;
	assert_int_equal(p.mode, MODE_GBN_NS3);
	assert_int_equal(p.m.rto_fired, 0);
	assert_int_equal(p.m.nacks, 2);
	assert_int_equal(p.m.rx.nacks_repeated, 1);
	/* the repeat came an interval later: the sender had sent that much past the loss */
	assert_true(p.m.segs_rtx > 40e9 * 500e-6 / (1064 * 8));
}

static void
librecv__every_program_delivers(void **state)
{
	char path[1024], err[512];
	struct sim_scenario *sc = malloc(sizeof(*sc));

	(void)state;
	assert_non_null(sc);
	snprintf(path, sizeof(path), "%s/programs.ini", scenario_dir);
	/* Every registered program; the receiver recovers selectively except for RoCE's gbn. */
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		const char *prog = sl_proto_at(i)->name;
		const char *set[][3] = {
			{"receiver", "impl", "lib"},
			{"flows.a", "proto", prog},
			{"flows.b", "proto", prog},
			{"flows.*", "recovery", strcmp(prog, "gbn") == 0 ? "gbn" : "melo"},
		};
		uint64_t rx = 0, rtx = 0;
		struct sim_exp *x;

		sim_scenario_defaults(sc);
		if (sim_scenario_load(sc, path, err, sizeof(err)))
			fail_msg("%s", err);
		for (size_t k = 0; k < SL_ARRAY_SIZE(set); k++)
			if (sim_scenario_set(sc, set[k][0], set[k][1], set[k][2], err, sizeof(err)))
				fail_msg("%s", err);
		x = sim_exp_create(sc);
		assert_non_null(x);
		assert_int_equal(sim_exp_run(x), 0);
		assert_clean_run(x, sc);
		for (uint32_t fl = 0; fl < sim_exp_nflows(x); fl++) {
			const struct sim_flow_result *r = sim_exp_flow(x, fl);

			if (r->done_ns == SIM_NEVER ||
			    r->rx_bytes != r->spec.size_segs * r->spec.fc.seg_bytes)
				fail_msg("%s over lib/recv: flow %u got %" PRIu64 " bytes", prog,
					 fl, r->rx_bytes);
			rx += r->rx_bytes;
			rtx += r->st.segs_rtx;
		}
		printf("{\"test\": \"programs_over_librecv\", \"proto\": \"%s\", \"flows\": %u, "
		       "\"rx_bytes\": %" PRIu64 ", \"segs_rtx\": %" PRIu64 "}\n",
		       prog, sim_exp_nflows(x), rx, rtx);
		sim_exp_free(x);
	}
	free(sc);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fig5a__melo_keeps_goodput_under_loss),
		cmocka_unit_test(fig6b__pool_usage_falls_with_connections),
		cmocka_unit_test(fig6b__larger_pool_ends_exhaustion),
		cmocka_unit_test(fig5b__melo_cuts_tail_fct),
		cmocka_unit_test(scripted__melo_resends_only_holes),
		cmocka_unit_test(scripted__lost_resend_waits_for_rto),
		cmocka_unit_test(scripted__gbn_rewinds),
		cmocka_unit_test(scripted__gbn_ns3_repeats_nack_after_interval),
		cmocka_unit_test(librecv__every_program_delivers),
	};

	if (argc > 1)
		scenario_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
