/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/pacer/heap (one packet per sort, WF2Q+) and drivers/pacer/tbucket (token
 * bucket plus wake-up heap): both pace a flow exactly; the heap sorts once per packet; the
 * token bucket lets an idle flow burst its bucket, which a pacer must not do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "pacer_test_util.h"

static struct sl_pacer *
make(const char *impl, uint32_t flows, uint64_t bucket_bytes)
{
	struct sl_pacer_conf c = test_conf(impl, flows);
	struct sl_pacer *p;

	c.bucket_bytes = bucket_bytes;
	p = sl_pacer_create(&c);
	assert_non_null(p);
	return p;
}

static void
heap_dequeue__exact_gaps_one_sort_per_packet(void **state)
{
	struct sl_pacer *p = make("heap", 4, 0);
	struct sl_pkt out[400];
	uint64_t last[4] = {0};
	unsigned seen[4] = {0};

	(void)state;
	for (uint32_t f = 0; f < 4; f++) {
		assert_int_equal(sl_pacer_set_rate(p, f, (f + 1) * SL_BPS_PER_GBPS), 0);
		assert_int_equal(sl_pacer_backlog(p, f, 100, 1250), 0);
	}
	assert_int_equal(test_drain(p, 0, out, 400, UINT64_MAX - 1), 400);
	for (unsigned i = 0; i < 400; i++) {
		uint32_t f = out[i].flow;

		/* 1250 B at (f + 1) Gbps is 10 / (f + 1) us; the link adds at most 3 x 100 ns. */
		if (seen[f]++ > 0)
			assert_in_range(out[i].tx_ns - last[f], 10000 / (f + 1) - 300,
					10000 / (f + 1) + 300);
		last[f] = out[i].tx_ns;
	}
	assert_int_equal(sl_pacer_stat(p, decisions), 400);
	sl_pacer_free(p);
}

static void
tbucket_dequeue__idle_flow_bursts_its_bucket(void **state)
{
	/* Bucket of 10 frames of 1000 B at 1 Gbps (8 us each): after idling, 10 go back to back. */
	struct sl_pacer *p = make("tbucket", 1, 10000);
	struct sl_pkt out[20];

	(void)state;
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 20, 1000), 0);
	assert_int_equal(test_drain(p, 0, out, 20, UINT64_MAX - 1), 20);
	for (unsigned i = 1; i < 10; i++)
		assert_int_equal(out[i].tx_ns - out[i - 1].tx_ns, 80); /* the link, not the rate */
	for (unsigned i = 11; i < 20; i++)
		assert_int_equal(out[i].tx_ns - out[i - 1].tx_ns, 8000);
	sl_pacer_free(p);
}

static void
tbucket_dequeue__one_frame_bucket_paces(void **state)
{
	struct sl_pacer *p = make("tbucket", 2, 1000);
	struct sl_pkt out[200];

	(void)state;
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_set_rate(p, 1, 2 * SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 100, 1000), 0);
	assert_int_equal(sl_pacer_backlog(p, 1, 100, 1000), 0);
	assert_int_equal(test_drain(p, 0, out, 200, 399 * SL_NS_PER_US), 150);
	/* By 399 us flow 0 sent 50 (8 us apart) and flow 1 all 100 (4 us apart). */
	{
		unsigned n0 = 0;

		for (unsigned i = 0; i < 150; i++)
			n0 += out[i].flow == 0;
		assert_int_equal(n0, 50);
	}
	sl_pacer_free(p);
}

static void
tbucket_dequeue__frame_larger_than_bucket_still_paced(void **state)
{
	/* 9000 B frames through a 1500 B bucket at 1 Gbps: one every 72 us, none stuck. */
	struct sl_pacer *p = make("tbucket", 1, 1500);
	struct sl_pkt out[5];

	(void)state;
	assert_int_equal(sl_pacer_set_rate(p, 0, SL_BPS_PER_GBPS), 0);
	assert_int_equal(sl_pacer_backlog(p, 0, 5, 9000), 0);
	assert_int_equal(test_drain(p, 0, out, 5, SL_NS_PER_S), 5);
	for (unsigned i = 2; i < 5; i++)
		assert_int_equal(out[i].tx_ns - out[i - 1].tx_ns, 72000);
	sl_pacer_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(heap_dequeue__exact_gaps_one_sort_per_packet),
		cmocka_unit_test(tbucket_dequeue__idle_flow_bursts_its_bucket),
		cmocka_unit_test(tbucket_dequeue__one_frame_bucket_paces),
		cmocka_unit_test(tbucket_dequeue__frame_larger_than_bucket_still_paced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
