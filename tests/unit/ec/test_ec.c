/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/ec/ec.c: the endpoint-congestion target rule by rule (IACK at acceptance or at
 * processing, standalone DACKs under congestion, DACK + IACK pairs as packets cross the
 * threshold, NACK once per drop episode and the recovery DACKs, EC drops, the fairness knobs,
 * the plain go-back-N target, bad input, selective repeat: holes NACKed by range, IACKs that
 * stop at a hole, the go-back-N fallbacks), and its invariants under seeded random sequences
 * (reference/endpoint-congestion.md, section 6, items 1-4, 7 and 12).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_ec.h"
#include "sl_rng.h"
#include "sl_seq.h"

#define KIB 1024u

static struct sl_ec_action act[4096];
static unsigned nact;
static bool last_stale; /* the packet process_at took was stale */

/* A target of queue_bytes with a threshold_bytes threshold, for 4 connections opened at 0. */
static struct sl_ec *
mk(const struct sl_ec_conf *base, uint32_t queue_bytes, uint32_t threshold_bytes)
{
	struct sl_ec_conf c = *base;
	struct sl_ec *ec;

	c.max_conns = 4;
	c.queue_bytes = queue_bytes;
	c.threshold_bytes = threshold_bytes;
	ec = sl_ec_create(&c);
	assert_non_null(ec);
	assert_true(sl_ec_actions_max(ec) <= SL_ARRAY_SIZE(act));
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(sl_ec_conn_open(ec, i, 0), 0);
	return ec;
}

static const struct sl_ec_conf policy_on = {.policy = true, .nack = true};

static void *
handle_of(uint32_t conn, uint32_t psn)
{
	return (void *)(uintptr_t)(((uint64_t)conn << 32 | psn) + 1);
}

/* One arrival at now_ns; its actions are in act[0..nact). */
static enum sl_ec_verdict
arrive_at(struct sl_ec *ec, uint32_t conn, uint32_t psn, uint32_t bytes, uint64_t now_ns)
{
	return sl_ec_arrive(ec, conn, psn, bytes, handle_of(conn, psn), now_ns, act, &nact);
}

static enum sl_ec_verdict
arrive(struct sl_ec *ec, uint32_t conn, uint32_t psn, uint32_t bytes)
{
	return arrive_at(ec, conn, psn, bytes, 0);
}

/* n in-order arrivals of 1 KiB on conn from PSN first, all accepted. */
static void
fill(struct sl_ec *ec, uint32_t conn, uint32_t first, uint32_t n)
{
	for (uint32_t psn = first; psn != first + n; psn++)
		assert_int_equal(arrive(ec, conn, psn, KIB), SL_EC_ACCEPTED);
}

/* Process the head at now_ns, which must be (conn, psn); its actions are in act[0..nact). */
static void
process_at(struct sl_ec *ec, uint32_t conn, uint32_t psn, uint64_t now_ns)
{
	struct sl_ec_pkt p;

	assert_int_equal(sl_ec_process(ec, now_ns, &p, act, &nact), 0);
	assert_int_equal(p.conn, conn);
	assert_int_equal(p.psn, psn);
	assert_ptr_equal(p.handle, handle_of(conn, psn));
	last_stale = p.stale;
}

static void
process(struct sl_ec *ec, uint32_t conn, uint32_t psn)
{
	process_at(ec, conn, psn, 0);
}

/* act[i] is (type, conn, ack_psn). */
static void
check_act(unsigned i, enum sl_ec_act_type type, uint32_t conn, uint32_t ack_psn)
{
	assert_true(i < nact);
	assert_int_equal(act[i].type, type);
	assert_int_equal(act[i].conn, conn);
	assert_int_equal(act[i].ack_psn, ack_psn);
}

/* The call sent exactly one action, (type, conn, ack_psn). */
static void
check_only(enum sl_ec_act_type type, uint32_t conn, uint32_t ack_psn)
{
	assert_int_equal(nact, 1);
	check_act(0, type, conn, ack_psn);
}

static struct sl_ec_stats
stats(const struct sl_ec *ec)
{
	struct sl_ec_stats st;

	sl_ec_stats_get(ec, &st);
	return st;
}

static void
sl_ec_arrive__no_congestion_iack_at_acceptance(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 9 * KIB);

	(void)state;
	/* 9 x 1 KiB fill the queue exactly to the threshold: never above it. */
	for (uint32_t psn = 0; psn < 9; psn++) {
		assert_int_equal(arrive(ec, 0, psn, KIB), SL_EC_ACCEPTED);
		check_only(SL_EC_IACK, 0, psn + 1);
	}
	assert_int_equal(sl_ec_queue_bytes(ec), 9 * KIB);
	for (uint32_t psn = 0; psn < 9; psn++) {
		process(ec, 0, psn);
		assert_int_equal(nact, 0);
	}
	assert_int_equal(stats(ec).iacks, 9);
	assert_int_equal(stats(ec).dacks, 0);
	assert_int_equal(stats(ec).congested_accepts, 0);
	assert_int_equal(stats(ec).max_queue_bytes, 9 * KIB);
	sl_ec_free(ec);
}

static void
sl_ec_process__iack_at_processing_when_not_congested(void **state)
{
	struct sl_ec_conf c = policy_on;
	struct sl_ec *ec;

	(void)state;
	c.iack_at_processing = true;
	ec = mk(&c, 81 * KIB, 9 * KIB);
	for (uint32_t psn = 0; psn < 9; psn++) {
		assert_int_equal(arrive(ec, 1, psn, KIB), SL_EC_ACCEPTED);
		assert_int_equal(nact, 0);
	}
	for (uint32_t psn = 0; psn < 9; psn++) {
		process(ec, 1, psn);
		check_only(SL_EC_IACK, 1, psn + 1);
	}
	assert_int_equal(stats(ec).dacks, 0);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__congested_sends_standalone_dack_at_once(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 9 * KIB);

	(void)state;
	fill(ec, 0, 0, 9);
	/* Every packet accepted with the occupancy above 9 KiB: one DACK naming the last IACK. */
	for (uint32_t psn = 9; psn < 15; psn++) {
		assert_int_equal(arrive(ec, 0, psn, KIB), SL_EC_ACCEPTED);
		check_only(SL_EC_DACK, 0, 9);
	}
	/* Another connection's DACK repeats its own last ack_psn: its first PSN. */
	assert_int_equal(sl_ec_conn_open(ec, 2, 700), 0);
	arrive(ec, 2, 700, 100);
	check_only(SL_EC_DACK, 2, 700);
	assert_int_equal(stats(ec).congested_accepts, 7);
	assert_int_equal(stats(ec).dacks, 7);
	assert_int_equal(stats(ec).iacks, 9);
	sl_ec_free(ec);
}

