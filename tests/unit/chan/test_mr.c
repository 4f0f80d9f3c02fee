/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mr.c - the memory-region key table (lib/chan/mr.c): random registrations,
 * deregistrations and lookups of either key against a plain model, then the edges one at a
 * time: a key that was deregistered misses once its slot is reused, another client's key
 * misses, an lkey is no rkey and back, keys carry random bits, ranges at and past a region's
 * edges (and ones whose end wraps 2^64) miss, access flags are honoured.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sl_chan.h"
#include "sl_rng.h"

#define MAX_MRS 32u
#define OPS 100000u
#define DEAD 64u /* deregistered keys remembered */

static uint8_t arena[1 << 16];

struct model_mr {
	uint32_t key[2], access; /**< key by enum sl_chan_key_kind */
	uint64_t client, va, len;
	uint8_t *ptr;
};

/* The model's clients: the third shares the first's low 32 bits and is another client. */
static const uint64_t clients[] = {1, 2, 1 + (UINT64_C(1) << 32)};

/* Register in t; the lkey in *lkey (the rkey dropped). */
static int
add(struct sl_chan_mrs *t, uint64_t client, uint64_t va, uint64_t len, uint8_t *ptr,
    uint32_t access, uint32_t *lkey)
{
	uint32_t rkey;

	return sl_chan_mrs_add(t, client, va, len, ptr, access, lkey, &rkey);
}

/* Find by lkey. */
static uint8_t *
find(const struct sl_chan_mrs *t, uint64_t client, uint32_t lkey, uint64_t va, uint64_t len,
     uint32_t need)
{
	return sl_chan_mrs_find(t, client, SL_CHAN_LKEY, lkey, va, len, need);
}

/* What find must answer, from the model. */
static uint8_t *
model_find(const struct model_mr *m, unsigned n, uint64_t client, enum sl_chan_key_kind kind,
	   uint32_t key, uint64_t va, uint64_t len, uint32_t need)
{
	for (unsigned i = 0; i < n; i++) {
		const struct model_mr *r = &m[i];

		if (r->key[kind] != key)
			continue;
		if (r->client != client || (r->access & need) != need || va < r->va ||
		    va - r->va > r->len || len > r->len - (va - r->va))
			return NULL;
		return r->ptr + (va - r->va);
	}
	return NULL;
}

