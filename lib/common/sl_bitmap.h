/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_bitmap.h - ring bitmaps: arrays of 64-bit words indexed modulo their size in bits.
 *
 * Tonic keeps per-flow `acked` and `marked_for_rtx` bitmaps over a sliding window, and MELO
 * keeps receive bitmaps; both treat the bitmap as a ring whose logical start (the head) moves.
 * The one non-trivial operation is find-first-set from the head with wrap (Tonic, appendix C):
 *
 *     A' = A with bits [0, head) cleared;  result = ffs(A') if A' != 0, else ffs(A)
 *
 * so with bits 5 and 30 set and head 6 the answer is 30, and with head 31 it is 5. The scan is
 * word at a time (one tzcnt per word), O(nbits / 64). Sizes are multiples of 64 bits.
 */
#ifndef SL_BITMAP_H
#define SL_BITMAP_H

#include <stdint.h>

#include "sl_common.h"

#define SL_BITMAP_WORD_BITS 64u
#define SL_BITMAP_NONE UINT32_MAX /**< returned when no bit is set */

#define SL_BITMAP_WORDS(nbits) (((nbits) + SL_BITMAP_WORD_BITS - 1) / SL_BITMAP_WORD_BITS)

static inline void
sl_bitmap_set(uint64_t *w, uint32_t i)
{
	w[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline void
sl_bitmap_clear(uint64_t *w, uint32_t i)
{
	w[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static inline bool
sl_bitmap_test(const uint64_t *w, uint32_t i)
{
	return (w[i / 64] >> (i % 64)) & 1;
}

/*
 * First set bit at or after head, wrapping to the bits before head; SL_BITMAP_NONE when the
 * bitmap is empty. nbits is a multiple of 64, head < nbits.
 */
uint32_t sl_bitmap_ffs_from(const uint64_t *w, uint32_t nbits, uint32_t head);

/* Clear count bits starting at start, wrapping at nbits. count <= nbits. */
void sl_bitmap_clear_range(uint64_t *w, uint32_t nbits, uint32_t start, uint32_t count);

/* Number of set bits in [start, start + count) with wrap. count <= nbits. */
uint32_t sl_bitmap_count_range(const uint64_t *w, uint32_t nbits, uint32_t start, uint32_t count);

#endif /* SL_BITMAP_H */
