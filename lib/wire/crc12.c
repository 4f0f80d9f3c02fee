/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc12.c - CRC-12 (poly 0x02F, init 0, MSB first, no reflection, no xorout; see crc12.h).
 *
 * Slice-by-8. The register r holds the CRC in bits 31..20 of a uint32_t, so the polynomial
 * becomes SL_CRC12_POLY << 20 and one byte step is r = (r << 8) ^ T0[(r >> 24) ^ byte], exactly
 * the MSB-first CRC-32 recurrence. Table Tk[b] is the register after feeding byte b followed by
 * k zero bytes from a zero register, so eight bytes at once are
 *     x = r ^ be32(p[0..3]);  r = T7[x>>24] ^ T6[x>>16 & 255] ^ T5[x>>8 & 255] ^ T4[x & 255]
 *                                 ^ T3[p4] ^ T2[p5] ^ T1[p6] ^ T0[p7]
 * (the register is only 12 bits wide, so it only ever mixes into the first two bytes). About
 * 3.4 instructions per byte.
 *
 * Folding with carry-less multiplies (x86-64 PCLMULQDQ; Gopal et al., "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009). Read as a polynomial over
 * GF(2), a message M of n bits (first bit = highest power) has CRC M(x) x^12 mod P(x); a running
 * CRC c is the same as XOR-ing c into the first 12 message bits. Work modulo
 *     Q(x) = P(x) x^52 = x^64 + 0x02F x^52,
 * a degree-64 multiple of P, so anything congruent modulo Q is congruent modulo P, and
 *     M x^64 mod Q = (M x^12 mod P) x^52:
 * the 64-bit remainder is the CRC in its top 12 bits. A 16-byte block byte-swapped by PSHUFB
 * is a 128-bit polynomial X = H x^64 + L (first byte's bit 7 = x^127). Folding X over a
 * distance of d bits (the next block starts d bits later) is
 *     X x^d = H x^(d+64) + L x^d  ==  H (x^(d+64) mod Q) + L (x^d mod Q)   (mod Q),
 * two 64 x 64 -> 127-bit carry-less products, XOR-ed into the block d bits on. The main loop
 * keeps four accumulators 64 bytes apart (d = 512); they fold into one with d = 384, 256, 128,
 * and any remaining whole blocks fold one at a time (d = 128). A last partial block of r bytes
 * R (1..15) is shifted in: the message is X x^8r + R = A x^128 + ((X << 8r) | R), where A is
 * X's top r bytes, so PSHUFB moves bytes (X >> (128 - 8r) and X << 8r), BLENDV merges R (read
 * as the last 16 bytes of the input, all inside it) and one more fold with d = 128 adds A.
 * To end, T = X x^64 = H (x^128 mod Q) + L x^64, 128 bits, and Barrett reduction gives
 * T mod Q without a division: with mu = floor(x^128 / Q) (degree 64),
 *     q = floor(T_hi mu / x^64) = T_hi ^ hi64(T_hi * (mu - x^64)),
 *     T mod Q = T_lo ^ lo64(q * (Q - x^64)),
 * exact over GF(2) because deg T < 2 deg Q. The CRC is that remainder shifted right by 52.
 * About 0.52 instructions per byte (35 per 64 bytes) plus 40 (64 bytes) to 64 (long frames) per
 * call, against 3.4 per byte for slice-by-8: folding takes fewer instructions from its first
 * whole block (16 bytes: 45 against 69 in bench-link, op crc12_crossover), so sl_crc12 keeps
 * slice-by-8 only below 16 bytes.
 *
 * The constants are computed from the definition at program start: x^k mod Q for k = 64 is
 * Q - x^64 = 0x02F << 52, and each further power is one LFSR step (shift left, XOR 0x02F << 52
 * if a bit falls off the top); mu comes from long division of x^128 by Q in the same LFSR
 * (quotient bit j is the bit falling off the top while dividend bit j is shifted in). They are
 * (hex, k: x^k mod Q):
 *     128: b690000000000000  192: 30e0000000000000  256: a6e0000000000000
 *     320: 3ea0000000000000  384: 2960000000000000  448: be70000000000000
 *     512: 0760000000000000  576: 6d60000000000000  mu: 1 02f45e4a0e7978ab
 * (each x^k mod Q is (x^(k-52) mod P) << 52: only the top 12 bits are ever set).
 * tests/unit/wire/test_crc12.c recomputes them by long division and checks every path against
 * the bit-serial reference.
 *
 * The tables (8 KiB), the constants and the choice of path (the CPU has PCLMULQDQ, SSSE3 and
 * SSE4.1) are set by a constructor at program start, before any lcore runs, so the fast path
 * reads them without a check.
 */
#include <stdbool.h>

#include "crc12.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CRC12_CLMUL 1
#define CRC12_CLMUL_TARGET __attribute__((target("pclmul,ssse3,sse4.1")))
#else
#define CRC12_CLMUL 0
#endif

#define REG_SHIFT 20u
#define REG_POLY (SL_CRC12_POLY << REG_SHIFT)
#define Q_LOW ((uint64_t)SL_CRC12_POLY << 52) /**< Q(x) - x^64 */

static uint32_t crc12_tab[8][256];
static bool crc12_use_clmul;

#if CRC12_CLMUL
/*
 * Fold constants: low qword x^d mod Q (multiplies the block's low half), high qword
 * x^(d+64) mod Q (its high half); bar: low qword mu - x^64, high qword Q - x^64.
 */
static struct {
	__m128i k128, k256, k384, k512, bar;
} crc12_k;
#endif

static void
crc12_clmul_init(void)
{
#if CRC12_CLMUL
	uint64_t xk[10]; /* xk[i] = x^(64 i) mod Q */
	uint64_t r = Q_LOW, mu = 0;

	xk[1] = r;
	for (int k = 65; k <= 576; k++) {
		r = (r >> 63) ? (r << 1) ^ Q_LOW : r << 1;
		if (k % 64 == 0)
			xk[k / 64] = r;
	}
	r = 0;
	for (int j = 128; j >= 0; j--) {
		uint64_t top = r >> 63;

		r = r << 1 | (j == 128);
		if (top) {
			r ^= Q_LOW;
			if (j < 64)
				mu |= 1ull << j;
		}
	}
	crc12_k.k128 = _mm_set_epi64x((long long)xk[3], (long long)xk[2]);
	crc12_k.k256 = _mm_set_epi64x((long long)xk[5], (long long)xk[4]);
	crc12_k.k384 = _mm_set_epi64x((long long)xk[7], (long long)xk[6]);
	crc12_k.k512 = _mm_set_epi64x((long long)xk[9], (long long)xk[8]);
	crc12_k.bar = _mm_set_epi64x((long long)Q_LOW, (long long)mu);
	__builtin_cpu_init();
	crc12_use_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3") &&
			  __builtin_cpu_supports("sse4.1");
#endif
}

static void __attribute__((constructor)) crc12_tab_init(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t r = b << 24;

		for (int i = 0; i < 8; i++)
			r = (r & 0x80000000u) ? (r << 1) ^ REG_POLY : r << 1;
		crc12_tab[0][b] = r;
	}
	for (uint32_t b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++) {
			uint32_t r = crc12_tab[k - 1][b];

			crc12_tab[k][b] = (r << 8) ^ crc12_tab[0][r >> 24];
		}
	crc12_clmul_init();
}

