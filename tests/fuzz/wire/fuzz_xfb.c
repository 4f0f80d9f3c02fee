/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_xfb.c - the feedback decoder (sl_xfb_decode) on arbitrary bytes, half of them with a
 * feedback opcode and clean base-header bytes so that the bodies are reached. It must never read
 * past the buffer (ASan), count exactly one reason per refusal, every frame it accepts must
 * encode back to the same bytes (the format is canonical), and a NACK it accepts must be safe to
 * hand to lib/recv's sender-side tracker (through the transport's conversion). Any violation
 * aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_recv.h"
#include "sl_xport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sl_recv_rtx *t;
	struct sl_xhdr_rejects rej = {0};
	uint8_t *copy, out[SL_XFB_MAX_LEN];
	struct sl_recv_fb rfb;
	struct sl_xfb fb;
	uint64_t refused = 0;
	int n, m;

	if (t == NULL) {
		struct sl_recv_rtx_conf c = {
			.max_flows = 4, .window_pkts = 1024, .pool_bits = 1024, .block_bits = 8};

		t = sl_recv_rtx_create(&c);
		if (t == NULL)
			abort();
		for (uint32_t f = 0; f < 4; f++)
			sl_recv_rtx_flow_open(t, f, 0);
	}
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (size >= SL_XHDR_BASE_LEN + 2 && (copy[0] & 0x80)) {
		copy[0] = (uint8_t)(SL_XOP_ACK + (copy[0] & 0x7f) % (SL_XOP_MAX - SL_XOP_ACK + 1));
		memset(copy + 1, 0, 4);
		memset(copy + 12, 0, 4);
		copy[SL_XHDR_BASE_LEN] &= copy[0] == SL_XOP_NACK ? 3 : SL_XFB_F_ALL;
		copy[SL_XHDR_BASE_LEN + 1] = 0;
	}
	n = sl_xfb_decode(copy, size, 1024, &fb, &rej);
	for (unsigned r = 0; r < SL_XREJ_MAX; r++)
		refused += rej.n[r];
	if (n < 0) {
		if (refused != 1)
			abort();
	} else {
		if (refused != 0 || (size_t)n > size)
			abort();
		m = sl_xfb_encode(&fb, out, sizeof(out));
		if (m != n || memcmp(out, copy, (size_t)n) != 0)
			abort();
		if (fb.opcode == SL_XOP_NACK) {
			sl_xport_fb_to_recv(&fb, &rfb);
			if (sl_recv_rtx_nack(t, fb.qpn & 3, &rfb) < 0)
				abort();
			if (sl_recv_rtx_audit(t) != 0)
				abort();
		}
	}
	free(copy);
	return 0;
}
