/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h - MELO's shared bits pool (Lu et al., APNet'17, section 3.2.3 and Fig. 3).
 *
 * One pool per side per instance holds every connection's bitmap. The pool is cut into equal
 * blocks (8 bits by default); a connection's bitmap is a chain of blocks linked by a next_ptr
 * per block, named by the connection's start_ptr (head block) and end_ptr (tail block). Free
 * blocks sit on a LIFO stack, the "available" array: entries at index >= avail_ptr are free,
 * so taking a block is avail[avail_ptr++] and returning one is avail[--avail_ptr] = b. Both are
 * O(1) and nothing ever searches the pool.
 *
 * A chain grows only at its tail (sl_recv_pool_chain_extend) and shrinks only at its head
 * (sl_recv_pool_chain_pop); no function walks into the middle of a chain except
 * sl_recv_pool_chain_release, which returns a whole chain at once (connection close, RTO), and the
 * audit helpers used by tests. Blocks are aligned on PSN: the block that holds PSN p's bit
 * covers [p & ~(block_bits - 1), +block_bits), so the block of any PSN is found from RCV.NXT
 * and RCV.HIGH alone, without a stored base.
 *
 * Sizes, as in the paper: 1024 bits in 128 blocks of 8 bits, next_ptr and avail entries of 8 bits
 * each, 3 Kb per side. Up to 256 blocks use 8-bit next/avail entries; larger pools (the pool-size
 * sweep) use 16-bit entries. Units: bits and blocks, as the names say.
 */
#ifndef RECV_POOL_H
#define RECV_POOL_H

#include <errno.h>
#include <stdint.h>

#include "sl_common.h"

#define SL_RECV_POOL_NIL UINT16_MAX        /**< no block (an empty chain) */
#define SL_RECV_POOL_MAX_BLOCKS 65535u     /**< block ids are 16-bit, NIL excluded */
#define SL_RECV_POOL_DEFAULT_BITS 1024u    /**< the paper's pool */
#define SL_RECV_POOL_DEFAULT_BLOCK_BITS 8u /**< the paper's 1 B block */

struct sl_recv_pool_conf {
	uint32_t pool_bits;  /**< bits in the pool, a multiple of block_bits */
	uint32_t block_bits; /**< bits per block: 8, 16, 32 or 64 */
};

struct sl_recv_pool {
	uint32_t nblocks;     /**< blocks in the pool */
	uint32_t block_bits;  /**< bits per block */
	uint32_t block_shift; /**< log2(block_bits) */
	uint32_t avail_ptr;   /**< top of the free stack = blocks in use */
	uint32_t peak_blocks; /**< most blocks ever in use at once */
	uint32_t idx_bytes;   /**< bytes per next_ptr / avail entry: 1 (<= 256 blocks) or 2 */
	uint64_t next_hops;   /**< next_ptr reads outside the audits: the list walks */
	uint64_t puts;        /**< blocks returned to the free stack */
	uint8_t *bits;        /**< nblocks * block_bits bits */
	uint8_t *next;        /**< next_ptr per block, idx_bytes each */
	uint8_t *avail;       /**< free-slot stack, idx_bytes each */
};

/* Pool from conf; NULL and errno EINVAL (bad sizes) or ENOMEM. */
struct sl_recv_pool *sl_recv_pool_create(const struct sl_recv_pool_conf *conf);
void sl_recv_pool_free(struct sl_recv_pool *p);

/* Bytes the pool's bits, next_ptr and avail arrays take for conf (the paper's "3 Kb"). */
uint64_t sl_recv_pool_bytes(const struct sl_recv_pool_conf *conf);

static inline uint32_t
sl_recv_pool_idx_get(const struct sl_recv_pool *p, const uint8_t *arr, uint32_t i)
{
	if (p->idx_bytes == 1)
		return arr[i];
	return ((const uint16_t *)(const void *)arr)[i];
}

static inline void
sl_recv_pool_idx_set(const struct sl_recv_pool *p, uint8_t *arr, uint32_t i, uint32_t v)
{
	if (p->idx_bytes == 1)
		arr[i] = (uint8_t)v;
	else
		((uint16_t *)(void *)arr)[i] = (uint16_t)v;
}

/* Blocks currently taken from the pool. */
static inline uint32_t
sl_recv_pool_in_use(const struct sl_recv_pool *p)
{
	return p->avail_ptr;
}

static inline uint32_t
sl_recv_pool_avail(const struct sl_recv_pool *p)
{
	return p->nblocks - p->avail_ptr;
}

