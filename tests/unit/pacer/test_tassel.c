/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/pacer/tassel.c: exact WF2Q+ times, finish-time order among eligible packets,
 * 64-bit times, rate changes from the next packet, adaptive batching per decision, the
 * packet-tier bound W, the measured lookahead and catch-up after a stall of the caller. The
 * paper's experiments are in test_experiments.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "pacer_test_util.h"

static struct sl_pacer *
one_flow(uint64_t rate_bps, uint32_t npkts, uint32_t len)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pacer *p = sl_pacer_create(&c);

	assert_non_null(p);
	assert_int_equal(sl_pacer_set_rate(p, 0, rate_bps), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, npkts, len), 0);
	return p;
}

static void
tassel_dequeue__wf2q_times_have_no_drift(void **state)
{
	/* 1000 B at 7 Mbps: 1142857.142857... ns apart; packet i leaves at floor(i * that). */
	struct sl_pacer *p = one_flow(7 * SL_BPS_PER_MBPS, 2000, 1000);
	struct sl_pkt *out = calloc(2000, sizeof(*out));

	(void)state;
	assert_int_equal(test_drain(p, 0, out, 2000, UINT64_MAX - 1), 2000);
	for (uint64_t i = 0; i < 2000; i++)
		assert_int_equal(out[i].tx_ns, i * 8000 * SL_NS_PER_S / (7 * SL_BPS_PER_MBPS));
	free(out);
	sl_pacer_free(p);
}

static void
tassel_dequeue__times_are_64_bit(void **state)
{
	/* 9000 B at 100 Kbps: 720 ms apart; the tenth packet is past 2^32 ns. */
	struct sl_pacer *p = one_flow(SL_PACER_RATE_MIN_BPS, 10, 9000);
	struct sl_pkt out[10];

	(void)state;
	assert_int_equal(test_drain(p, 0, out, 10, UINT64_MAX - 1), 10);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(out[i].tx_ns, i * 720 * SL_NS_PER_MS);
	assert_true(out[9].tx_ns > UINT32_MAX);
	sl_pacer_free(p);
}

static void
tassel_dequeue__smallest_finish_first_among_eligible(void **state)
{
	/*
	 * Flow 0 (1500 B at 1 Gbps: F = 12 us) and flow 1 (100 B at 1 Gbps: F = 0.8 us) start
	 * together; the link is held by flow 2's jumbo frame, so both are eligible when it frees
	 * and the smaller finish time leaves first although flow 0 was backlogged first.
	 */
	struct sl_pacer_conf c = test_conf(NULL, 3);
	struct sl_pacer *p = sl_pacer_create(&c);
	struct sl_pkt out[3];

	(void)state;
	for (uint32_t f = 0; f < 3; f++)
		assert_int_equal(sl_pacer_set_rate(p, f, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 2, 1, 9000), 0);
	assert_int_equal(sl_pacer_dequeue_burst(p, 0, out, 1), 1);
	assert_int_equal(out[0].flow, 2);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 1500), 0);
	assert_int_equal(sl_pacer_backlog(p, 1, 1, 100), 0);
	assert_int_equal(test_drain(p, 0, out, 2, SL_NS_PER_S), 2);
	assert_int_equal(out[0].flow, 1);
	assert_int_equal(out[0].tx_ns, 720); /* 9000 B at 100 Gbps */
	assert_int_equal(out[1].flow, 0);
	assert_int_equal(out[1].tx_ns, 728); /* after 100 B at 100 Gbps */
	sl_pacer_free(p);
}

