/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/net/impair/impair_engine.c on a virtual clock, without ports: the measured
 * loss, Gilbert-Elliott, BER, duplication and reordering statistics over 10^6 frames against
 * the 99.9% binomial confidence interval of the setting; determinism per seed and independence
 * of the streams; delay and jitter bounds; the rate cap's arrival curve; drop_idx; runtime
 * reconfiguration.
 *
 * Frames are handles numbered from 1; copies made by ops->clone carry CLONE_BIT. Frame bytes
 * for corrupt=deliver live in a per-test buffer indexed by handle.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "impair_engine.h"
#include "sl_time.h"

#define N_FRAMES 1000000u
#define Z_999 3.2905 /* two-sided 99.9% normal quantile */
#define CLONE_BIT ((uintptr_t)1 << 40)
#define BURST 32u

struct harness {
	uint64_t frees;
	uint64_t clones;
	uint64_t flips;       /**< bits flipped through ops->corrupt */
	uint8_t *bytes;       /**< frame bytes for corrupt=deliver: handle h at (h - 1) * len */
	uint32_t frame_bytes; /**< length of every frame in `bytes` */
	bool clone_fails;
};

static void
h_free(void *ctx, void *handle)
{
	(void)handle;
	((struct harness *)ctx)->frees++;
}

static void *
h_clone(void *ctx, void *handle)
{
	struct harness *h = ctx;

	if (h->clone_fails)
		return NULL;
	h->clones++;
	return (void *)((uintptr_t)handle | CLONE_BIT);
}

static void *
h_corrupt(void *ctx, void *handle, const uint32_t *bit_off, unsigned n)
{
	struct harness *h = ctx;
	uintptr_t id = (uintptr_t)handle & ~CLONE_BIT;

	for (unsigned i = 0; i < n; i++) {
		assert_true(bit_off[i] < 8 * h->frame_bytes);
		if (h->bytes != NULL)
			h->bytes[(id - 1) * h->frame_bytes + bit_off[i] / 8] ^=
				(uint8_t)(0x80u >> (bit_off[i] % 8));
		h->flips++;
	}
	return handle;
}

static const struct sl_impair_ops harness_ops = {
	.free = h_free,
	.clone = h_clone,
	.corrupt = h_corrupt,
};

/* Is k successes in n trials inside the 99.9% interval of probability p? */
static bool
binomial_ok(uint64_t k, uint64_t n, double p)
{
	double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));

	return fabs((double)k - mean) <= Z_999 * sd + 0.5;
}

static struct sl_impair *
make(struct sl_impair_conf *c, struct harness *h)
{
	struct sl_impair *e = sl_impair_create(c, &harness_ops, h);

	assert_non_null(e);
	return e;
}

/* Offer frames [first, first + n) of len bytes at now_ns, in bursts; take what is due. */
static unsigned
run(struct sl_impair *e, uint64_t first, unsigned n, uint32_t len, uint64_t now_ns, void **out,
    unsigned max_out)
{
	struct sl_impair_frame f[BURST];
	unsigned got = 0;

	for (unsigned i = 0; i < n; i += BURST) {
		unsigned b = SL_MIN(BURST, n - i), k;

		for (unsigned j = 0; j < b; j++)
			f[j] = (struct sl_impair_frame){(void *)(uintptr_t)(first + i + j), len};
		sl_impair_admit(e, f, b, now_ns);
		do {
			void *tmp[BURST];

			k = sl_impair_peek(e, now_ns, tmp, BURST);
			for (unsigned j = 0; j < k && out != NULL && got + j < max_out; j++)
				out[got + j] = tmp[j];
			sl_impair_consume(e, k);
			got += k;
		} while (k == BURST);
	}
	return got;
}

static void
sl_impair_create__rejects_missing_ops_and_bad_conf(void **state)
{
	struct sl_impair_ops no_clone = harness_ops;
	struct sl_impair_conf c;
	struct harness h = {0};

	(void)state;
	sl_impair_conf_init(&c);
	no_clone.clone = NULL;
	assert_null(sl_impair_create(&c, &no_clone, &h));
	c.jitter_ns = 10; /* above delay_ns = 0 */
	assert_null(sl_impair_create(&c, &harness_ops, &h));
}