static void
sl_ec_process__crossing_sends_dack_then_iack_in_queue_order(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 9 * KIB);

	(void)state;
	fill(ec, 0, 0, 12);
	/* Each processed 1 KiB packet moves exactly the next one below the threshold. */
	for (uint32_t psn = 0; psn < 3; psn++) {
		process(ec, 0, psn);
		assert_int_equal(nact, 2);
		check_act(0, SL_EC_DACK, 0, psn + 9);
		check_act(1, SL_EC_IACK, 0, psn + 10);
	}
	/* The rest are below already: processing them sends nothing. */
	for (uint32_t psn = 3; psn < 12; psn++) {
		process(ec, 0, psn);
		assert_int_equal(nact, 0);
	}
	sl_ec_free(ec);
}

static void
sl_ec_process__large_head_lets_several_cross_at_once(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 9 * KIB);

	(void)state;
	arrive(ec, 0, 0, 8 * KIB);
	check_only(SL_EC_IACK, 0, 1);
	arrive(ec, 1, 0, KIB); /* exactly at the threshold: below */
	check_only(SL_EC_IACK, 1, 1);
	arrive(ec, 0, 1, KIB);
	check_only(SL_EC_DACK, 0, 1);
	arrive(ec, 1, 1, 2 * KIB);
	check_only(SL_EC_DACK, 1, 1);
	arrive(ec, 0, 2, KIB);
	check_only(SL_EC_DACK, 0, 1);
	arrive(ec, 2, 0, 5 * KIB); /* 1 + 1 + 2 + 1 + 5 KiB > 9 KiB even after the head leaves */
	check_only(SL_EC_DACK, 2, 0);
	process(ec, 0, 0);
	assert_int_equal(nact, 6);
	check_act(0, SL_EC_DACK, 0, 1);
	check_act(1, SL_EC_IACK, 0, 2);
	check_act(2, SL_EC_DACK, 1, 1);
	check_act(3, SL_EC_IACK, 1, 2);
	check_act(4, SL_EC_DACK, 0, 2);
	check_act(5, SL_EC_IACK, 0, 3);
	process(ec, 1, 0); /* 1 KiB out: conn 2's 5 KiB crosses (1 + 2 + 1 + 5 = 9 KiB) */
	assert_int_equal(nact, 2);
	check_act(0, SL_EC_DACK, 2, 0);
	check_act(1, SL_EC_IACK, 2, 1);
	sl_ec_free(ec);
}

static void
sl_ec_process__packet_above_threshold_crosses_as_it_leaves(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 2 * KIB);
	struct sl_ec_pkt p;

	(void)state;
	arrive(ec, 0, 0, 4 * KIB); /* never below a 2 KiB threshold */
	check_only(SL_EC_DACK, 0, 0);
	arrive(ec, 1, 0, KIB);
	check_only(SL_EC_DACK, 1, 0);
	assert_int_equal(sl_ec_peek(ec, &p), 0);
	assert_int_equal(p.bytes, 4 * KIB);
	assert_ptr_equal(p.handle, handle_of(0, 0));
	process(ec, 0, 0);
	assert_int_equal(nact, 4);
	check_act(0, SL_EC_DACK, 0, 0);
	check_act(1, SL_EC_IACK, 0, 1);
	check_act(2, SL_EC_DACK, 1, 0);
	check_act(3, SL_EC_IACK, 1, 1);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__out_of_order_nacks_once_per_episode_then_recovery_dacks(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 2 * KIB);

	(void)state;
	assert_int_equal(sl_ec_conn_open(ec, 0, 100), 0);
	fill(ec, 0, 100, 3);
	check_only(SL_EC_DACK, 0, 102);
	fill(ec, 0, 103, 1);
	arrive(ec, 1, 0, KIB); /* another connection's packet between them */
	/* 104 was lost: 105 is dropped and NACKed with the expected PSN, 106 only dropped. */
	assert_int_equal(arrive(ec, 0, 105, KIB), SL_EC_DROP_ORDER);
	check_only(SL_EC_NACK, 0, 104);
	assert_int_equal(arrive(ec, 0, 106, KIB), SL_EC_DROP_ORDER);
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 0, 99, KIB), SL_EC_DROP_ORDER); /* a duplicate, too */
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).nacks, 1);
	assert_int_equal(stats(ec).drop_order, 3);
	/* 100..103 arrived before the drop: each yields one DACK when processed. A crossing of
	 * the connection's own packet carries it... */
	process(ec, 0, 100);
	assert_int_equal(nact, 2);
	check_act(0, SL_EC_DACK, 0, 102);
	check_act(1, SL_EC_IACK, 0, 103);
	process(ec, 0, 101);
	assert_int_equal(nact, 2);
	check_act(0, SL_EC_DACK, 0, 103);
	check_act(1, SL_EC_IACK, 0, 104);
	/* ...else a recovery DACK goes after another connection's crossing. */
	process(ec, 0, 102);
	assert_int_equal(nact, 3);
	check_act(0, SL_EC_DACK, 1, 0);
	check_act(1, SL_EC_IACK, 1, 1);
	check_act(2, SL_EC_DACK, 0, 104);
	/* The missing PSN arrives: recovery is over, 103 sends nothing when processed (104 stays
	 * above the threshold). */
	assert_int_equal(arrive(ec, 0, 104, 2 * KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_DACK, 0, 104);
	process(ec, 0, 103);
	assert_int_equal(nact, 0);
	/* A new gap is a new episode: a new NACK. */
	assert_int_equal(arrive(ec, 0, 107, KIB), SL_EC_DROP_ORDER);
	check_only(SL_EC_NACK, 0, 105);
	assert_int_equal(stats(ec).nacks, 2);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__nack_off_drops_silently(void **state)
{
	struct sl_ec_conf c = policy_on;
	struct sl_ec *ec;

	(void)state;
	c.nack = false;
	ec = mk(&c, 81 * KIB, 2 * KIB);
	fill(ec, 0, 0, 4);
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_DROP_ORDER);
	assert_int_equal(nact, 0);
	/* No NACK, no recovery: processing sends only the crossing pairs. */
	process(ec, 0, 0);
	assert_int_equal(nact, 2);
	process(ec, 0, 1);
	assert_int_equal(nact, 2);
	process(ec, 0, 2);
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).nacks, 0);
	assert_int_equal(stats(ec).drop_order, 1);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__full_queue_ec_drop_then_nack(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 4 * KIB, 2 * KIB);

	(void)state;
	fill(ec, 0, 0, 4);
	assert_int_equal(arrive(ec, 0, 4, 1), SL_EC_DROP_FULL);
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).drop_full, 1);
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_DROP_ORDER);
	check_only(SL_EC_NACK, 0, 4);
	assert_int_equal(arrive(ec, 0, 6, KIB), SL_EC_DROP_ORDER);
	assert_int_equal(nact, 0); /* one NACK per episode */
	/* The retransmission finds no room either: a new episode, NACKed again (else only the
	 * initiator's timeout would repair it). */
	assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_DROP_FULL);
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_DROP_ORDER);
	check_only(SL_EC_NACK, 0, 4);
	assert_int_equal(arrive(ec, 0, 6, KIB), SL_EC_DROP_ORDER);
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).drop_full, 2);
	assert_int_equal(stats(ec).nacks, 2);
	/* Room again: the retransmission is accepted (and, congested, DACKed). */
	process(ec, 0, 0);
	assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_DACK, 0, 3);
	assert_int_equal(sl_ec_queue_bytes(ec), 4 * KIB);
	assert_int_equal(stats(ec).max_queue_bytes, 4 * KIB);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__full_slots_ec_drop(void **state)
{
	struct sl_ec_conf c = policy_on;
	struct sl_ec *ec;

	(void)state;
	c.min_pkt_bytes = KIB; /* 4 KiB / 1 KiB + 1 = 5 slots */
	ec = mk(&c, 4 * KIB, 2 * KIB);
	for (uint32_t psn = 0; psn < 5; psn++)
		assert_int_equal(arrive(ec, 0, psn, 10), SL_EC_ACCEPTED);
	assert_int_equal(arrive(ec, 0, 5, 10), SL_EC_DROP_FULL);
	assert_int_equal(sl_ec_actions_max(ec), 11);
	sl_ec_free(ec);
}

