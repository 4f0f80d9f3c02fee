/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_pacer_tsw.h - the timestamp-wheel pacing engine shared by the Carousel and Eiffel cFFS
 * baselines (drivers/pacer/carousel, drivers/pacer/cffs); see tsw.c for the model.
 */
#ifndef SL_PACER_TSW_H
#define SL_PACER_TSW_H

#include "sl_pacer_impl.h"

enum sl_pacer_tsw_find {
	SL_PACER_TSW_SCAN, /**< Carousel: visit every slot as time passes */
	SL_PACER_TSW_FFS,  /**< Eiffel cFFS: jump to the next non-empty bucket */
};

/* ops->init for a wheel with conf.slot_ns slots over conf.horizon_ns; 0 or -errno. */
int sl_pacer_tsw_init(struct sl_pacer *p, enum sl_pacer_tsw_find find);

unsigned sl_pacer_tsw_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out,
			      unsigned max);
uint64_t sl_pacer_tsw_next_deadline(const struct sl_pacer *p);
void sl_pacer_tsw_activate(struct sl_pacer *p, uint32_t flow);
void sl_pacer_tsw_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps);
void sl_pacer_tsw_fini(struct sl_pacer *p);
size_t sl_pacer_tsw_mem_bytes(const struct sl_pacer *p);

#endif /* SL_PACER_TSW_H */
