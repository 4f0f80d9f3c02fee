/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/pacer/rte_sched/rte_sched_pacer.c: the adaptor refuses to run before EAL,
 * then (EAL without hugepages) moves every announced packet through DPDK's librte_sched, in
 * FIFO order per flow, on its own TSC time, and reports rte_sched's memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_eal.h>

#include "sl_dp.h"
#include "pacer_test_util.h"
#include "sl_time.h"

#define FLOWS 64u
#define PKTS 50u

static void
rte_sched_init__needs_eal(void **state)
{
	struct sl_pacer_conf c = test_conf("rte_sched", 4);

	(void)state;
	assert_null(sl_pacer_create(&c));
	assert_int_equal(errno, ENODEV);
}

static int
eal_up(void **state)
{
	char prefix[64];
	char *argv[] = {
		"test", "--no-huge",         "-m",          "256", "--no-pci", "--file-prefix",
		prefix, "--log-level=error", "--no-shconf", NULL};

	(void)state;
	snprintf(prefix, sizeof(prefix), "test-pacer-rs-%d", (int)getpid());
	if (rte_eal_init((int)SL_ARRAY_SIZE(argv) - 1, argv) < 0)
		return -1;
	sl_dp_eal_remove_on_signal();
	return 0;
}

static int
eal_down(void **state)
{
	(void)state;
	sl_dp_eal_cleanup();
	return 0;
}

static void
rte_sched_dequeue__delivers_every_packet_in_order(void **state)
{
	struct sl_pacer_conf c = test_conf("rte_sched", FLOWS);
	uint32_t seen[FLOWS] = {0};
	struct sl_pkt out[64];
	struct sl_pacer *p;
	uint64_t t0, total = 0;

	(void)state;
	c.wire_overhead_bytes = 24;
	p = sl_pacer_create(&c);
	assert_non_null(p);
	assert_true(sl_pacer_mem_bytes(p) > FLOWS * 1024);
	for (uint32_t f = 0; f < FLOWS; f++) {
		assert_int_equal(sl_pacer_set_rate(p, f, (f + 1) * 100 * SL_BPS_PER_MBPS), 0);
		/* 25 short then 25 long: lengths must come out in that order. */
		assert_int_equal(sl_pacer_backlog(p, f, PKTS / 2, 100), 0);
		assert_int_equal(sl_pacer_backlog(p, f, PKTS / 2, 1000), 0);
	}
	t0 = sl_monotonic_ns();
	while (total < FLOWS * PKTS && sl_monotonic_ns() - t0 < 5 * SL_NS_PER_S) {
		unsigned n = sl_pacer_dequeue_burst(p, sl_monotonic_ns() - t0, out, 64);

		for (unsigned i = 0; i < n; i++) {
			assert_true(out[i].flow < FLOWS);
			assert_int_equal(out[i].len_bytes,
					 seen[out[i].flow]++ < PKTS / 2 ? 100 : 1000);
		}
		total += n;
	}
	assert_int_equal(total, FLOWS * PKTS);
	assert_int_equal(sl_pacer_next_deadline(p), SL_PACER_NEVER);
	assert_int_equal(sl_pacer_stat(p, bad_rate), 0);
	sl_pacer_free(p);
}

int
main(void)
{
	const struct CMUnitTest before[] = {
		cmocka_unit_test(rte_sched_init__needs_eal),
	};
	const struct CMUnitTest after[] = {
		cmocka_unit_test(rte_sched_dequeue__delivers_every_packet_in_order),
	};
	int rc = cmocka_run_group_tests(before, NULL, NULL);

	return rc + cmocka_run_group_tests(after, eal_up, eal_down);
}
