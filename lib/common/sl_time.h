/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_time.h - time in sluice.
 *
 * Every core module takes time as a uint64_t now_ns argument and never reads a clock, so the
 * same code runs on the simulator's virtual clock and on the daemon's TSC clock. This header
 * holds the pure nanosecond arithmetic (serialization times, bytes per interval) and, for the
 * glue only, a TSC clock calibrated once (sl_tsc_clock_init) and read with one multiply.
 *
 * Arithmetic is exact: 128-bit intermediates, explicit rounding direction in the name. A 9000 B
 * packet at 100 Kbps is 720 ms apart; at 100 Gbps 64 B is 5.12 ns; both fit without overflow.
 */
#ifndef SL_TIME_H
#define SL_TIME_H

#include <stdint.h>

#include "sl_common.h"

/* ns to serialize len_bytes at rate_bps, rounded down. rate_bps > 0. */
static inline uint64_t
sl_tx_ns_floor(uint64_t len_bytes, uint64_t rate_bps)
{
	return (uint64_t)((unsigned __int128)len_bytes * 8 * SL_NS_PER_S / rate_bps);
}

/* ns to serialize len_bytes at rate_bps, rounded up. rate_bps > 0. */
static inline uint64_t
sl_tx_ns_ceil(uint64_t len_bytes, uint64_t rate_bps)
{
	unsigned __int128 num = (unsigned __int128)len_bytes * 8 * SL_NS_PER_S;

	return (uint64_t)((num + rate_bps - 1) / rate_bps);
}

/* Whole bytes that rate_bps sends in dt_ns, rounded down. */
static inline uint64_t
sl_bytes_in_ns(uint64_t rate_bps, uint64_t dt_ns)
{
	return (uint64_t)((unsigned __int128)rate_bps * dt_ns / (8 * SL_NS_PER_S));
}

/* Rate in bps that moves len_bytes in dt_ns (0 when dt_ns is 0). */
static inline uint64_t
sl_rate_bps(uint64_t len_bytes, uint64_t dt_ns)
{
	return dt_ns ? (uint64_t)((unsigned __int128)len_bytes * 8 * SL_NS_PER_S / dt_ns) : 0;
}

/*
 * A TSC clock: ns = ((tsc - tsc0) * mult) >> 32, with mult = 2^32 * 1e9 / hz. Glue code only
 * (the daemon, benchmarks in real-clock mode); cores receive now_ns.
 */
struct sl_tsc_clock {
	uint64_t hz;   /**< TSC frequency, Hz */
	uint64_t tsc0; /**< TSC value that maps to 0 ns */
	uint64_t mult; /**< ns per tick, 32.32 fixed point */
};

static inline uint64_t
sl_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
#error "sl_rdtsc: add this architecture's cycle counter"
#endif
}

/* Calibrate against CLOCK_MONOTONIC_RAW across calib_ns (0: 20 ms; the caller sleeps that
 * long). 0 or -errno. */
int sl_tsc_clock_init(struct sl_tsc_clock *c, uint64_t calib_ns);

/* Use a known TSC frequency (e.g. rte_get_tsc_hz()). 0 or -EINVAL when hz is 0. */
int sl_tsc_clock_init_hz(struct sl_tsc_clock *c, uint64_t hz);

static inline uint64_t
sl_tsc_clock_ns(const struct sl_tsc_clock *c, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - c->tsc0) * c->mult) >> 32);
}

static inline uint64_t
sl_tsc_clock_now_ns(const struct sl_tsc_clock *c)
{
	return sl_tsc_clock_ns(c, sl_rdtsc());
}

/* CLOCK_MONOTONIC in ns (slow path: calibration, reports, config). */
uint64_t sl_monotonic_ns(void);

#endif /* SL_TIME_H */