/*
 * The fairness scenario: with a 2 KiB threshold and 1 KiB packets, conn 0 gets 4 packets into
 * the first period and conn 1 one; the next period's arrivals and the drain follow. Returns the
 * actions of the drain, one string per process call.
 */
static void
fairness_script(struct sl_ec *ec, char out[8][64])
{
	arrive_at(ec, 0, 0, KIB, 0);
	arrive_at(ec, 0, 1, KIB, 0);
	arrive_at(ec, 0, 2, KIB, 0);
	arrive_at(ec, 0, 3, KIB, 0);
	arrive_at(ec, 1, 0, KIB, 0);
	/* Second period: conn 1's congestion DACK is suppressed when fairness is on. */
	arrive_at(ec, 1, 1, KIB, 1000);
	arrive_at(ec, 0, 4, KIB, 1000);
	arrive_at(ec, 0, 5, KIB, 1000);
	for (unsigned k = 0; k < 8; k++) {
		struct sl_ec_pkt p;
		size_t len = 0;

		assert_int_equal(sl_ec_process(ec, 1001, &p, act, &nact), 0);
		out[k][0] = '\0';
		for (unsigned i = 0; i < nact; i++)
			len += (size_t)snprintf(out[k] + len, 64 - len, "%s%c%u:%u", i ? " " : "",
						"IDN"[act[i].type], act[i].conn, act[i].ack_psn);
	}
}

static void
sl_ec_process__fairness_coalesces_fast_and_suppresses_slow(void **state)
{
	struct sl_ec_conf c = policy_on;
	struct sl_ec *ec;
	char drain[8][64];

	(void)state;
	c.fair_period_ns = 1000;
	ec = mk(&c, 81 * KIB, 2 * KIB);
	fairness_script(ec, drain);
	/* Conn 0 (4 packets to 1) has every other IACK skipped, never its last one; conn 1 sees
	 * IACKs with no DACK between them. */
	assert_string_equal(drain[0], "D0:2");
	assert_string_equal(drain[1], "D0:2 I0:4");
	assert_string_equal(drain[2], "I1:1");
	assert_string_equal(drain[3], "I1:2");
	assert_string_equal(drain[4], "D0:4");
	assert_string_equal(drain[5], "D0:4 I0:6");
	assert_string_equal(drain[6], "");
	assert_int_equal(stats(ec).iacks_coalesced, 2);
	assert_int_equal(stats(ec).dacks_suppressed, 3);
	/* The next sample still sees conn 0 ahead (2 packets to 1): conn 1's DACKs stay
	 * suppressed, but three in a row is the most: the fourth goes, so conn 1's initiator gets
	 * to H1 and never to H-infinity. An IACK at acceptance (the last accepted packet's) is
	 * never skipped. */
	arrive_at(ec, 0, 6, KIB, 3000);
	check_only(SL_EC_IACK, 0, 7);
	arrive_at(ec, 1, 2, 4 * KIB, 3000);
	check_only(SL_EC_DACK, 1, 2);
	assert_int_equal(stats(ec).dacks_suppressed, 3);
	/* The one after sees one packet each: the knobs are off again. */
	arrive_at(ec, 1, 3, 1, 5000);
	check_only(SL_EC_DACK, 1, 2);
	sl_ec_free(ec);
}

