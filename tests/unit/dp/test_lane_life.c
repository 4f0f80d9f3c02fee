/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/dp/lane_life.c.
 *
 * sl_dp_lane_transition: one case per row of the transition table in docs/link.md ("The lane's
 * life"), each an event with its guards in and the state, timer and actions out, plus the
 * guards that hold a state and every event that has no row. Guards a row does not read are set
 * to the value that would mislead it.
 *
 * sl_dp_lane_poll: the machine driving real lanes: two ports joined by two rte_rings (a's TX is
 * b's RX and the other way round), b marked as sharing memory with its peer as memif does, on a
 * virtual clock. A stopping a drains, says goodbye and leaves once b answered; b goes quiet and
 * reads nothing from its port until the port has gone down and up again. An end that answers
 * while it leaves itself, on a port that shares memory, holds the port for the grace. Each end
 * has a second lane, which learns the peer's MAC from its own frames only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "sl_dp.h"
#include "dp_eal.h"
#include "lane_life.h"

/* --- sl_dp_lane_transition ----------------------------------------------------------------- */

#define T0 (5 * SL_NS_PER_S) /* the event's time */
#define TIMER (T0 + 7)       /* a pending timer, in the future of T0 */

struct row {
	struct sl_dp_lane_life from;
	struct sl_dp_lane_input in;
	struct sl_dp_lane_life to;
	unsigned int actions;
};

static void
check_row(void **state)
{
	const struct row *r = *state;
	struct sl_dp_lane_life life = r->from;

	assert_int_equal(sl_dp_lane_transition(&life, &r->in), r->actions);
	assert_int_equal(life.state, r->to.state);
	assert_int_equal(life.timer_ns, r->to.timer_ns);
}

#define S(name) SL_DP_LANE_##name
#define EV(name) SL_DP_LANE_EV_##name
#define SHARED true
#define UNSHARED false
#define UP true
#define DOWN false
/* One case: from state (timer), event at now with guards peer_up, shares -> to state (timer),
 * actions. */
#define ROW(case_, st, tm, ev, now, up, sh, st2, tm2, act)                                         \
	{                                                                                          \
		.name = "sl_dp_lane_transition__" #case_, .test_func = check_row,                  \
		.initial_state = &(struct row){                                                    \
			{S(st), (tm)}, {EV(ev), (now), (up), (sh)}, {S(st2), (tm2)}, (act)},       \
	}

static const unsigned int LEAVE = SL_DP_LANE_ACT_LINK_LEAVE, SILENCE = SL_DP_LANE_ACT_SILENCE;

/* Every (state, event) pair without a row in the table: nothing changes, nothing is asked. */
static void
sl_dp_lane_transition__events_without_a_row_change_nothing(void **state)
{
	static const struct {
		enum sl_dp_lane_state state;
		enum sl_dp_lane_event events[6];
		unsigned int n;
	} none[] = {
		{S(RUNNING), {EV(TICK), EV(LEAVE_ACKED), EV(LINK_DOWN), EV(LINK_UP)}, 4},
		{S(QUIET), {EV(TICK), EV(PEER_LEFT), EV(LEAVE_ACKED)}, 3},
		{S(QUIET_DOWN), {EV(TICK), EV(PEER_LEFT), EV(LEAVE_ACKED), EV(LINK_DOWN)}, 4},
		{S(DRAINING),
		 {EV(STOP), EV(PEER_LEFT), EV(LEAVE_ACKED), EV(LINK_DOWN), EV(LINK_UP)},
		 5},
		{S(LEAVING), {EV(STOP), EV(LINK_UP)}, 2},
		{S(LEFT),
		 {EV(STOP), EV(TICK), EV(PEER_LEFT), EV(LEAVE_ACKED), EV(LINK_DOWN), EV(LINK_UP)},
		 6},
	};

	(void)state;
	for (unsigned int i = 0; i < SL_ARRAY_SIZE(none); i++)
		for (unsigned int e = 0; e < none[i].n; e++)
			for (unsigned int g = 0; g < 4; g++) {
				struct sl_dp_lane_life life = {none[i].state, TIMER};
				struct sl_dp_lane_input in = {none[i].events[e], T0, g & 1, g & 2};

				assert_int_equal(sl_dp_lane_transition(&life, &in), 0);
				assert_int_equal(life.state, none[i].state);
				assert_int_equal(life.timer_ns, TIMER);
			}
}

static int
run_transition_tests(void)
{
	const struct CMUnitTest tests[] = {
		ROW(running_stop_starts_the_drain, RUNNING, 0, STOP, T0, DOWN, SHARED, DRAINING,
		    T0 + SL_DP_DRAIN_NS, 0),
		ROW(running_peer_left_over_shared_memory_goes_quiet, RUNNING, 0, PEER_LEFT, T0, UP,
		    SHARED, QUIET, T0 + SL_DP_QUIET_MAX_NS, SILENCE),
		ROW(running_peer_left_over_unshared_port_keeps_running, RUNNING, 0, PEER_LEFT, T0,
		    UP, UNSHARED, RUNNING, 0, 0),
		ROW(quiet_link_down_remembers_the_close, QUIET, TIMER, LINK_DOWN, T0, UP, SHARED,
		    QUIET_DOWN, 0, 0),
		ROW(quiet_link_up_before_the_timer_stays_quiet, QUIET, TIMER, LINK_UP, TIMER - 1,
		    UP, SHARED, QUIET, TIMER, 0),
		ROW(quiet_link_up_at_the_timer_wakes, QUIET, TIMER, LINK_UP, TIMER, UP, SHARED,
		    RUNNING, 0, 0),
		ROW(quiet_down_link_up_wakes_at_once, QUIET_DOWN, 0, LINK_UP, T0, UP, SHARED,
		    RUNNING, 0, 0),
		ROW(quiet_stop_leaves_at_once, QUIET, TIMER, STOP, T0, UP, SHARED, LEFT, T0, LEAVE),
		ROW(quiet_down_stop_leaves_at_once, QUIET_DOWN, 0, STOP, T0, UP, SHARED, LEFT, T0,
		    LEAVE),
		ROW(draining_tick_before_the_timer_drains_on, DRAINING, TIMER, TICK, TIMER - 1, UP,
		    SHARED, DRAINING, TIMER, 0),
		ROW(draining_tick_at_the_timer_with_peer_up_says_goodbye, DRAINING, TIMER, TICK,
		    TIMER, UP, SHARED, LEAVING, TIMER + SL_DP_LEAVE_WAIT_NS, LEAVE),
		ROW(draining_tick_at_the_timer_with_peer_down_leaves_alone, DRAINING, TIMER, TICK,
		    TIMER, DOWN, SHARED, LEFT, TIMER, LEAVE),
		ROW(leaving_peer_left_over_shared_memory_holds_the_port, LEAVING, TIMER, PEER_LEFT,
		    T0, UP, SHARED, LEFT, T0 + SL_DP_LEAVE_GRACE_NS, SILENCE),
		ROW(leaving_peer_left_over_unshared_port_leaves, LEAVING, TIMER, PEER_LEFT, T0, UP,
		    UNSHARED, LEFT, T0, 0),
		ROW(leaving_acked_leaves, LEAVING, TIMER, LEAVE_ACKED, T0, UP, SHARED, LEFT, T0, 0),
		ROW(leaving_link_down_leaves, LEAVING, TIMER, LINK_DOWN, T0, UP, SHARED, LEFT, T0,
		    0),
		ROW(leaving_tick_before_the_timer_keeps_asking, LEAVING, TIMER, TICK, TIMER - 1, UP,
		    SHARED, LEAVING, TIMER, 0),
		ROW(leaving_tick_at_the_timer_gives_up, LEAVING, TIMER, TICK, TIMER, UP, SHARED,
		    LEFT, TIMER, 0),
		cmocka_unit_test(sl_dp_lane_transition__events_without_a_row_change_nothing),
	};

	return cmocka_run_group_tests_name("dp/lane_life: transitions", tests, NULL, NULL);
}

/* --- sl_dp_lane_poll on two lanes joined by rings ------------------------------------------ */

#define POOL_MBUFS 8191
#define STEP_NS (10 * SL_NS_PER_US)

#define LANES 2 /* lane 0 lives and leaves; lane 1 shows what each lane learns on its own */

static struct rte_mempool *pool;
static struct rte_ring *ring_ab[LANES], *ring_ba[LANES]; /* a's TX is b's RX, per lane */
static struct sl_dp_port port_a, port_b;
static struct sl_dp_lane *a = &port_a.lane[0], *b = &port_b.lane[0];
static uint64_t now_ns;
static unsigned int pair_no;

static int
open_end(struct sl_dp_port *p, const char *name, struct rte_ring **rx, struct rte_ring **tx)
{
	char dev[RTE_ETH_NAME_MAX_LEN], err[256];
	int id = rte_eth_from_rings(name, rx, LANES, tx, LANES, (unsigned int)rte_socket_id());
	struct sl_dp_port_conf conf = test_dp_port_conf(dev, 100 * SL_NS_PER_US);

	if (id < 0 || rte_eth_dev_get_name_by_port((uint16_t)id, dev) != 0) {
		print_error("%s: rte_eth_from_rings failed\n", name);
		return -1;
	}
	conf.nb_queues = LANES;
	if (sl_dp_port_open(p, &conf, pool, err, sizeof(err)) != 0) {
		print_error("%s\n", err);
		return -1;
	}
	return 0;
}

static void
poll_both(void)
{
	now_ns += STEP_NS;
	sl_dp_lane_poll(a, now_ns);
	sl_dp_lane_poll(b, now_ns);
}

/* A fresh pair of ends, both links up; b's port shares memory with its peer (as memif's). */
static int
pair_setup(void **state)
{
	char name[32];

	(void)state;
	pair_no++;
	for (unsigned int q = 0; q < LANES; q++) {
		snprintf(name, sizeof(name), "ab%u.%u", pair_no, q);
		ring_ab[q] =
			rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "ba%u.%u", pair_no, q);
		ring_ba[q] =
			rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ring_ab[q] == NULL || ring_ba[q] == NULL)
			return -1;
	}
	snprintf(name, sizeof(name), "net_a%u", pair_no);
	if (open_end(&port_a, name, ring_ba, ring_ab) != 0)
		return -1;
	snprintf(name, sizeof(name), "net_b%u", pair_no);
	if (open_end(&port_b, name, ring_ab, ring_ba) != 0)
		return -1;
	port_b.shares_memory = true;
	/* The ring PMD gives every port one address: give each end its own. */
	port_a.mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x0a}};
	port_b.mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x0b}};
	for (unsigned int i = 0; i < 1000; i++)
		poll_both();
	if (!sl_dp_lane_peer_up(a, now_ns) || !sl_dp_lane_peer_up(b, now_ns)) {
		print_error("the two links did not come up\n");
		return -1;
	}
	return 0;
}

