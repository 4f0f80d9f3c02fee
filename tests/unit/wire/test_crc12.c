/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/crc12.c: the CRC-12 implementations (bit-serial reference, byte table,
 * slice-by-8, PCLMULQDQ folding, and sl_crc12, which picks between the last two) agree on every
 * length and alignment, chain across fragments, match values computed independently from the
 * parameters (poly 0x02F, init 0, MSB first, no reflection, no xorout), and detect what a CRC
 * of Hamming distance >= 2 must detect. The folding constants crc12.c documents are recomputed
 * here by long division on 128-bit integers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "crc12.h"
#include "sl_rng.h"

/* Seed r and fill buf from it; the test goes on drawing from r. */
static void
random_bytes(struct sl_rng *r, uint64_t seed, uint8_t *buf, size_t len)
{
	sl_rng_seed(r, seed);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)sl_rng_next(r);
}

static void
sl_crc12__known_values(void **state)
{
	static const uint8_t one[] = {0x80};

	(void)state;
	/* "123456789" (the catalogue check string), computed with an independent bit loop. */
	assert_int_equal(sl_crc12_bitwise(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12_table(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12_slice8(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12_clmul(0, "123456789", 9), 0x11b);
	/* 0x80 is x^7: x^19 mod P, computed independently. */
	assert_int_equal(sl_crc12(0, one, 1), 0x7af);
	assert_int_equal(sl_crc12(0, NULL, 0), 0);
	/* Init 0 and no xorout: zeros keep the register at zero. */
	assert_int_equal(sl_crc12(0, "\0\0\0\0\0\0\0\0\0\0", 10), 0);
}

static void
sl_crc12__polynomial_is_0x02f(void **state)
{
	/* The message "x^0" leaves x^12 mod P = 0x02F in the register, and x^13 mod P = 0x05E. */
	static const uint8_t one[] = {0x01}, two[] = {0x00, 0x02};

	(void)state;
	assert_int_equal(sl_crc12_bitwise(0, one, 1), SL_CRC12_POLY);
	assert_int_equal(sl_crc12(0, one, 1), SL_CRC12_POLY);
	assert_int_equal(sl_crc12(0, two, 2), 0x05E);
}

static void
sl_crc12__implementations_agree(void **state)
{
	uint8_t buf[600];
	struct sl_rng r;

	(void)state;
	random_bytes(&r, 7, buf, sizeof(buf));
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 8) {
			uint16_t ref = sl_crc12_bitwise(0, buf + off, len);

			assert_int_equal(sl_crc12_table(0, buf + off, len), ref);
			assert_int_equal(sl_crc12(0, buf + off, len), ref);
			assert_int_equal(sl_crc12_slice8(0, buf + off, len), ref);
			assert_int_equal(sl_crc12_clmul(0, buf + off, len), ref);
			assert_true(ref <= SL_CRC12_MASK);
		}
}

static void
sl_crc12__chains_across_fragments(void **state)
{
	uint8_t buf[257];
	struct sl_rng r;

	(void)state;
	random_bytes(&r, 8, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut += 3) {
		uint16_t whole = sl_crc12(0, buf, sizeof(buf));

		assert_int_equal(sl_crc12(sl_crc12(0, buf, cut), buf + cut, sizeof(buf) - cut),
				 whole);
		assert_int_equal(
			sl_crc12_table(sl_crc12_bitwise(0, buf, cut), buf + cut, sizeof(buf) - cut),
			whole);
	}
}

static void
sl_crc12__detects_every_single_and_double_bit_error(void **state)
{
	/*
	 * 32-byte RIFL-256 frame: every 1- and 2-bit error changes the CRC. The period of x modulo
	 * 0x102F is 2047, so two flips closer than 2047 bits are always caught.
	 */
	uint8_t buf[32];
	struct sl_rng r;
	uint16_t good;

	(void)state;
	random_bytes(&r, 9, buf, sizeof(buf));
	good = sl_crc12(0, buf, sizeof(buf));
	for (unsigned a = 0; a < 256; a++) {
		buf[a / 8] ^= (uint8_t)(0x80u >> (a % 8));
		assert_int_not_equal(sl_crc12(0, buf, sizeof(buf)), good);
		for (unsigned b = a + 1; b < 256; b++) {
			buf[b / 8] ^= (uint8_t)(0x80u >> (b % 8));
			assert_int_not_equal(sl_crc12(0, buf, sizeof(buf)), good);
			buf[b / 8] ^= (uint8_t)(0x80u >> (b % 8));
		}
		buf[a / 8] ^= (uint8_t)(0x80u >> (a % 8));
	}
}

static void
sl_crc12__detects_every_odd_weight_error(void **state)
{
	/* P = (x + 1)(x^11 + x^10 + x^9 + x^8 + x^7 + x^6 + x^5 + x^2 + 1): odd errors never pass.
	 */
	static uint8_t buf[1500];
	struct sl_rng r;
	uint16_t good;

	(void)state;
	random_bytes(&r, 10, buf, sizeof(buf));
	good = sl_crc12(0, buf, sizeof(buf));
	for (int trial = 0; trial < 20000; trial++) {
		unsigned w = 1 + 2 * (unsigned)sl_rng_below(&r, 4), bits[7];

		for (unsigned k = 0; k < w; k++) {
			do {
				bits[k] = (unsigned)sl_rng_below(&r, sizeof(buf) * 8);
				for (unsigned j = 0; j < k; j++)
					if (bits[j] == bits[k])
						bits[k] = UINT32_MAX;
			} while (bits[k] == UINT32_MAX);
			buf[bits[k] / 8] ^= (uint8_t)(0x80u >> (bits[k] % 8));
		}
		assert_int_not_equal(sl_crc12(0, buf, sizeof(buf)), good);
		for (unsigned k = 0; k < w; k++)
			buf[bits[k] / 8] ^= (uint8_t)(0x80u >> (bits[k] % 8));
	}
}

static void
sl_crc12__two_flips_2047_bits_apart_escape(void **state)
{
	/* The limit docs/wire-format.md states: the period of x mod P is 2047 bits. */
	static uint8_t buf[300];
	uint16_t good = sl_crc12(0, buf, sizeof(buf));

	(void)state;
	buf[10 / 8] ^= (uint8_t)(0x80u >> (10 % 8));
	buf[2057 / 8] ^= (uint8_t)(0x80u >> (2057 % 8));
	assert_int_equal(sl_crc12(0, buf, sizeof(buf)), good);
	buf[2057 / 8] ^= (uint8_t)(0x80u >> (2057 % 8));
	buf[2056 / 8] ^= (uint8_t)(0x80u >> (2056 % 8));
	assert_int_not_equal(sl_crc12(0, buf, sizeof(buf)), good);
}

static void
sl_crc12_clmul__available_when_the_cpu_has_pclmul(void **state)
{
	(void)state;
#if defined(__x86_64__)
	__builtin_cpu_init();
	assert_int_equal(sl_crc12_clmul_available(), __builtin_cpu_supports("pclmul") &&
							     __builtin_cpu_supports("ssse3") &&
							     __builtin_cpu_supports("sse4.1"));
#else
	assert_false(sl_crc12_clmul_available());
#endif
	if (!sl_crc12_clmul_available())
		print_message("no PCLMULQDQ: sl_crc12_clmul tests check the slice-by-8 fallback\n");
}

#if defined(__SIZEOF_INT128__)
/* x^k mod Q, Q = P x^52 = x^64 + 0x02F x^52, by long division of x^k on 128-bit integers. */
static uint64_t
x_pow_mod_q(unsigned k)
{
	const unsigned __int128 q = (unsigned __int128)1 << 64 | (uint64_t)SL_CRC12_POLY << 52;
	unsigned __int128 r = 1;

	for (unsigned i = 0; i < k; i++) {
		r <<= 1;
		if ((r >> 64) & 1u)
			r ^= q;
	}
	return (uint64_t)r;
}

/* The carry-less product of two 64-bit polynomials, one bit at a time. */
static unsigned __int128
clmul64(uint64_t a, uint64_t b)
{
	unsigned __int128 r = 0;

	for (int i = 0; i < 64; i++)
		if ((b >> i) & 1u)
			r ^= (unsigned __int128)a << i;
	return r;
}
#endif

static void
sl_crc12_clmul__constants_match_the_arithmetic(void **state)
{
	/* The table in crc12.c's comment (its constructor computes the values with an LFSR). */
	static const struct {
		unsigned k;
		uint64_t x_k_mod_q;
	} fold[] = {
		{128, 0xb690000000000000u}, {192, 0x30e0000000000000u}, {256, 0xa6e0000000000000u},
		{320, 0x3ea0000000000000u}, {384, 0x2960000000000000u}, {448, 0xbe70000000000000u},
		{512, 0x0760000000000000u}, {576, 0x6d60000000000000u},
	};
	const uint64_t q_low = (uint64_t)SL_CRC12_POLY << 52, mu_low = 0x02f45e4a0e7978abu;

	(void)state;
	(void)q_low;
	(void)mu_low;
	for (size_t i = 0; i < sizeof(fold) / sizeof(fold[0]); i++) {
		uint8_t msg[80] = {0};
		unsigned e = fold[i].k - 64;

		/* x^k mod Q = (x^(k-52) mod P) x^52, and x^(k-52) mod P is the CRC of x^(k-64). */
		msg[sizeof(msg) - 1 - e / 8] = (uint8_t)(1u << (e % 8));
		assert_int_equal(fold[i].x_k_mod_q & ((1ull << 52) - 1), 0);
		assert_int_equal(fold[i].x_k_mod_q >> 52, sl_crc12_bitwise(0, msg, sizeof(msg)));
#if defined(__SIZEOF_INT128__)
		assert_int_equal(x_pow_mod_q(fold[i].k), fold[i].x_k_mod_q);
#endif
	}
#if defined(__SIZEOF_INT128__)
	/*
	 * mu = x^64 + mu_low is floor(x^128 / Q) when x^128 - mu Q has degree < 64. With
	 * Q = x^64 + q_low: x^128 + mu Q = x^64 (mu_low + q_low) + mu_low q_low.
	 */
	assert_true(((((unsigned __int128)(mu_low ^ q_low) << 64) ^ clmul64(mu_low, q_low)) >>
		     64) == 0);
#endif
}

static void
sl_crc12_clmul__every_length_to_1024(void **state)
{
	/* Every length across the fold widths (16, 64 bytes), random offsets and running CRCs. */
	static uint8_t buf[1024 + 64];
	struct sl_rng r;

	(void)state;
	random_bytes(&r, 11, buf, sizeof(buf));
	for (size_t len = 0; len <= 1024; len++) {
		size_t off = (size_t)sl_rng_below(&r, 64);
		uint16_t crc = (uint16_t)sl_rng_below(&r, SL_CRC12_MASK + 1);
		uint16_t ref = sl_crc12_bitwise(0, buf + off, len);

		assert_int_equal(sl_crc12_clmul(0, buf + off, len), ref);
		assert_int_equal(sl_crc12(0, buf + off, len), ref);
		ref = sl_crc12_bitwise(crc, buf + off, len);
		assert_int_equal(sl_crc12_clmul(crc, buf + off, len), ref);
		assert_int_equal(sl_crc12(crc, buf + off, len), ref);
	}
}

static void
sl_crc12_clmul__running_crc_across_random_splits(void **state)
{
	/* A frame cut into four pieces at random, each continuing the previous piece's CRC. */
	static uint8_t buf[1600];
	struct sl_rng r;

	(void)state;
	random_bytes(&r, 12, buf, sizeof(buf));
	for (int trial = 0; trial < 500; trial++) {
		size_t off = (size_t)sl_rng_below(&r, 16);
		size_t len = (size_t)sl_rng_below(&r, sizeof(buf) - off + 1), done = 0;
		uint16_t whole = sl_crc12_bitwise(0, buf + off, len), a = 0, b = 0;

		for (int piece = 0; piece < 4; piece++) {
			size_t left = len - done;
			size_t n = piece == 3 ? left : (size_t)sl_rng_below(&r, left + 1);

			a = sl_crc12_clmul(a, buf + off + done, n);
			b = sl_crc12(b, buf + off + done, n);
			done += n;
		}
		assert_int_equal(a, whole);
		assert_int_equal(b, whole);
	}
}

static void
sl_crc12_clmul__long_buffers(void **state)
{
	/* Jumbo frames: 9000 bytes and neighbours, every tail length, every alignment mod 16. */
	static uint8_t buf[9000 + 32];
	struct sl_rng r;

	(void)state;
	random_bytes(&r, 13, buf, sizeof(buf));
	for (size_t off = 0; off < 16; off++) {
		size_t len = 9000 - 8 + off;
		uint16_t ref = sl_crc12_bitwise(0, buf + off, len);

		assert_int_equal(sl_crc12_clmul(0, buf + off, len), ref);
		assert_int_equal(sl_crc12(0, buf + off, len), ref);
		assert_int_equal(sl_crc12_slice8(0, buf + off, len), ref);
	}
	assert_int_equal(sl_crc12_clmul(0x5a5, buf, 9000), sl_crc12_bitwise(0x5a5, buf, 9000));
	memset(buf, 0, sizeof(buf));
	assert_int_equal(sl_crc12_clmul(0, buf, 9000), 0);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(sl_crc12_clmul(0xfff, buf, 9000), sl_crc12_bitwise(0xfff, buf, 9000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_crc12__known_values),
		cmocka_unit_test(sl_crc12__polynomial_is_0x02f),
		cmocka_unit_test(sl_crc12__implementations_agree),
		cmocka_unit_test(sl_crc12__chains_across_fragments),
		cmocka_unit_test(sl_crc12__detects_every_single_and_double_bit_error),
		cmocka_unit_test(sl_crc12__detects_every_odd_weight_error),
		cmocka_unit_test(sl_crc12__two_flips_2047_bits_apart_escape),
		cmocka_unit_test(sl_crc12_clmul__available_when_the_cpu_has_pclmul),
		cmocka_unit_test(sl_crc12_clmul__constants_match_the_arithmetic),
		cmocka_unit_test(sl_crc12_clmul__every_length_to_1024),
		cmocka_unit_test(sl_crc12_clmul__running_crc_across_random_splits),
		cmocka_unit_test(sl_crc12_clmul__long_buffers),
	};

	return cmocka_run_group_tests_name("crc12", tests, NULL, NULL);
}