static void
sl_ec_process__fairness_off_suppresses_and_coalesces_nothing(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 2 * KIB);
	char drain[8][64];

	(void)state;
	fairness_script(ec, drain);
	assert_string_equal(drain[0], "D0:2 I0:3");
	assert_string_equal(drain[1], "D0:3 I0:4");
	assert_string_equal(drain[2], "D1:0 I1:1");
	assert_string_equal(drain[3], "D1:1 I1:2");
	assert_string_equal(drain[4], "D0:4 I0:5");
	assert_string_equal(drain[5], "D0:5 I0:6");
	assert_int_equal(stats(ec).iacks_coalesced, 0);
	assert_int_equal(stats(ec).dacks_suppressed, 0);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__policy_off_is_plain_go_back_n(void **state)
{
	struct sl_ec_conf c = {.nack = true, .fair_period_ns = 1000};
	struct sl_ec *ec;

	(void)state;
	for (int at_processing = 0; at_processing < 2; at_processing++) {
		c.iack_at_processing = at_processing;
		ec = mk(&c, 4 * KIB, 2 * KIB);
		for (uint32_t psn = 0; psn < 4; psn++) {
			assert_int_equal(arrive_at(ec, 0, psn, KIB, psn * 1000), SL_EC_ACCEPTED);
			if (at_processing)
				assert_int_equal(nact, 0);
			else
				check_only(SL_EC_IACK, 0, psn + 1);
		}
		assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_DROP_FULL);
		assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_DROP_ORDER);
		check_only(SL_EC_NACK, 0, 4);
		for (uint32_t psn = 0; psn < 4; psn++) {
			process(ec, 0, psn);
			if (at_processing)
				check_only(SL_EC_IACK, 0, psn + 1);
			else
				assert_int_equal(nact, 0);
		}
		assert_int_equal(stats(ec).dacks, 0);
		assert_int_equal(stats(ec).iacks, 4);
		assert_int_equal(stats(ec).congested_accepts, 2);
		sl_ec_free(ec);
	}
}

static void
sl_ec_conn_open__reopen_silences_queued_packets(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 2 * KIB);

	(void)state;
	fill(ec, 0, 0, 3);
	assert_int_equal(sl_ec_conn_open(ec, 0, 500), 0);
	/* The old packets come back stale, send nothing; the new incarnation starts clean. */
	process(ec, 0, 0);
	assert_int_equal(nact, 0);
	assert_true(last_stale);
	assert_int_equal(arrive(ec, 0, 500, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_DACK, 0, 500);
	process(ec, 0, 1);
	assert_int_equal(nact, 2);
	assert_true(last_stale);
	check_act(0, SL_EC_DACK, 0, 500);
	check_act(1, SL_EC_IACK, 0, 501);
	process(ec, 0, 2);
	assert_true(last_stale);
	process(ec, 0, 500);
	assert_false(last_stale);
	assert_int_equal(sl_ec_queue_bytes(ec), 0);
	sl_ec_free(ec);
}

static void
sl_ec_conn_close__drops_arrivals_and_stales_queued_packets(void **state)
{
	struct sl_ec *ec = mk(&policy_on, 81 * KIB, 2 * KIB);

	(void)state;
	fill(ec, 0, 0, 2);
	fill(ec, 1, 0, 1);
	assert_int_equal(sl_ec_conn_close(ec, 0), 0);
	assert_int_equal(sl_ec_conn_close(ec, 4), -EINVAL);
	assert_int_equal(arrive(ec, 0, 2, KIB), SL_EC_DROP_BAD);
	assert_int_equal(nact, 0);
	/* conn 1's packet crosses as conn 0's first leaves: conn 1 still hears of it. */
	process(ec, 0, 0);
	assert_true(last_stale);
	assert_int_equal(nact, 2);
	check_act(0, SL_EC_DACK, 1, 0);
	check_act(1, SL_EC_IACK, 1, 1);
	process(ec, 0, 1);
	assert_true(last_stale);
	assert_int_equal(nact, 0);
	process(ec, 1, 0);
	assert_false(last_stale);
	assert_int_equal(sl_ec_conn_open(ec, 0, 7), 0);
	assert_int_equal(arrive(ec, 0, 7, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 8);
	sl_ec_free(ec);
}

static void
sl_ec_create__rejects_bad_conf_and_applies_defaults(void **state)
{
	struct sl_ec_conf c = {.max_conns = 2};
	struct sl_ec *ec;

	(void)state;
	errno = 0;
	assert_null(sl_ec_create(NULL));
	assert_int_equal(errno, EINVAL);
	c.max_conns = 0;
	errno = 0;
	assert_null(sl_ec_create(&c));
	assert_int_equal(errno, EINVAL);
	c = (struct sl_ec_conf){.max_conns = 2, .queue_bytes = 8 * KIB, .threshold_bytes = 8 * KIB};
	assert_null(sl_ec_create(&c));
	c.threshold_bytes = 0; /* the default 9 KiB is above an 8 KiB queue */
	assert_null(sl_ec_create(&c));
	c = (struct sl_ec_conf){.max_conns = 2, .queue_bytes = 63, .threshold_bytes = 1};
	assert_null(sl_ec_create(&c)); /* no room for one 64 B packet */
	c = (struct sl_ec_conf){.max_conns = 2, .fair_ratio_pct = 99};
	assert_null(sl_ec_create(&c));
	c = (struct sl_ec_conf){.max_conns = 2, .queue_bytes = UINT32_MAX, .min_pkt_bytes = 1};
	assert_null(sl_ec_create(&c)); /* 2^32 slots */
	assert_int_equal(errno, EINVAL);

	c = (struct sl_ec_conf){.max_conns = 2, .policy = true};
	ec = sl_ec_create(&c);
	assert_non_null(ec);
	/* 81 KiB / 64 B + 1 slots, 2 actions per slot + 1. */
	assert_int_equal(sl_ec_actions_max(ec), 2 * (81 * KIB / 64 + 1) + 1);
	assert_int_equal(sl_ec_conn_open(ec, 0, 0), 0);
	assert_int_equal(arrive(ec, 0, 0, 9 * KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 1);                                 /* 9 KiB threshold */
	assert_int_equal(arrive(ec, 0, 1, 72 * KIB), SL_EC_ACCEPTED); /* 81 KiB queue */
	assert_int_equal(arrive(ec, 0, 2, 1), SL_EC_DROP_FULL);
	sl_ec_free(ec);
	sl_ec_free(NULL);
}

static void
sl_ec_arrive__bad_input_dropped_and_counted(void **state)
{
	struct sl_ec_conf c = {.max_conns = 2, .policy = true, .nack = true};
	struct sl_ec *ec = sl_ec_create(&c);
	struct sl_ec_pkt p;

	(void)state;
	assert_non_null(ec);
	assert_int_equal(sl_ec_conn_open(ec, 2, 0), -EINVAL);
	assert_int_equal(sl_ec_conn_open(ec, UINT32_MAX, 0), -EINVAL);
	assert_int_equal(arrive(ec, 1, 0, KIB), SL_EC_DROP_BAD); /* not open */
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 7, 0, KIB), SL_EC_DROP_BAD);
	assert_int_equal(sl_ec_conn_open(ec, 0, 0), 0);
	assert_int_equal(arrive(ec, 0, 0, 0), SL_EC_DROP_BAD);
	assert_int_equal(arrive(ec, 0, 0, 81 * KIB + 1), SL_EC_DROP_BAD);
	assert_int_equal(arrive(ec, UINT32_MAX, 0, KIB), SL_EC_DROP_BAD);
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).drop_bad, 5);
	assert_int_equal(stats(ec).accepted, 0);
	assert_int_equal(sl_ec_peek(ec, &p), -ENOENT);
	assert_int_equal(sl_ec_process(ec, 0, &p, act, &nact), -ENOENT);
	assert_int_equal(nact, 0);
	/* Bad input left the connection untouched: PSN 0 is still the one expected. */
	assert_int_equal(arrive(ec, 0, 0, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 1);
	sl_ec_free(ec);
}