static int
pair_teardown(void **state)
{
	(void)state;
	sl_dp_port_close(&port_a);
	sl_dp_port_close(&port_b);
	/* Frames a lane left unread in its RX ring are the ring's, not the pool's: free them. */
	for (unsigned int q = 0; q < LANES; q++) {
		struct rte_ring *rings[] = {ring_ab[q], ring_ba[q]};

		for (unsigned int i = 0; i < 2; i++) {
			for (struct rte_mbuf *m; rte_ring_dequeue(rings[i], (void **)&m) == 0;)
				rte_pktmbuf_free(m);
			rte_ring_free(rings[i]);
		}
	}
	/* Every mbuf came back: links, lanes and drivers released what they held. */
	return rte_mempool_avail_count(pool) == POOL_MBUFS ? 0 : -1;
}

/* Poll both ends until a has left; the states a went through, in order, into seen[]. */
static unsigned int
poll_until_a_left(enum sl_dp_lane_state *seen, unsigned int max)
{
	unsigned int n = 0;

	seen[n++] = a->life.state;
	for (unsigned int i = 0; i < 200000 && sl_dp_lane_close_ns(a) == UINT64_MAX; i++) {
		poll_both();
		if (a->life.state != seen[n - 1] && n < max)
			seen[n++] = a->life.state;
	}
	return n;
}

