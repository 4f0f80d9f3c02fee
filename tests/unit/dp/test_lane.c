/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/dp/lane.c on a real ethdev: net_ring0, whose TX ring is its own RX ring, so the
 * lane's link talks to itself. Every received frame lands in exactly one place (not for sluice,
 * chained, or the link), the link comes up, and test payloads sent through it come back
 * exactly once, in order, intact, with the zero-copy TX path and its reference counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "sl_dp.h"
#include "dp_eal.h"
#include "sl_traffic.h"

static struct rte_mempool *pool;
static struct sl_dp_port port;
static struct sl_traffic_link traffic;
static uint64_t now_ns;

static int
setup(void **state)
{
	char err[256];
	struct sl_dp_port_conf conf = test_dp_port_conf("net_ring0", 10 * SL_NS_PER_US);

	(void)state;
	pool = test_dp_eal_pool("test_dp_lane", 4095);
	if (pool == NULL || sl_dp_port_open(&port, &conf, pool, err, sizeof(err)) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sl_dp_port_close(&port);
	/* Every mbuf came back: the links, lanes and driver released what they held. */
	if (rte_mempool_avail_count(pool) != 4095)
		return -1;
	return test_dp_eal_pool_free(pool);
}

static void
poll_for(uint64_t ns)
{
	for (uint64_t end = now_ns + ns; now_ns < end; now_ns += SL_NS_PER_US)
		sl_dp_lane_poll(&port.lane[0], now_ns);
}

static void
inject(struct rte_mbuf *m)
{
	assert_int_equal(rte_eth_tx_burst(port.port_id, 0, &m, 1), 1);
}

static struct rte_mbuf *
frame(uint16_t type, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eth;

	assert_non_null(m);
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, len);
	memset(eth, 0, len);
	eth->ether_type = rte_cpu_to_be_16(type);
	return m;
}

static void
sl_dp_lane_poll__link_comes_up_over_loopback(void **state)
{
	(void)state;
	assert_false(sl_dp_port_peer_up(&port, now_ns));
	poll_for(2 * SL_NS_PER_MS);
	assert_int_equal(sl_link_state(port.lane[0].link), SL_LINK_NORMAL);
	assert_true(sl_dp_port_peer_up(&port, now_ns));
	assert_false(sl_dp_port_peer_up(&port, now_ns + 2 * SL_NS_PER_S));
	assert_int_equal(port.lane[0].stats.rx_pkts, sl_link_stat(port.lane[0].link, rx_frames));
}

static void
sl_dp_lane_poll__counts_foreign_and_chained_frames(void **state)
{
	const struct sl_dp_lane_stats *s = &port.lane[0].stats;
	uint64_t rx0 = s->rx_pkts, link0 = sl_link_stat(port.lane[0].link, rx_frames);
	struct rte_mbuf *head = frame(SL_ETHERTYPE, 40), *tail = frame(SL_ETHERTYPE, 40);

	(void)state;
	inject(frame(0x0806, 60)); /* ARP */
	assert_int_equal(rte_pktmbuf_chain(head, tail), 0);
	inject(head);
	poll_for(SL_NS_PER_US);
	assert_int_equal(s->rx_drop_not_sluice, 1);
	assert_int_equal(s->rx_drop_chained, 1);
	assert_int_equal(s->rx_pkts - rx0, 2 + sl_link_stat(port.lane[0].link, rx_frames) - link0);
}

static void
sl_dp_lane_poll__payloads_delivered_once_in_order(void **state)
{
	struct sl_traffic_link_conf tc = {
		.send = true,
		.check = true,
		.body_bytes = 512,
		.frames = 5000,
		.pool = pool,
	};
	struct sl_dp_lane *l = &port.lane[0];

	(void)state;
	assert_int_equal(sl_traffic_link_init(&traffic, &tc), 0);
	l->app = (struct sl_dp_app){.produce = sl_traffic_link_produce,
				    .consume = sl_traffic_link_consume,
				    .ctx = &traffic};
	poll_for(20 * SL_NS_PER_MS);
	assert_int_equal(traffic.stats.generated, 5000);
	assert_int_equal(traffic.stats.delivered, 5000);
	assert_int_equal(traffic.stats.lost, 0);
	assert_int_equal(traffic.stats.duplicated, 0);
	assert_int_equal(traffic.stats.reordered, 0);
	assert_int_equal(traffic.stats.corrupted_accepted, 0);
	assert_int_equal(sl_link_stat(l->link, tx_data), 5000);
	assert_int_equal(l->stats.tx_drop_nombuf + l->stats.tx_drop_refused, 0);
	l->app = (struct sl_dp_app){0};
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_dp_lane_poll__link_comes_up_over_loopback),
		cmocka_unit_test(sl_dp_lane_poll__counts_foreign_and_chained_frames),
		cmocka_unit_test(sl_dp_lane_poll__payloads_delivered_once_in_order),
	};

	return cmocka_run_group_tests_name("dp/lane", tests, setup, teardown);
}
