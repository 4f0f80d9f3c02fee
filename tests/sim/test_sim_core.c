/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for the simulator itself (sim_core.c, sim_recv.c): event order, link timing, queue
 * limits, trimming, ECN, PFC, scripted drops and the reference receiver's answers. A scripted
 * sender puts given packets on host 0's link; a capturing receiver records what host 1 gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sim.h"
#include "sim_recv.h"

#define MAXP 64

struct script {
	uint32_t n, next;  /**< packets to send, next one */
	uint32_t len;      /**< payload bytes */
	uint64_t start_ns; /**< first packet not before this */
	uint32_t ctrl_rx[SIM_PKT_NTYPES];
	struct sim_pkt ctrl[MAXP]; /**< control packets received */
	uint32_t nctrl;
};

static bool
script_next(void *ctx, uint64_t now_ns, struct sim_pkt *p)
{
	struct script *sc = ctx;

	if (sc->next == sc->n || now_ns < sc->start_ns)
		return false;
	p->flow = 0;
	p->dst = 1;
	p->seq = sc->next++;
	p->len_bytes = sc->len;
	p->ts_ns = now_ns;
	return true;
}

static uint64_t
script_next_ns(void *ctx, uint64_t now_ns)
{
	struct script *sc = ctx;

	(void)now_ns;
	return sc->next < sc->n ? sc->start_ns : SIM_NEVER;
}

static void
script_input(void *ctx, const struct sim_pkt *p, uint64_t now_ns)
{
	struct script *sc = ctx;

	(void)now_ns;
	sc->ctrl_rx[p->type]++;
	if (sc->nctrl < MAXP)
		sc->ctrl[sc->nctrl++] = *p;
}

static const struct sim_sender_ops script_ops = {script_next, script_next_ns, script_input};

struct capture {
	uint32_t n;
	uint64_t t_ns[MAXP];
	struct sim_pkt p[MAXP];
};

static void
capture_input(void *ctx, struct sim_pkt *d, uint64_t now_ns)
{
	struct capture *c = ctx;

	if (c->n < MAXP) {
		c->t_ns[c->n] = now_ns;
		c->p[c->n++] = *d;
	}
}

static const struct sim_receiver_ops capture_ops = {capture_input};

/* Two hosts, 10 Gbps, 1 us links, 64 B headers; a fast sender has a 100 Gbps uplink. */
static void
conf2(struct sim_conf *c, bool fast_sender)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->nhosts = 2;
	c->hdr_bytes = 64;
	c->ctrl_bytes = 64;
	for (int i = 0; i < 2; i++) {
		c->host_port[i] =
			(struct sim_port_conf){.rate_bps = 10 * SL_BPS_PER_GBPS, .prop_ns = 1000};
		c->switch_port[i] = c->host_port[i];
	}
	if (fast_sender)
		c->host_port[0].rate_bps = 100 * SL_BPS_PER_GBPS;
}

/* Play the script from its start for 1 ms; the caller frees the simulation. */
static struct sim *
run_script(const struct sim_conf *c, struct script *sc, struct capture *cap)
{
	struct sim *s = sim_create(c);

	assert_non_null(s);
	sc->next = 0;
	memset(cap, 0, sizeof(*cap));
	sim_set_sender(s, 0, &script_ops, sc);
	sim_set_receiver(s, 1, &capture_ops, cap);
	sim_host_kick(s, 0);
	sim_run(s, SL_NS_PER_MS);
	return s;
}

static int order[8], norder;

static void
record(struct sim *s, void *obj, uint64_t arg)
{
	(void)s;
	(void)obj;
	order[norder++] = (int)arg;
}

static void
sim_schedule__same_instant_runs_in_scheduling_order(void **state)
{
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, false);
	s = sim_create(&c);
	norder = 0;
	sim_schedule(s, 20, record, NULL, 3);
	sim_schedule(s, 10, record, NULL, 1);
	sim_schedule(s, 20, record, NULL, 4);
	sim_schedule(s, 10, record, NULL, 2);
	assert_int_equal(sim_run(s, 100), 4);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 3);
	assert_int_equal(order[3], 4);
	assert_int_equal(sim_now(s), 100);
	sim_free(s);
}

