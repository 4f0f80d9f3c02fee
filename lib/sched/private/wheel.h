/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wheel.h - the engine's timers (sched.c, "Timers"): two-level hashed timing wheels of per-flow
 * entries, one entry per flow. Private to lib/sched; static inline, as sched.c files and pops
 * entries for every event.
 *
 * Level 0 has n slots of 2^shift ns and holds what is due within n ticks of its cursor; level 1
 * has n slots of n ticks each and holds what is further (beyond its own horizon, in its last
 * slot, re-filed when that comes up). When the cursor reaches the start of a level-1 tick, that
 * slot is cascaded into level 0, so an entry within both horizons is moved at most twice (an RTO
 * of 1 s with 512 ns ticks: 2.1 ms and 8.8 s horizons). Entries are doubly linked for O(1)
 * moves.
 */
#ifndef SL_SCHED_WHEEL_H
#define SL_SCHED_WHEEL_H

#include <stdint.h>
#include <stdlib.h>

#include "sl_bitmap.h"
#include "sl_common.h"

#define NOWHERE UINT32_MAX /**< no flow, or no slot */

/* A flow's entry in a wheel: one 24-byte record, so filing touches one cache line. */
struct wentry {
	uint64_t due_ns; /**< the time it is filed for, ns */
	uint32_t next;   /**< next flow in the slot */
	uint32_t prev;   /**< previous flow in the slot */
	uint32_t slot;   /**< its slot (level 1: n + index), NOWHERE when not filed */
};

struct wheel {
	uint32_t *head;   /**< first flow per slot, 2n slots, NOWHERE if empty */
	uint64_t *occ;    /**< occupancy bitmap of the 2n slots */
	struct wentry *e; /**< per flow */
	uint64_t cur;     /**< level-0 tick: earlier ticks are swept */
	uint64_t hint;    /**< no level-0 entry is filed in the ticks [cur, hint) */
	uint64_t hint1;   /**< no level-1 entry is filed before this level-0 tick */
	uint32_t nslots;  /**< n, slots per level, power of two, >= 64 */
	uint32_t lg;      /**< log2(n) */
	uint32_t shift;   /**< tick = 2^shift ns */
	uint32_t count;   /**< level-0 entries */
	uint32_t count1;  /**< level-1 entries */
};

static inline int
wheel_init(struct wheel *w, uint32_t nflows, uint32_t nslots, uint32_t tick_ns)
{
	w->nslots = nslots;
	w->lg = (uint32_t)__builtin_ctz(nslots);
	w->shift = 63u - (uint32_t)__builtin_clzll(tick_ns);
	w->cur = 0;
	w->hint = w->hint1 = UINT64_MAX;
	w->count = w->count1 = 0;
	w->head = malloc(sizeof(*w->head) * 2 * nslots);
	w->occ = calloc(SL_BITMAP_WORDS(2 * nslots), sizeof(*w->occ));
	w->e = malloc(sizeof(*w->e) * nflows);
	if (!w->head || !w->occ || !w->e)
		return -ENOMEM;
	memset(w->head, 0xff, sizeof(*w->head) * 2 * nslots);
	for (uint32_t f = 0; f < nflows; f++)
		w->e[f].slot = NOWHERE;
	return 0;
}

static inline void
wheel_free(struct wheel *w)
{
	free(w->head);
	free(w->occ);
	free(w->e);
}

static inline bool
wheel_filed(const struct wheel *w, uint32_t f)
{
	return w->e[f].slot != NOWHERE;
}

static inline void
wheel_remove(struct wheel *w, uint32_t f)
{
	uint32_t sl = w->e[f].slot;

	if (sl == NOWHERE)
		return;
	if (w->e[f].prev != NOWHERE)
		w->e[w->e[f].prev].next = w->e[f].next;
	else
		w->head[sl] = w->e[f].next;
	if (w->e[f].next != NOWHERE)
		w->e[w->e[f].next].prev = w->e[f].prev;
	if (w->head[sl] == NOWHERE)
		sl_bitmap_clear(w->occ, sl);
	w->e[f].slot = NOWHERE;
	if (sl >= w->nslots)
		w->count1--;
	else
		w->count--;
}

static inline void
wheel_link(struct wheel *w, uint32_t f, uint32_t sl)
{
	w->e[f].slot = sl;
	w->e[f].prev = NOWHERE;
	w->e[f].next = w->head[sl];
	if (w->head[sl] != NOWHERE)
		w->e[w->head[sl]].prev = f;
	w->head[sl] = f;
	sl_bitmap_set(w->occ, sl);
}