/* ---- invariants under a random sequence ---------------------------------------------------- */

#define R_CONNS 4u
#define R_QMAX 4096u

/* The test's own copy of the queue and of what each initiator has heard. */
struct model {
	struct sl_ec_pkt q[R_QMAX];
	unsigned head, len;
	uint32_t q_bytes;
	uint32_t expected[R_CONNS];       /**< next PSN the target accepts */
	uint32_t processed_next[R_CONNS]; /**< PSN after the last one processed */
	uint32_t last_ack[R_CONNS];       /**< ack_psn of the last IACK or DACK */
	bool has_processed[R_CONNS];
};

/* Bytes ahead of (conn, psn) plus its own, or 0 when it is not queued. */
static uint32_t
model_position(const struct model *m, uint32_t conn, uint32_t psn)
{
	uint32_t bytes = 0;

	for (unsigned i = 0; i < m->len; i++) {
		const struct sl_ec_pkt *p = &m->q[(m->head + i) % R_QMAX];

		bytes += p->bytes;
		if (p->conn == conn && p->psn == psn)
			return bytes;
	}
	return 0;
}

/* Every action of the last call against the model (item 4 and the ACK-stream rules). */
static void
model_check_actions(struct model *m, const struct sl_ec_conf *c)
{
	for (unsigned i = 0; i < nact; i++) {
		const struct sl_ec_action *a = &act[i];
		uint32_t pos;

		assert_true(a->conn < R_CONNS);
		switch (a->type) {
		case SL_EC_IACK:
			assert_true(sl_seq_gt(a->ack_psn, m->last_ack[a->conn]));
			assert_true(sl_seq_le(a->ack_psn, m->expected[a->conn]));
			pos = model_position(m, a->conn, a->ack_psn - 1);
			if (pos == 0)
				assert_true(m->has_processed[a->conn] &&
					    sl_seq_lt(a->ack_psn - 1, m->processed_next[a->conn]));
			else if (c->policy)
				assert_true(pos <= c->threshold_bytes);
			m->last_ack[a->conn] = a->ack_psn;
			break;
		case SL_EC_DACK:
			assert_true(c->policy);
			assert_int_equal(a->ack_psn, m->last_ack[a->conn]);
			break;
		case SL_EC_NACK:
			assert_true(c->nack);
			assert_int_equal(a->ack_psn, m->expected[a->conn]);
			break;
		default:
			fail_msg("unknown action type %u", a->type);
		}
	}
}

/* One arrival: the verdict the model predicts, the acceptance rules, the actions. */
static void
random_arrival(struct sl_ec *ec, struct model *m, const struct sl_ec_conf *c, struct sl_rng *rng,
	       uint64_t now_ns)
{
	/* Conn 0 sends about 5 times as much as each other one. */
	uint32_t conn = sl_rng_below(rng, 2) ? 0 : (uint32_t)sl_rng_below(rng, R_CONNS);
	uint32_t psn = m->expected[conn];
	uint32_t bytes = 64 + (uint32_t)sl_rng_below(rng, 4096);
	uint64_t suppressed = stats(ec).dacks_suppressed;
	enum sl_ec_verdict want, got;

	if (sl_rng_below(rng, 10) == 0) /* a loss upstream, or a duplicate */
		psn += (uint32_t)sl_rng_below(rng, 4) - 1;
	if (sl_rng_below(rng, 20) == 0)
		bytes = c->threshold_bytes + (uint32_t)sl_rng_below(rng, 2000);
	if (psn != m->expected[conn])
		want = SL_EC_DROP_ORDER;
	else if (m->q_bytes + bytes > c->queue_bytes)
		want = SL_EC_DROP_FULL;
	else
		want = SL_EC_ACCEPTED;
	got = sl_ec_arrive(ec, conn, psn, bytes, handle_of(conn, psn), now_ns, act, &nact);
	assert_int_equal(got, want);
	assert_true(nact <= 1);
	if (got == SL_EC_ACCEPTED) {
		m->q[(m->head + m->len++) % R_QMAX] =
			(struct sl_ec_pkt){conn, psn, bytes, handle_of(conn, psn)};
		m->q_bytes += bytes;
		m->expected[conn] = psn + 1;
		/* Item 2: congested, a standalone DACK at once (or a suppressed one). */
		if (c->policy && m->q_bytes > c->threshold_bytes)
			assert_true(nact == 1 ? act[0].type == SL_EC_DACK
					      : stats(ec).dacks_suppressed == suppressed + 1);
		else if (!c->iack_at_processing)
			check_only(SL_EC_IACK, conn, psn + 1);
		else
			assert_int_equal(nact, 0);
	} else if (nact) {
		assert_int_equal(act[0].type, SL_EC_NACK);
	}
	model_check_actions(m, c);
}

