/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_xhdr.c - the transport header decoder (sl_xhdr_decode) on arbitrary bytes, half of them
 * with a data opcode and known flags so that the extensions are reached. It must never read
 * past the buffer (ASan), never report a header longer than the input, count exactly one
 * reason per refusal, and every header it accepts must encode back to the same bytes (the
 * format is canonical). Any violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_xhdr_rejects rej = {0};
	uint8_t *copy, out[SL_XHDR_MAX_LEN];
	struct sl_xhdr h;
	uint64_t refused = 0;
	int n, m;

	/* An exact-size heap copy, so that ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (size >= 5 && (copy[0] & 0x80)) {
		copy[0] = (uint8_t)(copy[0] % (SL_XOP_READ_RESP_ONLY + 1));
		copy[1] &= SL_XHDR_F_DATA_ALL;
		copy[4] &= 0x0f; /* a pad that often fits */
	}
	n = sl_xhdr_decode(copy, size, &h, &rej);
	for (unsigned r = 0; r < SL_XREJ_MAX; r++)
		refused += rej.n[r];
	if (n < 0) {
		if (refused != 1)
			abort();
	} else {
		if (refused != 0 || (size_t)n + h.pad_bytes > size ||
		    (size_t)n != sl_xhdr_len(h.opcode, h.flags))
			abort();
		m = sl_xhdr_encode(&h, out, sizeof(out));
		if (m != n || memcmp(out, copy, (size_t)n) != 0)
			abort();
	}
	free(copy);
	return 0;
}
