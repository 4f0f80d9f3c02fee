/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/pacer/pacer.c: the registry, argument checks and their counters, the per-flow
 * FIFOs of length runs, per-flow stats, the link model and pause.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "pacer_test_util.h"
#include "sl_pacer_driver.h"

static void
sl_pacer_create__rejects_bad_conf(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 0);

	(void)state;
	assert_null(sl_pacer_create(&c));
	assert_int_equal(errno, EINVAL);
	c = test_conf(NULL, 4);
	c.link_bps = 1000;
	assert_null(sl_pacer_create(&c));
	assert_int_equal(errno, EINVAL);
	c = test_conf("no-such-pacer", 4);
	assert_null(sl_pacer_create(&c));
	assert_int_equal(errno, ENOENT);
	c = test_conf(NULL, 4);
	c.lookahead_ns = 2 * SL_NS_PER_MS; /* beyond the 1 ms cap */
	assert_null(sl_pacer_create(&c));
	assert_int_equal(errno, EINVAL);
	assert_null(sl_pacer_create(NULL));
}

static void
sl_pacer_create__defaults_to_tassel(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 4);
	struct sl_pacer *p = sl_pacer_create(&c);

	(void)state;
	assert_non_null(p);
	assert_string_equal(sl_pacer_impl_name(p), "tassel");
	assert_true(sl_pacer_mem_bytes(p) > 4 * sizeof(struct sl_pacer_flow));
	assert_int_equal(sl_pacer_next_deadline(p), SL_PACER_NEVER);
	sl_pacer_free(p);
}

static unsigned
noop_dequeue(struct sl_pacer *p, uint64_t now, struct sl_pkt *o, unsigned m)
{
	(void)p, (void)now, (void)o, (void)m;
	return 0;
}

static void
sl_pacer_register__rejects_missing_hooks_and_duplicates(void **state)
{
	struct sl_pacer_ops bad = *sl_pacer_find("tassel");

	(void)state;
	assert_int_equal(sl_pacer_register_failures(), 0);
	assert_non_null(sl_pacer_find("tassel-heap"));
	bad.rate_changed = NULL;
	assert_int_equal(sl_pacer_register(&bad), -EINVAL);
	bad = *sl_pacer_find("tassel");
	bad.dequeue = noop_dequeue;
	assert_int_equal(sl_pacer_register(&bad), -EEXIST); /* "tassel" is taken */
	memset(bad.name, 'x', sizeof(bad.name));            /* not terminated */
	assert_int_equal(sl_pacer_register(&bad), -EINVAL);
	assert_int_equal(sl_pacer_register(NULL), -EINVAL);
}

static void
sl_pacer_set_rate__checks_range_and_counts(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 4);
	struct sl_pacer *p = sl_pacer_create(&c);
	struct sl_pacer_flow_stats st;

	(void)state;
	assert_int_equal(sl_pacer_set_rate(p, 4, SL_BPS_PER_GBPS), -EINVAL);
	assert_int_equal(sl_pacer_set_rate(p, 0, 99999), -ERANGE);
	assert_int_equal(sl_pacer_set_rate(p, 0, 101 * SL_BPS_PER_GBPS), -ERANGE);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_PACER_RATE_MIN_BPS), 0);
	assert_int_equal(sl_pacer_set_rate(p, 1, 100 * SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_stat(p, bad_flow), 1);
	assert_int_equal(sl_pacer_stat(p, bad_rate), 2);
	assert_int_equal(sl_pacer_flow_stats_get(p, 0, &st), 0);
	assert_int_equal(st.rate_bps, SL_PACER_RATE_MIN_BPS);
	assert_int_equal(sl_pacer_flow_stats_get(p, 9, &st), -EINVAL);
	sl_pacer_free(p);
}

static void
sl_pacer_backlog__checks_and_counts(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 4);
	struct sl_pacer *p = sl_pacer_create(&c);

	(void)state;
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 100), -ENOEXEC); /* no rate yet */
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 7, 1, 100), -EINVAL);
	assert_int_equal(sl_pacer_backlog(p, 0, 0, 100), -EINVAL);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 0), -EINVAL);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, SL_PACER_LEN_MAX + 1), -EINVAL);
	assert_int_equal(sl_pacer_backlog(p, 0, UINT32_MAX, 100), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 100), -EINVAL); /* count overflow */
	assert_int_equal(sl_pacer_stat(p, no_rate), 1);
	assert_int_equal(sl_pacer_stat(p, bad_flow), 1);
	assert_int_equal(sl_pacer_stat(p, bad_len), 4);
	sl_pacer_free(p);
}