/* Pop a block off the free stack, its bits cleared; SL_RECV_POOL_NIL when the pool is empty. */
static inline uint16_t
sl_recv_pool_get(struct sl_recv_pool *p)
{
	uint32_t b;

	if (sl_unlikely(p->avail_ptr == p->nblocks))
		return SL_RECV_POOL_NIL;
	b = sl_recv_pool_idx_get(p, p->avail, p->avail_ptr++);
	for (uint32_t i = 0; i < p->block_bits / 8; i++)
		p->bits[b * (p->block_bits / 8) + i] = 0;
	if (p->avail_ptr > p->peak_blocks)
		p->peak_blocks = p->avail_ptr;
	return (uint16_t)b;
}

/* Push block b back on the free stack. */
static inline void
sl_recv_pool_put(struct sl_recv_pool *p, uint16_t b)
{
	sl_recv_pool_idx_set(p, p->avail, --p->avail_ptr, b);
	p->puts++;
}

/*
 * The block after b, counted in next_hops. MELO reads next_ptr only to shrink a chain at its
 * head, so next_hops never exceeds puts: the fuzz target checks exactly that.
 */
static inline uint16_t
sl_recv_pool_next(struct sl_recv_pool *p, uint16_t b)
{
	p->next_hops++;
	return (uint16_t)sl_recv_pool_idx_get(p, p->next, b);
}

/* The block after b, for the audits (not counted). */
static inline uint16_t
sl_recv_pool_peek_next(const struct sl_recv_pool *p, uint16_t b)
{
	return (uint16_t)sl_recv_pool_idx_get(p, p->next, b);
}

/* Bit `off` (< block_bits) of block b. */
static inline bool
sl_recv_pool_test(const struct sl_recv_pool *p, uint16_t b, uint32_t off)
{
	uint32_t bit = b * p->block_bits + off;

	return (p->bits[bit / 8] >> (bit % 8)) & 1;
}

static inline void
sl_recv_pool_set(struct sl_recv_pool *p, uint16_t b, uint32_t off)
{
	uint32_t bit = b * p->block_bits + off;

	p->bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

static inline void
sl_recv_pool_clear(struct sl_recv_pool *p, uint16_t b, uint32_t off)
{
	uint32_t bit = b * p->block_bits + off;

	p->bits[bit / 8] &= (uint8_t) ~(1u << (bit % 8));
}

/* Number of consecutive set bits of block b from bit off on (0 .. block_bits - off). */
static inline uint32_t
sl_recv_pool_run(const struct sl_recv_pool *p, uint16_t b, uint32_t off)
{
	const uint8_t *src = &p->bits[b * (p->block_bits / 8)];
	uint64_t w = 0;

	for (uint32_t i = 0; i < p->block_bits / 8; i++)
		w |= (uint64_t)src[i] << (8 * i);
	w = ~(w >> off); /* bits past the block read as clear, so the run stops there */
	if (w == 0)
		return p->block_bits - off;
	return SL_MIN((uint32_t)__builtin_ctzll(w), p->block_bits - off);
}

/*
 * Link n fresh blocks after *end (or start a chain when *start is NIL). All or nothing: 0, or
 * -ENOSPC when fewer than n blocks are free (the chain is left as it was). O(n).
 */
static inline int
sl_recv_pool_chain_extend(struct sl_recv_pool *p, uint16_t *start, uint16_t *end, uint32_t n)
{
	if (sl_unlikely(n > sl_recv_pool_avail(p)))
		return -ENOSPC;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t b = sl_recv_pool_get(p);

		if (*start == SL_RECV_POOL_NIL)
			*start = b;
		else
			sl_recv_pool_idx_set(p, p->next, *end, b);
		*end = b;
	}
	return 0;
}

/* Return the head block of a non-empty chain to the pool; the chain may become empty. */
static inline void
sl_recv_pool_chain_pop(struct sl_recv_pool *p, uint16_t *start, uint16_t *end)
{
	uint16_t b = *start;

	if (b == *end)
		*start = *end = SL_RECV_POOL_NIL;
	else
		*start = sl_recv_pool_next(p, b);
	sl_recv_pool_put(p, b);
}

/* Return a whole chain (close, RTO, bitmap emptied); returns the number of blocks freed. */
uint32_t sl_recv_pool_chain_release(struct sl_recv_pool *p, uint16_t *start, uint16_t *end);

/*
 * Audit helpers for invariant tests (walk chains; never on the fast path). seen[] has nblocks
 * bytes, zeroed by the caller. chain_mark marks every block of a chain and returns its length,
 * or -EFAULT when a block is already marked (reachable twice), is out of range, or the chain is
 * longer than the pool. check returns 0 when the marked blocks are exactly the ones in use and
 * the free stack holds each other block once, else -EFAULT.
 */
int sl_recv_pool_chain_mark(const struct sl_recv_pool *p, uint16_t start, uint16_t end,
			    uint8_t *seen);
int sl_recv_pool_check(const struct sl_recv_pool *p, const uint8_t *seen);

#endif /* RECV_POOL_H */
