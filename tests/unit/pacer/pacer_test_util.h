/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pacer_test_util.h - shared by the pacer unit tests: a conf with the defaults used throughout
 * and a virtual-clock drain that follows the pacer's own deadlines.
 */
#ifndef PACER_TEST_UTIL_H
#define PACER_TEST_UTIL_H

#include "sl_pacer.h"

static inline struct sl_pacer_conf
test_conf(const char *impl, uint32_t max_flows)
{
	return (struct sl_pacer_conf){
		.impl = impl,
		.max_flows = max_flows,
		.link_bps = 100 * SL_BPS_PER_GBPS,
	};
}

/*
 * Call dequeue at each deadline (from now_ns on) until the pacer is idle, cap packets are out or
 * the deadline passes until_ns. Returns the number of packets written to out.
 */
static inline unsigned
test_drain(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned cap, uint64_t until_ns)
{
	unsigned n = 0;

	while (n < cap) {
		uint64_t d = sl_pacer_next_deadline(p);
		unsigned got;

		if (d == SL_PACER_NEVER || d > until_ns)
			break;
		now_ns = SL_MAX(now_ns, d);
		got = sl_pacer_dequeue_burst(p, now_ns, out + n, cap - n);
		for (unsigned i = n; i < n + got; i++)
			if (out[i].tx_ns > now_ns) /* never handed out before its time */
				return 0;
		n += got;
		if (got == 0 && d <= now_ns)
			now_ns++;
	}
	return n;
}

#endif /* PACER_TEST_UTIL_H */