static void
sl_impair_admit__all_off_is_identity(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	void *out[1000];

	(void)state;
	sl_impair_conf_init(&c);
	e = make(&c, &h);
	assert_true(sl_impair_idle(e));
	assert_int_equal(run(e, 1, 1000, 64, 0, out, 1000), 1000);
	for (unsigned i = 0; i < 1000; i++)
		assert_ptr_equal(out[i], (void *)(uintptr_t)(i + 1));
	assert_int_equal(h.frees, 0);
	assert_int_equal(sl_impair_stat(e, released_bytes), 64000);
	sl_impair_free(e);
}

static void
sl_impair_admit__loss_rate_in_ci(void **state)
{
	static const double ps[] = {0.001, 0.01, 0.3};

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(ps); i++) {
		struct sl_impair_conf c;
		struct harness h = {0};
		struct sl_impair *e;
		unsigned got;

		sl_impair_conf_init(&c);
		c.loss = ps[i];
		c.seed = 7 + i;
		e = make(&c, &h);
		got = run(e, 1, N_FRAMES, 64, 0, NULL, 0);
		assert_true(binomial_ok(sl_impair_stat(e, drop_loss), N_FRAMES, ps[i]));
		assert_int_equal(got + sl_impair_stat(e, drop_loss), N_FRAMES);
		assert_int_equal(h.frees, sl_impair_stat(e, drop_loss));
		sl_impair_free(e);
	}
}

/* Gilbert (ge_h = 0, ge_k = 1): loss runs are the bad sojourns, geometric with mean 1/ge_r. */
static void
sl_impair_admit__gilbert_elliott_bursts_match_model(void **state)
{
	const double p = 0.01, r = 0.25;
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	uint64_t bursts = 0, lost = 0, run_len = 0, prev_drops = 0;
	double mean, sd_mean, pi_bad = p / (p + r);

	(void)state;
	sl_impair_conf_init(&c);
	c.ge_p = p;
	c.ge_r = r;
	e = make(&c, &h);
	for (unsigned i = 0; i < N_FRAMES; i++) {
		uint64_t d;

		run(e, i + 1, 1, 64, 0, NULL, 0);
		d = sl_impair_stat(e, drop_ge);
		if (d != prev_drops) {
			run_len++;
		} else if (run_len > 0) {
			bursts++;
			lost += run_len;
			run_len = 0;
		}
		prev_drops = d;
	}
	mean = (double)lost / (double)bursts;
	/* Burst lengths: geometric, mean 1/r, variance (1 - r)/r^2. */
	sd_mean = sqrt((1 - r) / (r * r) / (double)bursts);
	assert_true(fabs(mean - 1 / r) <= Z_999 * sd_mean);
	/* Stationary loss p/(p + r); the Markov chain's correlation widens the interval by
	 * sqrt((1 + lambda)/(1 - lambda)), lambda = 1 - p - r. */
	assert_true(fabs((double)sl_impair_stat(e, drop_ge) - N_FRAMES * pi_bad) <=
		    Z_999 * sqrt(N_FRAMES * pi_bad * (1 - pi_bad) * (2 - p - r) / (p + r)));
	sl_impair_free(e);
}

/* Elliott: losses inside both states at the stationary mix. */
static void
sl_impair_admit__gilbert_elliott_partial_loss_rate(void **state)
{
	const double p = 0.05, r = 0.2, hh = 0.5, k = 0.99;
	double pi_bad = p / (p + r), loss = pi_bad * (1 - hh) + (1 - pi_bad) * (1 - k);
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;

	(void)state;
	sl_impair_conf_init(&c);
	c.ge_p = p;
	c.ge_r = r;
	c.ge_h = hh;
	c.ge_k = k;
	e = make(&c, &h);
	run(e, 1, N_FRAMES, 64, 0, NULL, 0);
	/* Widened by the chain's correlation as above (an upper bound for partial loss). */
	assert_true(fabs((double)sl_impair_stat(e, drop_ge) - N_FRAMES * loss) <=
		    Z_999 * sqrt(N_FRAMES * loss * (1 - loss) * (2 - p - r) / (p + r)));
	sl_impair_free(e);
}