static void
tassel_dequeue__finish_order_with_many_eligible(void **state)
{
	/*
	 * 200 flows of one 1000 B packet at rates k x 100 Mbps, backlogged in a shuffled order
	 * behind a jumbo frame: all are eligible when the link frees (S = 0) and must leave by
	 * F = 80 us / k, the fastest first; more than the sorted run ahead of the heap holds.
	 */
	enum { N = 200 };
	struct sl_pacer_conf c = test_conf(NULL, N + 1);
	struct sl_pacer *p = sl_pacer_create(&c);
	struct sl_pkt out[N];
	uint32_t order[N];

	(void)state;
	for (uint32_t f = 0; f < N; f++) {
		order[f] = f;
		assert_int_equal(sl_pacer_set_rate(p, f, (f + 1) * 100 * SL_BPS_PER_MBPS), 0);
	}
	for (uint32_t f = N - 1, x = 12345; f > 0; f--) { /* Fisher-Yates with an LCG */
		uint32_t j, tmp;

		x = x * 1103515245u + 12345u;
		j = (x >> 8) % (f + 1);
		tmp = order[f];
		order[f] = order[j];
		order[j] = tmp;
	}
	assert_int_equal(sl_pacer_set_rate(p, N, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, N, 1, 9000), 0);
	assert_int_equal(sl_pacer_dequeue_burst(p, 0, out, 1), 1);
	for (uint32_t k = 0; k < N; k++)
		assert_int_equal(sl_pacer_backlog(p, order[k], 1, 1000), 0);
	assert_int_equal(test_drain(p, 0, out, N, SL_NS_PER_S), N);
	for (uint32_t k = 0; k < N; k++) {
		assert_int_equal(out[k].flow, N - 1 - k);
		assert_int_equal(out[k].tx_ns, 720 + 80 * k); /* back to back after the jumbo */
	}
	sl_pacer_free(p);
}

static void
tassel_set_rate__applies_from_next_packet(void **state)
{
	struct sl_pacer *p = one_flow(SL_BPS_PER_GBPS, 4, 1250); /* 10 us apart */
	struct sl_pkt out[4];

	(void)state;
	assert_int_equal(test_drain(p, 0, out, 2, SL_NS_PER_S), 2);
	assert_int_equal(out[1].tx_ns, 10000);
	/* Packet 2 was given S = 20 us with the old rate; packet 3 gets the new rate. */
	assert_int_equal(sl_pacer_set_rate(p, 0, 2 * SL_BPS_PER_GBPS), 0);
	assert_int_equal(test_drain(p, 0, out + 2, 2, SL_NS_PER_S), 2);
	assert_int_equal(out[2].tx_ns, 20000);
	assert_int_equal(out[3].tx_ns, 25000);
	sl_pacer_free(p);
}

static void
tassel_admit__batches_per_decision(void **state)
{
	/* 10 Gbps, 1000 B, L = 8 us: N = 10 packets per decision, so 100 packets take ~10 sorts. */
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pkt out[100];
	struct sl_pacer *p;

	(void)state;
	c.lookahead_ns = 8000;
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_lookahead_ns(p), 8000);
	assert_int_equal(sl_pacer_set_rate(p, 0, 10 * SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 100, 1000), 0);
	assert_int_equal(test_drain(p, 0, out, 100, SL_NS_PER_S), 100);
	assert_in_range(sl_pacer_stat(p, decisions), 10, 12);
	assert_int_equal(out[99].tx_ns, 99 * 800);
	sl_pacer_free(p);
	/* Forced N = 1: one sort per packet. */
	c.batch_max = 1;
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_set_rate(p, 0, 10 * SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 100, 1000), 0);
	assert_int_equal(test_drain(p, 0, out, 100, SL_NS_PER_S), 100);
	assert_int_equal(sl_pacer_stat(p, decisions), 100);
	sl_pacer_free(p);
}

static void
tassel_admit__packet_tier_bounded_by_w(void **state)
{
	/* 2000 flows due at once with W = 64: admissions wait (counted), nothing is lost. */
	struct sl_pacer_conf c = test_conf(NULL, 2000);
	struct sl_pkt *out = calloc(2000, sizeof(*out));
	struct sl_pacer *p;

	(void)state;
	c.imminent_max = 64;
	p = sl_pacer_create(&c);
	for (uint32_t f = 0; f < 2000; f++) {
		assert_int_equal(sl_pacer_set_rate(p, f, 10 * SL_BPS_PER_MBPS), 0);
		assert_int_equal(sl_pacer_backlog(p, f, 1, 64), 0);
	}
	assert_int_equal(test_drain(p, 0, out, 2000, SL_NS_PER_S), 2000);
	assert_true(sl_pacer_stat(p, imminent_full) > 0);
	for (unsigned i = 1; i < 2000; i++)
		assert_true(out[i].tx_ns >= out[i - 1].tx_ns);
	free(out);
	sl_pacer_free(p);
}

