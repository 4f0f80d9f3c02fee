/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/proto/dcqcn/dcqcn.c: the reaction point's cut on CNP, fast recovery,
 * additive and hyper increase, the byte counter, the 100 Mbps floor, alpha's decay.
 */
#include "harness.h"

#define G(x) ((uint64_t)(x)*SL_BPS_PER_GBPS)
#define M(x) ((uint64_t)(x)*SL_BPS_PER_MBPS)

static void
start(struct harness *h, uint64_t bc_bytes)
{
	struct sl_flow_conf fc = {.init_rate_bps = G(40), .param = {0, bc_bytes}};

	h_init(h, "dcqcn", &fc);
}

static void
cnp(struct harness *h)
{
	struct sl_event ev = {.type = SL_EV_CNP};

	h_event(h, &ev, h->v.now_ns);
}

static void
timer(struct harness *h)
{
	h_periodic(h, false, true, h->v.now_ns + 55000);
}

static void
dcqcn_init__line_rate_and_55us_timer(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0);
	assert_int_equal(h.v.rate_bps, G(40));
	assert_int_equal(h.out.timer_ns, 55000);
	assert_int_equal(h.v.wnd_segs, H_W);
}

static void
dcqcn_incoming__first_cnp_halves_rate(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0);
	cnp(&h); /* alpha starts at 1: RC x (1 - 1/2) */
	assert_int_equal(h.v.rate_bps, G(20));
	assert_int_equal(h.out.timer_ns, 55000); /* timer restarted */
	cnp(&h);
	assert_int_equal(h.v.rate_bps, G(10));
}

static void
dcqcn_incoming__rate_floor_is_100mbps(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0);
	for (int i = 0; i < 20; i++)
		cnp(&h);
	assert_int_equal(h.v.rate_bps, M(100));
}

static void
dcqcn_periodic__fast_recovery_then_additive_increase(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0);
	cnp(&h);
	cnp(&h); /* RT = 20G, RC = 10G */
	timer(&h);
	assert_int_equal(h.v.rate_bps, G(15)); /* (RT + RC) / 2 */
	timer(&h);
	timer(&h);
	timer(&h);
	assert_int_equal(h.v.rate_bps, 19375000000ull); /* four fast-recovery steps */
	timer(&h); /* T = F = 5: additive increase, RT = 20G + 40M */
	assert_int_equal(h.v.rate_bps, (19375000000ull + G(20) + M(40)) / 2);
}

/* One byte-counter period (10 segments sent and acked), then one timer period. */
static void
stage(struct harness *h)
{
	h_send(h, 10);
	h_ack(h, h->v.snd_max, -1);
	timer(h);
}

static void
dcqcn_incoming__byte_counter_stages_lead_to_hyper_increase(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 10000); /* B = 10 segments */
	cnp(&h);
	cnp(&h); /* RT 20G, RC 10G */
	for (int s = 1; s <= 4; s++)
		stage(&h); /* fast recovery: 8 halvings of the gap to RT */
	assert_int_equal(h.v.rate_bps, 19960937500ull);
	/* stage 5: BC = 5 with T = 4 is additive (RT 20.04G), then T = 5 with BC = 5 is hyper
	 * (RT 20.24G) */
	stage(&h);
	assert_int_equal(h.v.rate_bps, 20120234375ull);
	/* stage 6: hyper with i = 1 (RT 20.44G), then i = 2 (RT 20.84G); means round up */
	stage(&h);
	assert_int_equal(h.v.rate_bps, 20560058594ull);
}

static void
dcqcn_periodic__alpha_decays_without_cnp(void **state)
{
	struct harness h;
	uint64_t before;

	(void)state;
	start(&h, 0);
	cnp(&h);
	for (int i = 0; i < 256; i++)
		timer(&h); /* alpha ~ (1 - 1/256)^256 ~ 0.37 */
	before = h.v.rate_bps;
	cnp(&h);
	assert_true(h.v.rate_bps > before * 78 / 100 && h.v.rate_bps < before * 84 / 100);
}

/*
 * At the line the timer sleeps (a period would change only alpha); a CNP that finds it asleep
 * cuts by the alpha the skipped periods would have left: the same rate, to the bit, as a timer
 * that ran all 301 periods. After the cut the timer runs again until RC and RT are back at the
 * line.
 */
static void
dcqcn_periodic__the_timer_sleeps_at_the_line(void **state)
{
	struct harness slept, ran;

	(void)state;
	start(&slept, 0);
	timer(&slept);
	assert_int_equal(slept.out.timer_ns, 0); /* at the line: not re-armed */
	start(&ran, 0);
	for (int i = 0; i < 301; i++)
		timer(&ran);
	slept.v.now_ns = ran.v.now_ns + 54999; /* 300 whole periods after the first */
	ran.v.now_ns += 54999;
	cnp(&slept);
	cnp(&ran);
	assert_int_equal(slept.v.rate_bps, ran.v.rate_bps);
	assert_true(slept.v.rate_bps > G(40) * 80 / 100 && slept.v.rate_bps < G(40) * 85 / 100);
	assert_int_equal(slept.out.timer_ns, 55000);
	for (int i = 0; i < 200 && slept.out.timer_ns; i++)
		timer(&slept);
	assert_int_equal(slept.v.rate_bps, G(40));
	assert_int_equal(slept.out.timer_ns, 0);
}

static void
dcqcn_loss__nack_marks_and_rto_goes_back_n(void **state)
{
	struct harness h;
	struct sl_event nack = {.type = SL_EV_NACK, .nack_seq = 3, .nack_len = 2};

	(void)state;
	start(&h, 0);
	h_send(&h, 10);
	h_event(&h, &nack, 10);
	assert_int_equal(h.nmarked, 2);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.nmarked, 8); /* the rest of 0..9 */
	assert_true(h.rto_armed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dcqcn_init__line_rate_and_55us_timer),
		cmocka_unit_test(dcqcn_incoming__first_cnp_halves_rate),
		cmocka_unit_test(dcqcn_incoming__rate_floor_is_100mbps),
		cmocka_unit_test(dcqcn_periodic__fast_recovery_then_additive_increase),
		cmocka_unit_test(dcqcn_incoming__byte_counter_stages_lead_to_hyper_increase),
		cmocka_unit_test(dcqcn_periodic__alpha_decays_without_cnp),
		cmocka_unit_test(dcqcn_periodic__the_timer_sleeps_at_the_line),
		cmocka_unit_test(dcqcn_loss__nack_marks_and_rto_goes_back_n),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