static void
sl_dp_lane_poll__stop_drains_says_goodbye_and_the_peer_goes_quiet(void **state)
{
	enum sl_dp_lane_state seen[8];
	uint64_t stop_ns;
	unsigned int n;

	(void)state;
	stop_ns = now_ns;
	sl_dp_lane_stop(a, stop_ns);
	n = poll_until_a_left(seen, SL_ARRAY_SIZE(seen));
	assert_int_equal(n, 3);
	assert_int_equal(seen[0], SL_DP_LANE_DRAINING);
	assert_int_equal(seen[1], SL_DP_LANE_LEAVING);
	assert_int_equal(seen[2], SL_DP_LANE_LEFT);
	/* It drained the whole SL_DP_DRAIN_NS, was answered, and may close at once. */
	assert_true(now_ns >= stop_ns + SL_DP_DRAIN_NS);
	assert_true(now_ns < stop_ns + SL_DP_DRAIN_NS + SL_DP_LEAVE_WAIT_NS);
	assert_int_equal(sl_dp_lane_close_ns(a), now_ns);
	assert_int_equal(sl_link_stat(a->link, leave_acks), 1);
	/* b answered right after a's LEAVE and went quiet; it never said goodbye itself. */
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET);
	assert_int_equal(sl_link_stat(b->link, peer_leaves), 1);
	assert_int_equal(sl_link_stat(b->link, tx_leave), 0);
	assert_int_equal(b->stats.quiet_entries, 1);
	assert_int_equal(a->stats.quiet_entries, 0);
}

