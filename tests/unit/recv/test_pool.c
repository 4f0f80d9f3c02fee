/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/recv/pool.c: MELO's shared bits pool (blocks, next_ptr, LIFO free stack). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pool.h"

static struct sl_recv_pool *
pool_new(uint32_t pool_bits, uint32_t block_bits)
{
	struct sl_recv_pool_conf c = {pool_bits, block_bits};
	struct sl_recv_pool *p = sl_recv_pool_create(&c);

	assert_non_null(p);
	return p;
}

static void
sl_recv_pool_create__rejects_bad_sizes(void **state)
{
	const struct sl_recv_pool_conf bad[] = {
		{1024, 12}, {1024, 4}, {1024, 128}, {0, 8}, {1020, 8}, {8 * 65536, 8},
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sl_recv_pool_create(&bad[i]));
		assert_int_equal(errno, EINVAL);
		assert_int_equal(sl_recv_pool_bytes(&bad[i]), 0);
	}
	assert_null(sl_recv_pool_create(NULL));
}

static void
sl_recv_pool_bytes__paper_default_is_3_kbit(void **state)
{
	struct sl_recv_pool_conf c = {SL_RECV_POOL_DEFAULT_BITS, SL_RECV_POOL_DEFAULT_BLOCK_BITS};
	struct sl_recv_pool *p = pool_new(1024, 8);

	(void)state;
	/* 1024 bits + 128 x 8-bit next_ptr + 128 x 8-bit avail = 3 Kb = 384 B (paper, 3.2). */
	assert_int_equal(sl_recv_pool_bytes(&c), 384);
	assert_int_equal(p->nblocks, 128);
	assert_int_equal(p->idx_bytes, 1);
	sl_recv_pool_free(p);
	c.pool_bits = 8 * 1024; /* 1024 blocks need 16-bit entries */
	assert_int_equal(sl_recv_pool_bytes(&c), 1024 + 2 * 1024 * 2);
}

static void
sl_recv_pool_get__lifo_and_empty(void **state)
{
	struct sl_recv_pool *p = pool_new(64, 8);
	uint16_t b[8];

	(void)state;
	for (int i = 0; i < 8; i++) {
		b[i] = sl_recv_pool_get(p);
		assert_int_not_equal(b[i], SL_RECV_POOL_NIL);
		assert_int_equal(sl_recv_pool_in_use(p), i + 1);
	}
	assert_int_equal(sl_recv_pool_get(p), SL_RECV_POOL_NIL);
	assert_int_equal(sl_recv_pool_avail(p), 0);
	sl_recv_pool_put(p, b[3]);
	sl_recv_pool_put(p, b[6]);
	/* The last block returned is the first handed out again. */
	assert_int_equal(sl_recv_pool_get(p), b[6]);
	assert_int_equal(sl_recv_pool_get(p), b[3]);
	assert_int_equal(p->peak_blocks, 8);
	sl_recv_pool_free(p);
}

static void
sl_recv_pool_get__clears_recycled_bits(void **state)
{
	struct sl_recv_pool *p = pool_new(64, 16);
	uint16_t b = sl_recv_pool_get(p);

	(void)state;
	for (uint32_t off = 0; off < 16; off++)
		sl_recv_pool_set(p, b, off);
	sl_recv_pool_clear(p, b, 3);
	assert_false(sl_recv_pool_test(p, b, 3));
	assert_true(sl_recv_pool_test(p, b, 15));
	sl_recv_pool_put(p, b);
	assert_int_equal(sl_recv_pool_get(p), b);
	for (uint32_t off = 0; off < 16; off++)
		assert_false(sl_recv_pool_test(p, b, off));
	sl_recv_pool_free(p);
}

static void
sl_recv_pool_run__counts_consecutive_set_bits(void **state)
{
	struct sl_recv_pool *p16 = pool_new(64, 16), *p64 = pool_new(128, 64);
	uint16_t b = sl_recv_pool_get(p16), w = sl_recv_pool_get(p64);

	(void)state;
	for (uint32_t off = 3; off <= 9; off++)
		sl_recv_pool_set(p16, b, off);
	sl_recv_pool_set(p16, b, 15);
	assert_int_equal(sl_recv_pool_run(p16, b, 3), 7); /* 3..9, across the byte edge */
	assert_int_equal(sl_recv_pool_run(p16, b, 8), 2);
	assert_int_equal(sl_recv_pool_run(p16, b, 10), 0);
	assert_int_equal(sl_recv_pool_run(p16, b, 15), 1); /* stops at the block's end */
	for (uint32_t off = 0; off < 64; off++)
		sl_recv_pool_set(p64, w, off);
	assert_int_equal(sl_recv_pool_run(p64, w, 0), 64);
	assert_int_equal(sl_recv_pool_run(p64, w, 60), 4);
	sl_recv_pool_clear(p64, w, 40);
	assert_int_equal(sl_recv_pool_run(p64, w, 0), 40);
	sl_recv_pool_free(p16);
	sl_recv_pool_free(p64);
}