static void
sl_impair_admit__ber_drop_rates_in_ci(void **state)
{
	const double ber = 1e-5;
	const uint32_t len = 1000;
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	struct sl_impair_stats st;
	unsigned got;

	(void)state;
	sl_impair_conf_init(&c);
	c.ber = ber;
	e = make(&c, &h);
	got = run(e, 1, N_FRAMES, len, 0, NULL, 0);
	sl_impair_stats_get(e, &st);
	/* Bits: binomial over every bit offered; frames: P(error) = 1 - (1 - ber)^(8 len). */
	assert_true(binomial_ok(st.bits_flipped, (uint64_t)N_FRAMES * len * 8, ber));
	assert_true(binomial_ok(st.drop_corrupt, N_FRAMES, 1 - pow(1 - ber, 8.0 * len)));
	assert_int_equal(st.corrupted, st.drop_corrupt);
	assert_int_equal(got + st.drop_corrupt, N_FRAMES);
	assert_int_equal(h.flips, 0); /* corrupt=drop never writes the frame */
	sl_impair_free(e);
}

static void
sl_impair_admit__ber_deliver_flips_the_counted_bits(void **state)
{
	enum { FRAMES = 20000, LEN = 256 };
	const double ber = 1e-3;
	struct sl_impair_conf c;
	struct harness h = {.frame_bytes = LEN};
	struct sl_impair *e;
	uint64_t ones = 0;
	unsigned got;

	(void)state;
	h.bytes = calloc(FRAMES, LEN);
	assert_non_null(h.bytes);
	sl_impair_conf_init(&c);
	c.ber = ber;
	c.corrupt = SL_IMPAIR_CORRUPT_DELIVER;
	e = make(&c, &h);
	got = run(e, 1, FRAMES, LEN, 0, NULL, 0);
	assert_int_equal(got, FRAMES);
	for (size_t i = 0; i < (size_t)FRAMES * LEN; i++)
		ones += (uint64_t)__builtin_popcount(h.bytes[i]);
	/* Every counted flip reached the frame, each bit at most once per frame. */
	assert_int_equal(ones, sl_impair_stat(e, bits_flipped));
	assert_int_equal(h.flips, ones);
	assert_true(binomial_ok(ones, (uint64_t)FRAMES * LEN * 8, ber));
	sl_impair_free(e);
	free(h.bytes);
}

static void
sl_impair_admit__dup_rate_in_ci_and_copy_follows(void **state)
{
	const double p = 0.02;
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	void **out = malloc(sizeof(void *) * N_FRAMES * 2);
	unsigned got;

	(void)state;
	assert_non_null(out);
	sl_impair_conf_init(&c);
	c.dup = p;
	e = make(&c, &h);
	got = run(e, 1, N_FRAMES, 64, 0, out, N_FRAMES * 2);
	assert_true(binomial_ok(sl_impair_stat(e, duplicated), N_FRAMES, p));
	assert_int_equal(got, N_FRAMES + sl_impair_stat(e, duplicated));
	for (unsigned i = 1; i < got; i++)
		if ((uintptr_t)out[i] & CLONE_BIT)
			assert_int_equal((uintptr_t)out[i] & ~CLONE_BIT, (uintptr_t)out[i - 1]);
	sl_impair_free(e);
	free(out);
}

static void
sl_impair_admit__reorder_rate_in_ci_and_gap_exact(void **state)
{
	const double p = 0.05;
	const uint32_t gap = 3;
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	void **out = malloc(sizeof(void *) * N_FRAMES);
	uint64_t late = 0;
	unsigned got;

	(void)state;
	assert_non_null(out);
	sl_impair_conf_init(&c);
	c.reorder = p;
	c.reorder_gap = gap;
	e = make(&c, &h);
	got = run(e, 1, N_FRAMES, 64, 0, out, N_FRAMES);
	assert_true(binomial_ok(sl_impair_stat(e, reordered), N_FRAMES, p));
	assert_int_equal(got + sl_impair_held(e), N_FRAMES);
	/*
	 * A held-back frame is overtaken by exactly gap later frames; every other frame by none.
	 * Overtakers sit within gap + SL_IMPAIR_REORDER_HELD positions before it.
	 */
	for (unsigned i = 0; i < got; i++) {
		uintptr_t id = (uintptr_t)out[i];
		unsigned overtaken = 0;

		for (unsigned j = 1; j <= gap + SL_IMPAIR_REORDER_HELD && i >= j; j++)
			overtaken += (uintptr_t)out[i - j] > id;
		assert_true(overtaken == 0 || overtaken == gap);
		late += overtaken == gap;
	}
	assert_int_equal(late + sl_impair_held(e), sl_impair_stat(e, reordered));
	sl_impair_free(e);
	free(out);
}

