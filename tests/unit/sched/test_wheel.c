/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/sched/private/wheel.h, the engine's timing wheels: random filing, unfiling
 * and sweeping against a model (the set of filed entries and their dues). After every
 * operation the earliest release (wheel_next_ns) must equal the model's least (the end of each
 * entry's filed tick); every entry popped must be due, and none may be left due after a sweep.
 * Dues span the current tick, level 0, level 1 and beyond both horizons (where a later level-1
 * slot can hold an earlier due), past dues included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_rng.h"
#include "wheel.h"

#define FLOWS 64u
#define SLOTS 64u
#define TICK_NS 512u

/* The model: per flow, filed or not, and the release time its filing promised. */
struct model {
	bool filed[FLOWS];
	uint64_t due_ns[FLOWS];
	uint64_t release_ns[FLOWS];
};

static uint64_t
model_next(const struct model *m)
{
	uint64_t best = UINT64_MAX;

	for (uint32_t f = 0; f < FLOWS; f++)
		if (m->filed[f])
			best = SL_MIN(best, m->release_ns[f]);
	return best;
}

static void
check(const struct wheel *w, const struct model *m)
{
	assert_int_equal(wheel_next_ns(w), model_next(m));
}

/* A due somewhere interesting relative to now_ns: past, this tick, level 0, level 1, beyond. */
static uint64_t
pick_due(struct sl_rng *r, uint64_t now_ns)
{
	uint64_t l0 = (uint64_t)SLOTS * TICK_NS, l1 = l0 * SLOTS;

	switch (sl_rng_next(r) % 5) {
	case 0:
		return now_ns > l0 ? now_ns - sl_rng_next(r) % l0 : 0;
	case 1:
		return now_ns + sl_rng_next(r) % TICK_NS;
	case 2:
		return now_ns + sl_rng_next(r) % l0;
	case 3:
		return now_ns + l0 + sl_rng_next(r) % l1;
	default:
		return now_ns + l1 + sl_rng_next(r) % (4 * l1);
	}
}

static void
wheel_next_is_exact_through_random_use(void **state)
{
	struct wheel w;
	struct model m = {0};
	struct sl_rng r;
	uint64_t now_ns = 1000 * TICK_NS;
	unsigned popped = 0;

	(void)state;
	sl_rng_seed(&r, 42);
	assert_int_equal(wheel_init(&w, FLOWS, SLOTS, TICK_NS), 0);
	w.cur = now_ns / TICK_NS;
	check(&w, &m);
	for (unsigned op = 0; op < 200000; op++) {
		uint32_t f = (uint32_t)(sl_rng_next(&r) % FLOWS);

		switch (sl_rng_next(&r) % 4) {
		case 0: /* file (or move) f */
			if (m.filed[f])
				wheel_remove(&w, f);
			m.due_ns[f] = pick_due(&r, now_ns);
			m.release_ns[f] = (SL_MAX(m.due_ns[f] / TICK_NS, w.cur) + 1) * TICK_NS;
			m.filed[f] = true;
			wheel_insert(&w, f, m.due_ns[f]);
			break;
		case 1:
			wheel_remove(&w, f);
			m.filed[f] = false;
			break;
		default: { /* time passes; sweep what is due */
			uint32_t g;

			now_ns += sl_rng_next(&r) %
				  (op % 7 == 0 ? 40u * SLOTS * TICK_NS : 3u * TICK_NS);
			while ((g = wheel_pop_due(&w, now_ns)) != NOWHERE) {
				assert_true(m.filed[g]);
				assert_true(m.release_ns[g] <= now_ns);
				m.filed[g] = false;
				popped++;
				check(&w, &m);
			}
			for (uint32_t h = 0; h < FLOWS; h++)
				assert_false(m.filed[h] && m.release_ns[h] <= now_ns);
			break;
		}
		}
		assert_int_equal(wheel_filed(&w, f), m.filed[f]);
		check(&w, &m);
	}
	assert_true(popped > 10000);
	wheel_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wheel_next_is_exact_through_random_use),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