static void
mrs__random_ops_match_a_model(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(MAX_MRS);
	struct model_mr live[MAX_MRS];
	uint32_t dead[DEAD] = {0};
	unsigned n = 0, ndead = 0;
	uint64_t hits = 0, misses = 0, del_len;
	struct sl_rng rng;

	(void)state;
	assert_non_null(t);
	sl_rng_seed(&rng, 14);
	for (unsigned op = 0; op < OPS; op++) {
		unsigned what = (unsigned)sl_rng_below(&rng, 10);

		if (what < 2) { /* register */
			struct model_mr r = {.client = clients[sl_rng_below(&rng, 3)],
					     .access = (uint32_t)sl_rng_below(&rng, 8),
					     .va = sl_rng_below(&rng, 1 << 20),
					     .len = 1 + sl_rng_below(&rng, 4096)};
			int rc;

			r.ptr = arena + sl_rng_below(&rng, sizeof(arena) - 4096);
			rc = sl_chan_mrs_add(t, r.client, r.va, r.len, r.ptr, r.access,
					     &r.key[SL_CHAN_LKEY], &r.key[SL_CHAN_RKEY]);
			if (n == MAX_MRS) {
				assert_int_equal(rc, -ENOSPC);
				continue;
			}
			assert_int_equal(rc, 0);
			assert_int_not_equal(r.key[SL_CHAN_LKEY], 0);
			assert_int_not_equal(r.key[SL_CHAN_RKEY], 0);
			assert_int_not_equal(r.key[SL_CHAN_LKEY], r.key[SL_CHAN_RKEY]);
			for (unsigned i = 0; i < n; i++)
				for (unsigned k = 0; k < 2; k++) {
					assert_int_not_equal(live[i].key[k], r.key[SL_CHAN_LKEY]);
					assert_int_not_equal(live[i].key[k], r.key[SL_CHAN_RKEY]);
				}
			live[n++] = r;
		} else if (what < 4 && n) { /* deregister: sometimes as the wrong client */
			unsigned i = (unsigned)sl_rng_below(&rng, n);
			uint64_t client = live[i].client + (sl_rng_below(&rng, 4) == 0);

			if (client != live[i].client) {
				assert_int_equal(sl_chan_mrs_del(t, client,
								 live[i].key[SL_CHAN_LKEY],
								 &del_len),
						 -ENOENT);
				continue;
			}
			/* by its rkey: nothing (deregistration names the lkey) */
			assert_int_equal(
				sl_chan_mrs_del(t, client, live[i].key[SL_CHAN_RKEY], &del_len),
				-ENOENT);
			assert_int_equal(
				sl_chan_mrs_del(t, client, live[i].key[SL_CHAN_LKEY], &del_len), 0);
			assert_int_equal(del_len, live[i].len);
			assert_int_equal(
				sl_chan_mrs_del(t, client, live[i].key[SL_CHAN_LKEY], &del_len),
				-ENOENT);
			dead[ndead++ % DEAD] = live[i].key[sl_rng_below(&rng, 2)];
			live[i] = live[--n];
		} else { /* find: a live key (a range around its region) or a dead one */
			uint64_t client = clients[sl_rng_below(&rng, 3)];
			enum sl_chan_key_kind kind = (enum sl_chan_key_kind)sl_rng_below(&rng, 2);
			uint32_t key;
			uint32_t need = (uint32_t)sl_rng_below(&rng, 8);
			uint64_t va, len;
			uint8_t *want, *got;

			if (n && sl_rng_below(&rng, 4) != 0) {
				const struct model_mr *r = &live[sl_rng_below(&rng, n)];

				key = r->key[kind ^ (sl_rng_below(&rng, 8) == 0)]; /* or its twin */
				client = sl_rng_below(&rng, 2) ? r->client : client;
				va = r->va - 8 + sl_rng_below(&rng, r->len + 16);
				len = sl_rng_below(&rng, r->len + 8);
			} else {
				key = ndead ? dead[sl_rng_below(&rng, SL_MIN(ndead, DEAD))]
					    : (uint32_t)sl_rng_next(&rng);
				va = sl_rng_below(&rng, 1 << 20);
				len = sl_rng_below(&rng, 64);
			}
			want = model_find(live, n, client, kind, key, va, len, need);
			got = sl_chan_mrs_find(t, client, kind, key, va, len, need);
			assert_ptr_equal(got, want);
			hits += got != NULL;
			misses += got == NULL;
		}
	}
	/* both outcomes were exercised many times */
	assert_true(hits > OPS / 20);
	assert_true(misses > OPS / 20);
	sl_chan_mrs_free(t);
}

static void
mrs_find__stale_key_after_reuse_misses(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint32_t k1, k2;
	uint64_t del_len;

	(void)state;
	assert_int_equal(add(t, 1, 0x1000, 64, arena, SL_ACCESS_REMOTE_READ, &k1), 0);
	assert_int_equal(sl_chan_mrs_del(t, 1, k1, &del_len), 0);
	assert_null(find(t, 1, k1, 0x1000, 8, 0));
	assert_int_equal(add(t, 1, 0x1000, 64, arena, SL_ACCESS_REMOTE_READ, &k2), 0);
	assert_int_equal(k1 & 0x7, k2 & 0x7); /* the same slot (3 bits name 4), a new draw */
	assert_int_not_equal(k1, k2);
	assert_null(find(t, 1, k1, 0x1000, 8, 0));
	assert_ptr_equal(find(t, 1, k2, 0x1000, 8, 0), arena);
	assert_int_equal(sl_chan_mrs_del(t, 1, k1, &del_len),
			 -ENOENT); /* the stale key frees nothing */
	assert_ptr_equal(find(t, 1, k2, 0x1000, 8, 0), arena);
	assert_null(find(t, 1, 0, 0x1000, 8, 0));
	assert_null(find(t, 1, 5, 0x1000, 8, 0)); /* a slot past the table */
	sl_chan_mrs_free(t);
}

