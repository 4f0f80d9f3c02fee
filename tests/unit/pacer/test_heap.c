/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/pacer/heap.c: the 4-ary heap against a sorted reference, with and without ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sl_pacer_driver.h"
#include "sl_rng.h"

#define N 5000u

static void
sl_pacer_heap_pop__yields_keys_in_order(void **state)
{
	struct sl_pacer_heap h;
	struct sl_rng r;
	uint64_t prev = 0;

	(void)state;
	sl_rng_seed(&r, 1);
	assert_int_equal(sl_pacer_heap_init(&h, N, 0), 0);
	for (uint32_t i = 0; i < N; i++)
		sl_pacer_heap_push(&h, sl_rng_below(&r, 1000), i);
	assert_int_equal(h.n, N);
	while (!sl_pacer_heap_empty(&h)) {
		assert_true(sl_pacer_heap_top(&h)->key >= prev);
		prev = sl_pacer_heap_top(&h)->key;
		sl_pacer_heap_pop(&h);
	}
	sl_pacer_heap_fini(&h);
}

static void
sl_pacer_heap_retop__reorders(void **state)
{
	struct sl_pacer_heap h;

	(void)state;
	assert_int_equal(sl_pacer_heap_init(&h, 8, 0), 0);
	sl_pacer_heap_push(&h, 10, 1);
	sl_pacer_heap_push(&h, 20, 2);
	sl_pacer_heap_push(&h, 30, 3);
	sl_pacer_heap_retop(&h, 25); /* flow 1 moves behind flow 2 */
	assert_int_equal(sl_pacer_heap_top(&h)->id, 2);
	sl_pacer_heap_pop(&h);
	assert_int_equal(sl_pacer_heap_top(&h)->id, 1);
	assert_int_equal(sl_pacer_heap_top(&h)->key, 25);
	sl_pacer_heap_fini(&h);
}

static void
sl_pacer_heap_update__matches_reference(void **state)
{
	struct sl_pacer_heap h;
	uint64_t key[N];
	bool in[N];
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 2);
	assert_int_equal(sl_pacer_heap_init(&h, N, N), 0);
	for (uint32_t i = 0; i < N; i++) {
		key[i] = sl_rng_below(&r, 1u << 20);
		in[i] = true;
		sl_pacer_heap_push(&h, key[i], i);
	}
	for (unsigned k = 0; k < 20000; k++) {
		uint32_t id = (uint32_t)sl_rng_below(&r, N);

		if (!in[id])
			continue;
		if (sl_rng_below(&r, 4) == 0) {
			sl_pacer_heap_remove(&h, id);
			in[id] = false;
			assert_false(sl_pacer_heap_has(&h, id));
		} else {
			key[id] = sl_rng_below(&r, 1u << 20);
			sl_pacer_heap_update(&h, id, key[id]);
		}
	}
	/* Pop everything: each top is the minimum of what the reference still holds. */
	while (!sl_pacer_heap_empty(&h)) {
		uint64_t min = UINT64_MAX;

		for (uint32_t i = 0; i < N; i++)
			if (in[i] && key[i] < min)
				min = key[i];
		assert_int_equal(sl_pacer_heap_top(&h)->key, min);
		assert_int_equal(key[sl_pacer_heap_top(&h)->id], min);
		in[sl_pacer_heap_top(&h)->id] = false;
		sl_pacer_heap_pop(&h);
	}
	for (uint32_t i = 0; i < N; i++)
		assert_false(in[i]);
	sl_pacer_heap_fini(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_pacer_heap_pop__yields_keys_in_order),
		cmocka_unit_test(sl_pacer_heap_retop__reorders),
		cmocka_unit_test(sl_pacer_heap_update__matches_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
