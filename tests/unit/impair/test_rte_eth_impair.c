/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/net/impair/rte_eth_impair.c in one process: EAL without hugepages, net_null
 * ports underneath, the PMD linked in statically. Probe and its errors, ownership of the
 * underlying port, the TX and RX paths through the engine (drop lists, duplication, delay
 * released by later bursts), the basic stats and xstats, and close handing the port back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "sl_dp.h"
#include <rte_mbuf.h>

#define BURST 32

static struct rte_mempool *pool;
static unsigned n_ports; /**< net_null<i> / net_impair<i> pairs made so far */

/* A net_null port and a net_impair over it with devargs `args`, configured and started. */
static int
make_port(const char *args, uint16_t *port, uint16_t *under)
{
	char null_name[32], name[32], devargs[256];
	struct rte_eth_conf conf;
	int rc;

	snprintf(null_name, sizeof(null_name), "net_null%u", n_ports);
	snprintf(name, sizeof(name), "net_impair%u", n_ports);
	n_ports++;
	snprintf(devargs, sizeof(devargs), "dev=%s%s%s", null_name, *args ? "," : "", args);
	rc = rte_vdev_init(null_name, "");
	if (rc == 0)
		rc = rte_vdev_init(name, devargs);
	if (rc != 0)
		return rc;
	assert_int_equal(rte_eth_dev_get_port_by_name(name, port), 0);
	assert_int_equal(rte_eth_dev_get_port_by_name(null_name, under), 0);
	memset(&conf, 0, sizeof(conf));
	assert_int_equal(rte_eth_dev_configure(*port, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup(*port, 0, 256, rte_socket_id(), NULL, pool), 0);
	assert_int_equal(rte_eth_tx_queue_setup(*port, 0, 256, rte_socket_id(), NULL), 0);
	assert_int_equal(rte_eth_dev_start(*port), 0);
	return 0;
}

static uint64_t
xstat(uint16_t port, const char *name)
{
	uint64_t id, value;

	assert_int_equal(rte_eth_xstats_get_id_by_name(port, name, &id), 0);
	assert_int_equal(rte_eth_xstats_get_by_id(port, &id, &value, 1), 1);
	return value;
}

static unsigned
send_frames(uint16_t port, unsigned n)
{
	struct rte_mbuf *m[BURST];
	unsigned sent = 0;

	while (sent < n) {
		unsigned b = RTE_MIN((unsigned)BURST, n - sent);

		assert_int_equal(rte_pktmbuf_alloc_bulk(pool, m, b), 0);
		for (unsigned i = 0; i < b; i++)
			assert_non_null(rte_pktmbuf_append(m[i], 64));
		assert_int_equal(rte_eth_tx_burst(port, 0, m, (uint16_t)b), b);
		sent += b;
	}
	return sent;
}

static void
impair_probe__bad_devargs_fail(void **state)
{
	uint16_t id;

	(void)state;
	assert_int_equal(rte_vdev_init("net_nullbad", ""), 0);
	assert_int_equal(rte_vdev_init("net_impairbad", "dev=net_nullbad,tx_loss=1.5"), -EINVAL);
	assert_int_equal(rte_vdev_init("net_impairbad", "dev=net_nullbad,bogus=1"), -EINVAL);
	assert_int_equal(rte_vdev_init("net_impairbad", "tx_loss=0.1"), -EINVAL);
	assert_true(rte_vdev_init("net_impairbad", "dev=net_nothere") < 0);
	assert_int_not_equal(rte_eth_dev_get_port_by_name("net_impairbad", &id), 0);
	/* The failed probes left the underlying port free. */
	assert_int_equal(rte_eth_dev_get_port_by_name("net_nullbad", &id), 0);
	assert_int_equal(rte_eth_find_next_owned_by(id, RTE_ETH_DEV_NO_OWNER), id);
	assert_int_equal(rte_vdev_uninit("net_nullbad"), 0);
}

static void
impair_probe__owns_the_underlying_port(void **state)
{
	struct rte_eth_dev_info info;
	uint16_t port, under;
	unsigned visible = 0;
	uint16_t p;

	(void)state;
	assert_int_equal(make_port("", &port, &under), 0);
	RTE_ETH_FOREACH_DEV(p)
	visible += p == under;
	assert_int_equal(visible, 0);
	assert_int_equal(rte_eth_dev_info_get(port, &info), 0);
	assert_string_equal(info.driver_name, "net_impair");
	assert_true(info.max_rx_queues >= 1);
	/* Closing gives the port back. */
	assert_int_equal(rte_eth_dev_stop(port), 0);
	assert_int_equal(rte_eth_dev_close(port), 0);
	assert_int_equal(rte_eth_find_next_owned_by(under, RTE_ETH_DEV_NO_OWNER), under);
}

static void
impair_tx_burst__drop_idx_counted_and_off_the_wire(void **state)
{
	struct rte_eth_stats st;
	uint16_t port, under;

	(void)state;
	assert_int_equal(make_port("tx_drop_idx=0:5-7:99", &port, &under), 0);
	send_frames(port, 100);
	assert_int_equal(xstat(port, "tx_impair_frames"), 100);
	assert_int_equal(xstat(port, "tx_impair_drop_idx"), 5);
	assert_int_equal(xstat(port, "tx_impair_released"), 95);
	assert_int_equal(rte_eth_stats_get(port, &st), 0);
	assert_int_equal(st.opackets, 95); /* what reached the underlying port */
	assert_int_equal(xstat(port, "rx_impair_frames"), 0);
	assert_int_equal(rte_eth_xstats_reset(port), 0);
	assert_int_equal(xstat(port, "tx_impair_drop_idx"), 0);
}

static void
impair_rx_burst__dup_delivers_copies_and_counts_them(void **state)
{
	struct rte_mbuf *m[BURST];
	struct rte_eth_stats st;
	uint64_t got = 0;
	uint16_t port, under;

	(void)state;
	assert_int_equal(make_port("rx_dup=1", &port, &under), 0);
	assert_int_equal(rte_eth_stats_reset(port), 0);
	for (int i = 0; i < 10; i++) {
		uint16_t n = rte_eth_rx_burst(port, 0, m, BURST);

		for (uint16_t j = 0; j + 1 < n; j += 2)
			assert_memory_equal(rte_pktmbuf_mtod(m[j], void *),
					    rte_pktmbuf_mtod(m[j + 1], void *), m[j]->data_len);
		got += n;
		rte_pktmbuf_free_bulk(m, n);
	}
	assert_int_equal(xstat(port, "rx_impair_duplicated"), xstat(port, "rx_impair_frames"));
	assert_int_equal(xstat(port, "rx_impair_released"), got);
	/* Copies are delivered, and the port reads no faster than the application takes. */
	assert_true(got == 10 * BURST);
	assert_true(xstat(port, "rx_impair_frames") <= got / 2 + BURST);
	/* ipackets counts what the application received, not what the null port produced. */
	assert_int_equal(rte_eth_stats_get(port, &st), 0);
	assert_int_equal(st.ipackets, got);
}

static void
impair_tx_burst__delay_released_by_later_bursts(void **state)
{
	const uint64_t delay_cycles = rte_get_timer_hz() / 500; /* 2 ms */
	struct rte_eth_stats st;
	uint64_t t0, t_sent, now;
	uint16_t port, under;

	(void)state;
	assert_int_equal(make_port("tx_delay_ns=2000000", &port, &under), 0);
	t0 = rte_get_timer_cycles();
	send_frames(port, 64);
	t_sent = rte_get_timer_cycles();
	assert_int_equal(rte_eth_stats_get(port, &st), 0);
	if (t_sent - t0 < delay_cycles)
		assert_int_equal(st.opackets, 0);
	assert_int_equal(xstat(port, "tx_impair_delayed"), 64);
	/* Zero-frame bursts let them out once due, never before. */
	do {
		rte_eth_tx_burst(port, 0, NULL, 0);
		now = rte_get_timer_cycles();
		assert_int_equal(rte_eth_stats_get(port, &st), 0);
		if (st.opackets > 0)
			assert_true(now - t0 >= delay_cycles);
	} while (st.opackets < 64 && now - t0 < rte_get_timer_hz());
	assert_int_equal(st.opackets, 64);
}

/* With tx_flush_on_rx=1 the RX poll alone releases delayed TX frames. */
static void
impair_rx_burst__tx_flush_on_rx_releases_tx(void **state)
{
	struct rte_mbuf *m[BURST];
	struct rte_eth_stats st;
	uint64_t t0;
	uint16_t port, under;

	(void)state;
	assert_int_equal(make_port("tx_delay_ns=100000,tx_flush_on_rx=1", &port, &under), 0);
	send_frames(port, 64);
	t0 = rte_get_timer_cycles();
	do {
		rte_pktmbuf_free_bulk(m, rte_eth_rx_burst(port, 0, m, BURST));
		assert_int_equal(rte_eth_stats_get(port, &st), 0);
	} while (st.opackets < 64 && rte_get_timer_cycles() - t0 < rte_get_timer_hz());
	assert_int_equal(st.opackets, 64);
	assert_int_equal(rte_vdev_init("net_impairbad", "dev=net_null0,tx_flush_on_rx=2"), -EINVAL);
}

static void
impair_xstats_get_names__both_directions(void **state)
{
	struct rte_eth_xstat_name names[256];
	uint16_t port, under;
	int n;

	(void)state;
	assert_int_equal(make_port("loss=0.5", &port, &under), 0);
	n = rte_eth_xstats_get_names(port, names, 256);
	assert_true(n > 0);
	for (const char *want = "tx_impair_drop_loss", *w2 = "rx_impair_released_bytes"; want;
	     want = w2, w2 = NULL) {
		bool found = false;

		for (int i = 0; i < n; i++)
			found |= strcmp(names[i].name, want) == 0;
		assert_true(found);
	}
}

static int
setup(void **state)
{
	char prefix[64];
	char *argv[] = {"test_rte_eth_impair", "--no-huge", "-m", "256", "--no-pci",
			"--file-prefix",       prefix,      "-l", "0",   "--log-level",
			"lib.eal:error",       NULL};

	(void)state;
	snprintf(prefix, sizeof(prefix), "test_impair_%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	sl_dp_eal_remove_on_signal();
	pool = rte_pktmbuf_pool_create("test", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	return pool == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	uint16_t p;

	(void)state;
	RTE_ETH_FOREACH_DEV(p)
	{
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	sl_dp_eal_cleanup();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(impair_probe__bad_devargs_fail),
		cmocka_unit_test(impair_probe__owns_the_underlying_port),
		cmocka_unit_test(impair_tx_burst__drop_idx_counted_and_off_the_wire),
		cmocka_unit_test(impair_rx_burst__dup_delivers_copies_and_counts_them),
		cmocka_unit_test(impair_tx_burst__delay_released_by_later_bursts),
		cmocka_unit_test(impair_rx_burst__tx_flush_on_rx_releases_tx),
		cmocka_unit_test(impair_xstats_get_names__both_directions),
	};

	return cmocka_run_group_tests_name("rte_eth_impair", tests, setup, teardown);
}