static void
sl_impair_admit__same_seed_same_decisions(void **state)
{
	enum { FRAMES = 100000 };
	struct sl_impair_conf c;
	void **a = malloc(sizeof(void *) * FRAMES * 2), **b = malloc(sizeof(void *) * FRAMES * 2);
	unsigned na, nb, nc;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	sl_impair_conf_init(&c);
	c.loss = 0.05;
	c.ge_p = 0.01;
	c.ge_r = 0.3;
	c.ber = 1e-5;
	c.dup = 0.02;
	c.reorder = 0.03;
	c.reorder_gap = 2;
	c.seed = 99;
	for (int pass = 0; pass < 3; pass++) {
		struct harness h = {0};
		struct sl_impair *e;

		if (pass == 2)
			c.seed = 100;
		e = make(&c, &h);
		if (pass == 0)
			na = run(e, 1, FRAMES, 512, 0, a, FRAMES * 2);
		else if (pass == 1)
			nb = run(e, 1, FRAMES, 512, 0, b, FRAMES * 2);
		else
			nc = run(e, 1, FRAMES, 512, 0, b, FRAMES * 2);
		sl_impair_free(e);
		if (pass == 1) {
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, sizeof(void *) * na);
		}
	}
	assert_true(nc != na || memcmp(a, b, sizeof(void *) * na) != 0);
	free(a);
	free(b);
}

/* One stream per impairment: turning dup on leaves the loss decisions unchanged. */
static void
sl_impair_admit__streams_are_independent(void **state)
{
	enum { FRAMES = 50000 };
	uint8_t lost[2][FRAMES];
	struct sl_impair_conf c;

	(void)state;
	sl_impair_conf_init(&c);
	c.loss = 0.1;
	for (int pass = 0; pass < 2; pass++) {
		struct harness h = {0};
		struct sl_impair *e;

		c.dup = pass == 0 ? 0.0 : 0.2;
		e = make(&c, &h);
		for (unsigned i = 0; i < FRAMES; i++) {
			uint64_t before = sl_impair_stat(e, drop_loss);

			run(e, i + 1, 1, 64, 0, NULL, 0);
			lost[pass][i] = sl_impair_stat(e, drop_loss) != before;
		}
		sl_impair_free(e);
	}
	assert_memory_equal(lost[0], lost[1], FRAMES);
}

/*
 * Poisson arrivals (mean gap 300 ns) polled every 1 us on a virtual clock: releases are never
 * before arrival + delay - jitter, never more than 2 us after arrival + delay + jitter, and in
 * arrival order.
 */
static void
check_delay(uint64_t delay_ns, uint64_t jitter_ns)
{
	enum { FRAMES = 200000 };
	const uint64_t poll_ns = 1000;
	uint64_t *arrival = malloc(sizeof(uint64_t) * (FRAMES + 1));
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	struct sl_rng rng;
	uint64_t now = 0, next_arrival = 0, worst_late = 0, last_id = 0;
	unsigned sent = 0, released = 0;

	assert_non_null(arrival);
	sl_rng_seed(&rng, 5);
	sl_impair_conf_init(&c);
	c.delay_ns = delay_ns;
	c.jitter_ns = jitter_ns;
	e = make(&c, &h);
	while (released < FRAMES) {
		void *out[BURST];
		unsigned k;

		while (sent < FRAMES && next_arrival <= now) {
			struct sl_impair_frame f = {(void *)(uintptr_t)(sent + 1), 64};

			arrival[sent + 1] = next_arrival;
			sl_impair_admit(e, &f, 1, next_arrival);
			sent++;
			next_arrival += (uint64_t)sl_rng_exponential(&rng, 300) + 1;
		}
		do {
			k = sl_impair_peek(e, now, out, BURST);
			for (unsigned j = 0; j < k; j++) {
				uintptr_t id = (uintptr_t)out[j];
				uint64_t lo = arrival[id] + delay_ns - jitter_ns;
				uint64_t hi = arrival[id] + delay_ns + jitter_ns;

				assert_true(now >= lo);
				assert_true(now <= hi + 2 * SL_NS_PER_US);
				if (now > hi)
					worst_late = SL_MAX(worst_late, now - hi);
				assert_true(id > last_id);
				last_id = id;
			}
			sl_impair_consume(e, k);
			released += k;
		} while (k == BURST);
		now += poll_ns;
	}
	assert_true(worst_late <= 2 * SL_NS_PER_US);
	assert_int_equal(sl_impair_stat(e, delayed), FRAMES);
	sl_impair_free(e);
	free(arrival);
}

