/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.c - MELO's shared bits pool (see pool.h for the model): construction, whole-chain
 * release, and the audit walks the invariant tests use. The per-packet operations (take, return,
 * grow at the tail, shrink at the head, bit access) are inline in the header.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

static int
conf_check(const struct sl_recv_pool_conf *conf)
{
	uint32_t nblocks;

	if (conf == NULL || !sl_is_pow2(conf->block_bits) || conf->block_bits < 8 ||
	    conf->block_bits > 64 || conf->pool_bits == 0 || conf->pool_bits % conf->block_bits)
		return -EINVAL;
	nblocks = conf->pool_bits / conf->block_bits;
	if (nblocks > SL_RECV_POOL_MAX_BLOCKS)
		return -EINVAL;
	return 0;
}

static uint32_t
idx_bytes_for(uint32_t nblocks)
{
	return nblocks <= 256 ? 1 : 2;
}

uint64_t
sl_recv_pool_bytes(const struct sl_recv_pool_conf *conf)
{
	uint32_t nblocks;

	if (conf_check(conf) < 0)
		return 0;
	nblocks = conf->pool_bits / conf->block_bits;
	return conf->pool_bits / 8 + 2ull * nblocks * idx_bytes_for(nblocks);
}

struct sl_recv_pool *
sl_recv_pool_create(const struct sl_recv_pool_conf *conf)
{
	struct sl_recv_pool *p;
	uint32_t nblocks, ib;
	int rc = conf_check(conf);

	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	nblocks = conf->pool_bits / conf->block_bits;
	ib = idx_bytes_for(nblocks);
	p = calloc(1, sizeof(*p) + sl_recv_pool_bytes(conf));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->nblocks = nblocks;
	p->block_bits = conf->block_bits;
	p->block_shift = (uint32_t)__builtin_ctz(conf->block_bits);
	p->idx_bytes = ib;
	p->bits = (uint8_t *)(p + 1);
	p->next = p->bits + conf->pool_bits / 8;
	p->avail = p->next + (size_t)nblocks * ib;
	for (uint32_t b = 0; b < nblocks; b++)
		sl_recv_pool_idx_set(p, p->avail, b, b);
	return p;
}

void
sl_recv_pool_free(struct sl_recv_pool *p)
{
	free(p);
}

uint32_t
sl_recv_pool_chain_release(struct sl_recv_pool *p, uint16_t *start, uint16_t *end)
{
	uint32_t n = 0;

	while (*start != SL_RECV_POOL_NIL) {
		sl_recv_pool_chain_pop(p, start, end);
		n++;
	}
	return n;
}

int
sl_recv_pool_chain_mark(const struct sl_recv_pool *p, uint16_t start, uint16_t end, uint8_t *seen)
{
	uint32_t len = 0;
	uint16_t b = start;

	if (start == SL_RECV_POOL_NIL || end == SL_RECV_POOL_NIL)
		return start == end ? 0 : -EFAULT;
	for (;;) {
		if (b >= p->nblocks || seen[b] || ++len > p->nblocks)
			return -EFAULT;
		seen[b] = 1;
		if (b == end)
			return (int)len;
		b = sl_recv_pool_peek_next(p, b);
	}
}

int
sl_recv_pool_check(const struct sl_recv_pool *p, const uint8_t *seen)
{
	uint32_t marked = 0;
	uint8_t *on_stack = calloc(p->nblocks, 1);
	int rc = 0;

	if (on_stack == NULL)
		return -ENOMEM;
	for (uint32_t b = 0; b < p->nblocks; b++)
		marked += seen[b] != 0;
	if (marked != p->avail_ptr)
		rc = -EFAULT;
	for (uint32_t i = p->avail_ptr; i < p->nblocks && rc == 0; i++) {
		uint32_t b = sl_recv_pool_idx_get(p, p->avail, i);

		if (b >= p->nblocks || seen[b] || on_stack[b])
			rc = -EFAULT;
		else
			on_stack[b] = 1;
	}
	free(on_stack);
	return rc;
}
