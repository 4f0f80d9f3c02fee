/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_common.h - small helpers every sluice module shares: branch hints, min/max, array size,
 * power-of-two checks and the unit constants. Pure C11, no DPDK.
 */
#ifndef SL_COMMON_H
#define SL_COMMON_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define sl_likely(x) __builtin_expect(!!(x), 1)
#define sl_unlikely(x) __builtin_expect(!!(x), 0)

#define SL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SL_DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))

#define SL_CACHE_LINE 64
#define sl_cache_aligned __attribute__((aligned(SL_CACHE_LINE)))
#define sl_unused __attribute__((unused))

/* Units. Quantities carry their unit in their name: now_ns, rate_bps, len_bytes. */
#define SL_NS_PER_US UINT64_C(1000)
#define SL_NS_PER_MS UINT64_C(1000000)
#define SL_NS_PER_S UINT64_C(1000000000)
#define SL_BPS_PER_KBPS UINT64_C(1000)
#define SL_BPS_PER_MBPS UINT64_C(1000000)
#define SL_BPS_PER_GBPS UINT64_C(1000000000)

static inline bool
sl_is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* Smallest power of two >= x (1 for x = 0); x must be at most 2^63. */
static inline uint64_t
sl_align_pow2(uint64_t x)
{
	return x <= 1 ? 1 : UINT64_C(1) << (64 - __builtin_clzll(x - 1));
}

/* sl_align_pow2() for 32-bit counts (ring depths, masks); x must be at most 2^31. */
static inline uint32_t
sl_align_pow2_u32(uint32_t x)
{
	return (uint32_t)sl_align_pow2(x);
}

/* Network byte order (big-endian) loads and stores at any alignment, for the wire formats. */
static inline void
sl_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
sl_put_be32(uint8_t *p, uint32_t v)
{
	sl_put_be16(p, (uint16_t)(v >> 16));
	sl_put_be16(p + 2, (uint16_t)v);
}

static inline void
sl_put_be64(uint8_t *p, uint64_t v)
{
	sl_put_be32(p, (uint32_t)(v >> 32));
	sl_put_be32(p + 4, (uint32_t)v);
}

static inline uint16_t
sl_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
sl_get_be32(const uint8_t *p)
{
	return (uint32_t)sl_get_be16(p) << 16 | sl_get_be16(p + 2);
}

static inline uint64_t
sl_get_be64(const uint8_t *p)
{
	return (uint64_t)sl_get_be32(p) << 32 | sl_get_be32(p + 4);
}

#endif /* SL_COMMON_H */