/* One processing: the head in arrival order, then the actions against the queue after it. */
static void
random_process(struct sl_ec *ec, struct model *m, const struct sl_ec_conf *c, uint64_t now_ns)
{
	struct sl_ec_pkt p, want;
	int rc = sl_ec_process(ec, now_ns, &p, act, &nact);

	if (m->len == 0) {
		assert_int_equal(rc, -ENOENT);
		return;
	}
	assert_int_equal(rc, 0);
	want = m->q[m->head];
	m->head = (m->head + 1) % R_QMAX;
	m->len--;
	assert_int_equal(p.conn, want.conn);
	assert_int_equal(p.psn, want.psn);
	assert_int_equal(p.bytes, want.bytes);
	assert_ptr_equal(p.handle, want.handle);
	m->q_bytes -= p.bytes;
	m->processed_next[p.conn] = p.psn + 1;
	m->has_processed[p.conn] = true;
	assert_true(nact <= sl_ec_actions_max(ec));
	model_check_actions(m, c);
}

static void
random_run(const struct sl_ec_conf *base, uint64_t seed)
{
	struct sl_ec_conf c = *base;
	struct model *m = calloc(1, sizeof(*m));
	struct sl_rng rng;
	struct sl_ec *ec;
	uint64_t now_ns = 0;

	assert_non_null(m);
	c.max_conns = R_CONNS;
	c.queue_bytes = 81 * KIB;
	c.threshold_bytes = 9 * KIB;
	ec = sl_ec_create(&c);
	assert_non_null(ec);
	sl_rng_seed(&rng, seed);
	for (uint32_t i = 0; i < R_CONNS; i++) {
		/* Conn 0 starts just before the PSN wrap. */
		m->expected[i] = m->last_ack[i] = i == 0 ? UINT32_MAX - 40 : i * 1000;
		assert_int_equal(sl_ec_conn_open(ec, i, m->expected[i]), 0);
	}
	for (unsigned step = 0; step < 40000; step++) {
		/* Phases: arrivals outpace processing, then the host catches up. */
		unsigned arrive_pct = (step / 2000) % 2 ? 35 : 65;

		now_ns += sl_rng_below(&rng, 300);
		if (sl_rng_below(&rng, 100) < arrive_pct)
			random_arrival(ec, m, &c, &rng, now_ns);
		else
			random_process(ec, m, &c, now_ns);
		assert_int_equal(sl_ec_queue_bytes(ec), m->q_bytes);
		assert_true(m->q_bytes <= c.queue_bytes);
	}
	while (m->len)
		random_process(ec, m, &c, now_ns);
	random_process(ec, m, &c, now_ns);
	/* Drained: every accepted packet was acknowledged, none left behind a skipped IACK. */
	for (uint32_t i = 0; i < R_CONNS; i++)
		assert_int_equal(m->last_ack[i], m->expected[i]);
	assert_int_equal(stats(ec).accepted, stats(ec).processed);
	assert_true(stats(ec).max_queue_bytes > c.threshold_bytes);
	if (c.policy)
		assert_true(stats(ec).dacks > 0);
	if (c.fair_period_ns)
		assert_true(stats(ec).iacks_coalesced > 0 && stats(ec).dacks_suppressed > 0);
	sl_ec_free(ec);
	free(m);
}

static void
sl_ec_process__random_sequences_keep_invariants(void **state)
{
	static const struct sl_ec_conf confs[] = {
		{.policy = true, .nack = true},
		{.policy = true, .nack = true, .iack_at_processing = true},
		{.policy = true, .nack = true, .fair_period_ns = 20000},
		{.policy = true, .nack = false, .fair_period_ns = 5000, .fair_ratio_pct = 100},
		{.policy = false, .nack = true},
		{.policy = false, .nack = true, .iack_at_processing = true},
	};

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(confs); i++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			random_run(&confs[i], seed * 1000 + i);
}

/* ---- selective repeat (sr_pkts > 0) ------------------------------------------------------- */

static const struct sl_ec_conf sr_on = {.policy = true, .nack = true, .sr_pkts = 8};

/* mk() with selective repeat of sr_pkts. */
static struct sl_ec *
mk_sr(uint32_t sr_pkts, uint32_t queue_bytes, uint32_t threshold_bytes)
{
	struct sl_ec_conf c = sr_on;

	c.sr_pkts = sr_pkts;
	return mk(&c, queue_bytes, threshold_bytes);
}

/* act[i] is a selective NACK of [hole_psn, hole_psn + hole_len), naming ack_psn expected. */
static void
check_hole(unsigned i, uint32_t conn, uint32_t ack_psn, uint32_t hole_psn, uint32_t hole_len)
{
	check_act(i, SL_EC_NACK, conn, ack_psn);
	assert_int_equal(act[i].hole_psn, hole_psn);
	assert_int_equal(act[i].hole_len, hole_len);
}

static void
sl_ec_arrive__sr_accepts_out_of_order_and_nacks_each_new_hole_once(void **state)
{
	struct sl_ec *ec = mk(&sr_on, 64 * KIB, 32 * KIB); /* never congested here */

	(void)state;
	assert_int_equal(arrive(ec, 0, 0, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 1);
	/* 1 lost: 2 joins the queue, its hole [1, 2) is NACKed; its IACK would pass the hole. */
	assert_int_equal(arrive(ec, 0, 2, KIB), SL_EC_ACCEPTED);
	assert_int_equal(nact, 1);
	check_hole(0, 0, 1, 1, 1);
	assert_int_equal(arrive(ec, 0, 3, KIB), SL_EC_ACCEPTED); /* no new hole: silent */
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 0, 6, KIB), SL_EC_ACCEPTED); /* 4 and 5 lost */
	assert_int_equal(nact, 1);
	check_hole(0, 0, 1, 4, 2);
	assert_int_equal(arrive(ec, 0, 3, KIB), SL_EC_DROP_DUP); /* a repeat: dropped, silent */
	assert_int_equal(arrive(ec, 0, 0, KIB), SL_EC_DROP_DUP);
	assert_int_equal(nact, 0);
	/* The resent 1 fills the first hole: the run 1-3 is acknowledged at once. */
	assert_int_equal(arrive(ec, 0, 1, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 4);
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_ACCEPTED); /* inside the open hole */
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 7);
	assert_int_equal(arrive(ec, 0, 7, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_IACK, 0, 8);
	assert_int_equal(stats(ec).nacks, 2);
	assert_int_equal(stats(ec).drop_dup, 2);
	assert_int_equal(stats(ec).drop_order, 0);
	assert_int_equal(stats(ec).accepted, 8);
	/* The queue holds them in arrival order; the host processes each once. */
	static const uint32_t order[] = {0, 2, 3, 6, 1, 5, 4, 7};
	for (size_t i = 0; i < SL_ARRAY_SIZE(order); i++) {
		process(ec, 0, order[i]);
		assert_int_equal(nact, 0); /* below the threshold, IACKed at acceptance */
	}
	sl_ec_free(ec);
}

