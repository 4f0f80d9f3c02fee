/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.c - the memory-region key table: the control thread registers and deregisters, any lane
 * finds, without a lock.
 *
 * Keys. A region has two keys, an lkey for its owner's own work requests and an rkey for its
 * peers' WRITEs and READs (the one a peer is told). Each is (random << slot_bits) | (slot + 1)
 * over a table of max_mrs slots, slot_bits the width of max_mrs: the low bits name the slot in
 * O(1), the high 32 - slot_bits bits (19 at the default 4096 regions, at least 16) are drawn
 * from the kernel's CSPRNG (getrandom) for every registration, separately for the two keys. So
 * a key cannot be guessed from another (a peer that holds one rkey learns nothing of the next,
 * nor of any lkey), the lkey and rkey of a region differ, and a key that was deregistered does
 * not come back with its slot: the draw is repeated while it equals the slot's previous key of
 * that kind, and an older key matches again only if a later draw repeats it (2^-(32 -
 * slot_bits) per registration of that slot). A key also needs its client to own the region
 * (the protection domain), so no key of another application ever resolves. Key 0 is never
 * issued. An lkey is refused where an rkey is wanted and back (sl_chan_mrs_find's kind).
 *
 * Publication: add writes the fields, then stores the keys with release; find loads the key of
 * its kind with acquire and compares it whole before reading the fields, so it never sees a
 * half-written entry. del stores 0 first; a lane that found the key just before may still use
 * the pointer, which stays valid because the client's memory stays mapped until the client is
 * gone from every lane (sl_chan.h, "Threads"). A slot freed by del is reused only by a
 * later add, so a find racing a del + add on the same slot reads either key; the fields it then
 * reads may belong to the new entry, which is why find compares the key once more after reading
 * them.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "sl_chan.h"
#include "sl_common.h"

#define SLOTS_MAX 65535u /**< max_mrs, at most: slot + 1 in 16 bits leaves 16 random bits */
#define RANDOM_POOL 16u  /**< random words fetched from the kernel at once */

struct sl_chan_mrs {
	uint32_t n;                 /**< slots */
	uint32_t slot_bits;         /**< bits of a key that name its slot (+ 1) */
	uint32_t free_top;          /**< entries in free_list */
	uint32_t *free_list;        /**< free slots (a stack) */
	uint32_t (*last)[2];        /**< per slot and kind: the key it issued last */
	uint32_t pool[RANDOM_POOL]; /**< random words not used yet: pool[0, pool_left) */
	uint32_t pool_left;
	struct sl_chan_mr *e; /**< [n] */
};

struct sl_chan_mrs *
sl_chan_mrs_create(uint32_t max_mrs)
{
	struct sl_chan_mrs *t;

	if (max_mrs == 0 || max_mrs > SLOTS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->n = max_mrs;
	t->slot_bits = 32 - (uint32_t)__builtin_clz(max_mrs); /* slot + 1 <= max_mrs fits */
	t->free_list = calloc(max_mrs, sizeof(*t->free_list));
	t->last = calloc(max_mrs, sizeof(*t->last));
	t->e = calloc(max_mrs, sizeof(*t->e));
	if (t->free_list == NULL || t->last == NULL || t->e == NULL) {
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
	free(t->last);
	free(t->e);
	free(t);
}

/* A random word from the kernel's CSPRNG (control thread only): 0, or -errno. */
static int
random_word(struct sl_chan_mrs *t, uint32_t *w)
{
	if (t->pool_left == 0) {
		ssize_t n = getrandom(t->pool, sizeof(t->pool), 0);

		if (n != (ssize_t)sizeof(t->pool))
			return n < 0 ? -errno : -EIO;
		t->pool_left = RANDOM_POOL;
	}
	*w = t->pool[--t->pool_left];
	return 0;
}

/* A fresh key of kind for slot: random bits above the slot's, never its last one nor avoid. */
static int
draw_key(struct sl_chan_mrs *t, uint32_t slot, enum sl_chan_key_kind kind, uint32_t avoid,
	 uint32_t *key)
{
	uint32_t w, k;
	int rc;

	do {
		rc = random_word(t, &w);
		if (rc != 0)
			return rc;
		k = (w << t->slot_bits) | (slot + 1);
	} while (k == t->last[slot][kind] || k == avoid);
	*key = k;
	return 0;
}

int
sl_chan_mrs_add(struct sl_chan_mrs *t, uint64_t client, uint64_t va, uint64_t len, uint8_t *ptr,
		uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	struct sl_chan_mr *m;
	uint32_t slot, lk, rk;
	int rc;

	if (t->free_top == 0)
		return -ENOSPC;
	slot = t->free_list[t->free_top - 1];
	rc = draw_key(t, slot, SL_CHAN_LKEY, 0, &lk);
	if (rc == 0)
		rc = draw_key(t, slot, SL_CHAN_RKEY, lk, &rk);
	if (rc != 0)
		return rc;
	t->free_top--;
	m = &t->e[slot];
	m->client = client;
	m->access = access;
	m->va = va;
	m->len = len;
	m->ptr = ptr;
	t->last[slot][SL_CHAN_LKEY] = lk;
	t->last[slot][SL_CHAN_RKEY] = rk;
	atomic_store_explicit(&m->key[SL_CHAN_LKEY], lk, memory_order_release);
	atomic_store_explicit(&m->key[SL_CHAN_RKEY], rk, memory_order_release);
	*lkey = lk;
	*rkey = rk;
	return 0;
}

static void
del_slot(struct sl_chan_mrs *t, uint32_t slot)
{
	atomic_store_explicit(&t->e[slot].key[SL_CHAN_LKEY], 0, memory_order_release);
	atomic_store_explicit(&t->e[slot].key[SL_CHAN_RKEY], 0, memory_order_release);
	t->free_list[t->free_top++] = slot;
}

/* The slot key names (of kind), or t->n if none could be. */
static uint32_t
slot_of(const struct sl_chan_mrs *t, uint32_t key)
{
	uint32_t slot1 = key & ((UINT32_C(1) << t->slot_bits) - 1);

	return slot1 == 0 || slot1 > t->n ? t->n : slot1 - 1;
}

int
sl_chan_mrs_del(struct sl_chan_mrs *t, uint64_t client, uint32_t lkey, uint64_t *len)
{
	uint32_t slot = slot_of(t, lkey);

	if (slot == t->n ||
	    atomic_load_explicit(&t->e[slot].key[SL_CHAN_LKEY], memory_order_relaxed) != lkey ||
	    t->e[slot].client != client)
		return -ENOENT;
	*len = t->e[slot].len;
	del_slot(t, slot);
	return 0;
}

unsigned
sl_chan_mrs_del_client(struct sl_chan_mrs *t, uint64_t client)
{
	unsigned n = 0;

	for (uint32_t slot = 0; slot < t->n; slot++) {
		if (atomic_load_explicit(&t->e[slot].key[SL_CHAN_LKEY], memory_order_relaxed) !=
			    0 &&
		    t->e[slot].client == client) {
			del_slot(t, slot);
			n++;
		}
	}
	return n;
}

uint8_t *
sl_chan_mrs_find(const struct sl_chan_mrs *t, uint64_t client, enum sl_chan_key_kind kind,
		 uint32_t key, uint64_t va, uint64_t len, uint32_t need)
{
	uint32_t slot = slot_of(t, key);
	const struct sl_chan_mr *m;
	uint8_t *p;
	bool ok;

	if (key == 0 || slot == t->n)
		return NULL;
	m = &t->e[slot];
	if (atomic_load_explicit(&m->key[kind], memory_order_acquire) != key)
		return NULL;
	ok = m->client == client && (m->access & need) == need && va >= m->va &&
	     va - m->va <= m->len && len <= m->len - (va - m->va);
	p = ok ? m->ptr + (va - m->va) : NULL;
	/* the entry may have been deregistered and reused while we read it */
	atomic_thread_fence(memory_order_acquire);
	if (!ok || atomic_load_explicit(&m->key[kind], memory_order_relaxed) != key)
		return NULL;
	return p;
}
