/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * time.c - TSC calibration, done once: count TSC ticks across a CLOCK_MONOTONIC_RAW interval
 * and keep the 32.32 fixed-point ns-per-tick factor that sl_tsc_clock_ns() multiplies by.
 *
 * Each end of the interval is a TSC read between two clock reads a few tens of ns apart (the
 * tightest of several tries), so the frequency is good to about 1e-5 over 50 ms and a
 * preemption anywhere costs nothing; the process sleeps in between. DPDK's own figure
 * (rte_get_tsc_hz()) is rounded to 10 MHz on machines that do not report the frequency: a
 * 2096 MHz TSC read as 2100 MHz makes every paced rate 0.19 % slow.
 */
#include <errno.h>
#include <time.h>

#include "sl_time.h"

static uint64_t
raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * SL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t
sl_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

int
sl_tsc_clock_init_hz(struct sl_tsc_clock *c, uint64_t hz)
{
	if (hz == 0)
		return -EINVAL;
	c->hz = hz;
	c->mult = (uint64_t)(((unsigned __int128)SL_NS_PER_S << 32) / hz);
	c->tsc0 = sl_rdtsc();
	return 0;
}

/* A (CLOCK_MONOTONIC_RAW ns, TSC) pair read close together: of PAIR_TRIES tries, the one whose
 * two clock reads around the TSC read lie nearest each other, the clock taken at their middle.
 * A preemption between the reads costs only that try. */
#define PAIR_TRIES 16

static void
tight_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t before = raw_ns(), t = sl_rdtsc(), after = raw_ns();

		if (after - before < best) {
			best = after - before;
			*ns = before + best / 2;
			*tsc = t;
		}
	}
}

int
sl_tsc_clock_init(struct sl_tsc_clock *c, uint64_t calib_ns)
{
	struct timespec nap;
	uint64_t t0, t1, tsc0, tsc1;

	if (calib_ns == 0)
		calib_ns = 20 * SL_NS_PER_MS;
	nap.tv_sec = (time_t)(calib_ns / SL_NS_PER_S);
	nap.tv_nsec = (long)(calib_ns % SL_NS_PER_S);
	tight_pair(&t0, &tsc0);
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	tight_pair(&t1, &tsc1);
	if (t1 <= t0 || tsc1 <= tsc0)
		return -EIO;
	return sl_tsc_clock_init_hz(
		c, (uint64_t)((unsigned __int128)(tsc1 - tsc0) * SL_NS_PER_S / (t1 - t0)));
}
