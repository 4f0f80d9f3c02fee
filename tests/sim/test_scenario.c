/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for tests/sim/sim_scenario.c: numbers, units and errors of scenario keys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sim_exp.h"

static struct sim_scenario sc;

static void
set(const char *section, const char *key, const char *value)
{
	char err[256] = "";

	if (sim_scenario_set(&sc, section, key, value, err, sizeof(err)) != 0)
		fail_msg("[%s] %s = %s: %s", section, key, value, err);
}

static void
sim_scenario_set__units(void **state)
{
	(void)state;
	sim_scenario_defaults(&sc);
	assert_int_equal(sc.ngroups, 0);
	set("link", "rate_gbps", "40");
	assert_int_equal(sc.net.host_port[0].rate_bps, 40 * SL_BPS_PER_GBPS);
	set("link", "rate_gbps", "2500Mbps");
	assert_int_equal(sc.net.switch_port[3].rate_bps, 2500 * SL_BPS_PER_MBPS);
	set("link.2", "delay_us", "500ns");
	assert_int_equal(sc.net.host_port[2].prop_ns, 500);
	assert_int_equal(sc.net.host_port[1].prop_ns, 1000);
	set("link", "queue_kb", "64");
	assert_int_equal(sc.net.switch_port[0].limit_bytes, 64000);
	set("link", "queue_bytes", "64KiB");
	assert_int_equal(sc.net.switch_port[0].limit_bytes, 65536);
	set("link", "ecn_pmax", "0.01");
	assert_int_equal(sc.net.switch_port[0].ecn_pmax_ppm, 10000);
	set("sim", "duration_ms", "1.5");
	assert_int_equal(sc.duration_ns, 1500000);
	set("sim", "duration_ms", "2s");
	assert_int_equal(sc.duration_ns, 2 * SL_NS_PER_S);
	set("sim", "seed", "12345678901234567");
	assert_int_equal(sc.net.seed, 12345678901234567ull); /* exact, no double on the way */
	set("sim", "drop", "0:20000:0, 1:5:3");
	assert_int_equal(sc.net.ndrops, 2);
	assert_int_equal(sc.net.drops[1].flow, 1);
	assert_int_equal(sc.net.drops[1].seq, 5);
	assert_int_equal(sc.net.drops[1].tx_id, 3);
	set("sched", "timer_tick_ns", "1us");
	assert_int_equal(sc.sched.timer_tick_ns, 1000);
}

static void
sim_scenario_set__errors_name_the_key_and_what_was_expected(void **state)
{
	static const struct {
		const char *section, *key, *value, *msg;
	} cases[] = {
		{"link", "delay_ns", "1.5",
		 "delay_ns: '1.5': not a whole number of ns; expected a duration in [0ns, "
		 "9223372036854775807ns]"},
		{"link", "rate_gbps", "10us", "rate_gbps: '10us': expected a rate in"},
		{"link", "queue_bytes", "1ms", "queue_bytes: '1ms': expected a size in"},
		{"sim", "hosts", "2.5", "hosts: '2.5': expected a whole number in"},
		{"sim", "hosts", "1", "hosts: want 2..64 hosts"},
		{"sim", "loss", "1.5", "loss: '1.5': expected a probability in [0, 1]"},
		{"sim", "drop", "1:2", "drop: want a list of flow:seq:tx_id"},
		{"sim", "drop", "1:2:4", "drop: want a list of flow:seq:tx_id"},
		{"sim", "drop", "1:2:3:4", "drop: want a list of flow:seq:tx_id"},
		{"sim", "drop", "-1:2:3", "drop: want a list of flow:seq:tx_id"},
		{"sim", "drop_nth", "0", "drop_nth: want a list of n >= 1"},
		{"link.64", "rate_gbps", "1", "link.64: want link.N with N < 64"},
		{"link", "ecn_pmax", "2", "ecn_pmax: '2': expected a probability in [0, 1]"},
		{"sched", "wnd_segs", "4294967296",
		 "wnd_segs: '4294967296': expected a whole number in [0, 4294967295]"},
	};

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		char err[256] = "";

		sim_scenario_defaults(&sc);
		assert_int_equal(sim_scenario_set(&sc, cases[i].section, cases[i].key,
						  cases[i].value, err, sizeof(err)),
				 -EINVAL);
		if (strncmp(err, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("got '%s', want '%s...'", err, cases[i].msg);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_scenario_set__units),
		cmocka_unit_test(sim_scenario_set__errors_name_the_key_and_what_was_expected),
	};

	return cmocka_run_group_tests_name("sim/scenario", tests, NULL, NULL);
}