static inline uint32_t
crc12_bytes(const uint32_t (*t)[256], uint32_t r, const uint8_t *p, size_t len)
{
	while (len--)
		r = (r << 8) ^ t[0][(r >> 24) ^ *p++];
	return r;
}

static inline uint16_t
crc12_slice8(uint16_t crc, const uint8_t *p, size_t len)
{
	const uint32_t(*t)[256] = crc12_tab;
	uint32_t r = (uint32_t)(crc & SL_CRC12_MASK) << REG_SHIFT;

	for (; len >= 8; len -= 8, p += 8) {
		uint32_t x = r ^ ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
				  (uint32_t)p[2] << 8 | p[3]);

		r = t[7][x >> 24] ^ t[6][(x >> 16) & 255] ^ t[5][(x >> 8) & 255] ^ t[4][x & 255] ^
		    t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
	}
	return (uint16_t)(crc12_bytes(t, r, p, len) >> REG_SHIFT);
}

#if CRC12_CLMUL
/* The 16 bytes at p as a polynomial: byte-swapped so the first byte's bit 7 is x^127. */
static inline CRC12_CLMUL_TARGET __m128i
crc12_block(const uint8_t *p)
{
	const __m128i swap = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);

	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), swap);
}

/* x folded over the distance whose constants are k, plus next. */
static inline CRC12_CLMUL_TARGET __m128i
crc12_fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(
		_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)),
		next);
}

