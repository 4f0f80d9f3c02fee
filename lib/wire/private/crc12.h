/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc12.h - the CRC-12 of RIFL's verification code.
 *
 * Parameters (RIFL RTL vcode_gen.sv / vcode_val.sv, github.com/swift-link/RIFL; the paper names
 * the width and cites Koopman's tables): polynomial 0x02F in normal form
 * (x^12 + x^5 + x^3 + x^2 + x + 1), register initialised to 0, bits fed MSB first, no
 * reflection of input or output, no final XOR. Over bytes, "MSB first" means each byte is fed
 * from bit 7 down to bit 0, bytes in order: the RTL shifts the frame in from its top bit and
 * sluice frames are byte strings in network order.
 *
 * Four implementations compute the same function; tests check them against each other:
 *   sl_crc12_bitwise - one bit per step, the reference (tests only);
 *   sl_crc12_table   - one 256-entry table, one byte per step;
 *   sl_crc12_slice8  - slice-by-8 (eight tables, eight bytes per step), the byte table for the
 *                      tail; about 3.4 instructions per byte;
 *   sl_crc12_clmul   - x86-64 with PCLMULQDQ: folds 16-byte blocks with carry-less multiplies
 *                      (a last partial block is shifted in with PSHUFB) and ends with a Barrett
 *                      reduction; about 0.52 instructions per byte plus 40 to 64 per call.
 *                      Elsewhere (another CPU or architecture, or fewer than 16 bytes) it is
 *                      sl_crc12_slice8.
 * sl_crc12, the one the wire code calls, is sl_crc12_clmul from SL_CRC12_CLMUL_MIN_BYTES bytes
 * when sl_crc12_clmul_available(), else sl_crc12_slice8; the choice is made once at program
 * start. bench-link measures each (op crc12).
 *
 * The table paths keep the register left-aligned in a 32-bit word (CRC bits 31..20), so the
 * 12-bit CRC uses the same slicing scheme as a 32-bit MSB-first CRC; the result is the top 12
 * bits.
 */
#ifndef WIRE_CRC12_H
#define WIRE_CRC12_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sl_wire.h"

#define SL_CRC12_POLY 0x02Fu /**< x^12 + x^5 + x^3 + x^2 + x + 1, normal form (RIFL RTL) */
/**
 * bytes: from this length sl_crc12 folds (when it can). Folding needs one whole 16-byte block
 * and already takes fewer instructions there (bench-link op crc12_crossover: 16 bytes, 45 against
 * 69).
 */
#define SL_CRC12_CLMUL_MIN_BYTES 16u

/*
 * CRC-12 of len bytes continuing from crc (0 to start; pass the previous result to chain
 * fragments). Returns a value in [0, 4095].
 */
uint16_t sl_crc12(uint16_t crc, const void *data, size_t len);
uint16_t sl_crc12_clmul(uint16_t crc, const void *data, size_t len);
uint16_t sl_crc12_slice8(uint16_t crc, const void *data, size_t len);
uint16_t sl_crc12_table(uint16_t crc, const void *data, size_t len);
uint16_t sl_crc12_bitwise(uint16_t crc, const void *data, size_t len);

/* True when sl_crc12_clmul (and so sl_crc12 on long inputs) folds with PCLMULQDQ. */
bool sl_crc12_clmul_available(void);

#endif /* WIRE_CRC12_H */