static void
tassel_lookahead__measured_from_call_period(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pacer *p = sl_pacer_create(&c);
	struct sl_pkt out[1];

	(void)state;
	assert_int_equal(sl_pacer_lookahead_ns(p), SL_NS_PER_US); /* floor */
	for (uint64_t t = 1; t <= 256; t++)
		(void)sl_pacer_dequeue_burst(p, t * 5000, out, 1);
	assert_int_equal(sl_pacer_lookahead_ns(p), 10000); /* 2 x 5 us */
	for (uint64_t t = 257; t <= 512; t++)
		(void)sl_pacer_dequeue_burst(p, t * 100000, out, 1);
	assert_int_equal(sl_pacer_lookahead_ns(p), 20 * SL_NS_PER_US); /* L_max */
	sl_pacer_free(p);
}

static void
tassel_admit__survives_lookahead_changes(void **state)
{
	/*
	 * The measured L moves between 1 us and 20 us as the call period changes, while flows
	 * go idle and come back (re-entering the calendar behind its cursor): every packet still
	 * comes out, once, never after the call that returns it.
	 */
	struct sl_pacer_conf c = test_conf(NULL, 50);
	struct sl_pacer *p = sl_pacer_create(&c);
	uint32_t left[50];
	struct sl_pkt out[64];
	uint64_t now = 0, total = 0;

	(void)state;
	for (uint32_t f = 0; f < 50; f++) {
		assert_int_equal(sl_pacer_set_rate(p, f, (f + 1) * 20 * SL_BPS_PER_MBPS), 0);
		left[f] = 200;
	}
	for (unsigned call = 0; total < 50 * 200 && call < 2000000; call++) {
		unsigned n;

		for (uint32_t f = 0; f < 50; f++) {
			struct sl_pacer_flow_stats st;

			assert_int_equal(sl_pacer_flow_stats_get(p, f, &st), 0);
			if (st.queued_pkts == 0 && left[f] > 0) { /* back from idle */
				assert_int_equal(sl_pacer_backlog(p, f, 2, 1000), 0);
				left[f] -= 2;
			}
		}
		now += (call / 256) % 2 ? 500 : 50000; /* 256 calls at 50 us, 256 at 0.5 us, ... */
		n = sl_pacer_dequeue_burst(p, now, out, 64);
		for (unsigned i = 0; i < n; i++)
			assert_true(out[i].tx_ns <= now);
		total += n;
	}
	assert_int_equal(total, 50 * 200);
	sl_pacer_free(p);
}

/* What the caller does to the flow during [from_ns, from_ns + 2 ms). */
enum caller_fault {
	STALL, /**< no call at all (a descheduled lcore) */
	HOLD,  /**< calls, but with TX room for one packet per 20 us (a slow peer) */
};

/*
 * The engine's way of feeding a paced flow: at most 11 packets announced and not yet released,
 * topped up after every dequeue call. One flow at 1 Gbps, 1250 B (10 us apart), called every
 * us from 0 to end_ns, the fault at from_ns. Returns the packets released (their times in out,
 * the pacer's counters in st); none may leave before its place in the schedule (i x 10 us).
 */
static unsigned
fed_run(uint64_t catchup_ns, enum caller_fault fault, uint64_t from_ns, uint64_t end_ns,
	struct sl_pkt *out, unsigned cap, struct sl_pacer_stats *st)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pacer *p;
	unsigned n = 0, announced = 0;

	c.catchup_ns = catchup_ns;
	p = sl_pacer_create(&c);
	assert_non_null(p);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	for (uint64_t t = 0; t < end_ns && n < cap; t += 1000) {
		unsigned room = cap - n;

		if (t >= from_ns && t < from_ns + 2 * SL_NS_PER_MS) {
			if (fault == STALL)
				continue;
			room = t / 1000 % 20 == 0;
		}
		n += sl_pacer_dequeue_burst(p, t, out + n, room);
		if (announced - n < 11) {
			assert_int_equal(sl_pacer_backlog(p, 0, 11 - (announced - n), 1250), 0);
			announced = n + 11;
		}
	}
	for (unsigned i = 0; i < n; i++)
		assert_true(out[i].tx_ns >= (uint64_t)i * 10000);
	sl_pacer_stats_get(p, st);
	sl_pacer_free(p);
	return n;
}

