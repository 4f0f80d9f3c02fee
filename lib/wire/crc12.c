/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc12.c - CRC-12 (poly 0x02F, init 0, MSB first, no reflection, no xorout; see sl_crc12.h).
 *
 * The register r holds the CRC in bits 31..20 of a uint32_t, so the polynomial becomes
 * SL_CRC12_POLY << 20 and one byte step is r = (r << 8) ^ T0[(r >> 24) ^ byte], exactly the
 * MSB-first CRC-32 recurrence. Table Tk[b] is the register after feeding byte b followed by k
 * zero bytes from a zero register, so eight bytes at once are
 *     x = r ^ be32(p[0..3]);  r = T7[x>>24] ^ T6[x>>16 & 255] ^ T5[x>>8 & 255] ^ T4[x & 255]
 *                                 ^ T3[p4] ^ T2[p5] ^ T1[p6] ^ T0[p7]
 * (the register is only 12 bits wide, so it only ever mixes into the first two bytes). The
 * tables (8 KiB) are built from the bit-serial definition by a constructor at program start,
 * before any lcore runs, so the fast path reads them without a check.
 */
#include "sl_crc12.h"

#define REG_SHIFT 20u
#define REG_POLY (SL_CRC12_POLY << REG_SHIFT)

static uint32_t crc12_tab[8][256];

static void __attribute__((constructor))
crc12_tab_init(void)
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
}

static inline uint32_t
crc12_bytes(const uint32_t (*t)[256], uint32_t r, const uint8_t *p, size_t len)
{
	while (len--)
		r = (r << 8) ^ t[0][(r >> 24) ^ *p++];
	return r;
}

uint16_t
sl_crc12_table(uint16_t crc, const void *data, size_t len)
{
	const uint32_t(*t)[256] = crc12_tab;
	uint32_t r = (uint32_t)(crc & SL_CRC12_MASK) << REG_SHIFT;

	return (uint16_t)(crc12_bytes(t, r, data, len) >> REG_SHIFT);
}

uint16_t
sl_crc12(uint16_t crc, const void *data, size_t len)
{
	const uint32_t(*t)[256] = crc12_tab;
	uint32_t r = (uint32_t)(crc & SL_CRC12_MASK) << REG_SHIFT;
	const uint8_t *p = data;

	for (; len >= 8; len -= 8, p += 8) {
		uint32_t x = r ^ ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
				  (uint32_t)p[2] << 8 | p[3]);

		r = t[7][x >> 24] ^ t[6][(x >> 16) & 255] ^ t[5][(x >> 8) & 255] ^ t[4][x & 255] ^
		    t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
	}
	return (uint16_t)(crc12_bytes(t, r, p, len) >> REG_SHIFT);
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
