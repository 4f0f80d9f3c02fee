/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cal.c - the calendar queue of cal.h: circular FIFO buckets indexed by a
 * hierarchical FFS bitmap (Eiffel's cFFS, NSDI'19 section 4) or scanned bucket by bucket
 * (Carousel's timing wheel, SIGCOMM'17 section 4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cal.h"

#define CAL_SLOTS_MAX (UINT32_C(1) << 24)

void
sl_pacer_cal_fini(struct sl_pacer_cal *c)
{
	sl_pacer_ffs_fini(&c->occ);
	free(c->head);
	free(c->tail);
	free(c->link);
	memset(c, 0, sizeof(*c));
}

int
sl_pacer_cal_init(struct sl_pacer_cal *c, uint64_t slot_ns, uint64_t horizon_ns, uint32_t n_ids,
		  bool scan)
{
	uint64_t slots;
	int rc;

	memset(c, 0, sizeof(*c));
	if (slot_ns == 0)
		return -EINVAL;
	slots = sl_align_pow2(SL_MAX(horizon_ns / slot_ns, 64));
	if (slots > CAL_SLOTS_MAX)
		return -EINVAL;
	c->slot_ns = slot_ns;
	c->slot_shift = sl_is_pow2(slot_ns) ? (unsigned)__builtin_ctzll(slot_ns) : 0;
	c->mask = (uint32_t)slots - 1;
	c->scan = scan;
	c->ready_head = c->ready_tail = SL_PACER_CAL_NONE;
	c->first = UINT64_MAX;
	c->head = malloc(sizeof(*c->head) * slots);
	c->tail = malloc(sizeof(*c->tail) * slots);
	c->link = malloc(sizeof(*c->link) * SL_MAX(n_ids, 1u));
	if (c->head == NULL || c->tail == NULL || c->link == NULL) {
		sl_pacer_cal_fini(c);
		return -ENOMEM;
	}
	memset(c->head, 0xff, sizeof(*c->head) * slots);
	rc = sl_pacer_ffs_init(&c->occ, (uint32_t)slots);
	if (rc != 0)
		sl_pacer_cal_fini(c);
	return rc;
}

size_t
sl_pacer_cal_mem_bytes(const struct sl_pacer_cal *c, uint32_t n_ids)
{
	return (size_t)(c->mask + 1) * 2 * sizeof(uint32_t) + (size_t)n_ids * sizeof(uint32_t) +
	       sl_pacer_ffs_mem_bytes(&c->occ);
}

static void
release(struct sl_pacer_cal *c, uint32_t idx)
{
	sl_pacer_cal_ready_append(c, c->head[idx], c->tail[idx]);
	c->head[idx] = SL_PACER_CAL_NONE;
	sl_pacer_ffs_clear(&c->occ, idx);
}

/* Bucket number of the first non-empty bucket at or after cur; UINT64_MAX if none. */
static uint64_t
first_bucket(const struct sl_pacer_cal *c)
{
	uint32_t from = (uint32_t)(c->cur & c->mask), i = sl_pacer_ffs_from(&c->occ, from);

	return i == SL_PACER_FFS_NONE ? UINT64_MAX : c->cur + ((i - from) & c->mask);
}

void
sl_pacer_cal_collect_due(struct sl_pacer_cal *c, uint64_t lim)
{
	if (c->scan) {
		uint64_t end = SL_MIN(lim, c->cur + c->mask + 1); /* one revolution sees all */

		for (uint64_t k = c->cur; k < end; k++)
			if (c->head[k & c->mask] != SL_PACER_CAL_NONE)
				release(c, (uint32_t)(k & c->mask));
		c->cur = lim;
		c->first = first_bucket(c);
		return;
	}
	while (c->first < lim) {
		release(c, (uint32_t)(c->first & c->mask));
		c->first = first_bucket(c);
	}
	c->cur = lim;
}
