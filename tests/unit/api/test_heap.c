/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/api/heap.c: alignment, coalescing back to one block, refusals, and 10^4 random
 * allocations and releases checked against a model (no overlap, inside the memory, aligned,
 * freed space reused).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap.h"

#define MEM (UINT64_C(16) << 20)

static void
assert_whole(struct sl_api_heap *h, uint64_t bytes)
{
	struct sl_api_heap_stats st;

	sl_api_heap_stats_get(h, &st);
	assert_int_equal(st.used_blocks, 0);
	assert_int_equal(st.used_bytes, 0);
	assert_int_equal(st.free_blocks, 1);
	assert_int_equal(st.free_bytes, bytes);
}

static void
heap_create__refuses_bad_sizes(void **state)
{
	(void)state;
	errno = 0;
	assert_null(sl_api_heap_create(0));
	assert_int_equal(errno, EINVAL);
	assert_null(sl_api_heap_create(4096 + 64));
	assert_null(sl_api_heap_create(UINT64_C(1) << 40));
}

static void
heap_alloc__aligns_64_below_a_page_and_4096_from_a_page(void **state)
{
	struct sl_api_heap *h = sl_api_heap_create(MEM);
	uint64_t a, b, c, d;

	(void)state;
	a = sl_api_heap_alloc(h, 1);
	b = sl_api_heap_alloc(h, 65);
	c = sl_api_heap_alloc(h, 4096);
	d = sl_api_heap_alloc(h, 5000);
	assert_int_equal(a % 64, 0);
	assert_int_equal(b % 64, 0);
	assert_true(b >= a + 64);
	assert_int_equal(c % 4096, 0);
	assert_int_equal(d % 4096, 0);
	/* the pad in front of c is free again for small blocks */
	assert_true(sl_api_heap_alloc(h, 64) < c);
	sl_api_heap_free(h);
}

static void
heap_alloc__full_then_refused_then_reused(void **state)
{
	struct sl_api_heap *h = sl_api_heap_create(8192);
	uint64_t a, b;

	(void)state;
	assert_int_equal(sl_api_heap_alloc(h, 0), SL_API_HEAP_NONE);
	assert_int_equal(sl_api_heap_alloc(h, 8193), SL_API_HEAP_NONE);
	a = sl_api_heap_alloc(h, 4096);
	b = sl_api_heap_alloc(h, 4096);
	assert_int_not_equal(a, SL_API_HEAP_NONE);
	assert_int_not_equal(b, SL_API_HEAP_NONE);
	assert_int_equal(sl_api_heap_alloc(h, 64), SL_API_HEAP_NONE);
	assert_true(sl_api_heap_release(h, a));
	assert_int_equal(sl_api_heap_alloc(h, 4096), a);
	sl_api_heap_free(h);
}

static void
heap_release__ignores_what_it_did_not_hand_out(void **state)
{
	struct sl_api_heap *h = sl_api_heap_create(MEM);
	uint64_t a = sl_api_heap_alloc(h, 256);

	(void)state;
	assert_false(sl_api_heap_release(h, a + 64));   /* inside a block */
	assert_false(sl_api_heap_release(h, a + 1));    /* unaligned */
	assert_false(sl_api_heap_release(h, MEM));      /* outside */
	assert_false(sl_api_heap_release(h, a + 4096)); /* free space */
	assert_true(sl_api_heap_release(h, a));
	assert_false(sl_api_heap_release(h, a)); /* twice */
	assert_whole(h, MEM);
	sl_api_heap_free(h);
}

static void
heap_release__coalesces_both_neighbours(void **state)
{
	struct sl_api_heap *h = sl_api_heap_create(MEM);
	uint64_t a = sl_api_heap_alloc(h, 640), b = sl_api_heap_alloc(h, 640),
		 c = sl_api_heap_alloc(h, 640);
	struct sl_api_heap_stats st;

	(void)state;
	assert_true(sl_api_heap_release(h, a));
	assert_true(sl_api_heap_release(h, c));
	sl_api_heap_stats_get(h, &st);
	assert_int_equal(st.free_blocks, 2); /* a, and c merged with the tail */
	assert_true(sl_api_heap_release(h, b));
	assert_whole(h, MEM);
	sl_api_heap_free(h);
}

