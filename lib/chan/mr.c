/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.c - the memory-region key table: the control thread registers and deregisters, any lane
 * finds, without a lock.
 *
 * A key is (generation << SLOT_BITS) | slot + 1 over a table of 2^SLOT_BITS slots, so a key
 * names its slot in O(1); the generation, bumped each time a slot is freed, makes a key that
 * was deregistered miss once its slot is reused (after 2^(32 - SLOT_BITS) reuses of one slot
 * a key could come back: at one registration per microsecond that is hours for one slot, and
 * a stale key then still needs the same client to own the region). Key 0 is never issued.
 *
 * Publication: add writes the fields, then stores the key with release; find loads the key
 * with acquire and compares it whole before reading the fields, so it never sees a half-written
 * entry. del stores 0 first; a lane that found the key just before may still use the pointer,
 * which stays valid because the client's memory stays mapped until the client is gone from
 * every lane (sl_chan_srv.h, "Threads"). A slot freed by del is reused only by a later add, so
 * a find racing a del + add on the same slot reads either key; the fields it then reads may
 * belong to the new entry, which is why find compares the key once more after reading them.
 */
#include <errno.h>
#include <stdlib.h>

#include "sl_chan_srv.h"
#include "sl_common.h"

#define SLOT_BITS 16u
#define SLOTS_MAX (1u << SLOT_BITS)

struct sl_chan_mrs {
	uint32_t n;           /**< slots */
	uint32_t free_top;    /**< entries in free_list */
	uint32_t *free_list;  /**< free slots (a stack) */
	uint32_t *gen;        /**< per slot: generation of its next key */
	struct sl_chan_mr *e; /**< [n] */
};

struct sl_chan_mrs *
sl_chan_mrs_create(uint32_t max_mrs)
{
	struct sl_chan_mrs *t;

	if (max_mrs == 0 || max_mrs > SLOTS_MAX - 1) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->n = max_mrs;
	t->free_list = calloc(max_mrs, sizeof(*t->free_list));
	t->gen = calloc(max_mrs, sizeof(*t->gen));
	t->e = calloc(max_mrs, sizeof(*t->e));
	if (t->free_list == NULL || t->gen == NULL || t->e == NULL) {
		sl_chan_mrs_free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < max_mrs; i++)
		t->free_list[i] = max_mrs - 1 - i; /* slot 0 comes out first */
	t->free_top = max_mrs;
	return t;
}

void
sl_chan_mrs_free(struct sl_chan_mrs *t)
{
	if (t == NULL)
		return;
	free(t->free_list);
	free(t->gen);
	free(t->e);
	free(t);
}

static uint32_t
make_key(uint32_t slot, uint32_t gen)
{
	return (gen << SLOT_BITS) | (slot + 1);
}

int
sl_chan_mrs_add(struct sl_chan_mrs *t, uint64_t client, uint64_t va, uint64_t len, uint8_t *ptr,
		uint32_t access, uint32_t *key)
{
	struct sl_chan_mr *m;
	uint32_t slot, k;

	if (t->free_top == 0)
		return -ENOSPC;
	slot = t->free_list[--t->free_top];
	m = &t->e[slot];
	m->client = client;
	m->access = access;
	m->va = va;
	m->len = len;
	m->ptr = ptr;
	k = make_key(slot, t->gen[slot]);
	atomic_store_explicit(&m->key, k, memory_order_release);
	*key = k;
	return 0;
}

static int
del_slot(struct sl_chan_mrs *t, uint32_t slot)
{
	atomic_store_explicit(&t->e[slot].key, 0, memory_order_release);
	/* the next key from this slot differs from every key it gave before (mod 2^16) */
	t->gen[slot] = (t->gen[slot] + 1) & ((1u << (32 - SLOT_BITS)) - 1);
	t->free_list[t->free_top++] = slot;
	return 0;
}

int
sl_chan_mrs_del(struct sl_chan_mrs *t, uint64_t client, uint32_t key, uint64_t *len)
{
	uint32_t slot = (key & (SLOTS_MAX - 1)) - 1;

	if (key == 0 || slot >= t->n)
		return -ENOENT;
	if (atomic_load_explicit(&t->e[slot].key, memory_order_relaxed) != key ||
	    t->e[slot].client != client)
		return -ENOENT;
	*len = t->e[slot].len;
	return del_slot(t, slot);
}

unsigned
sl_chan_mrs_del_client(struct sl_chan_mrs *t, uint64_t client)
{
	unsigned n = 0;

	for (uint32_t slot = 0; slot < t->n; slot++) {
		if (atomic_load_explicit(&t->e[slot].key, memory_order_relaxed) != 0 &&
		    t->e[slot].client == client) {
			del_slot(t, slot);
			n++;
		}
	}
	return n;
}

uint8_t *
sl_chan_mrs_find(const struct sl_chan_mrs *t, uint64_t client, uint32_t key, uint64_t va,
		 uint64_t len, uint32_t need)
{
	uint32_t slot = (key & (SLOTS_MAX - 1)) - 1;
	const struct sl_chan_mr *m;
	uint8_t *p;
	bool ok;

	if (key == 0 || slot >= t->n)
		return NULL;
	m = &t->e[slot];
	if (atomic_load_explicit(&m->key, memory_order_acquire) != key)
		return NULL;
	ok = m->client == client && (m->access & need) == need && va >= m->va &&
	     va - m->va <= m->len && len <= m->len - (va - m->va);
	p = ok ? m->ptr + (va - m->va) : NULL;
	/* the entry may have been deregistered and reused while we read it */
	atomic_thread_fence(memory_order_acquire);
	if (!ok || atomic_load_explicit(&m->key, memory_order_relaxed) != key)
		return NULL;
	return p;
}
