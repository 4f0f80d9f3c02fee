/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/dp/worker.c on a real ethdev: net_ring0, whose TX ring is its own RX ring, so
 * a frame sent on the port comes back to the worker. Each received frame must land in exactly
 * one counter: keepalive, not-sluice, malformed, bad VCODE or unhandled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "sl_dp.h"
#include "sl_wire.h"

static struct rte_mempool *pool;
static struct sl_dp_port port;
static struct sl_dp_port *ports[1] = {&port};
static struct sl_dp_worker worker;

static const struct sl_wire_fmt fmt = {.mode = SL_WIRE_MODE_FAITHFUL, .scope_bytes = 0};

/* Send one frame of ethertype type whose body is body[0, len) through the ring port. */
static void
inject(uint16_t type, const uint8_t *body, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eth;

	assert_non_null(m);
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eth) + len));
	memset(eth, 0, sizeof(*eth));
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[5] = 0x0b;
	eth->ether_type = rte_cpu_to_be_16(type);
	memcpy(eth + 1, body, len);
	assert_int_equal(rte_eth_tx_burst(port.port_id, 0, &m, 1), 1);
}

static uint64_t
counter(const char *name)
{
	for (unsigned int i = 0; i < sl_dp_queue_stat_count; i++)
		if (strcmp(sl_dp_queue_stat_desc[i].name, name) == 0)
			return sl_stat_get(&port.q[0], &sl_dp_queue_stat_desc[i]);
	fail_msg("no counter %s", name);
	return 0;
}

static int
setup(void **state)
{
	char prefix[64], err[256];
	char *argv[] = {"test_dp", "--no-huge", "-m", "256", "--no-pci", "--log-level=error",
			"--vdev", "net_ring0", "--file-prefix", prefix};
	struct sl_dp_port_conf conf = {
		.device = "net_ring0",
		.nb_queues = 1,
		.rx_desc = 256,
		.tx_desc = 256,
		.learn_peer = true,
		.peer_timeout_ns = SL_NS_PER_S,
	};

	(void)state;
	snprintf(prefix, sizeof(prefix), "sl-test-dp-%d", getpid());
	if (rte_eal_init((int)SL_ARRAY_SIZE(argv), argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("test_dp", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL || sl_dp_port_open(&port, &conf, pool, err, sizeof(err)) != 0)
		return -1;
	worker = (struct sl_dp_worker){.ports = ports, .nb_ports = 1, .queue = 0, .pool = pool,
				       .keepalive_ns = SL_NS_PER_S};
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sl_dp_port_close(&port);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

static void
sl_dp_worker_poll__classifies_every_frame_once(void **state)
{
	uint8_t body[SL_WIRE_CTRL_MAX];
	size_t n = sl_wire_encode_ctrl(&fmt, body, 0, SL_WIRE_KEY_IDLE, 0);
	uint8_t bad_syn[4] = {0xC0, 0x00, 0x00, 0x01};
	uint8_t data[64];
	size_t dn;

	(void)state;
	inject(SL_ETHERTYPE, body, n);            /* keepalive */
	inject(0x0800, body, n);                  /* IPv4: not for sluice */
	inject(SL_ETHERTYPE, bad_syn, 4);         /* SYN 11: malformed */
	inject(SL_ETHERTYPE, body, 1);            /* shorter than a link header */
	body[1] ^= 0x01;                          /* flip a VCODE bit */
	inject(SL_ETHERTYPE, body, n);
	memset(data, 0xab, sizeof(data));
	dn = sl_wire_encode_data(&fmt, data, SL_WIRE_META_VALID, 0, data + 2, sizeof(data) - 2);
	assert_int_equal(dn, 2);
	inject(SL_ETHERTYPE, data, sizeof(data)); /* a data frame: nothing consumes it yet */

	sl_dp_worker_poll(&worker, 1000);
	assert_int_equal(counter("rx_pkts"), 6);
	assert_int_equal(counter("keepalive_rx"), 1);
	assert_int_equal(counter("rx_drop_not_sluice"), 1);
	assert_int_equal(counter("rx_drop_malformed"), 2);
	assert_int_equal(counter("rx_drop_bad_vcode"), 1);
	assert_int_equal(counter("rx_drop_unhandled"), 1);
	assert_true(sl_dp_port_peer_up(&port, 1000));
	assert_int_equal(port.peer.addr_bytes[5], 0x0b); /* learned from the keepalive */
	assert_false(sl_dp_port_peer_up(&port, 1000 + 2 * SL_NS_PER_S));
}

static void
sl_dp_worker_poll__sends_keepalive_on_schedule(void **state)
{
	uint64_t tx0 = counter("keepalive_tx"), rx0 = counter("keepalive_rx");

	(void)state;
	worker.sends_keepalive = true;
	worker.next_keepalive_ns[0] = 0;
	sl_dp_worker_poll(&worker, 10 * SL_NS_PER_S);     /* due: sends one */
	sl_dp_worker_poll(&worker, 10 * SL_NS_PER_S + 1); /* not due; receives it back */
	assert_int_equal(counter("keepalive_tx") - tx0, 1);
	assert_int_equal(counter("keepalive_rx") - rx0, 1);
	sl_dp_worker_poll(&worker, 11 * SL_NS_PER_S);     /* due again */
	sl_dp_worker_poll(&worker, 11 * SL_NS_PER_S + 1);
	assert_int_equal(counter("keepalive_tx") - tx0, 2);
	assert_int_equal(counter("keepalive_rx") - rx0, 2);
	assert_int_equal(counter("tx_drop_refused"), 0);
	worker.sends_keepalive = false;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_dp_worker_poll__classifies_every_frame_once),
		cmocka_unit_test(sl_dp_worker_poll__sends_keepalive_on_schedule),
	};

	return cmocka_run_group_tests_name("dp/worker", tests, setup, teardown);
}