static void
mrs_find__another_clients_key_misses(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint32_t k;
	uint64_t del_len;

	(void)state;
	assert_int_equal(add(t, 1, 0x1000, 64, arena, SL_ACCESS_REMOTE_WRITE, &k), 0);
	assert_null(find(t, 2, k, 0x1000, 8, 0));
	assert_int_equal(sl_chan_mrs_del(t, 2, k, &del_len), -ENOENT);
	assert_int_equal(sl_chan_mrs_del_client(t, 2), 0);
	assert_non_null(find(t, 1, k, 0x1000, 8, 0));
	assert_int_equal(sl_chan_mrs_del_client(t, 1), 1);
	assert_null(find(t, 1, k, 0x1000, 8, 0));
	sl_chan_mrs_free(t);
}

/* Client numbers are 64 bits: two that share their low 32 bits are two clients. */
static void
mrs_find__clients_alike_below_2_32_are_distinct(void **state)
{
	const uint64_t old = 7, young = old + (UINT64_C(1) << 32);
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint32_t ko, ky;
	uint64_t del_len;

	(void)state;
	assert_int_equal(add(t, old, 0x1000, 64, arena, SL_ACCESS_REMOTE_WRITE, &ko), 0);
	assert_int_equal(add(t, young, 0x1000, 64, arena + 64, SL_ACCESS_REMOTE_WRITE, &ky), 0);
	assert_null(find(t, young, ko, 0x1000, 8, 0));
	assert_null(find(t, old, ky, 0x1000, 8, 0));
	assert_ptr_equal(find(t, old, ko, 0x1000, 8, 0), arena);
	assert_ptr_equal(find(t, young, ky, 0x1000, 8, 0), arena + 64);
	assert_int_equal(sl_chan_mrs_del(t, young, ko, &del_len), -ENOENT);
	assert_int_equal(sl_chan_mrs_del_client(t, old), 1); /* the old one leaves: only its own */
	assert_null(find(t, old, ko, 0x1000, 8, 0));
	assert_ptr_equal(find(t, young, ky, 0x1000, 8, 0), arena + 64);
	sl_chan_mrs_free(t);
}

static void
mrs_find__range_edges_and_overflow(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint64_t top = UINT64_MAX - 99;
	uint32_t k, kt;

	(void)state;
	assert_int_equal(add(t, 1, 1000, 100, arena, 0, &k), 0);
	assert_ptr_equal(find(t, 1, k, 1000, 100, 0), arena);
	assert_ptr_equal(find(t, 1, k, 1099, 1, 0), arena + 99);
	assert_ptr_equal(find(t, 1, k, 1100, 0, 0), arena + 100);
	assert_null(find(t, 1, k, 1000, 101, 0));
	assert_null(find(t, 1, k, 1099, 2, 0));
	assert_null(find(t, 1, k, 1100, 1, 0));
	assert_null(find(t, 1, k, 999, 1, 0));
	assert_null(find(t, 1, k, 1050, UINT64_MAX, 0)); /* va + len wraps */
	assert_null(find(t, 1, k, UINT64_MAX, 2, 0));
	/* a region at the very top of the address space */
	assert_int_equal(add(t, 1, top, 99, arena, 0, &kt), 0);
	assert_ptr_equal(find(t, 1, kt, top + 90, 9, 0), arena + 90);
	assert_null(find(t, 1, kt, top + 90, 10, 0));
	assert_null(find(t, 1, kt, UINT64_MAX - 5, 10, 0));
	sl_chan_mrs_free(t);
}

static void
mrs_find__needs_every_flag(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint32_t k;

	(void)state;
	assert_int_equal(
		add(t, 1, 0, 64, arena, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE, &k), 0);
	assert_non_null(find(t, 1, k, 0, 8, 0));
	assert_non_null(find(t, 1, k, 0, 8, SL_ACCESS_LOCAL_WRITE));
	assert_non_null(find(t, 1, k, 0, 8, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE));
	assert_null(find(t, 1, k, 0, 8, SL_ACCESS_REMOTE_READ));
	assert_null(find(t, 1, k, 0, 8, SL_ACCESS_REMOTE_WRITE | SL_ACCESS_REMOTE_READ));
	sl_chan_mrs_free(t);
}

