/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.c - the allocator over a context's shared memory (heap.h).
 *
 * Model. The memory [0, bytes) is cut into blocks that tile it exactly, each free or in use,
 * each a multiple of 64 bytes long and starting on a 64-byte boundary. The blocks form one list
 * in address order, so a block's neighbours are one step away; two free blocks are never
 * adjacent (a freed block merges with a free neighbour at once), so the free space is as few
 * blocks as it can be.
 *
 * Finding room (segregated fit). Free blocks sit in one of 29 lists by size class,
 * class = floor(log2(bytes / 64)); a request of size s starts at its own class, where a block may
 * still be too short and is skipped, and goes up: in a higher class every block is at least
 * twice as long as any request of the starting class, so the first one almost always fits (it
 * may not when a 4096-byte alignment needs a pad in front). A block that fits is cut into a
 * free pad in front (up to the alignment), the block handed out, and a free tail. Allocation is
 * therefore a handful of steps in practice, release is O(1) (a hash of the blocks in use by
 * offset, then a merge with each neighbour), and no sequence of operations walks all blocks.
 * The lists are LIFO, so a block just freed is the first reused.
 *
 * Alignment. Requests of 4096 bytes and more get 4096-byte alignment (a page: the daemon or the
 * application may want to map or pin them), smaller ones 64 (a cache line: no false sharing
 * between a ring's indexes and someone else's buffer).
 *
 * The bookkeeping is in private memory (malloc), none of it in the shared memory it manages.
 *
 * Units: bytes.
 */
#include <errno.h>
#include <stdlib.h>

#include "heap.h"

#define HEAP_CLASSES 29u /**< 64 B << 28 = 2^34 B: SL_CHAN_MEM_MAX */

struct blk {
	uint64_t off;              /**< start, bytes */
	uint64_t bytes;            /**< length, bytes */
	struct blk *prev, *next;   /**< neighbours in address order */
	struct blk *lprev, *lnext; /**< free: its class list */
	struct blk *hnext;         /**< in use: its hash chain */
	bool free;
};

struct sl_api_heap {
	uint64_t bytes;
	struct blk *first;             /**< the block at offset 0 */
	struct blk *cls[HEAP_CLASSES]; /**< free blocks by class, LIFO */
	struct blk **hash;             /**< blocks in use, by offset */
	uint32_t hash_bits;
	struct sl_api_heap_stats st;
};

static unsigned
size_class(uint64_t bytes)
{
	unsigned c = 63u - (unsigned)__builtin_clzll(bytes / SL_API_HEAP_ALIGN);

	return c < HEAP_CLASSES ? c : HEAP_CLASSES - 1;
}

static void
list_push(struct sl_api_heap *h, struct blk *b)
{
	struct blk **head = &h->cls[size_class(b->bytes)];

	b->free = true;
	b->lprev = NULL;
	b->lnext = *head;
	if (*head)
		(*head)->lprev = b;
	*head = b;
	h->st.free_blocks++;
	h->st.free_bytes += b->bytes;
}

static void
list_remove(struct sl_api_heap *h, struct blk *b)
{
	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		h->cls[size_class(b->bytes)] = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	b->free = false;
	h->st.free_blocks--;
	h->st.free_bytes -= b->bytes;
}

static struct blk **
hash_slot(const struct sl_api_heap *h, uint64_t off)
{
	uint64_t k = (off / SL_API_HEAP_ALIGN) * UINT64_C(0x9E3779B97F4A7C15);

	return &h->hash[k >> (64 - h->hash_bits)];
}

/* Double the hash when it holds more blocks than buckets; a failed malloc keeps longer chains. */
static void
hash_grow(struct sl_api_heap *h)
{
	uint32_t n = 1u << h->hash_bits, i;
	struct blk **old = h->hash, *b, *nb;

	if (h->st.used_blocks < n || h->hash_bits >= 28)
		return;
	h->hash = calloc((size_t)n * 2, sizeof(*h->hash));
	if (!h->hash) {
		h->hash = old;
		return;
	}
	h->hash_bits++;
	for (i = 0; i < n; i++)
		for (b = old[i]; b; b = nb) {
			struct blk **s = hash_slot(h, b->off);

			nb = b->hnext;
			b->hnext = *s;
			*s = b;
		}
	free(old);
}