static void
tassel_catchup__makes_up_a_stall(void **state)
{
	struct sl_pkt *out = calloc(2000, sizeof(*out));
	const uint64_t at = 3 * SL_NS_PER_MS, end = 10 * SL_NS_PER_MS;
	struct sl_pacer_stats st;

	(void)state;
	/* No stall: packets 0..999 by 10 ms (the 1000th is due at 10 ms itself). */
	assert_int_equal(fed_run(0, STALL, UINT64_MAX / 2, end, out, 2000, &st), 1000);
	/* A 2 ms stall without catch-up: the 11 announced packets go, 189 are lost for good. */
	assert_int_equal(fed_run(0, STALL, at, end, out, 2000, &st), 811);
	/* With 5 ms of catch-up the flow is back on schedule well before 10 ms ... */
	assert_int_equal(fed_run(5 * SL_NS_PER_MS, STALL, at, end, out, 2000, &st), 1000);
	assert_int_equal(out[999].tx_ns, 999 * 10000);
	/* ... and 1 ms of it makes up 1 ms of what the 11 did not: 811 + 100. */
	assert_int_equal(fed_run(SL_NS_PER_MS, STALL, at, end, out, 2000, &st), 911);
	free(out);
}

static void
tassel_catchup__makes_up_packets_held_past_their_time(void **state)
{
	/*
	 * For 2 ms the caller has TX room for half the flow's rate: its admitted packets wait in
	 * the packet tier past their finish times, so its FIFO runs out though it never stopped
	 * sending (the engine announces more only as packets leave). That lag is lateness, not
	 * idling: with catch-up the flow is back on schedule by 10 ms; without, it loses what the
	 * hold kept back, as after a stall: 100 packets less the 11 outstanding, which go late
	 * (811 + 100 left in the hold). The loss is counted as lost catch-up, none as idling.
	 */
	struct sl_pkt *out = calloc(2000, sizeof(*out));
	const uint64_t at = 3 * SL_NS_PER_MS, end = 10 * SL_NS_PER_MS;
	struct sl_pacer_stats st;

	(void)state;
	assert_int_equal(fed_run(5 * SL_NS_PER_MS, HOLD, at, end, out, 2000, &st), 1000);
	assert_int_equal(out[999].tx_ns, 999 * 10000);
	assert_true(st.catchup_restarts > 0);
	assert_int_equal(st.catchup_lost_ns, 0);
	assert_int_equal(st.idle_ns, 0);
	assert_int_equal(fed_run(0, HOLD, at, end, out, 2000, &st), 911);
	assert_int_equal(st.catchup_lost_ns, 89 * 10 * SL_NS_PER_US);
	assert_int_equal(st.idle_ns, 0);
	free(out);
}

static void
tassel_catchup__idling_earns_no_credit(void **state)
{
	/* A flow that runs dry on time and comes back 5 ms later restarts at V: no burst. */
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pkt out[8];
	struct sl_pacer *p;

	(void)state;
	c.catchup_ns = 10 * SL_NS_PER_MS;
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 4, 1250), 0);
	assert_int_equal(test_drain(p, 0, out, 4, SL_NS_PER_S), 4);
	assert_int_equal(out[3].tx_ns, 30000);
	assert_int_equal(sl_pacer_dequeue_burst(p, 5 * SL_NS_PER_MS, out, 8), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 4, 1250), 0);
	assert_int_equal(test_drain(p, 5 * SL_NS_PER_MS, out, 4, SL_NS_PER_S), 4);
	for (uint64_t i = 0; i < 4; i++)
		assert_in_range(out[i].tx_ns, 5 * SL_NS_PER_MS + i * 10000,
				5 * SL_NS_PER_MS + i * 10000 + 1000);
	/* A new flow does not burst either; a catch-up beyond 1 s is refused. */
	sl_pacer_free(p);
	c.catchup_ns = SL_NS_PER_S + 1;
	assert_null(sl_pacer_create(&c));
}

enum flow_owner { SAME_OWNER, NEW_OWNER };

/*
 * One flow at 1 Gbps (1250 B, 10 us apart) that runs dry late: one packet at 0, then nothing
 * until 1 ms (a stall), when the other 19, all due, leave back to back (the last one's F is
 * 200 us). Then it keeps its owner or is handed to a new one (sl_pacer_flow_reset), and, at
 * 2 ms, it has 20 packets more; their departure times in out.
 */
