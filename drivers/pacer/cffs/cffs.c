/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cffs.c - the Eiffel baseline (Saeed et al., "Eiffel: Efficient and Flexible Software Packet
 * Scheduling", NSDI'19): packets ranked by timestamp in a circular hierarchical find-first-set
 * bucket queue (cFFS), bucket width conf.slot_ns (default 1 us) over conf.horizon_ns (default
 * 1 s); the next non-empty bucket is found in O(log_64 buckets) word operations instead of a
 * slot-by-slot scan. The engine and its model are in lib/pacer/tsw.c, the bitmap in
 * lib/pacer/private/ffs.h.
 */
#include "sl_pacer_driver.h"

static int
cffs_init(struct sl_pacer *p)
{
	return sl_pacer_tsw_init(p, SL_PACER_TSW_FFS);
}

static const struct sl_pacer_ops cffs_ops = {
	.dequeue = sl_pacer_tsw_dequeue,
	.next_deadline = sl_pacer_tsw_next_deadline,
	.activate = sl_pacer_tsw_activate,
	.rate_changed = sl_pacer_tsw_rate_changed,
	.init = cffs_init,
	.fini = sl_pacer_tsw_fini,
	.mem_bytes = sl_pacer_tsw_mem_bytes,
	.name = "cffs",
};

SL_PACER_REGISTER(cffs_ops)