#define OPS 10000
#define LIVE_MAX 2000
#define RANDOM_MEM (UINT64_C(64) << 20) /**< about 4x the model's peak (13.5 MiB) */

struct live {
	uint64_t off, bytes;
};

static int
by_off(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The model: every live block inside the memory, aligned, none overlapping another. */
static void
check_model(struct live *live, unsigned n, uint64_t mem)
{
	struct live sorted[LIVE_MAX];

	memcpy(sorted, live, n * sizeof(*live));
	qsort(sorted, n, sizeof(*sorted), by_off);
	for (unsigned i = 0; i < n; i++) {
		assert_true(sorted[i].off + sorted[i].bytes <= mem);
		assert_int_equal(sorted[i].off % (sorted[i].bytes >= 4096 ? 4096 : 64), 0);
		if (i)
			assert_true(sorted[i - 1].off + sorted[i - 1].bytes <= sorted[i].off);
	}
}

static void
heap_alloc__random_ops_against_a_model(void **state)
{
	static struct live live[LIVE_MAX];
	struct sl_api_heap *h = sl_api_heap_create(RANDOM_MEM);
	struct sl_api_heap_stats st;
	unsigned n = 0, reused = 0;
	uint64_t high = 0, used = 0;

	(void)state;
	srand(14);
	for (unsigned op = 0; op < OPS; op++) {
		if (n < LIVE_MAX && (n == 0 || rand() % 100 < 55)) {
			/* mostly small, sometimes pages, rarely a megabyte */
			uint64_t r = (uint64_t)rand();
			uint64_t bytes = r % 10 == 0    ? 1 + r / 10 % 65536
					 : r % 199 == 0 ? (UINT64_C(1) << 20) + r / 199 % 4096
							: 1 + r / 10 % 1024;
			uint64_t off = sl_api_heap_alloc(h, bytes);

			/* live bytes stay well below the memory: never refused */
			assert_int_not_equal(off, SL_API_HEAP_NONE);
			if (off < high)
				reused++;
			if (off + bytes > high)
				high = off + bytes;
			live[n++] = (struct live){off, bytes};
			used += (bytes + 63) & ~UINT64_C(63);
		} else {
			unsigned i = rand() % n;

			assert_true(sl_api_heap_release(h, live[i].off));
			used -= (live[i].bytes + 63) & ~UINT64_C(63);
			live[i] = live[--n];
		}
		if (op % 500 == 0)
			check_model(live, n, RANDOM_MEM);
		sl_api_heap_stats_get(h, &st);
		assert_int_equal(st.used_blocks, n);
		assert_int_equal(st.used_bytes, used);
		assert_int_equal(st.used_bytes + st.free_bytes, RANDOM_MEM);
	}
	check_model(live, n, RANDOM_MEM);
	assert_true(reused > 1000);     /* freed space comes back */
	assert_true(high < RANDOM_MEM); /* and the heap never had to reach its end */
	while (n)
		assert_true(sl_api_heap_release(h, live[--n].off));
	assert_whole(h, RANDOM_MEM);
	sl_api_heap_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(heap_create__refuses_bad_sizes),
		cmocka_unit_test(heap_alloc__aligns_64_below_a_page_and_4096_from_a_page),
		cmocka_unit_test(heap_alloc__full_then_refused_then_reused),
		cmocka_unit_test(heap_release__ignores_what_it_did_not_hand_out),
		cmocka_unit_test(heap_release__coalesces_both_neighbours),
		cmocka_unit_test(heap_alloc__random_ops_against_a_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