static void
late_then_twenty(enum flow_owner owner, struct sl_pkt *out)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pacer *p;

	c.catchup_ns = 10 * SL_NS_PER_MS;
	p = sl_pacer_create(&c);
	assert_non_null(p);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 20, 1250), 0);
	assert_int_equal(test_drain(p, 0, out, 1, 0), 1);
	assert_int_equal(test_drain(p, SL_NS_PER_MS, out, 19, SL_NS_PER_S), 19);
	assert_int_equal(sl_pacer_stat(p, catchup_restarts), 0);
	if (owner == NEW_OWNER)
		assert_int_equal(sl_pacer_flow_reset(p, 0), 0);
	assert_int_equal(sl_pacer_dequeue_burst(p, 2 * SL_NS_PER_MS, out, 4), 0); /* polled, dry */
	assert_int_equal(sl_pacer_backlog(p, 0, 20, 1250), 0);
	assert_int_equal(test_drain(p, 2 * SL_NS_PER_MS, out, 20, SL_NS_PER_S), 20);
	assert_int_equal(sl_pacer_stat(p, catchup_restarts), owner == NEW_OWNER ? 0 : 1);
	assert_int_equal(sl_pacer_flow_reset(p, 1), -EINVAL);
	sl_pacer_free(p);
}

static void
tassel_catchup__new_owner_starts_afresh(void **state)
{
	struct sl_pkt out[20];

	(void)state;
	/*
	 * The flow's owner keeps its catch-up (the 800 us it was behind when it ran dry, 80
	 * packets): the 20 are behind schedule and go back to back ...
	 */
	late_then_twenty(SAME_OWNER, out);
	assert_true(out[19].tx_ns < 2 * SL_NS_PER_MS + 10000);
	/* ... a new owner (a QP opened in a closed one's slot) starts at V, 10 us apart. */
	late_then_twenty(NEW_OWNER, out);
	for (uint64_t i = 0; i < 20; i++)
		assert_in_range(out[i].tx_ns, 2 * SL_NS_PER_MS + i * 10000,
				2 * SL_NS_PER_MS + i * 10000 + 1000);
}

/*
 * A flow whose first packets come after the pacer was last dequeued long ago (a lane dequeues
 * only when something is due) starts at the caller's clock, not at that last dequeue: told the
 * time (sl_pacer_clock, as the scheduler does before it activates flows), the 100 packets
 * leave 10 us apart from 1 s on. Untold, the flow's schedule would start at 0 and its first
 * packets would all be due at once, up to catchup_ns (100 ms here) of them back to back.
 */
static void
tassel_clock__a_flow_starts_when_the_caller_says(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pkt out[100];

	(void)state;
	c.catchup_ns = 100 * SL_NS_PER_MS;
	for (int told = 0; told < 2; told++) {
		struct sl_pacer *p = sl_pacer_create(&c);

		assert_non_null(p);
		assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
		if (told)
			sl_pacer_clock(p, SL_NS_PER_S);
		assert_int_equal(sl_pacer_backlog(p, 0, 100, 1250), 0);
		assert_int_equal(test_drain(p, SL_NS_PER_S, out, 100, 2 * SL_NS_PER_S), 100);
		if (told)
			for (uint64_t i = 0; i < 100; i++)
				assert_in_range(out[i].tx_ns, SL_NS_PER_S + i * 10000,
						SL_NS_PER_S + i * 10000 + 1000);
		else /* the bug it guards against: all due at 1 s, back to back */
			assert_true(out[99].tx_ns < SL_NS_PER_S + 100000);
		sl_pacer_free(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tassel_dequeue__wf2q_times_have_no_drift),
		cmocka_unit_test(tassel_dequeue__times_are_64_bit),
		cmocka_unit_test(tassel_dequeue__smallest_finish_first_among_eligible),
		cmocka_unit_test(tassel_dequeue__finish_order_with_many_eligible),
		cmocka_unit_test(tassel_set_rate__applies_from_next_packet),
		cmocka_unit_test(tassel_admit__batches_per_decision),
		cmocka_unit_test(tassel_admit__packet_tier_bounded_by_w),
		cmocka_unit_test(tassel_lookahead__measured_from_call_period),
		cmocka_unit_test(tassel_admit__survives_lookahead_changes),
		cmocka_unit_test(tassel_catchup__makes_up_a_stall),
		cmocka_unit_test(tassel_catchup__makes_up_packets_held_past_their_time),
		cmocka_unit_test(tassel_catchup__idling_earns_no_credit),
		cmocka_unit_test(tassel_catchup__new_owner_starts_afresh),
		cmocka_unit_test(tassel_clock__a_flow_starts_when_the_caller_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
