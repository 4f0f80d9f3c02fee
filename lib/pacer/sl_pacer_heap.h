/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_pacer_heap.h - a 4-ary min-heap of (key, id), the software stand-in for Tassel's pipelined
 * P-heap and the sorter of the one-packet-per-sort baselines.
 *
 * Four children per node halve the depth of a binary heap (10 levels at 1M entries) and the
 * four child keys share one 64 B line when the node index is aligned, so a sift-down costs
 * about one cache miss per level. Entries are 16 B. An optional position array (one uint32_t
 * per id) supports changing or removing an arbitrary id; without it only the top moves.
 * Capacity is fixed at init: nothing allocates after that.
 */
#ifndef SL_PACER_HEAP_H
#define SL_PACER_HEAP_H

#include <stdint.h>

#include "sl_common.h"

#define SL_PACER_HEAP_ARITY 4u
#define SL_PACER_HEAP_NPOS UINT32_MAX

struct sl_pacer_heap_ent {
	uint64_t key; /**< ordering key, in the owner's unit (ns) */
	uint32_t id;  /**< owner's identifier */
	uint32_t pad;
};

struct sl_pacer_heap {
	struct sl_pacer_heap_ent *e; /**< [cap], cache aligned */
	uint32_t *pos;               /**< [n_ids] index of each id, or NULL */
	uint32_t n;                  /**< entries */
	uint32_t cap;                /**< capacity, entries */
};

/* 0 or -ENOMEM; n_ids 0 means no position array. */
int sl_pacer_heap_init(struct sl_pacer_heap *h, uint32_t cap, uint32_t n_ids);
void sl_pacer_heap_fini(struct sl_pacer_heap *h);
size_t sl_pacer_heap_mem_bytes(const struct sl_pacer_heap *h, uint32_t n_ids);

static inline void
sl_pacer_heap_place(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	h->e[i] = v;
	if (h->pos != NULL)
		h->pos[v.id] = i;
}

static inline void
sl_pacer_heap_sift_up(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / SL_PACER_HEAP_ARITY;

		if (h->e[parent].key <= v.key)
			break;
		sl_pacer_heap_place(h, i, h->e[parent]);
		i = parent;
	}
	sl_pacer_heap_place(h, i, v);
}

static inline void
sl_pacer_heap_sift_down(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	for (;;) {
		uint32_t c = i * SL_PACER_HEAP_ARITY + 1,
			 end = SL_MIN(c + SL_PACER_HEAP_ARITY, h->n);
		uint32_t best = i;
		uint64_t best_key = v.key;

		for (; c < end; c++) {
			if (h->e[c].key < best_key) {
				best = c;
				best_key = h->e[c].key;
			}
		}
		if (best == i)
			break;
		sl_pacer_heap_place(h, i, h->e[best]);
		i = best;
	}
	sl_pacer_heap_place(h, i, v);
}

static inline bool
sl_pacer_heap_empty(const struct sl_pacer_heap *h)
{
	return h->n == 0;
}

static inline const struct sl_pacer_heap_ent *
sl_pacer_heap_top(const struct sl_pacer_heap *h)
{
	return &h->e[0];
}

/* The caller keeps n < cap. */
static inline void
sl_pacer_heap_push(struct sl_pacer_heap *h, uint64_t key, uint32_t id)
{
	sl_pacer_heap_sift_up(h, h->n++, (struct sl_pacer_heap_ent){.key = key, .id = id});
}

static inline void
sl_pacer_heap_pop(struct sl_pacer_heap *h)
{
	struct sl_pacer_heap_ent last = h->e[--h->n];

	if (h->pos != NULL)
		h->pos[h->e[0].id] = SL_PACER_HEAP_NPOS;
	if (h->n > 0)
		sl_pacer_heap_sift_down(h, 0, last);
}

/* Give the top a new key (a pop plus a push in one sift). */
static inline void
sl_pacer_heap_retop(struct sl_pacer_heap *h, uint64_t key)
{
	struct sl_pacer_heap_ent v = h->e[0];

	v.key = key;
	sl_pacer_heap_sift_down(h, 0, v);
}

static inline bool
sl_pacer_heap_has(const struct sl_pacer_heap *h, uint32_t id)
{
	return h->pos[id] != SL_PACER_HEAP_NPOS;
}

/* Change the key of a present id (needs the position array). */
void sl_pacer_heap_update(struct sl_pacer_heap *h, uint32_t id, uint64_t key);

/* Remove a present id (needs the position array). */
void sl_pacer_heap_remove(struct sl_pacer_heap *h, uint32_t id);

#endif /* SL_PACER_HEAP_H */