/* CRC-12 of len >= 16 bytes continuing from crc, by folding (see the top of the file). */
static CRC12_CLMUL_TARGET uint16_t
crc12_clmul(uint16_t crc, const uint8_t *p, size_t len)
{
	__m128i x, t, q;
	__m128i init = _mm_set_epi64x((long long)((uint64_t)(crc & SL_CRC12_MASK) << 52), 0);

	if (len >= 64) {
		__m128i x0 = _mm_xor_si128(crc12_block(p), init), x1 = crc12_block(p + 16),
			x2 = crc12_block(p + 32), x3 = crc12_block(p + 48);

		for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
			x0 = crc12_fold(x0, crc12_k.k512, crc12_block(p));
			x1 = crc12_fold(x1, crc12_k.k512, crc12_block(p + 16));
			x2 = crc12_fold(x2, crc12_k.k512, crc12_block(p + 32));
			x3 = crc12_fold(x3, crc12_k.k512, crc12_block(p + 48));
		}
		x = crc12_fold(x0, crc12_k.k384,
			       crc12_fold(x1, crc12_k.k256, crc12_fold(x2, crc12_k.k128, x3)));
	} else {
		x = _mm_xor_si128(crc12_block(p), init);
		p += 16;
		len -= 16;
	}
	for (; len >= 16; p += 16, len -= 16)
		x = crc12_fold(x, crc12_k.k128, crc12_block(p));
	if (len > 0) {
		/*
		 * The last len = r bytes: X x^8r + R = A x^128 + ((X << 8r) | R) with A = X's top r
		 * bytes. Byte i of a vector is x^8i..x^(8i+7); shl picks byte i - r (i < r: the
		 * index is negative, bit 7 set, so PSHUFB writes 0 and BLENDV takes R's byte);
		 * shl ^ 0x80 picks byte i + 16 - r for i < r and zeroes the rest (X >> (128 - 8r)).
		 */
		const __m128i idx =
			_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
		__m128i shl = _mm_sub_epi8(idx, _mm_set1_epi8((char)len));
		__m128i a = _mm_shuffle_epi8(x, _mm_xor_si128(shl, _mm_set1_epi8((char)0x80)));

		x = _mm_blendv_epi8(_mm_shuffle_epi8(x, shl), crc12_block(p + len - 16), shl);
		x = crc12_fold(a, crc12_k.k128, x);
	}
	/* T = X x^64 = H (x^128 mod Q) + L x^64; then Barrett: q in q's high qword. */
	t = _mm_xor_si128(_mm_clmulepi64_si128(x, crc12_k.k128, 0x01), _mm_slli_si128(x, 8));
	q = _mm_xor_si128(_mm_clmulepi64_si128(t, crc12_k.bar, 0x01), t);
	t = _mm_xor_si128(_mm_clmulepi64_si128(q, crc12_k.bar, 0x11), t);
	return (uint16_t)((uint64_t)_mm_cvtsi128_si64(t) >> 52);
}
#endif

uint16_t
sl_crc12(uint16_t crc, const void *data, size_t len)
{
#if CRC12_CLMUL
	_Static_assert(SL_CRC12_CLMUL_MIN_BYTES >= 16, "crc12_clmul needs one whole block");
	if (len >= SL_CRC12_CLMUL_MIN_BYTES && crc12_use_clmul)
		return crc12_clmul(crc, data, len);
#endif
	return crc12_slice8(crc, data, len);
}

uint16_t
sl_crc12_clmul(uint16_t crc, const void *data, size_t len)
{
#if CRC12_CLMUL
	if (len >= 16 && crc12_use_clmul) /* crc12_clmul needs one whole block */
		return crc12_clmul(crc, data, len);
#endif
	return crc12_slice8(crc, data, len);
}

bool
sl_crc12_clmul_available(void)
{
	return crc12_use_clmul;
}

uint16_t
sl_crc12_slice8(uint16_t crc, const void *data, size_t len)
{
	return crc12_slice8(crc, data, len);
}

uint16_t
sl_crc12_table(uint16_t crc, const void *data, size_t len)
{
	const uint32_t(*t)[256] = crc12_tab;
	uint32_t r = (uint32_t)(crc & SL_CRC12_MASK) << REG_SHIFT;

	return (uint16_t)(crc12_bytes(t, r, data, len) >> REG_SHIFT);
}

uint16_t
sl_crc12_bitwise(uint16_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint16_t r = crc & SL_CRC12_MASK;

	for (size_t i = 0; i < len; i++)
		for (int bit = 7; bit >= 0; bit--) {
			unsigned in = ((p[i] >> bit) & 1u) ^ ((r >> 11) & 1u);

			r = (uint16_t)((r << 1) & SL_CRC12_MASK);
			if (in)
				r ^= SL_CRC12_POLY;
		}
	return r;
}
