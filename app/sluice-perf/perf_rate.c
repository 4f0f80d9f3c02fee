/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_rate.c - rate limit units, exact.
 *
 * perftest turns --rate_limit into a message gap with floating point and an int (its SW
 * limiter's error, perftest issue 125, starts there). sluice's pacer takes bits/s, so the only
 * arithmetic is one product and one division: the value typed is kept as an integer mantissa
 * and a power of ten, multiplied by the unit's bits (10^9, 8 x 2^20, or 8 x message bytes) in
 * 128 bits, divided by 10^scale and rounded half up. "0.1" Gbit/s is 10^8 bits/s, not
 * 99999999 or 100000000.00000001.
 */
#include <errno.h>
#include <stddef.h>

#include "perf_rate.h"

#define SL_PERF_DEC_SCALE_MAX 18

int
sl_perf_dec_parse(const char *s, struct sl_perf_dec *d)
{
	unsigned __int128 mant = 0;
	unsigned seen = 0;
	int scale = -1; /* -1: no point yet */

	if (s == NULL)
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s == '.') {
			if (scale >= 0)
				return -EINVAL;
			scale = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -EINVAL;
		seen++;
		mant = mant * 10 + (unsigned)(*s - '0');
		if (mant > UINT64_MAX)
			return -ERANGE;
		if (scale >= 0 && ++scale > SL_PERF_DEC_SCALE_MAX)
			return -ERANGE;
	}
	if (seen == 0)
		return -EINVAL;
	d->mant = (uint64_t)mant;
	d->scale = (uint8_t)(scale < 0 ? 0 : scale);
	return 0;
}

int
sl_perf_rate_units_parse(const char *s, enum sl_perf_rate_units *u)
{
	if (s == NULL || s[0] == '\0' || s[1] != '\0')
		return -EINVAL;
	switch (s[0]) {
	case 'g':
		*u = SL_PERF_RATE_GBPS;
		return 0;
	case 'M':
		*u = SL_PERF_RATE_MIBPS;
		return 0;
	case 'p':
		*u = SL_PERF_RATE_PPS;
		return 0;
	default:
		return -EINVAL;
	}
}

int
sl_perf_rate_bps(const struct sl_perf_dec *rate, enum sl_perf_rate_units u, uint64_t msg_bytes,
		 uint64_t *bps)
{
	unsigned __int128 unit_bits, pow10 = 1, v;

	switch (u) {
	case SL_PERF_RATE_GBPS:
		unit_bits = 1000000000u;
		break;
	case SL_PERF_RATE_MIBPS:
		unit_bits = (unsigned __int128)8 << 20;
		break;
	case SL_PERF_RATE_PPS:
		unit_bits = (unsigned __int128)msg_bytes * 8;
		break;
	default:
		return -EINVAL;
	}
	if (rate->mant == 0 || unit_bits == 0)
		return -EINVAL;
	for (unsigned i = 0; i < rate->scale; i++)
		pow10 *= 10;
	v = ((unsigned __int128)rate->mant * unit_bits + pow10 / 2) / pow10;
	if (v > UINT64_MAX)
		return -ERANGE;
	if (v == 0)
		return -EINVAL;
	*bps = (uint64_t)v;
	return 0;
}