static void
sim_port__serialization_and_propagation(void **state)
{
	struct script sc = {.n = 3, .len = 1000};
	struct capture cap = {0};
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, false);
	s = run_script(&c, &sc, &cap);
	assert_int_equal(cap.n, 3);
	/* 1064 B at 10 Gbps = 851.2 -> 852 ns per hop, twice, plus two 1 us hops */
	assert_int_equal(cap.t_ns[0], 852 + 1000 + 852 + 1000);
	assert_int_equal(cap.t_ns[1] - cap.t_ns[0], 852);
	assert_int_equal(cap.p[2].seq, 2);
	assert_int_equal(sim_port_stats(s, 1, true)->tx_pkts, 3);
	sim_free(s);
}

static void
sim_port__queue_limit_drops_or_trims(void **state)
{
	struct script sc = {.n = 10, .len = 1000};
	struct capture cap = {0};
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, false);
	c.host_port[0].rate_bps = 100 * SL_BPS_PER_GBPS; /* arrives 10x faster than it leaves */
	c.switch_port[1].limit_bytes = 2 * 1064;
	s = run_script(&c, &sc, &cap);
	assert_true(sim_stats(s)->drops_queue >= 6);
	assert_int_equal(cap.n + sim_stats(s)->drops_queue, 10);
	sim_free(s);

	c.switch_port[1].trim = true;
	s = run_script(&c, &sc, &cap);
	assert_int_equal(cap.n, 10); /* nothing lost: the overflow arrives as headers */
	assert_int_equal(sim_stats(s)->drops_queue, 0);
	assert_true(sim_stats(s)->trims >= 6);
	for (uint32_t i = 0, trimmed = 0; i < cap.n; i++) {
		trimmed += cap.p[i].trimmed;
		assert_int_equal(cap.p[i].len_bytes, cap.p[i].trimmed ? 0 : 1000);
		if (i == cap.n - 1)
			assert_int_equal(trimmed, sim_stats(s)->trims);
	}
	sim_free(s);
}

static void
sim_port__ecn_step_marks_above_k(void **state)
{
	struct script sc = {.n = 10, .len = 1000};
	struct capture cap = {0};
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, true);
	c.switch_port[1].ecn_kmin_bytes = c.switch_port[1].ecn_kmax_bytes = 3 * 1064;
	s = run_script(&c, &sc, &cap);
	assert_int_equal(cap.n, 10);
	/* packet 0 goes straight on the wire; packet i finds i - 1 queued: above K from i = 5 */
	for (uint32_t i = 0; i < cap.n; i++)
		assert_int_equal(cap.p[i].ecn_ce, i >= 5 ? 1 : 0);
	sim_free(s);
}

static void
sim_port__pfc_pauses_the_sender(void **state)
{
	struct script sc = {.n = 60, .len = 1000};
	struct capture cap = {0};
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, true);
	c.host_port[0].pfc_xoff_bytes = 8 * 1064;
	c.host_port[0].pfc_xon_bytes = 4 * 1064;
	/* headroom: xoff plus what arrives during the PAUSE's 1 us trip and the 1 us already on
	 * the wire (~12 packets each at 100 Gbps) */
	c.switch_port[1].limit_bytes = 40 * 1064;
	s = run_script(&c, &sc, &cap);
	assert_int_equal(sim_stats(s)->drops_queue, 0); /* lossless: PFC held the sender */
	assert_true(sim_port_stats(s, 0, false)->pfc_pauses > 0);
	assert_true(sim_port_stats(s, 1, true)->max_q_bytes < 40 * 1064);
	assert_int_equal(cap.n, 60);
	sim_free(s);

	c.host_port[0].pfc_xoff_bytes = c.host_port[0].pfc_xon_bytes = 0; /* without PFC */
	s = run_script(&c, &sc, &cap);
	assert_true(sim_stats(s)->drops_queue > 0);
	sim_free(s);
}

