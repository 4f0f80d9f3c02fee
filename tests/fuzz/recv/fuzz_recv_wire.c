/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_recv_wire.c - lib/recv's feedback decoder on arbitrary bytes (half of them with a valid
 * opcode and clean header bytes, to reach the bodies): it must never read past the buffer
 * (ASan), and every body it accepts must encode back to the same bytes (the format is
 * canonical) and be safe to hand to the sender-side tracker. Any violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_recv_rtx.h"
#include "sl_recv_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sl_recv_rtx *t;
	struct sl_recv_action a;
	uint8_t *copy, out[SL_RECV_WIRE_MAX_LEN];
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
	/* An exact-size heap copy, so that ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (size >= 4 && (copy[0] & 0x80)) {
		/* Half the inputs get a valid opcode and clean header bytes. */
		copy[0] = (uint8_t)(SL_RECV_OP_ACK + (copy[0] & 3));
		copy[1] &= 7;
		copy[2] &= 3;
		copy[3] = 0;
	}
	n = sl_recv_fb_decode(copy, size, 1024, &a);
	if (n >= 0) {
		if ((size_t)n > size)
			abort();
		m = sl_recv_fb_encode(&a, out, sizeof(out));
		if (m != n || memcmp(out, copy, (size_t)n) != 0)
			abort();
		if (a.type == SL_RECV_ACT_NACK) {
			if (sl_recv_rtx_nack(t, a.conn & 3, &a.fb) < 0)
				abort();
			if (sl_recv_rtx_audit(t) != 0)
				abort();
		}
	}
	free(copy);
	return 0;
}
