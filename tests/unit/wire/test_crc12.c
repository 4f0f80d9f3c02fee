/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/crc12.c: the three CRC-12 implementations (bit-serial reference, byte
 * table, slice-by-8) agree on every length and alignment, chain across fragments, match values
 * computed independently from the parameters (poly 0x02F, init 0, MSB first, no reflection, no
 * xorout), and detect what a CRC of Hamming distance >= 2 must detect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_crc12.h"
#include "sl_rng.h"

static void
sl_crc12__known_values(void **state)
{
	static const uint8_t one[] = {0x80};

	(void)state;
	/* "123456789" (the catalogue check string), computed with an independent bit loop. */
	assert_int_equal(sl_crc12_bitwise(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12_table(0, "123456789", 9), 0x11b);
	assert_int_equal(sl_crc12(0, "123456789", 9), 0x11b);
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
	sl_rng_seed(&r, 7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)sl_rng_next(&r);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 8) {
			uint16_t ref = sl_crc12_bitwise(0, buf + off, len);

			assert_int_equal(sl_crc12_table(0, buf + off, len), ref);
			assert_int_equal(sl_crc12(0, buf + off, len), ref);
			assert_true(ref <= SL_CRC12_MASK);
		}
}

static void
sl_crc12__chains_across_fragments(void **state)
{
	uint8_t buf[257];
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 8);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)sl_rng_next(&r);
	for (size_t cut = 0; cut <= sizeof(buf); cut += 3) {
		uint16_t whole = sl_crc12(0, buf, sizeof(buf));

		assert_int_equal(sl_crc12(sl_crc12(0, buf, cut), buf + cut, sizeof(buf) - cut),
				 whole);
		assert_int_equal(sl_crc12_table(sl_crc12_bitwise(0, buf, cut), buf + cut,
						sizeof(buf) - cut),
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
	sl_rng_seed(&r, 9);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)sl_rng_next(&r);
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
	/* P = (x + 1)(x^11 + x^10 + x^9 + x^8 + x^7 + x^6 + x^5 + x^2 + 1): odd errors never pass. */
	static uint8_t buf[1500];
	struct sl_rng r;
	uint16_t good;

	(void)state;
	sl_rng_seed(&r, 10);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)sl_rng_next(&r);
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
	};

	return cmocka_run_group_tests_name("crc12", tests, NULL, NULL);
}