/* File f for due_ns (f not filed). Past dues go to the current tick. */
static inline void
wheel_insert(struct wheel *w, uint32_t f, uint64_t due_ns)
{
	uint64_t t = SL_MAX(due_ns >> w->shift, w->cur), c1, t1;
	uint32_t mask = w->nslots - 1;

	w->e[f].due_ns = due_ns;
	if (t - w->cur < w->nslots) {
		wheel_link(w, f, (uint32_t)t & mask);
		w->count++;
		w->hint = SL_MIN(w->hint, t);
		return;
	}
	c1 = w->cur >> w->lg; /* t >= cur + n, so t1 >= c1 + 1 */
	t1 = SL_MIN(t >> w->lg, c1 + w->nslots - 1);
	wheel_link(w, f, w->nslots + ((uint32_t)t1 & mask));
	w->count1++;
	w->hint1 = SL_MIN(w->hint1, t1 << w->lg);
}

/* First filed level-0 tick (at or after cur), or UINT64_MAX. */
static inline uint64_t
wheel_first_tick(const struct wheel *w)
{
	uint32_t mask = w->nslots - 1;
	uint64_t from = SL_MAX(w->cur, w->hint);
	uint32_t sl;

	if (w->count == 0)
		return UINT64_MAX;
	if (from - w->cur >= w->nslots)
		from = w->cur;
	sl = sl_bitmap_ffs_from(w->occ, w->nslots, (uint32_t)from & mask);
	from += (sl - (uint32_t)from) & mask;
	if (from - w->cur >= w->nslots) /* wrapped past the last slot: the range before from */
		from -= w->nslots;
	return from;
}

/* Level-0 tick at which the first filed level-1 slot starts, or UINT64_MAX. */
static inline uint64_t
wheel_first_cascade(const struct wheel *w)
{
	uint32_t mask = w->nslots - 1;
	uint64_t c1 = (w->cur >> w->lg) + 1;
	uint32_t sl;

	if (w->count1 == 0)
		return UINT64_MAX;
	sl = sl_bitmap_ffs_from(w->occ + w->nslots / 64, w->nslots, (uint32_t)c1 & mask);
	return (c1 + ((sl - (uint32_t)c1) & mask)) << w->lg;
}

/* Earliest due in slot sl, ns. */
static inline uint64_t
wheel_slot_min(const struct wheel *w, uint32_t sl)
{
	uint64_t best = UINT64_MAX;

	for (uint32_t f = w->head[sl]; f != NOWHERE; f = w->e[f].next)
		best = SL_MIN(best, w->e[f].due_ns);
	return best;
}

/*
 * Earliest time a sweep can release something. Level 0's first filed tick ends it. In level 1
 * an entry beyond the horizon was put in the last slot as it stood when it was filed, so a
 * later slot can hold an earlier due: the slots are walked in order until one starts after the
 * best found (every entry's due is at or after its slot's start).
 */
static inline uint64_t
wheel_next_ns(const struct wheel *w)
{
	uint32_t mask = w->nslots - 1, k = 0;
	uint64_t t = wheel_first_tick(w), c1 = (w->cur >> w->lg) + 1, best = UINT64_MAX;

	if (t != UINT64_MAX)
		best = (t + 1) << w->shift;
	while (w->count1 && k < w->nslots) {
		uint32_t sl = sl_bitmap_ffs_from(w->occ + w->nslots / 64, w->nslots,
						 ((uint32_t)c1 + k) & mask),
			 d = (sl - (uint32_t)c1) & mask;
		uint64_t due;

		if (d < k || ((c1 + d) << w->lg << w->shift) >= best)
			break; /* wrapped, or no due in this slot or later can be earlier */
		due = wheel_slot_min(w, w->nslots + sl);
		best = SL_MIN(best, ((due >> w->shift) + 1) << w->shift);
		k = d + 1;
	}
	return best;
}

/* Unfile and return one entry due at now_ns (NOWHERE when none), cascading on the way. */
static inline uint32_t
wheel_pop_due(struct wheel *w, uint64_t now_ns)
{
	uint64_t now_t = now_ns >> w->shift;

	for (;;) {
		bool l0 = w->count && w->hint <= now_t, l1 = w->count1 && w->hint1 <= now_t;
		uint64_t t = UINT64_MAX, s1 = UINT64_MAX;
		uint32_t f, sl;

		if (l1)
			w->hint1 = s1 = wheel_first_cascade(w);
		if (l0)
			w->hint = t = wheel_first_tick(w);
		if (s1 <= now_t && s1 <= t) {
			/* level-0 ticks before s1 are empty: move level-1 tick s1 down */
			w->cur = s1;
			sl = w->nslots + ((uint32_t)(s1 >> w->lg) & (w->nslots - 1));
			while ((f = w->head[sl]) != NOWHERE) {
				wheel_remove(w, f);
				wheel_insert(w, f, w->e[f].due_ns);
			}
			w->hint1 = SL_MAX(w->hint1, s1 + w->nslots);
			continue;
		}
		if (t > now_t) {
			/* nothing due; no level-1 tick starts by now: catch up with the clock */
			w->cur = SL_MAX(w->cur, now_t);
			return NOWHERE;
		}
		w->cur = t;
		if (t == now_t)
			return NOWHERE; /* a tick is swept once its last ns has passed */
		f = w->head[t & (w->nslots - 1)];
		wheel_remove(w, f);
		return f;
	}
}

#endif /* SL_SCHED_WHEEL_H */
