/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_rate.h - sluice-perf's rate limits: perftest's --rate_limit value and --rate_units,
 * turned into the bits/s that struct sl_qp_attr.rate_limit_bps takes, exactly.
 */
#ifndef SL_PERF_RATE_H
#define SL_PERF_RATE_H

#include <stdint.h>

/* --rate_units, perftest's letters. */
enum sl_perf_rate_units {
	SL_PERF_RATE_GBPS = 0, /**< 'g': Gbit/s, 10^9 bits/s (perftest's default) */
	SL_PERF_RATE_MIBPS,    /**< 'M': MiB/s, 2^20 bytes/s */
	SL_PERF_RATE_PPS,      /**< 'p': messages/s */
};

/*
 * A decimal as typed ("0.1", "5", "2.25"): value = mant / 10^scale, kept exact so that the
 * conversion rounds only once, at the end.
 */
struct sl_perf_dec {
	uint64_t mant; /**< the digits without the point */
	uint8_t scale; /**< digits after the point, 0..18 */
};

/*
 * Parse a non-negative decimal (digits, at most one point, at most 18 fractional digits, no
 * sign, no exponent). 0 or -EINVAL (anything else), -ERANGE (digits above 2^64 - 1, or more than 18
 * after the point).
 */
int sl_perf_dec_parse(const char *s, struct sl_perf_dec *d);

/* The units' letter: 0 or -EINVAL. */
int sl_perf_rate_units_parse(const char *s, enum sl_perf_rate_units *u);

/*
 * The limit in bits/s: Gbit/s x 10^9, MiB/s x 8 x 2^20, pps x msg_bytes x 8, rounded to the
 * nearest bit/s. 0, or -EINVAL (a zero rate, or pps with msg_bytes 0), -ERANGE (above 2^64).
 */
int sl_perf_rate_bps(const struct sl_perf_dec *rate, enum sl_perf_rate_units u, uint64_t msg_bytes,
		     uint64_t *bps);

#endif /* SL_PERF_RATE_H */