static void
sl_pacer_backlog__length_runs_keep_fifo_order(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 2);
	static const uint32_t want[] = {100, 100, 200, 300, 300, 100};
	struct sl_pkt out[8];
	struct sl_pacer_flow_stats st;
	struct sl_pacer *p;

	(void)state;
	c.runs = 2;
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_set_rate(p, 1, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 2, 100), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 200), 0); /* spare run 1 */
	assert_int_equal(sl_pacer_backlog(p, 0, 2, 300), 0); /* spare run 2 */
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 300), 0); /* joins the tail run */
	assert_int_equal(sl_pacer_backlog(p, 1, 1, 64), 0);
	assert_int_equal(sl_pacer_backlog(p, 1, 1, 65), -ENOBUFS);
	assert_int_equal(sl_pacer_stat(p, runs_exhausted), 1);
	assert_int_equal(sl_pacer_flow_stats_get(p, 0, &st), 0);
	assert_int_equal(st.queued_pkts, 6);
	/* The pool refills as runs drain, so a later length change succeeds. */
	assert_int_equal(test_drain(p, 0, out, 8, SL_NS_PER_S), 6 + 1);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 100), 0);
	assert_int_equal(test_drain(p, 0, out, 8, SL_NS_PER_S), 1);
	assert_int_equal(out[0].len_bytes, 100);
	assert_int_equal(sl_pacer_backlog(p, 0, 5, 100), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 200), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 2, 300), 0);
	sl_pacer_free(p);
	/* Order check on a fresh pacer. */
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 2, 100), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 200), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 2, 300), 0);
	assert_int_equal(test_drain(p, 0, out, 5, SL_NS_PER_S), 5);
	assert_int_equal(sl_pacer_backlog(p, 0, 1, 100), 0);
	assert_int_equal(test_drain(p, 0, out + 5, 1, SL_NS_PER_S), 1);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(out[i].len_bytes, want[i]);
	assert_int_equal(sl_pacer_flow_stats_get(p, 0, &st), 0);
	assert_int_equal(st.tx_pkts, 6);
	assert_int_equal(st.tx_bytes, 100 + 100 + 200 + 300 + 300 + 100);
	assert_int_equal(st.queued_pkts, 0);
	sl_pacer_free(p);
}

static void
sl_pacer_dequeue_burst__link_model_exact(void **state)
{
	/*
	 * One flow at the link rate: 64 B + 24 B at 100 Gbps is 7.04 ns, with no drift. (The
	 * one-packet-per-sort pacer, so that only the link decides the times.)
	 */
	struct sl_pacer_conf c = test_conf("heap", 1);
	struct sl_pkt out[1000];
	struct sl_pacer *p;

	(void)state;
	c.wire_overhead_bytes = 24;
	p = sl_pacer_create(&c);
	assert_int_equal(sl_pacer_set_rate(p, 0, c.link_bps), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 1000, 64), 0);
	assert_int_equal(test_drain(p, 0, out, 1000, SL_NS_PER_S), 1000);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(out[i].tx_ns, out[0].tx_ns + i * 704 / 100);
	sl_pacer_free(p);
}

static void
sl_pacer_dequeue_burst__clock_backwards_and_pause_counted(void **state)
{
	struct sl_pacer_conf c = test_conf(NULL, 1);
	struct sl_pkt out[4];
	struct sl_pacer *p = sl_pacer_create(&c);

	(void)state;
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 4, 1000), 0);
	assert_int_equal(sl_pacer_dequeue_burst(p, 1000, out, 4), 1);
	assert_int_equal(sl_pacer_dequeue_burst(p, 500, out, 4), 0);
	assert_int_equal(sl_pacer_stat(p, clock_backwards), 1);
	sl_pacer_pause(p, 2000, true);
	assert_int_equal(sl_pacer_next_deadline(p), SL_PACER_NEVER);
	assert_int_equal(sl_pacer_dequeue_burst(p, 50000, out, 4), 0);
	assert_int_equal(sl_pacer_stat(p, paused_calls), 1);
	sl_pacer_pause(p, 60000, false);
	assert_true(sl_pacer_next_deadline(p) >= 60000);
	sl_pacer_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_pacer_create__rejects_bad_conf),
		cmocka_unit_test(sl_pacer_create__defaults_to_tassel),
		cmocka_unit_test(sl_pacer_register__rejects_missing_hooks_and_duplicates),
		cmocka_unit_test(sl_pacer_set_rate__checks_range_and_counts),
		cmocka_unit_test(sl_pacer_backlog__checks_and_counts),
		cmocka_unit_test(sl_pacer_backlog__length_runs_keep_fifo_order),
		cmocka_unit_test(sl_pacer_dequeue_burst__link_model_exact),
		cmocka_unit_test(sl_pacer_dequeue_burst__clock_backwards_and_pause_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