static void
sim_impair__scripted_drops(void **state)
{
	struct script sc = {.n = 10, .len = 1000};
	struct capture cap = {0};
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, false);
	c.drops[c.ndrops++] = (struct sim_drop){.flow = 0, .seq = 3, .tx_id = 0};
	c.drops[c.ndrops++] = (struct sim_drop){.nth = 7};
	s = run_script(&c, &sc, &cap);
	assert_int_equal(cap.n, 8);
	assert_int_equal(sim_stats(s)->drops_scripted, 2);
	for (uint32_t i = 0; i < cap.n; i++)
		assert_true(cap.p[i].seq != 3 && cap.p[i].seq != 6);
	sim_free(s);
}

static void
sim_recv__acks_sack_cnp_and_ndp_pulls(void **state)
{
	struct script sc = {.n = 6, .len = 1000};
	struct sim_recv_conf rc = {.nflows = 1, .cnp_interval_ns = 50000, .ndp = true};
	struct sim_recv *r;
	struct sim_conf c;
	struct sim *s;

	(void)state;
	conf2(&c, true);
	c.drops[c.ndrops++] = (struct sim_drop){.flow = 0, .seq = 1, .tx_id = 0};
	c.switch_port[1].ecn_kmin_bytes = c.switch_port[1].ecn_kmax_bytes = 1;
	c.switch_port[1].limit_bytes = 3 * 1064;
	c.switch_port[1].trim = true;
	s = sim_create(&c);
	r = sim_recv_create(s, &rc);
	assert_int_equal(sim_recv_add_flow(r, 0, 1000), 0);
	sim_set_sender(s, 0, &script_ops, &sc);
	sim_set_receiver(s, 1, &sim_recv_ops, r);
	sim_host_kick(s, 0);
	sim_run(s, SL_NS_PER_MS);
	/* seq 1 dropped; the queue holds 3, so some of 2..5 are trimmed: NACK + pull each */
	assert_int_equal(sc.ctrl_rx[SIM_PKT_ACK] + sc.ctrl_rx[SIM_PKT_NACK], 5);
	assert_int_equal(sc.ctrl_rx[SIM_PKT_PULL], 5);
	assert_int_equal(sc.ctrl_rx[SIM_PKT_CNP], 1); /* marked twice or more, one CNP per 50 us */
	assert_true(sc.ctrl_rx[SIM_PKT_NACK] > 0);
	for (uint32_t i = 0; i < sc.nctrl; i++) {
		const struct sim_pkt *p = &sc.ctrl[i];

		assert_int_equal(p->cumack, 1); /* segment 1 never arrived */
		if (p->type == SIM_PKT_ACK && p->seq > 1)
			assert_true(p->seq >= p->cumack); /* the SACK block */
		if (p->type == SIM_PKT_PULL && i > 0)
			assert_int_equal(p->pull_bytes, 1000);
	}
	assert_int_equal(sim_recv_flow(r, 0)->segs, sc.ctrl_rx[SIM_PKT_ACK]);
	sim_recv_free(r);
	sim_free(s);
}

static void
sim_create__rejects_bad_configuration(void **state)
{
	struct sim_conf c;

	(void)state;
	conf2(&c, false);
	c.nhosts = 0;
	assert_null(sim_create(&c));
	conf2(&c, false);
	c.switch_port[1].rate_bps = 0;
	assert_null(sim_create(&c));
	conf2(&c, false);
	c.host_port[0].pfc_xoff_bytes = 10;
	c.host_port[0].pfc_xon_bytes = 20;
	assert_null(sim_create(&c));
	conf2(&c, false);
	c.loss = 1.5;
	assert_null(sim_create(&c));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_schedule__same_instant_runs_in_scheduling_order),
		cmocka_unit_test(sim_port__serialization_and_propagation),
		cmocka_unit_test(sim_port__queue_limit_drops_or_trims),
		cmocka_unit_test(sim_port__ecn_step_marks_above_k),
		cmocka_unit_test(sim_port__pfc_pauses_the_sender),
		cmocka_unit_test(sim_impair__scripted_drops),
		cmocka_unit_test(sim_recv__acks_sack_cnp_and_ndp_pulls),
		cmocka_unit_test(sim_create__rejects_bad_configuration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
