/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/traffic/payload.c: the checker's classification (delivered, lost, reordered,
 * duplicated, corrupted), and the generator's and consumer's rate credit and frame limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mbuf.h>

#include "sl_dp.h"
#include "dp_eal.h"
#include "sl_traffic.h"

static struct rte_mempool *pool;

static int
setup(void **state)
{
	(void)state;
	pool = test_dp_eal_pool("test_dp_traffic", 8191);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return test_dp_eal_pool_free(pool);
}

/* Generate n payloads from a sender into out[]. */
static void
generate(struct sl_traffic_link *tx, struct rte_mbuf **out, unsigned n)
{
	assert_int_equal(sl_traffic_link_produce(tx, 1, out, n), n);
}

static void
sl_traffic_link_consume__classifies_arrivals(void **state)
{
	struct sl_traffic_link_conf c = {
		.send = true, .check = true, .body_bytes = 100, .pool = pool};
	struct sl_traffic_link tx, rx;
	struct rte_mbuf *m[6], *dup;

	(void)state;
	assert_int_equal(sl_traffic_link_init(&tx, &c), 0);
	assert_int_equal(sl_traffic_link_init(&rx, &c), 0);
	generate(&tx, m, 6); /* seq 0..5 */
	dup = rte_pktmbuf_copy(m[2], pool, 0, UINT32_MAX);
	rte_pktmbuf_mtod(m[5], uint8_t *)[60] ^= 0x10; /* a flipped payload bit */

	assert_int_equal(sl_traffic_link_consume(&rx, 10, &m[0], 2), 2); /* 0, 1 */
	assert_int_equal(sl_traffic_link_consume(&rx, 20, &m[3], 2), 2); /* 3, 4: 2 missing */
	assert_int_equal(rx.stats.lost, 1);
	assert_int_equal(sl_traffic_link_consume(&rx, 30, &m[2], 1), 1); /* 2 late */
	assert_int_equal(rx.stats.lost, 0);
	assert_int_equal(rx.stats.reordered, 1);
	assert_int_equal(sl_traffic_link_consume(&rx, 40, &dup, 1), 1); /* 2 again */
	assert_int_equal(rx.stats.duplicated, 1);
	assert_int_equal(sl_traffic_link_consume(&rx, 50, &m[5], 1), 1); /* corrupted */
	assert_int_equal(rx.stats.corrupted_accepted, 1);
	assert_int_equal(rx.stats.delivered, 5);
	assert_int_equal(rx.stats.bytes, 500);
	assert_int_equal(rx.stats.first_ns, 10);
	assert_int_equal(rx.stats.last_ns, 30);
}

static void
sl_traffic_link_consume__judges_from_first_payload(void **state)
{
	struct sl_traffic_link_conf c = {
		.send = true, .check = true, .body_bytes = 64, .pool = pool};
	struct sl_traffic_link tx, rx;
	struct rte_mbuf *m[5];

	(void)state;
	assert_int_equal(sl_traffic_link_init(&tx, &c), 0);
	assert_int_equal(sl_traffic_link_init(&rx, &c), 0);
	generate(&tx, m, 5);
	rte_pktmbuf_free_bulk(m, 2); /* a receiver that starts at seq 2 */
	assert_int_equal(sl_traffic_link_consume(&rx, 1, &m[2], 3), 3);
	assert_int_equal(rx.stats.first_seq, 2);
	assert_int_equal(rx.stats.delivered, 3);
	assert_int_equal(rx.stats.lost, 0);
}

static void
sl_traffic_link_init__rejects_bad_sizes(void **state)
{
	struct sl_traffic_link t;
	struct sl_traffic_link_conf c = {
		.send = true, .body_bytes = SL_TRAFFIC_LINK_MIN_BODY - 1, .pool = pool};

	(void)state;
	assert_int_equal(sl_traffic_link_init(&t, &c), -EINVAL);
	c.body_bytes = RTE_MBUF_DEFAULT_DATAROOM + 1;
	assert_int_equal(sl_traffic_link_init(&t, &c), -EINVAL);
	c.body_bytes = RTE_MBUF_DEFAULT_DATAROOM;
	assert_int_equal(sl_traffic_link_init(&t, &c), 0);
}

