/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/pacer/tsw.c and its two drivers, drivers/pacer/carousel and drivers/pacer/cffs:
 * bucket quantization (never early, less than one slot late, no drift), parking beyond the
 * horizon, and identical schedules from the slot scan and the FFS search.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "pacer_test_util.h"

#define NPKTS 500u

static unsigned
run(const char *impl, uint64_t slot_ns, uint64_t horizon_ns, uint32_t flows, uint64_t rate_bps,
    uint32_t len, struct sl_pkt *out, struct sl_pacer_stats *st)
{
	struct sl_pacer_conf c = test_conf(impl, flows);
	struct sl_pacer *p;
	unsigned n;

	c.slot_ns = slot_ns;
	c.horizon_ns = horizon_ns;
	p = sl_pacer_create(&c);
	assert_non_null(p);
	for (uint32_t f = 0; f < flows; f++) {
		assert_int_equal(sl_pacer_set_rate(p, f, rate_bps + f * 1000), 0);
		assert_int_equal(sl_pacer_backlog(p, f, NPKTS / flows, len), 0);
	}
	n = test_drain(p, 0, out, NPKTS, UINT64_MAX - 1);
	sl_pacer_stats_get(p, st);
	sl_pacer_free(p);
	return n;
}

static void
tsw_pick__late_by_less_than_a_slot_and_never_early(void **state)
{
	static const char *impls[] = {"carousel", "cffs"};
	struct sl_pkt out[NPKTS];
	struct sl_pacer_stats st;

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		/* 1500 B at 3 Gbps: 4 us apart, 1 us slots. */
		assert_int_equal(
			run(impls[k], 1000, SL_NS_PER_S, 1, 3 * SL_BPS_PER_GBPS, 1500, out, &st),
			NPKTS);
		for (uint64_t i = 1; i < NPKTS; i++) {
			uint64_t gap = out[i].tx_ns - out[i - 1].tx_ns;

			/* Each gap is the exact 4 us rounded up to the slot: no drift. */
			assert_int_equal(gap, 4000);
		}
	}
}

static void
tsw_insert__parks_beyond_horizon_without_leaving_early(void **state)
{
	static const char *impls[] = {"carousel", "cffs"};
	struct sl_pkt out[NPKTS];
	struct sl_pacer_stats st;

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		/* 9000 B at 100 Kbps is 720 ms apart; the wheel spans only 65.5 ms. */
		assert_int_equal(run(impls[k], 1000, 65 * SL_NS_PER_MS, 1, SL_PACER_RATE_MIN_BPS,
				     9000, out, &st),
				 NPKTS);
		for (uint64_t i = 0; i < NPKTS; i++) /* each at its slot's last ns */
			assert_int_equal(out[i].tx_ns, i * 720 * SL_NS_PER_MS + 999);
		assert_true(st.beyond_horizon >= NPKTS - 1);
	}
}

static void
tsw_collect__scan_and_ffs_give_the_same_schedule(void **state)
{
	struct sl_pkt a[NPKTS], b[NPKTS];
	struct sl_pacer_stats st;

	(void)state;
	assert_int_equal(run("carousel", 256, SL_NS_PER_MS, 50, 1 * SL_BPS_PER_GBPS, 800, a, &st),
			 NPKTS);
	assert_int_equal(run("cffs", 256, SL_NS_PER_MS, 50, 1 * SL_BPS_PER_GBPS, 800, b, &st),
			 NPKTS);
	for (unsigned i = 0; i < NPKTS; i++) {
		assert_int_equal(a[i].tx_ns, b[i].tx_ns);
		assert_int_equal(a[i].flow, b[i].flow);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tsw_pick__late_by_less_than_a_slot_and_never_early),
		cmocka_unit_test(tsw_insert__parks_beyond_horizon_without_leaving_early),
		cmocka_unit_test(tsw_collect__scan_and_ffs_give_the_same_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