static void
sl_dp_lane_poll__quiet_lane_reads_nothing_until_its_port_cycles(void **state)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	unsigned int unread;
	uint64_t rx0;

	(void)state;
	sl_dp_lane_stop(a, now_ns);
	poll_until_a_left((enum sl_dp_lane_state[1]){0}, 1);
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET);
	rx0 = b->stats.rx_pkts;
	unread = rte_ring_count(ring_ab[0]); /* what a sent after b's answer */
	/* A frame waits in b's RX ring: a quiet b must not read it, its link up or not. */
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 60));
	memset(rte_pktmbuf_mtod(m, void *), 0, 60);
	assert_int_equal(rte_ring_enqueue(ring_ab[0], m), 0);
	for (unsigned int i = 0; i < 100; i++)
		poll_both();
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET);
	assert_int_equal(rte_eth_dev_set_link_down(port_b.port_id), 0);
	poll_both();
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET_DOWN);
	/* Down means the peer closed: past the quiet timer, still nothing is read. */
	now_ns += SL_DP_QUIET_MAX_NS;
	poll_both();
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET_DOWN);
	assert_int_equal(b->stats.rx_pkts, rx0);
	assert_int_equal(rte_ring_count(ring_ab[0]), unread + 1);
	/* Up again: a new peer; b wakes and reads in the same poll. */
	assert_int_equal(rte_eth_dev_set_link_up(port_b.port_id), 0);
	poll_both();
	assert_int_equal(b->life.state, SL_DP_LANE_RUNNING);
	assert_int_equal(b->stats.rx_pkts, rx0 + unread + 1);
	assert_int_equal(b->stats.rx_drop_not_sluice, 1);
}

static void
sl_dp_lane_poll__quiet_lane_wakes_after_its_timer_if_the_port_stays_up(void **state)
{
	uint64_t quiet_ns;

	(void)state;
	sl_dp_lane_stop(a, now_ns);
	poll_until_a_left((enum sl_dp_lane_state[1]){0}, 1);
	assert_int_equal(b->life.state, SL_DP_LANE_QUIET);
	quiet_ns = b->life.timer_ns - SL_DP_QUIET_MAX_NS;
	while (now_ns + STEP_NS < quiet_ns + SL_DP_QUIET_MAX_NS) {
		now_ns += STEP_NS;
		sl_dp_lane_poll(b, now_ns);
		assert_int_equal(b->life.state, SL_DP_LANE_QUIET);
	}
	now_ns = quiet_ns + SL_DP_QUIET_MAX_NS;
	sl_dp_lane_poll(b, now_ns);
	assert_int_equal(b->life.state, SL_DP_LANE_RUNNING);
}

static void
sl_dp_lane_poll__an_end_that_answers_while_leaving_holds_its_port(void **state)
{
	uint64_t answered_ns = 0;

	(void)state;
	sl_dp_lane_stop(a, now_ns);
	sl_dp_lane_stop(b, now_ns);
	for (unsigned int i = 0; i < 200000 && (sl_dp_lane_close_ns(a) == UINT64_MAX ||
						sl_dp_lane_close_ns(b) == UINT64_MAX);
	     i++) {
		poll_both();
		if (answered_ns == 0 && b->stats.quiet_entries)
			answered_ns = now_ns;
	}
	/* Both leave together; a's LEAVE reaches b first, b answers it instead of asking. */
	assert_int_equal(a->life.state, SL_DP_LANE_LEFT);
	assert_int_equal(b->life.state, SL_DP_LANE_LEFT);
	assert_int_equal(sl_link_stat(b->link, peer_leaves), 1);
	assert_int_equal(sl_link_stat(a->link, leave_acks), 1);
	/* b, sharing memory with a, dropped its backlog and holds its port for the grace. */
	assert_int_equal(b->stats.quiet_entries, 1);
	assert_int_not_equal(answered_ns, 0);
	assert_int_equal(sl_dp_lane_close_ns(b), answered_ns + SL_DP_LEAVE_GRACE_NS);
	assert_true(sl_dp_lane_close_ns(a) <= now_ns);
}