static void
sl_traffic_link_produce__rate_credit_and_limit(void **state)
{
	/* 1000-byte bodies at 8 Mbit/s: one payload per ms, plus one at the start. */
	struct sl_traffic_link_conf c = {
		.send = true, .body_bytes = 1000, .rate_bps = 8000000, .frames = 12, .pool = pool};
	struct sl_traffic_link t;
	struct rte_mbuf *m[32];
	unsigned n;

	(void)state;
	assert_int_equal(sl_traffic_link_init(&t, &c), 0);
	n = sl_traffic_link_produce(&t, SL_NS_PER_MS, m, 32); /* start */
	assert_int_equal(n, 1);
	rte_pktmbuf_free_bulk(m, n);
	n = sl_traffic_link_produce(&t, SL_NS_PER_MS + 5 * SL_NS_PER_MS, m, 32);
	assert_int_equal(n, 5);
	rte_pktmbuf_free_bulk(m, n);
	n = sl_traffic_link_produce(&t, SL_NS_PER_MS + 100 * SL_NS_PER_MS, m, 32);
	assert_int_equal(n, 6); /* capped by frames = 12 */
	rte_pktmbuf_free_bulk(m, n);
	assert_int_equal(sl_traffic_link_produce(&t, SL_NS_PER_S, m, 32), 0);
	assert_int_equal(t.stats.generated, 12);
}

static void
sl_traffic_link_produce__stall_leaves_one_burst_of_credit(void **state)
{
	/* 8 Mbit/s of 1000-byte bodies, one per ms. Held back for a second (a flow-control
	 * pause), the generator may send one burst at once, then its rate again, not the
	 * thousand payloads the second would have allowed. */
	struct sl_traffic_link_conf c = {
		.send = true, .body_bytes = 1000, .rate_bps = 8000000, .pool = pool};
	struct sl_traffic_link t;
	struct rte_mbuf *m[SL_DP_BURST];
	uint64_t now = SL_NS_PER_MS, sent = 0;

	(void)state;
	assert_int_equal(sl_traffic_link_init(&t, &c), 0);
	assert_int_equal(sl_traffic_link_produce(&t, now, m, SL_DP_BURST), 1);
	rte_pktmbuf_free_bulk(m, 1);
	now += SL_NS_PER_S;
	assert_int_equal(sl_traffic_link_produce(&t, now, m, SL_DP_BURST), SL_DP_BURST);
	rte_pktmbuf_free_bulk(m, SL_DP_BURST);
	assert_int_equal(sl_traffic_link_produce(&t, now, m, SL_DP_BURST), 0);
	/* Then exactly the rate: 100 payloads in the next 100 ms, polled every 0.1 ms. */
	for (unsigned i = 1; i <= 1000; i++) {
		unsigned n =
			sl_traffic_link_produce(&t, now + i * 100 * SL_NS_PER_US, m, SL_DP_BURST);

		rte_pktmbuf_free_bulk(m, n);
		sent += n;
	}
	assert_int_equal(sent, 100);
}

static void
sl_traffic_link_consume__throttled(void **state)
{
	/* Consumer at 8 Mbit/s of 1000-byte bodies: one per ms after the first. */
	struct sl_traffic_link_conf c = {.send = true,
					 .check = true,
					 .body_bytes = 1000,
					 .consume_bps = 8000000,
					 .pool = pool};
	struct sl_traffic_link tx, rx;
	struct rte_mbuf *m[10];

	(void)state;
	assert_int_equal(sl_traffic_link_init(&tx, &c), 0);
	assert_int_equal(sl_traffic_link_init(&rx, &c), 0);
	generate(&tx, m, 10);
	assert_int_equal(sl_traffic_link_consume(&rx, SL_NS_PER_MS, m, 10), 1);
	assert_int_equal(sl_traffic_link_consume(&rx, 4 * SL_NS_PER_MS, m + 1, 9), 3);
	assert_int_equal(sl_traffic_link_consume(&rx, 100 * SL_NS_PER_MS, m + 4, 6), 6);
	assert_int_equal(rx.stats.delivered, 10);
	assert_int_equal(rx.stats.lost, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_traffic_link_consume__classifies_arrivals),
		cmocka_unit_test(sl_traffic_link_consume__judges_from_first_payload),
		cmocka_unit_test(sl_traffic_link_init__rejects_bad_sizes),
		cmocka_unit_test(sl_traffic_link_produce__rate_credit_and_limit),
		cmocka_unit_test(sl_traffic_link_produce__stall_leaves_one_burst_of_credit),
		cmocka_unit_test(sl_traffic_link_consume__throttled),
	};

	return cmocka_run_group_tests_name("dp/traffic", tests, setup, teardown);
}
