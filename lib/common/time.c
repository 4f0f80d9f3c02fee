/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * time.c - TSC calibration, done once: count TSC ticks across a CLOCK_MONOTONIC_RAW interval
 * and keep the 32.32 fixed-point ns-per-tick factor that sl_tsc_clock_ns() multiplies by.
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

int
sl_tsc_clock_init(struct sl_tsc_clock *c, uint64_t calib_ns)
{
	uint64_t t0, t1, tsc0, tsc1;

	if (calib_ns == 0)
		calib_ns = 20 * SL_NS_PER_MS;
	t0 = raw_ns();
	tsc0 = sl_rdtsc();
	do {
		t1 = raw_ns();
	} while (t1 - t0 < calib_ns);
	tsc1 = sl_rdtsc();
	return sl_tsc_clock_init_hz(
		c, (uint64_t)((unsigned __int128)(tsc1 - tsc0) * SL_NS_PER_S / (t1 - t0)));
}
