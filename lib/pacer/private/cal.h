/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cal.h - a calendar queue of ids over a circular array of FIFO buckets with a
 * hierarchical find-first-set index (ffs.h): Eiffel's cFFS bucket queue.
 *
 * An id with key t (ns) goes to bucket k = t / slot_ns and is due once the caller's time x has
 * passed the bucket's last ns ((k + 1) slot_ns - 1 <= x): never early, less than one slot late.
 * Due buckets move whole, in bucket order, to a ready FIFO the caller pops. A key beyond the
 * horizon (slots x slot_ns) is parked in the last bucket and counted; the caller, which keeps
 * the true key, re-inserts it when it comes out too early. Due buckets are found either by the
 * FFS index (O(log_64 slots)) or by visiting every bucket in turn (Carousel's wheel). The first
 * non-empty bucket is kept (an insert lowers it, a collect that empties it searches for the next),
 * so the next due time and a collect with nothing due cost no search.
 * O(1) insert, no allocation after init; each id may be in the calendar once.
 */
#ifndef PACER_CAL_H
#define PACER_CAL_H

#include <stdint.h>

#include "ffs.h"

#define SL_PACER_CAL_NONE UINT32_MAX

struct sl_pacer_cal {
	uint32_t *head;          /**< [slots] first id of each bucket */
	uint32_t *tail;          /**< [slots] last id of each bucket */
	uint32_t *link;          /**< [n_ids] next id in the same bucket or the ready FIFO */
	struct sl_pacer_ffs occ; /**< non-empty buckets */
	uint64_t slot_ns;        /**< bucket width, ns */
	unsigned slot_shift;     /**< log2(slot_ns) when a power of two > 1, else 0 (divide) */
	uint64_t cur;            /**< first bucket number not yet moved to ready */
	uint64_t first;          /**< first non-empty bucket number (>= cur); UINT64_MAX: none */
	uint32_t mask;           /**< slots - 1 */
	uint32_t ready_head;     /**< due ids, FIFO */
	uint32_t ready_tail;
	bool scan; /**< visit buckets one by one instead of using the index */
};

/* slots: horizon_ns / slot_ns rounded up to a power of two in [64, 2^24]. 0 or -errno. */
int sl_pacer_cal_init(struct sl_pacer_cal *c, uint64_t slot_ns, uint64_t horizon_ns, uint32_t n_ids,
		      bool scan);
void sl_pacer_cal_fini(struct sl_pacer_cal *c);
size_t sl_pacer_cal_mem_bytes(const struct sl_pacer_cal *c, uint32_t n_ids);

/* Append the ids first .. last, linked through link[], to the ready FIFO. */
static inline void
sl_pacer_cal_ready_append(struct sl_pacer_cal *c, uint32_t first, uint32_t last)
{
	if (c->ready_head == SL_PACER_CAL_NONE)
		c->ready_head = first;
	else
		c->link[c->ready_tail] = first;
	c->ready_tail = last;
	c->link[last] = SL_PACER_CAL_NONE;
}

/*
 * Insert id with key_ns; returns true when the key was beyond the horizon (parked). Inline: it is
 * on the pacers' per-packet path.
 */
static inline bool
sl_pacer_cal_insert(struct sl_pacer_cal *c, uint32_t id, uint64_t key_ns)
{
	uint64_t k = c->slot_shift ? key_ns >> c->slot_shift : key_ns / c->slot_ns;
	bool parked = false;
	uint32_t idx;

	if (k < c->cur) {
		sl_pacer_cal_ready_append(c, id, id);
		return false;
	}
	if (k - c->cur > c->mask) {
		k = c->cur + c->mask;
		parked = true;
	}
	idx = (uint32_t)(k & c->mask);
	if (c->head[idx] == SL_PACER_CAL_NONE) {
		c->head[idx] = id;
		sl_pacer_ffs_set(&c->occ, idx);
	} else {
		c->link[c->tail[idx]] = id;
	}
	c->tail[idx] = id;
	c->first = SL_MIN(c->first, k);
	return parked;
}

/* sl_pacer_cal_collect() when the first non-empty bucket is below lim (> cur). */
void sl_pacer_cal_collect_due(struct sl_pacer_cal *c, uint64_t lim);

/* Move every bucket due at x_ns to the ready FIFO. Inline: most calls find nothing due. */
static inline void
sl_pacer_cal_collect(struct sl_pacer_cal *c, uint64_t x_ns)
{
	/* buckets [cur, lim) are due */
	uint64_t lim = c->slot_shift ? (x_ns + 1) >> c->slot_shift : (x_ns + 1) / c->slot_ns;

	if (lim <= c->cur)
		return;
	if (c->first >= lim) { /* nothing due, or all empty */
		c->cur = lim;
		return;
	}
	sl_pacer_cal_collect_due(c, lim);
}

static inline uint32_t
sl_pacer_cal_pop(struct sl_pacer_cal *c)
{
	uint32_t id = c->ready_head;

	if (id != SL_PACER_CAL_NONE)
		c->ready_head = c->link[id];
	return id;
}

static inline bool
sl_pacer_cal_ready(const struct sl_pacer_cal *c)
{
	return c->ready_head != SL_PACER_CAL_NONE;
}

static inline bool
sl_pacer_cal_empty(const struct sl_pacer_cal *c)
{
	return c->first == UINT64_MAX && c->ready_head == SL_PACER_CAL_NONE;
}

/* Earliest x at which a bucket becomes due (ready ids excluded); UINT64_MAX if none. */
static inline uint64_t
sl_pacer_cal_next_due(const struct sl_pacer_cal *c)
{
	return c->first == UINT64_MAX ? UINT64_MAX : (c->first + 1) * c->slot_ns - 1;
}

#endif /* PACER_CAL_H */
