/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_seq.h - 32-bit sequence-number arithmetic with wrap (RFC 1982 serial numbers): a is before
 * b when (int32_t)(a - b) < 0. Valid while the two are less than 2^31 apart, which every window
 * in sluice (at most 2^20 segments) guarantees.
 */
#ifndef SL_SEQ_H
#define SL_SEQ_H

#include <stdint.h>

#include "sl_common.h"

static inline bool
sl_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
sl_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool
sl_seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool
sl_seq_ge(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

static inline uint32_t
sl_seq_max(uint32_t a, uint32_t b)
{
	return sl_seq_gt(a, b) ? a : b;
}

static inline uint32_t
sl_seq_min(uint32_t a, uint32_t b)
{
	return sl_seq_lt(a, b) ? a : b;
}

/* a in [lo, lo + len) modulo 2^32. */
static inline bool
sl_seq_in_window(uint32_t a, uint32_t lo, uint32_t len)
{
	return a - lo < len;
}

#endif /* SL_SEQ_H */