static void
sl_ec_process__sr_iack_passes_neither_a_hole_nor_the_threshold(void **state)
{
	struct sl_ec *ec = mk(&sr_on, 16 * KIB, 2 * KIB);

	(void)state;
	fill(ec, 0, 0, 2); /* IACK 1, IACK 2: both below the threshold */
	assert_int_equal(arrive(ec, 0, 3, KIB), SL_EC_ACCEPTED); /* 2 lost; congested */
	assert_int_equal(nact, 2);
	check_hole(0, 0, 2, 2, 1);
	check_act(1, SL_EC_DACK, 0, 2);
	assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_ACCEPTED);
	check_only(SL_EC_DACK, 0, 2);
	assert_int_equal(arrive(ec, 0, 2, KIB), SL_EC_ACCEPTED); /* the resend, behind 3 and 4 */
	check_only(SL_EC_DACK, 0, 2);
	/* 3 crosses: its DACK, but no IACK (2 is still above the threshold). */
	process(ec, 0, 0);
	check_only(SL_EC_DACK, 0, 2);
	process(ec, 0, 1);
	check_only(SL_EC_DACK, 0, 2); /* 4 crosses: the same */
	process(ec, 0, 3);
	assert_int_equal(nact, 2); /* 2 crosses: DACK, then the IACK of the run 2-4 */
	check_act(0, SL_EC_DACK, 0, 2);
	check_act(1, SL_EC_IACK, 0, 5);
	process(ec, 0, 4);
	assert_int_equal(nact, 0);
	process(ec, 0, 2);
	assert_int_equal(nact, 0);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__sr_queue_drop_renacks_and_many_holes_go_back_n(void **state)
{
	struct sl_ec *ec = mk_sr(16, 4 * KIB, 2 * KIB);

	(void)state;
	fill(ec, 0, 0, 4); /* full */
	assert_int_equal(arrive(ec, 0, 4, KIB), SL_EC_DROP_FULL);
	assert_int_equal(nact, 0);
	process(ec, 0, 0);
	/* 5 lands past the dropped 4: the new hole and the queue's drop are the same one. */
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_ACCEPTED);
	check_hole(0, 0, 4, 4, 1);
	assert_int_equal(arrive(ec, 0, 6, KIB), SL_EC_DROP_FULL); /* a hole the sender can't see */
	process(ec, 0, 1);
	assert_int_equal(arrive(ec, 0, 7, KIB), SL_EC_ACCEPTED); /* NACKs every hole below it */
	assert_int_equal(nact, 3);
	check_hole(0, 0, 4, 4, 1);
	check_hole(1, 0, 4, 6, 1);
	check_act(2, SL_EC_DACK, 0, 4);
	/* Past SL_EC_NACK_HOLES_MAX holes below an arrival after a drop: go back N. */
	for (uint32_t psn = 9; psn <= 15; psn += 2) {
		process(ec, 0, psn == 9 ? 2 : psn == 11 ? 3 : psn == 13 ? 5 : 7);
		assert_int_equal(arrive(ec, 0, psn, KIB), SL_EC_ACCEPTED);
	}
	assert_int_equal(arrive(ec, 0, 16, KIB), SL_EC_DROP_FULL);
	process(ec, 0, 9);
	assert_int_equal(arrive(ec, 0, 17, KIB), SL_EC_ACCEPTED);
	check_act(0, SL_EC_NACK, 0, 4);
	assert_int_equal(act[0].hole_len, 0);
	sl_ec_free(ec);
}

static void
sl_ec_arrive__sr_past_reach_goes_back_n_and_nack_off_stays_silent(void **state)
{
	struct sl_ec_conf c = sr_on;
	struct sl_ec *ec = mk_sr(4, 64 * KIB, 32 * KIB);

	(void)state;
	fill(ec, 0, 0, 1);
	assert_int_equal(arrive(ec, 0, 6, KIB), SL_EC_DROP_ORDER); /* 5 past the expected 1 */
	check_only(SL_EC_NACK, 0, 1);
	assert_int_equal(act[0].hole_len, 0);
	assert_int_equal(arrive(ec, 0, 7, KIB), SL_EC_DROP_ORDER); /* the same episode: silent */
	assert_int_equal(nact, 0);
	assert_int_equal(arrive(ec, 0, 5, KIB), SL_EC_ACCEPTED); /* 4 past: within reach */
	check_hole(0, 0, 1, 1, 4);
	sl_ec_free(ec);

	c.nack = false;
	ec = mk(&c, 64 * KIB, 32 * KIB);
	assert_int_equal(arrive(ec, 0, 2, KIB), SL_EC_ACCEPTED);
	assert_int_equal(nact, 0);
	assert_int_equal(stats(ec).nacks, 0);
	sl_ec_free(ec);

	c.sr_pkts = SL_EC_SR_PKTS_MAX + 1;
	c.max_conns = 1;
	errno = 0;
	assert_null(sl_ec_create(&c));
	assert_int_equal(errno, EINVAL);
}

