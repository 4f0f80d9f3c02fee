/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * carousel.c - the Carousel baseline (Saeed et al., "Carousel: Scalable Traffic Shaping at End
 * Hosts", SIGCOMM'17): per-packet timestamps in one timing wheel per core, slot width
 * conf.slot_ns (default 1 us) over conf.horizon_ns (default 1 s), slots visited one by one as
 * time passes. The engine and its model are in lib/pacer/tsw.c.
 */
#include "sl_pacer_driver.h"

static int
carousel_init(struct sl_pacer *p)
{
	return sl_pacer_tsw_init(p, SL_PACER_TSW_SCAN);
}

static const struct sl_pacer_ops carousel_ops = {
	.dequeue = sl_pacer_tsw_dequeue,
	.next_deadline = sl_pacer_tsw_next_deadline,
	.activate = sl_pacer_tsw_activate,
	.rate_changed = sl_pacer_tsw_rate_changed,
	.init = carousel_init,
	.fini = sl_pacer_tsw_fini,
	.mem_bytes = sl_pacer_tsw_mem_bytes,
	.name = "carousel",
};

SL_PACER_REGISTER(carousel_ops)