static void
sl_dp_lane_poll__a_lone_end_leaves_without_asking(void **state)
{
	uint64_t stop_ns;

	(void)state;
	/* b is gone: a reads what b sent last, then hears nothing for longer than the timeout. */
	sl_dp_lane_poll(a, now_ns);
	now_ns += 2 * SL_NS_PER_S;
	stop_ns = now_ns;
	sl_dp_lane_stop(a, stop_ns);
	while (sl_dp_lane_close_ns(a) == UINT64_MAX && now_ns < stop_ns + SL_NS_PER_S) {
		now_ns += STEP_NS;
		sl_dp_lane_poll(a, now_ns);
	}
	assert_int_equal(a->life.state, SL_DP_LANE_LEFT);
	assert_int_equal(sl_dp_lane_close_ns(a), now_ns);
	assert_true(now_ns >= stop_ns + SL_DP_DRAIN_NS &&
		    now_ns < stop_ns + SL_DP_DRAIN_NS + STEP_NS);
	assert_int_equal(sl_link_stat(a->link, tx_leave), 0);
}

static void
sl_dp_lane_poll__each_lane_learns_the_peer_mac_from_its_own_frames(void **state)
{
	struct sl_dp_lane *a1 = &port_a.lane[1], *b1 = &port_b.lane[1];
	struct rte_ether_addr mac;

	(void)state;
	/* Two different addresses, neither the broadcast a lane sends to until it learns. */
	assert_false(rte_is_same_ether_addr(&port_a.mac, &port_b.mac));
	assert_false(rte_is_broadcast_ether_addr(&port_a.mac));
	assert_false(rte_is_broadcast_ether_addr(&port_b.mac));
	/* Lane 0 of each end learned the other from its frames; lane 1 received none yet. */
	assert_true(a->peer_known && b->peer_known);
	assert_true(rte_is_same_ether_addr(&a->peer, &port_b.mac));
	assert_true(rte_is_same_ether_addr(&b->peer, &port_a.mac));
	assert_false(a1->peer_known || b1->peer_known);
	assert_true(rte_is_broadcast_ether_addr(&a1->peer));
	sl_dp_port_peer(&port_a, &mac);
	assert_true(rte_is_same_ether_addr(&mac, &port_b.mac));
	/* Lane 1 learns from what arrives on its own queue. */
	for (unsigned int i = 0; i < 100; i++) {
		now_ns += STEP_NS;
		sl_dp_lane_poll(a1, now_ns);
		sl_dp_lane_poll(b1, now_ns);
	}
	assert_true(a1->peer_known && b1->peer_known);
	assert_true(rte_is_same_ether_addr(&a1->peer, &port_b.mac));
	assert_true(rte_is_same_ether_addr(&b1->peer, &port_a.mac));
}

static int
run_poll_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			sl_dp_lane_poll__stop_drains_says_goodbye_and_the_peer_goes_quiet,
			pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			sl_dp_lane_poll__quiet_lane_reads_nothing_until_its_port_cycles, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			sl_dp_lane_poll__quiet_lane_wakes_after_its_timer_if_the_port_stays_up,
			pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			sl_dp_lane_poll__an_end_that_answers_while_leaving_holds_its_port,
			pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(sl_dp_lane_poll__a_lone_end_leaves_without_asking,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			sl_dp_lane_poll__each_lane_learns_the_peer_mac_from_its_own_frames,
			pair_setup, pair_teardown),
	};
	int failed;

	pool = test_dp_eal_pool("test_dp_lane_life", POOL_MBUFS);
	if (pool == NULL)
		return 1;
	failed = cmocka_run_group_tests_name("dp/lane_life: lanes", tests, NULL, NULL);
	test_dp_eal_pool_free(pool);
	return failed;
}

int
main(void)
{
	return run_transition_tests() + run_poll_tests();
}