/*
 * Seeded random runs with selective repeat: a sender of 3 connections loses 5 % of what it
 * sends, resends 3 % of the time something it sent before, resends each NACKed hole (or goes
 * back N), and the host processes at random; then the sender resends whatever is still missing
 * until every PSN is in. Each PSN must be accepted and processed exactly once, and every IACK
 * must strictly grow and never pass a PSN not accepted.
 */
static void
sr_random_run(uint64_t seed, bool policy)
{
	enum { CONNS = 3, PSNS = 400 };
	struct sl_ec_conf c = {.policy = policy, .nack = true, .sr_pkts = 16};
	static uint8_t done[CONNS][PSNS], in[CONNS][PSNS];
	uint32_t next[CONNS] = {0}, last_iack[CONNS] = {0};
	struct sl_rng rng;
	struct sl_ec *ec;
	uint64_t t = 0;

	memset(done, 0, sizeof(done));
	memset(in, 0, sizeof(in));
	sl_rng_seed(&rng, seed);
	ec = mk(&c, 12 * KIB, 4 * KIB);
	for (unsigned round = 0; round < 200000; round++) {
		uint32_t k = (uint32_t)sl_rng_below(&rng, CONNS), psn = next[k];
		bool finished = true, dup = next[k] > 0 && sl_rng_below(&rng, 100) < 3;

		if (dup) /* a spurious resend of something sent before */
			psn = (uint32_t)sl_rng_below(&rng, next[k]);

		for (uint32_t j = 0; j < CONNS; j++)
			finished &= next[j] == PSNS;
		if (finished) { /* the tail: resend the first PSN still missing */
			for (k = 0; k < CONNS; k++) {
				for (psn = 0; psn < PSNS && in[k][psn]; psn++)
					;
				if (psn < PSNS)
					break;
			}
			if (k == CONNS && sl_ec_queue_bytes(ec) == 0)
				break;
		}
		if (k < CONNS && psn < PSNS && sl_rng_below(&rng, 100) >= 5) {
			enum sl_ec_verdict v = arrive_at(ec, k, psn, KIB, t);

			if (v == SL_EC_ACCEPTED) {
				assert_false(in[k][psn]);
				in[k][psn] = 1;
			}
			for (unsigned i = 0; i < nact; i++) {
				const struct sl_ec_action *a = &act[i];

				if (a->type == SL_EC_NACK && a->hole_len)
					next[a->conn] = SL_MIN(next[a->conn], a->hole_psn);
				else if (a->type == SL_EC_NACK)
					next[a->conn] = SL_MIN(next[a->conn], a->ack_psn);
			}
		}
		if (!finished && !dup && next[k] < PSNS && psn == next[k])
			next[k]++;
		/* a NACK moves next back; it skips what the target already has (SACK-like) */
		for (uint32_t j = 0; j < CONNS; j++)
			while (next[j] < PSNS && in[j][next[j]])
				next[j]++;
		if (sl_rng_below(&rng, 100) < 45) {
			struct sl_ec_pkt p;

			if (sl_ec_process(ec, t, &p, act, &nact) == 0) {
				assert_false(done[p.conn][p.psn]);
				done[p.conn][p.psn] = 1;
			}
		} else {
			nact = 0;
		}
		for (unsigned i = 0; i < nact; i++)
			if (act[i].type == SL_EC_IACK) {
				uint32_t a = act[i].ack_psn, j = act[i].conn;

				assert_true(sl_seq_gt(a, last_iack[j]));
				for (uint32_t p = 0; p < a; p++)
					assert_true(in[j][p]);
				last_iack[j] = a;
			}
		t += 100;
	}
	for (uint32_t j = 0; j < CONNS; j++)
		for (uint32_t p = 0; p < PSNS; p++)
			assert_true(done[j][p]);
	sl_ec_free(ec);
}

static void
sl_ec_process__sr_random_sequences_deliver_each_packet_once(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		sr_random_run(seed, true);
		sr_random_run(seed + 100, false);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_ec_arrive__no_congestion_iack_at_acceptance),
		cmocka_unit_test(sl_ec_process__iack_at_processing_when_not_congested),
		cmocka_unit_test(sl_ec_arrive__congested_sends_standalone_dack_at_once),
		cmocka_unit_test(sl_ec_process__crossing_sends_dack_then_iack_in_queue_order),
		cmocka_unit_test(sl_ec_process__large_head_lets_several_cross_at_once),
		cmocka_unit_test(sl_ec_process__packet_above_threshold_crosses_as_it_leaves),
		cmocka_unit_test(
			sl_ec_arrive__out_of_order_nacks_once_per_episode_then_recovery_dacks),
		cmocka_unit_test(sl_ec_arrive__nack_off_drops_silently),
		cmocka_unit_test(sl_ec_arrive__full_queue_ec_drop_then_nack),
		cmocka_unit_test(sl_ec_arrive__full_slots_ec_drop),
		cmocka_unit_test(sl_ec_process__fairness_coalesces_fast_and_suppresses_slow),
		cmocka_unit_test(sl_ec_process__fairness_off_suppresses_and_coalesces_nothing),
		cmocka_unit_test(sl_ec_arrive__policy_off_is_plain_go_back_n),
		cmocka_unit_test(sl_ec_conn_open__reopen_silences_queued_packets),
		cmocka_unit_test(sl_ec_conn_close__drops_arrivals_and_stales_queued_packets),
		cmocka_unit_test(sl_ec_create__rejects_bad_conf_and_applies_defaults),
		cmocka_unit_test(sl_ec_arrive__bad_input_dropped_and_counted),
		cmocka_unit_test(sl_ec_process__random_sequences_keep_invariants),
		cmocka_unit_test(
			sl_ec_arrive__sr_accepts_out_of_order_and_nacks_each_new_hole_once),
		cmocka_unit_test(sl_ec_process__sr_iack_passes_neither_a_hole_nor_the_threshold),
		cmocka_unit_test(sl_ec_arrive__sr_queue_drop_renacks_and_many_holes_go_back_n),
		cmocka_unit_test(sl_ec_arrive__sr_past_reach_goes_back_n_and_nack_off_stays_silent),
		cmocka_unit_test(sl_ec_process__sr_random_sequences_deliver_each_packet_once),
	};
	return cmocka_run_group_tests_name("ec", tests, NULL, NULL);
}