static void
sl_recv_pool_chain_extend__all_or_nothing(void **state)
{
	struct sl_recv_pool *p = pool_new(32, 8);
	uint16_t s = SL_RECV_POOL_NIL, e = SL_RECV_POOL_NIL;
	uint8_t seen[4] = {0};

	(void)state;
	assert_int_equal(sl_recv_pool_chain_extend(p, &s, &e, 3), 0);
	assert_int_equal(sl_recv_pool_chain_extend(p, &s, &e, 2), -ENOSPC);
	assert_int_equal(sl_recv_pool_in_use(p), 3);
	assert_int_equal(sl_recv_pool_chain_mark(p, s, e, seen), 3);
	assert_int_equal(sl_recv_pool_check(p, seen), 0);
	assert_int_equal(sl_recv_pool_chain_release(p, &s, &e), 3);
	assert_int_equal(s, SL_RECV_POOL_NIL);
	assert_int_equal(e, SL_RECV_POOL_NIL);
	assert_int_equal(sl_recv_pool_in_use(p), 0);
	sl_recv_pool_free(p);
}

static void
sl_recv_pool_chain_pop__shrinks_at_head_in_link_order(void **state)
{
	struct sl_recv_pool *p = pool_new(8 * 300, 8); /* 300 blocks: 16-bit entries */
	uint16_t s = SL_RECV_POOL_NIL, e = SL_RECV_POOL_NIL, order[300];
	uint32_t n = 0;

	(void)state;
	assert_int_equal(p->idx_bytes, 2);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(sl_recv_pool_chain_extend(p, &s, &e, 1), 0);
		order[i] = e;
	}
	while (s != SL_RECV_POOL_NIL) {
		assert_int_equal(s, order[n++]);
		sl_recv_pool_chain_pop(p, &s, &e);
	}
	assert_int_equal(n, 300);
	assert_int_equal(sl_recv_pool_in_use(p), 0);
	sl_recv_pool_free(p);
}

static void
sl_recv_pool_check__detects_shared_and_leaked_blocks(void **state)
{
	struct sl_recv_pool *p = pool_new(64, 8);
	uint16_t s1 = SL_RECV_POOL_NIL, e1 = SL_RECV_POOL_NIL;
	uint16_t s2 = SL_RECV_POOL_NIL, e2 = SL_RECV_POOL_NIL;
	uint8_t seen[8] = {0};

	(void)state;
	assert_int_equal(sl_recv_pool_chain_extend(p, &s1, &e1, 2), 0);
	assert_int_equal(sl_recv_pool_chain_extend(p, &s2, &e2, 2), 0);
	assert_int_equal(sl_recv_pool_chain_mark(p, s1, e1, seen), 2);
	/* The same chain reached from a second owner is caught. */
	assert_int_equal(sl_recv_pool_chain_mark(p, s1, e1, seen), -EFAULT);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(sl_recv_pool_chain_mark(p, s1, e1, seen), 2);
	/* Chain 2 not marked: its blocks look leaked. */
	assert_int_equal(sl_recv_pool_check(p, seen), -EFAULT);
	assert_int_equal(sl_recv_pool_chain_mark(p, s2, e2, seen), 2);
	assert_int_equal(sl_recv_pool_check(p, seen), 0);
	/* A half-empty chain (start NIL, end set) is malformed. */
	assert_int_equal(sl_recv_pool_chain_mark(p, SL_RECV_POOL_NIL, e2, seen), -EFAULT);
	sl_recv_pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_recv_pool_create__rejects_bad_sizes),
		cmocka_unit_test(sl_recv_pool_bytes__paper_default_is_3_kbit),
		cmocka_unit_test(sl_recv_pool_get__lifo_and_empty),
		cmocka_unit_test(sl_recv_pool_get__clears_recycled_bits),
		cmocka_unit_test(sl_recv_pool_run__counts_consecutive_set_bits),
		cmocka_unit_test(sl_recv_pool_chain_extend__all_or_nothing),
		cmocka_unit_test(sl_recv_pool_chain_pop__shrinks_at_head_in_link_order),
		cmocka_unit_test(sl_recv_pool_check__detects_shared_and_leaked_blocks),
	};
	return cmocka_run_group_tests_name("recv-pool", tests, NULL, NULL);
}