static void
mrs_create__bad_sizes_are_einval(void **state)
{
	(void)state;
	errno = 0;
	assert_null(sl_chan_mrs_create(0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(sl_chan_mrs_create(1u << 16));
	assert_int_equal(errno, EINVAL);
}

/* A region's lkey and rkey differ, and each finds the region only as its own kind. */
static void
mrs_find__an_lkey_is_no_rkey(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(4);
	uint32_t lk, rk;
	uint64_t del_len;

	(void)state;
	assert_int_equal(sl_chan_mrs_add(t, 1, 0x1000, 64, arena,
					 SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE, &lk, &rk),
			 0);
	assert_int_not_equal(lk, rk);
	assert_ptr_equal(sl_chan_mrs_find(t, 1, SL_CHAN_LKEY, lk, 0x1000, 8, 0), arena);
	assert_ptr_equal(sl_chan_mrs_find(t, 1, SL_CHAN_RKEY, rk, 0x1000, 8, 0), arena);
	assert_null(sl_chan_mrs_find(t, 1, SL_CHAN_RKEY, lk, 0x1000, 8, 0));
	assert_null(sl_chan_mrs_find(t, 1, SL_CHAN_LKEY, rk, 0x1000, 8, 0));
	assert_int_equal(sl_chan_mrs_del(t, 1, lk, &del_len), 0);
	assert_null(sl_chan_mrs_find(t, 1, SL_CHAN_RKEY, rk, 0x1000, 8, 0));
	sl_chan_mrs_free(t);
}

/*
 * Keys carry random bits: one slot registered and deregistered KEY_DRAWS times gives keys whose
 * bits above the slot's take nearly as many values, with no fixed step between one key and the
 * next (a generation counter would give a step of 1), and never its previous key.
 */
#define KEY_DRAWS 2000u
static void
mrs_add__keys_carry_random_bits(void **state)
{
	struct sl_chan_mrs *t = sl_chan_mrs_create(1); /* one slot: 1 bit, 31 random */
	static uint32_t keys[KEY_DRAWS][2], steps[KEY_DRAWS];
	uint64_t del_len;
	unsigned distinct = 0, distinct_steps = 0;

	(void)state;
	for (unsigned i = 0; i < KEY_DRAWS; i++) {
		assert_int_equal(sl_chan_mrs_add(t, 1, 0, 64, arena, 0, &keys[i][SL_CHAN_LKEY],
						 &keys[i][SL_CHAN_RKEY]),
				 0);
		assert_int_equal(sl_chan_mrs_del(t, 1, keys[i][SL_CHAN_LKEY], &del_len), 0);
		if (i > 0) {
			assert_int_not_equal(keys[i][SL_CHAN_LKEY], keys[i - 1][SL_CHAN_LKEY]);
			assert_int_not_equal(keys[i][SL_CHAN_RKEY], keys[i - 1][SL_CHAN_RKEY]);
			steps[i] = keys[i][SL_CHAN_RKEY] - keys[i - 1][SL_CHAN_RKEY];
		}
	}
	for (unsigned i = 0; i < KEY_DRAWS; i++) {
		bool seen = false, seen_step = false;

		for (unsigned j = 0; j < i; j++) {
			seen |= keys[j][SL_CHAN_RKEY] == keys[i][SL_CHAN_RKEY];
			seen_step |= i > 1 && j > 0 && steps[j] == steps[i];
		}
		distinct += !seen;
		distinct_steps += i > 0 && !seen_step;
	}
	/* 2000 draws of 31 bits: a repeat has odds of about 1 in 1000 */
	assert_true(distinct >= KEY_DRAWS - 2);
	assert_true(distinct_steps >= KEY_DRAWS - 3);
	sl_chan_mrs_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mrs__random_ops_match_a_model),
		cmocka_unit_test(mrs_find__stale_key_after_reuse_misses),
		cmocka_unit_test(mrs_find__another_clients_key_misses),
		cmocka_unit_test(mrs_find__clients_alike_below_2_32_are_distinct),
		cmocka_unit_test(mrs_find__range_edges_and_overflow),
		cmocka_unit_test(mrs_find__needs_every_flag),
		cmocka_unit_test(mrs_create__bad_sizes_are_einval),
		cmocka_unit_test(mrs_find__an_lkey_is_no_rkey),
		cmocka_unit_test(mrs_add__keys_carry_random_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