static void
sl_impair_peek__delay_never_early_nor_2us_late(void **state)
{
	(void)state;
	check_delay(16 * SL_NS_PER_US, 0);
	check_delay(100 * SL_NS_PER_US, 0);
}

static void
sl_impair_peek__jitter_bounded_and_in_order(void **state)
{
	(void)state;
	check_delay(100 * SL_NS_PER_US, 20 * SL_NS_PER_US);
}

/*
 * Offered load 2x the cap in 1500 B frames, the virtual clock stepping to each arrival and each
 * due time: over every window between two releases, bytes released <= rate x window + burst;
 * the long-run rate is the cap; the backlog limit drops the excess.
 */
static void
sl_impair_peek__rate_cap_never_exceeds_arrival_curve(void **state)
{
	enum { FRAMES = 200000 };
	const uint64_t rate = 10 * SL_BPS_PER_GBPS, burst = 16384, len = 1500;
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	uint64_t *t_rel = malloc(sizeof(uint64_t) * FRAMES);
	uint64_t now = 0, arrival_ns = 0;
	unsigned n_rel = 0, sent = 0;
	struct sl_impair_stats st;

	(void)state;
	assert_non_null(t_rel);
	sl_impair_conf_init(&c);
	c.rate_bps = rate;
	c.burst_bytes = burst;
	c.queue_bytes = 64 * 1024;
	e = make(&c, &h);
	while (sent < FRAMES || sl_impair_held(e) > 0) {
		void *out[BURST];
		unsigned k;

		now = SL_MIN(sent < FRAMES ? arrival_ns : UINT64_MAX, sl_impair_next_due_ns(e));
		/* 2x overload: a frame every 600 ns against 1200 ns of service. */
		if (sent < FRAMES && arrival_ns == now) {
			struct sl_impair_frame f = {(void *)(uintptr_t)(sent + 1), (uint32_t)len};

			sl_impair_admit(e, &f, 1, now);
			sent++;
			arrival_ns += 600;
		}
		do {
			k = sl_impair_peek(e, now, out, BURST);
			for (unsigned j = 0; j < k; j++)
				t_rel[n_rel++] = now;
			sl_impair_consume(e, k);
		} while (k == BURST);
	}
	sl_impair_stats_get(e, &st);
	/* Every window [t_i, t_j] of releases: (j - i + 1) frames fit rate x (t_j - t_i) + burst.
	 */
	for (unsigned i = 0; i < n_rel; i++)
		for (unsigned j = i; j < n_rel && j < i + 100; j++)
			assert_true((j - i + 1) * len <=
				    sl_bytes_in_ns(rate, t_rel[j] - t_rel[i]) + burst);
	/* Over the whole run the cap is reached (within a burst plus a frame). */
	assert_true(n_rel * len + len + burst >= sl_bytes_in_ns(rate, t_rel[n_rel - 1]));
	/* Half the offered frames fit; the bucket and the backlog absorb a few more. */
	assert_true(fabs((double)st.drop_queue - FRAMES / 2.0) <= (burst + 64 * 1024) / len + 2);
	assert_int_equal(st.released + st.drop_queue, FRAMES);
	assert_true(st.queued > st.released / 2);
	sl_impair_free(e);
	free(t_rel);
}

/*
 * The token bucket's schedule, exactly: 8 Gb/s is 1 byte/ns; a 4000 B bucket lets four 1000 B
 * frames out at once, then one every 1000 ns; 7000 B of backlog allowed, so the 12th frame of
 * a 12-frame burst finds 8000 B waiting and is dropped.
 */
