/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint-congestion figures (Chong and Krishnan, "Addressing Endpoint-induced Congestion for
 * Accelerator Scale-Out in a Medium-Scale Domain") on the real lib/ec target and lib/sched with
 * drivers/proto's dack, opt and aimd programs, each a sweep scenario of tests/sim/scenarios run at
 * reduced length, with the bounds:
 *   - unicast, ec-unicast.ini at 3 ms (1 ms of warm-up), r = 10 .. 100 %, payloads 512 B .. 8 KB:
 *     dack retransmits nothing after the warm-up in any cell, and nothing at all from r = 50 %
 *     (below it, the start-up burst overflows the queue: docs/ec.md, "In the simulator"); opt
 *     and aimd retransmit at every r <= 70 %; dack's goodput is within 3 % of min(r, 1) x payload /
 *     (payload + 64) for payloads >= 2 KB; at r = 100 % (no EC) dack is opt: the same goodput
 *     to the bit, and no DACK.
 *   - 8-to-1 incast, ec-incast.ini at 10 ms (1 ms of warm-up), r = 10 .. 100 %: dack's
 *     retransmissions are near zero: after the warm-up, at most 1 % of the link's bytes and at
 *     most a tenth of what opt and aimd retransmit, none at r = 100 %; opt and aimd retransmit
 *     at every r <= 70 %. "Near" and not 0: every initiator starts in H-infinity, so the first
 *     RTT puts 8 OPT windows (1 MB) in the network for an 81 KB queue, and shedding them takes
 *     go-back-N rounds (and RTOs) that can reach past the warm-up.
 *   - a step of the drain rate, ec-step.ini (100 % -> 30 % -> 100 %): dack throttles and
 *     recovers within 5 RTTs each, resending and dropping nothing; opt never throttles;
 *   - lost acknowledgments, ec-loss.ini with 1 % of them lost: dack's goodput and its zero
 *     retransmissions unchanged;
 *   - the [ec] keys parse as --set gives them, and a bad one is refused naming its key.
 * Every run also checks the plumbing: no flow failed to start, no event refused, every action
 * encoded and decoded. One JSON line per run (the sweep line of sluice-sim).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_exp.h"
#include "sl_proto.h"

#define MAX_POINTS 256
#define HDR_BYTES 64.0 /**< the scenarios' header, bytes */

static const char *scenario_dir = SIM_SCENARIO_DIR;

/* One run of a sweep: its settings and its figures. */
struct point {
	uint8_t policy; /**< enum sim_ec_policy */
	uint32_t drain_pct;
	uint32_t payload_bytes;
	double loss, ctrl_loss;
	uint32_t sr_pkts;   /**< the target's selective-repeat reach (0: go-back-N) */
	uint64_t ctrl_lost; /**< acknowledgments lost to ctrl_loss */
	struct sim_exp_ec m;
	struct sim_ec_step_result step[SIM_EC_STEPS_MAX]; /**< host 1's, [sc->ec.nsteps] */
};

static void
assert_clean_run(struct sim_exp *x)
{
	struct sl_sched_stats st;

	assert_int_equal(sim_exp_start_failures(x), 0);
	sim_exp_sched_stats(x, &st);
	assert_true(st.decisions > 0);
	assert_int_equal(st.bad_events, 0);
	assert_int_equal(sim_ec_encode_errors(sim_exp_ec(x)), 0);
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		if (sim_exp_host(x, h))
			assert_int_equal(sim_sched_host_fb_bad(sim_exp_host(x, h)), 0);
}

/* Every run of scenario name after the settings set[i] = {section, key, value}. */
static unsigned
sweep(const char *name, const char *const (*set)[3], unsigned nset, struct point *pt)
{
	char path[1024], err[512], labels[512];
	struct sim_scenario *base = malloc(sizeof(*base));
	uint32_t runs;
	int status;

	assert_non_null(base);
	assert_int_equal(sl_proto_register_failures(), 0);
	snprintf(path, sizeof(path), "%s/%s", scenario_dir, name);
	sim_scenario_defaults(base);
	if (sim_scenario_load(base, path, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < nset; i++)
		if (sim_scenario_set(base, set[i][0], set[i][1], set[i][2], err, sizeof(err)))
			fail_msg("%s", err);
	runs = sim_sweep_runs(base);
	assert_true(runs > 0 && runs <= MAX_POINTS);
	for (uint32_t i = 0; i < runs; i++) {
		struct sim_exp *x =
			sim_sweep_run(base, i, labels, sizeof(labels), err, sizeof(err), &status);
		const struct sim_scenario *sc;

		if (x == NULL)
			fail_msg("%s run %u: %s", name, i, err);
		assert_clean_run(x);
		sc = sim_exp_scenario(x);
		pt[i] = (struct point){.policy = sc->ec.policy,
				       .drain_pct = sc->ec.drain_pct,
				       .payload_bytes = sc->group[0].spec.fc.seg_bytes,
				       .loss = sc->net.loss,
				       .ctrl_loss = sc->net.ctrl_loss,
				       .sr_pkts = sc->ec.q.sr_pkts,
				       .ctrl_lost = sim_stats(sim_exp_sim(x))->drops_ctrl};
		sim_exp_ec_stats(x, &pt[i].m);
		for (uint32_t k = 0; k < sc->ec.nsteps; k++)
			assert_int_equal(sim_ec_step_result(sim_exp_ec(x), 1, k, &pt[i].step[k]),
					 0);
		sim_exp_ec_json(x, name, labels, stdout);
		sim_exp_free(x);
	}
	free(base);
	return runs;
}

/* The point of this policy, r and payload (0: any payload). */
static const struct point *
find(const struct point *pt, unsigned n, uint8_t policy, uint32_t drain_pct, uint32_t payload)
{
	for (unsigned i = 0; i < n; i++)
		if (pt[i].policy == policy && pt[i].drain_pct == drain_pct &&
		    (!payload || pt[i].payload_bytes == payload))
			return &pt[i];
	fail_msg("no point %s r %u%% payload %u", sim_ec_policy_name(policy), drain_pct, payload);
	return NULL;
}

static const uint32_t payloads[] = {512, 1024, 2048, 4096, 8192};

/* ec-unicast.ini at 3 ms for dack, opt and aimd (timeout has no bound), run once. */
static unsigned
unicast(const struct point **pt)
{
	static const char *const set[][3] = {
		{"sim", "duration_ms", "3"},
		{"sweep", "ec.policy", "dack opt aimd"},
	};
	static struct point points[MAX_POINTS];
	static unsigned n;

	if (n == 0)
		n = sweep("ec-unicast.ini", set, SL_ARRAY_SIZE(set), points);
	*pt = points;
	return n;
}

/* Every cell: no retransmission after the warm-up, goodput on y = r x payload share. */
static void
unicast__dack_cells(void **state)
{
	const struct point *pt;
	unsigned n = unicast(&pt);

	(void)state;
	for (uint32_t r = 10; r <= 100; r += 10) {
		for (size_t i = 0; i < SL_ARRAY_SIZE(payloads); i++) {
			const struct point *d = find(pt, n, SIM_EC_DACK, r, payloads[i]);
			double p = payloads[i], ideal = SL_MIN(r / 100.0, 1) * p / (p + HDR_BYTES);

			printf("{\"bound\": \"unicast dack\", \"drain_pct\": %u, "
			       "\"payload_bytes\": "
			       "%u, \"retransmissions\": %" PRIu64
			       ", \"retransmissions_warmup\": %" PRIu64
			       ", \"goodput_norm\": %.5f, \"ideal\": %.5f, \"ratio\": %.4f}\n",
			       r, payloads[i], d->m.retransmissions, d->m.retransmissions_warmup,
			       d->m.goodput_norm, ideal, d->m.goodput_norm / ideal);
			assert_int_equal(d->m.retransmissions, 0);
			/* the start-up burst fits the queue once the host drains half the link */
			if (r >= 50)
				assert_int_equal(d->m.retransmissions_warmup, 0);
			if (payloads[i] >= 2048)
				assert_true(fabs(d->m.goodput_norm - ideal) <= 0.03 * ideal);
		}
	}
}

static void
unicast__baselines_retransmit(void **state)
{
	const struct point *pt;
	unsigned n = unicast(&pt);

	(void)state;
	for (uint32_t r = 10; r <= 70; r += 10) {
		for (size_t i = 0; i < SL_ARRAY_SIZE(payloads); i++) {
			assert_true(find(pt, n, SIM_EC_OPT, r, payloads[i])->m.retransmissions > 0);
			assert_true(find(pt, n, SIM_EC_AIMD, r, payloads[i])->m.retransmissions >
				    0);
		}
	}
}

static void
unicast__no_ec_dack_is_opt(void **state)
{
	const struct point *pt;
	unsigned n = unicast(&pt);

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(payloads); i++) {
		const struct point *d = find(pt, n, SIM_EC_DACK, 100, payloads[i]);
		const struct point *o = find(pt, n, SIM_EC_OPT, 100, payloads[i]);

		assert_int_equal(d->m.dacks, 0);
		assert_true(d->m.goodput_gbps == o->m.goodput_gbps);
		assert_int_equal(d->m.iacks, o->m.iacks);
		assert_int_equal(d->m.retransmissions + d->m.retransmissions_warmup, 0);
	}
}

static void
incast__dack_retransmits_near_zero(void **state)
{
	static const char *const set[][3] = {{"sweep", "ec.policy", "dack opt aimd"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("ec-incast.ini", set, SL_ARRAY_SIZE(set), pt);

	(void)state;
	for (uint32_t r = 10; r <= 100; r += 10) {
		const struct point *d = find(pt, n, SIM_EC_DACK, r, 0);
		const struct point *o = find(pt, n, SIM_EC_OPT, r, 0);
		const struct point *a = find(pt, n, SIM_EC_AIMD, r, 0);

		printf("{\"bound\": \"incast rtx_norm\", \"drain_pct\": %u, \"dack\": %.5f, "
		       "\"opt\": %.5f, \"aimd\": %.5f, \"dack_warmup_pkts\": %" PRIu64 "}\n",
		       r, d->m.rtx_norm, o->m.rtx_norm, a->m.rtx_norm, d->m.retransmissions_warmup);
		if (r == 100) {
			assert_int_equal(d->m.retransmissions + d->m.retransmissions_warmup, 0);
			assert_int_equal(d->m.dacks, 0);
			continue;
		}
		assert_true(d->m.rtx_norm <= 0.01);
		assert_true(d->m.rtx_norm <= o->m.rtx_norm / 10);
		assert_true(d->m.rtx_norm <= a->m.rtx_norm / 10);
		if (r <= 70) {
			assert_true(o->m.retransmissions > 0);
			assert_true(a->m.retransmissions > 0);
		}
	}
}

/* The [ec] keys as --set gives them, and the errors that name them. */
static void
scenario__ec_keys(void **state)
{
	static const char *const good[][3] = {
		{"receiver", "impl", "ec"},        {"ec", "policy", "timeout"},
		{"ec", "drain_pct", "70"},         {"ec", "queue_bytes", "100KB"},
		{"ec", "threshold_bytes", "9KiB"}, {"ec", "queue_counts", "wire"},
		{"ec", "fair_period_us", "20"},    {"ec", "opt_pkts", "64"},
		{"ec", "h1_iacks", "3"},           {"ec", "drain_steps", "2000:30,5000:100"},
		{"sim", "ctrl_loss", "0.01"},      {"ec", "sr_pkts", "64"},
	};
	static const char *const bad[][3] = {
		{"ec", "policy", "fast"},
		{"ec", "drain_pct", "0"},
		{"ec", "queue_counts", "pkts"},
		{"ec", "fair_ratio_pct", "99"},
		{"ec", "no_such_key", "1"},
		{"receiver", "impl", "ec2"},
		{"ec", "drain_steps", "5000:30,2000:100"}, /* not in time order */
		{"ec", "drain_steps", "2000:0"},
		{"ec", "drain_steps", "2000"},
		{"ec", "drain_steps", "1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1"},
		{"sim", "ctrl_loss", "1.5"},
		{"ec", "sr_pkts", "65"},
	};
	struct sim_scenario *sc = malloc(sizeof(*sc));
	char err[256];

	(void)state;
	assert_non_null(sc);
	sim_scenario_defaults(sc);
	for (size_t i = 0; i < SL_ARRAY_SIZE(good); i++)
		if (sim_scenario_set(sc, good[i][0], good[i][1], good[i][2], err, sizeof(err)))
			fail_msg("%s", err);
	assert_int_equal(sc->recv_impl, SIM_RECV_EC);
	assert_int_equal(sc->ec.policy, SIM_EC_TIMEOUT);
	assert_int_equal(sc->ec.drain_pct, 70);
	assert_int_equal(sc->ec.q.queue_bytes, 100000);
	assert_int_equal(sc->ec.q.threshold_bytes, 9216);
	assert_true(sc->ec.queue_counts_wire);
	assert_int_equal(sc->ec.q.fair_period_ns, 20000);
	assert_int_equal(sc->ec.opt_pkts, 64);
	assert_int_equal(sc->ec.h1_iacks, 3);
	assert_int_equal(sc->ec.nsteps, 2);
	assert_int_equal(sc->ec.step[0].at_ns, 2 * SL_NS_PER_MS);
	assert_int_equal(sc->ec.step[0].pct, 30);
	assert_int_equal(sc->ec.step[1].at_ns, 5 * SL_NS_PER_MS);
	assert_int_equal(sc->ec.step[1].pct, 100);
	assert_true(sc->net.ctrl_loss == 0.01);
	assert_int_equal(sc->ec.q.sr_pkts, 64);
	for (size_t i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		assert_int_equal(
			sim_scenario_set(sc, bad[i][0], bad[i][1], bad[i][2], err, sizeof(err)),
			-EINVAL);
		assert_non_null(strstr(err, bad[i][1]));
	}
	free(sc);
}

/* The point of this policy, loss shares and selective-repeat reach. */
static const struct point *
find_loss(const struct point *pt, unsigned n, uint8_t policy, double ctrl_loss, double loss,
	  uint32_t sr_pkts)
{
	for (unsigned i = 0; i < n; i++)
		if (pt[i].policy == policy && pt[i].ctrl_loss == ctrl_loss && pt[i].loss == loss &&
		    pt[i].sr_pkts == sr_pkts)
			return &pt[i];
	fail_msg("no point %s ctrl_loss %g loss %g sr_pkts %u", sim_ec_policy_name(policy),
		 ctrl_loss, loss, sr_pkts);
	return NULL;
}

/*
 * ec-step.ini: the host drains at 100 %, 30 % from 2 ms, 100 % from 5 ms. dack throttles within
 * 5 RTTs of the fall (arrivals within 10 % of the new rate over an RTT) and is back at the full
 * rate within 5 RTTs of the rise, resending nothing and dropping nothing; opt never throttles
 * (it keeps sending at the link rate and resends the excess); aimd throttles but takes longer
 * than dack to use the rise (linear growth after its halvings).
 */
static void
step__dack_throttles_and_recovers(void **state)
{
	static const char *const set[][3] = {{"sweep", "ec.policy", "dack opt aimd"}};
	const int64_t rtt_ns = 8000;
	struct point pt[MAX_POINTS];
	unsigned n = sweep("ec-step.ini", set, SL_ARRAY_SIZE(set), pt);
	const struct point *d = find(pt, n, SIM_EC_DACK, 100, 0);
	const struct point *o = find(pt, n, SIM_EC_OPT, 100, 0);
	const struct point *a = find(pt, n, SIM_EC_AIMD, 100, 0);

	(void)state;
	assert_int_equal(d->step[0].to_pct, 30);
	assert_int_equal(d->step[1].to_pct, 100);
	assert_true(d->step[0].settle_ns >= 0 && d->step[0].settle_ns <= 5 * rtt_ns);
	assert_true(d->step[1].settle_ns >= 0 && d->step[1].settle_ns <= 5 * rtt_ns);
	assert_int_equal(d->m.retransmissions + d->m.retransmissions_warmup, 0);
	assert_int_equal(d->m.drop_full + d->m.drop_order, 0);
	assert_int_equal(o->step[0].settle_ns, -1);
	assert_true(o->m.retransmissions > 0);
	assert_true(a->step[0].settle_ns >= 0);
	assert_true(a->step[1].settle_ns > d->step[1].settle_ns);
}

/*
 * ec-loss.ini, the feedback path only: 1 % of the target's acknowledgments lost at random costs
 * dack nothing (a lost IACK is covered by the next, cumulative; a lost DACK by the ones around
 * it): the lossless run's goodput within 0.5 %, no retransmission.
 */
static void
loss__lost_acknowledgments_cost_dack_nothing(void **state)
{
	static const char *const set[][3] = {{"sweep", "ec.policy", "dack"},
					     {"sweep", "sim.ctrl_loss,sim.loss", "0,0 0.01,0"},
					     {"sweep", "ec.sr_pkts", "0"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("ec-loss.ini", set, SL_ARRAY_SIZE(set), pt);
	const struct point *clean = find_loss(pt, n, SIM_EC_DACK, 0, 0, 0);
	const struct point *lossy = find_loss(pt, n, SIM_EC_DACK, 0.01, 0, 0);

	(void)state;
	assert_true(lossy->ctrl_lost > 0);
	assert_int_equal(clean->ctrl_lost, 0);
	assert_true(fabs(lossy->m.goodput_norm - clean->m.goodput_norm) <=
		    0.005 * clean->m.goodput_norm);
	assert_int_equal(lossy->m.retransmissions + lossy->m.retransmissions_warmup, 0);
}

/*
 * ec-loss.ini, network loss before the target: with selective repeat (sr_pkts 64) dack loses
 * to 0.1 % loss at most 2 % of its lossless goodput, with no RTO, where the go-back-N target
 * costs it more than 20 %; at 1 % it keeps at least 70 % (go-back-N: under 30 %). With no
 * loss the two targets run identically.
 */
static void
loss__selective_repeat_spares_dack_the_network_loss(void **state)
{
	static const char *const set[][3] = {
		{"sweep", "ec.policy", "dack"},
		{"sweep", "sim.ctrl_loss,sim.loss", "0,0 0,0.001 0,0.01"},
		{"sweep", "ec.sr_pkts", "0 64"}};
	struct point pt[MAX_POINTS];
	unsigned n = sweep("ec-loss.ini", set, SL_ARRAY_SIZE(set), pt);
	const struct point *gbn[3], *sr[3];
	static const double loss[] = {0, 0.001, 0.01};

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		gbn[i] = find_loss(pt, n, SIM_EC_DACK, 0, loss[i], 0);
		sr[i] = find_loss(pt, n, SIM_EC_DACK, 0, loss[i], 64);
	}
	assert_true(sr[0]->m.goodput_norm == gbn[0]->m.goodput_norm);
	assert_int_equal(sr[0]->m.retransmissions + sr[0]->m.nacks, 0);
	assert_true(sr[1]->m.goodput_norm >= 0.98 * sr[0]->m.goodput_norm);
	assert_int_equal(sr[1]->m.rto_fired, 0);
	assert_true(sr[1]->m.nacks > 0);
	assert_true(gbn[1]->m.goodput_norm < 0.8 * gbn[0]->m.goodput_norm);
	assert_true(sr[2]->m.goodput_norm >= 0.7 * sr[0]->m.goodput_norm);
	assert_true(gbn[2]->m.goodput_norm < 0.3 * gbn[0]->m.goodput_norm);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scenario__ec_keys),
		cmocka_unit_test(unicast__dack_cells),
		cmocka_unit_test(unicast__baselines_retransmit),
		cmocka_unit_test(unicast__no_ec_dack_is_opt),
		cmocka_unit_test(incast__dack_retransmits_near_zero),
		cmocka_unit_test(step__dack_throttles_and_recovers),
		cmocka_unit_test(loss__lost_acknowledgments_cost_dack_nothing),
		cmocka_unit_test(loss__selective_repeat_spares_dack_the_network_loss),
	};

	if (argc > 1)
		scenario_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