struct sl_api_heap *
sl_api_heap_create(uint64_t bytes)
{
	struct sl_api_heap *h;
	struct blk *b;

	if (bytes < SL_API_HEAP_PAGE_ALIGN || bytes % SL_API_HEAP_PAGE_ALIGN ||
	    bytes / SL_API_HEAP_ALIGN >= (UINT64_C(2) << (HEAP_CLASSES - 1))) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	b = calloc(1, sizeof(*b));
	if (!h || !b)
		goto fail;
	h->hash_bits = 6;
	h->hash = calloc((size_t)1 << h->hash_bits, sizeof(*h->hash));
	if (!h->hash)
		goto fail;
	h->bytes = bytes;
	b->bytes = bytes;
	h->first = b;
	list_push(h, b);
	return h;
fail:
	free(h);
	free(b);
	errno = ENOMEM;
	return NULL;
}

void
sl_api_heap_free(struct sl_api_heap *h)
{
	struct blk *b, *nb;

	if (!h)
		return;
	for (b = h->first; b; b = nb) {
		nb = b->next;
		free(b);
	}
	free(h->hash);
	free(h);
}

/* Cut [off, off + bytes) out of free block b (removed from its list), both spares kept free. */
static struct blk *
take(struct sl_api_heap *h, struct blk *b, uint64_t pad, uint64_t bytes, struct blk *front,
     struct blk *tail)
{
	list_remove(h, b);
	if (pad) {
		front->off = b->off;
		front->bytes = pad;
		front->prev = b->prev;
		front->next = b;
		if (b->prev)
			b->prev->next = front;
		else
			h->first = front;
		b->prev = front;
		b->off += pad;
		b->bytes -= pad;
		list_push(h, front);
	} else {
		free(front);
	}
	if (b->bytes > bytes) {
		tail->off = b->off + bytes;
		tail->bytes = b->bytes - bytes;
		tail->prev = b;
		tail->next = b->next;
		if (b->next)
			b->next->prev = tail;
		b->next = tail;
		b->bytes = bytes;
		list_push(h, tail);
	} else {
		free(tail);
	}
	return b;
}

uint64_t
sl_api_heap_alloc(struct sl_api_heap *h, uint64_t bytes)
{
	uint64_t align, pad = 0;
	struct blk *b = NULL, *front, *tail, **s;

	if (!bytes || bytes > h->bytes)
		return SL_API_HEAP_NONE;
	bytes = (bytes + SL_API_HEAP_ALIGN - 1) & ~(uint64_t)(SL_API_HEAP_ALIGN - 1);
	align = bytes >= SL_API_HEAP_PAGE_ALIGN ? SL_API_HEAP_PAGE_ALIGN : SL_API_HEAP_ALIGN;
	for (unsigned c = size_class(bytes); c < HEAP_CLASSES && !b; c++)
		for (b = h->cls[c]; b; b = b->lnext) {
			pad = ((b->off + align - 1) & ~(align - 1)) - b->off;
			if (b->bytes >= pad + bytes)
				break;
		}
	if (!b)
		return SL_API_HEAP_NONE;
	/* Both spare records first, so that running out of malloc changes nothing. */
	front = malloc(sizeof(*front));
	tail = malloc(sizeof(*tail));
	if (!front || !tail) {
		free(front);
		free(tail);
		return SL_API_HEAP_NONE;
	}
	b = take(h, b, pad, bytes, front, tail);
	s = hash_slot(h, b->off);
	b->hnext = *s;
	*s = b;
	h->st.used_blocks++;
	h->st.used_bytes += b->bytes;
	hash_grow(h);
	return b->off;
}

/* b absorbs its next neighbour n (neither in a free list). */
static void
absorb(struct blk *b, struct blk *n)
{
	b->bytes += n->bytes;
	b->next = n->next;
	if (n->next)
		n->next->prev = b;
	free(n);
}

bool
sl_api_heap_release(struct sl_api_heap *h, uint64_t off)
{
	struct blk **s, *b;

	if (off % SL_API_HEAP_ALIGN || off >= h->bytes)
		return false;
	for (s = hash_slot(h, off); *s && (*s)->off != off; s = &(*s)->hnext)
		;
	b = *s;
	if (!b)
		return false;
	*s = b->hnext;
	h->st.used_blocks--;
	h->st.used_bytes -= b->bytes;
	if (b->next && b->next->free) {
		list_remove(h, b->next);
		absorb(b, b->next);
	}
	if (b->prev && b->prev->free) {
		b = b->prev;
		list_remove(h, b);
		absorb(b, b->next);
	}
	list_push(h, b);
	return true;
}

void
sl_api_heap_stats_get(const struct sl_api_heap *h, struct sl_api_heap_stats *st)
{
	*st = h->st;
}