static void
sl_impair_peek__rate_cap_exact_schedule(void **state)
{
	struct sl_impair_frame f[12];
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	void *out[12];

	(void)state;
	sl_impair_conf_init(&c);
	c.rate_bps = 8 * SL_BPS_PER_GBPS;
	c.burst_bytes = 4000;
	c.queue_bytes = 7000;
	e = make(&c, &h);
	for (unsigned i = 0; i < 12; i++)
		f[i] = (struct sl_impair_frame){(void *)(uintptr_t)(i + 1), 1000};
	sl_impair_admit(e, f, 12, 0);
	assert_int_equal(sl_impair_stat(e, drop_queue), 1);
	assert_int_equal(sl_impair_peek(e, 0, out, 12), 4);
	sl_impair_consume(e, 4);
	for (unsigned k = 1; k <= 7; k++) {
		assert_int_equal(sl_impair_next_due_ns(e), k * 1000);
		assert_int_equal(sl_impair_peek(e, k * 1000 - 1, out, 12), 0);
		assert_int_equal(sl_impair_peek(e, k * 1000, out, 12), 1);
		assert_ptr_equal(out[0], (void *)(uintptr_t)(4 + k));
		sl_impair_consume(e, 1);
	}
	assert_int_equal(sl_impair_held(e), 0);
	assert_int_equal(sl_impair_stat(e, queued), 7);
	sl_impair_free(e);
}

/* ber = 0.5: every bit is a fair coin, so an off-by-one in the gap draw shows at once. */
static void
sl_impair_admit__ber_half_flips_half_the_bits(void **state)
{
	enum { FRAMES = 100000, LEN = 8 };
	struct sl_impair_conf c;
	struct harness h = {.frame_bytes = LEN};
	struct sl_impair *e;

	(void)state;
	sl_impair_conf_init(&c);
	c.ber = 0.5;
	c.corrupt = SL_IMPAIR_CORRUPT_DELIVER;
	e = make(&c, &h);
	run(e, 1, FRAMES, LEN, 0, NULL, 0);
	assert_true(binomial_ok(sl_impair_stat(e, bits_flipped), (uint64_t)FRAMES * LEN * 8, 0.5));
	assert_int_equal(h.flips, sl_impair_stat(e, bits_flipped));
	sl_impair_free(e);
}

static void
sl_impair_admit__drop_idx_drops_exactly_the_listed(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	char err[128];
	void *out[100];
	unsigned got;

	(void)state;
	sl_impair_conf_init(&c);
	assert_int_equal(sl_impair_conf_set(&c, "drop_idx", "0:5-7:99", err, sizeof(err)), 0);
	e = make(&c, &h);
	got = run(e, 1, 100, 64, 0, out, 100);
	assert_int_equal(got, 95);
	assert_int_equal(sl_impair_stat(e, drop_idx), 5);
	/* Frame index i is handle i + 1: handles 1, 6, 7, 8, 100 are gone. */
	assert_ptr_equal(out[0], (void *)2);
	assert_ptr_equal(out[4], (void *)9);
	assert_ptr_equal(out[94], (void *)99);
	sl_impair_free(e);
}

static void
sl_impair_reconfigure__raises_loss_mid_run(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	uint64_t first;

	(void)state;
	sl_impair_conf_init(&c);
	c.loss = 0.01;
	e = make(&c, &h);
	run(e, 1, 100000, 64, 0, NULL, 0);
	first = sl_impair_stat(e, drop_loss);
	assert_true(binomial_ok(first, 100000, 0.01));
	c.loss = 0.2;
	assert_int_equal(sl_impair_reconfigure(e, &c), 0);
	run(e, 100001, 100000, 64, 0, NULL, 0);
	assert_true(binomial_ok(sl_impair_stat(e, drop_loss) - first, 100000, 0.2));
	c.loss = 0;
	assert_int_equal(sl_impair_reconfigure(e, &c), 0);
	assert_true(sl_impair_idle(e));
	c.ge_p = 0.1; /* ge_r = 0 */
	assert_int_equal(sl_impair_reconfigure(e, &c), -EINVAL);
	sl_impair_free(e);
}

