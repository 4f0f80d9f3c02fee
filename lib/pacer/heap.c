/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.c - allocation and arbitrary-position updates of the 4-ary heap (sl_pacer_driver.h); the
 * fast push/pop/retop are inline in the header.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_pacer_driver.h"

int
sl_pacer_heap_init(struct sl_pacer_heap *h, uint32_t cap, uint32_t n_ids)
{
	size_t bytes = sl_align_pow2(sizeof(*h->e) * (size_t)SL_MAX(cap, 1u));

	memset(h, 0, sizeof(*h));
	h->e = aligned_alloc(SL_CACHE_LINE, SL_MAX(bytes, (size_t)SL_CACHE_LINE));
	if (h->e == NULL)
		return -ENOMEM;
	if (n_ids > 0) {
		h->pos = malloc(sizeof(*h->pos) * n_ids);
		if (h->pos == NULL) {
			free(h->e);
			h->e = NULL;
			return -ENOMEM;
		}
		memset(h->pos, 0xff, sizeof(*h->pos) * n_ids);
	}
	h->cap = cap;
	return 0;
}

void
sl_pacer_heap_fini(struct sl_pacer_heap *h)
{
	free(h->e);
	free(h->pos);
	memset(h, 0, sizeof(*h));
}

size_t
sl_pacer_heap_mem_bytes(const struct sl_pacer_heap *h, uint32_t n_ids)
{
	return (size_t)h->cap * sizeof(*h->e) +
	       (h->pos != NULL ? (size_t)n_ids * sizeof(*h->pos) : 0);
}

void
sl_pacer_heap_update(struct sl_pacer_heap *h, uint32_t id, uint64_t key)
{
	uint32_t i = h->pos[id];
	struct sl_pacer_heap_ent v = h->e[i];
	uint64_t old = v.key;

	v.key = key;
	if (key < old)
		sl_pacer_heap_sift_up(h, i, v);
	else
		sl_pacer_heap_sift_down(h, i, v);
}

void
sl_pacer_heap_remove(struct sl_pacer_heap *h, uint32_t id)
{
	uint32_t i = h->pos[id];
	struct sl_pacer_heap_ent last = h->e[--h->n];

	h->pos[id] = SL_PACER_HEAP_NPOS;
	if (i == h->n)
		return;
	if (last.key < h->e[i].key)
		sl_pacer_heap_sift_up(h, i, last);
	else
		sl_pacer_heap_sift_down(h, i, last);
}