/* Frames held back for reordering leave as soon as reordering is switched off. */
static void
sl_impair_reconfigure__reorder_off_releases_held_frames(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;
	void *out[8];

	(void)state;
	sl_impair_conf_init(&c);
	c.reorder = 1.0;
	c.reorder_gap = 5;
	e = make(&c, &h);
	assert_int_equal(run(e, 1, 3, 64, 0, NULL, 0), 0);
	assert_int_equal(sl_impair_held(e), 3);
	c.reorder = 0;
	assert_int_equal(sl_impair_reconfigure(e, &c), 0);
	assert_int_equal(sl_impair_peek(e, 0, out, 8), 3);
	sl_impair_consume(e, 3);
	assert_ptr_equal(out[0], (void *)1);
	assert_ptr_equal(out[2], (void *)3);
	assert_true(sl_impair_idle(e));
	sl_impair_free(e);
}

static void
sl_impair_free__releases_held_frames(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {0};
	struct sl_impair *e;

	(void)state;
	sl_impair_conf_init(&c);
	c.delay_ns = SL_NS_PER_MS;
	e = make(&c, &h);
	assert_int_equal(run(e, 1, 100, 64, 0, NULL, 0), 0);
	assert_int_equal(sl_impair_held(e), 100);
	assert_int_equal(sl_impair_next_due_ns(e), SL_NS_PER_MS);
	assert_false(sl_impair_idle(e));
	sl_impair_free(e);
	assert_int_equal(h.frees, 100);
}

static void
sl_impair_admit__full_queue_and_failed_clone_are_counted(void **state)
{
	struct sl_impair_conf c;
	struct harness h = {.clone_fails = true};
	struct sl_impair *e;

	(void)state;
	sl_impair_conf_init(&c);
	c.delay_ns = SL_NS_PER_MS;
	c.queue_frames = 64;
	c.dup = 1.0;
	e = make(&c, &h);
	run(e, 1, 100, 64, 0, NULL, 0);
	assert_int_equal(sl_impair_stat(e, drop_full), 36);
	assert_int_equal(sl_impair_stat(e, drop_nobuf), 100);
	assert_int_equal(sl_impair_held(e), 64);
	sl_impair_free(e);
	assert_int_equal(h.frees, 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_impair_create__rejects_missing_ops_and_bad_conf),
		cmocka_unit_test(sl_impair_admit__all_off_is_identity),
		cmocka_unit_test(sl_impair_admit__loss_rate_in_ci),
		cmocka_unit_test(sl_impair_admit__gilbert_elliott_bursts_match_model),
		cmocka_unit_test(sl_impair_admit__gilbert_elliott_partial_loss_rate),
		cmocka_unit_test(sl_impair_admit__ber_drop_rates_in_ci),
		cmocka_unit_test(sl_impair_admit__ber_deliver_flips_the_counted_bits),
		cmocka_unit_test(sl_impair_admit__dup_rate_in_ci_and_copy_follows),
		cmocka_unit_test(sl_impair_admit__reorder_rate_in_ci_and_gap_exact),
		cmocka_unit_test(sl_impair_admit__same_seed_same_decisions),
		cmocka_unit_test(sl_impair_admit__streams_are_independent),
		cmocka_unit_test(sl_impair_peek__delay_never_early_nor_2us_late),
		cmocka_unit_test(sl_impair_peek__jitter_bounded_and_in_order),
		cmocka_unit_test(sl_impair_peek__rate_cap_never_exceeds_arrival_curve),
		cmocka_unit_test(sl_impair_peek__rate_cap_exact_schedule),
		cmocka_unit_test(sl_impair_admit__ber_half_flips_half_the_bits),
		cmocka_unit_test(sl_impair_admit__drop_idx_drops_exactly_the_listed),
		cmocka_unit_test(sl_impair_reconfigure__raises_loss_mid_run),
		cmocka_unit_test(sl_impair_reconfigure__reorder_off_releases_held_frames),
		cmocka_unit_test(sl_impair_free__releases_held_frames),
		cmocka_unit_test(sl_impair_admit__full_queue_and_failed_clone_are_counted),
	};

	return cmocka_run_group_tests_name("impair_engine", tests, NULL, NULL);
}
