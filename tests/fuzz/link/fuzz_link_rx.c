/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target for the link's RX path (sl_link_rx_burst) with its TX side running in between.
 * Input: byte 0 picks the mode, the scope and the replay policy; then records of
 * [len:1][bytes:len], each a received frame, in bursts of up to 8, with a tx_burst and a
 * consume after each burst. To reach past verification, a record whose first byte has its low
 * bit set is "repaired": its VCODE is rewritten to verify at the link's expected ID, so the
 * fuzzer explores the delivery, control-filter, flow-control and restart logic too.
 * Invariants (abort on violation): every input handle is delivered or released exactly once,
 * deliveries never exceed inputs, delivered bodies lie inside their frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FRAMES 512

static uint8_t state_of[MAX_FRAMES]; /* 0 fed, 1 delivered, 2 released */
static uint8_t frames[MAX_FRAMES][256];

static void
release_cb(void *ctx, void *const *h, unsigned n)
{
	(void)ctx;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = h[i];

		/* No payload is submitted for TX in this target: only RX frames come back. */
		if (p < (uint8_t *)frames || p >= (uint8_t *)frames + sizeof(frames))
			abort();
		if (state_of[(p - &frames[0][0]) / 256] != 0)
			abort();
		state_of[(p - &frames[0][0]) / 256] = 2;
	}
}

/* Rewrite the header so the frame verifies at id (if it decodes at all). */
static void
repair(const struct sl_wire_fmt *fmt, uint8_t *b, size_t len, uint32_t id)
{
	struct sl_wire_frame f;

	if (fmt->mode == SL_WIRE_MODE_EXTENDED && len >= 6) {
		b[2] = (uint8_t)(id >> 24), b[3] = (uint8_t)(id >> 16);
		b[4] = (uint8_t)(id >> 8), b[5] = (uint8_t)id;
	}
	if (sl_wire_decode(fmt, b, len, &f) != SL_WIRE_OK)
		return;
	b[0] = (uint8_t)((b[0] & 0xF0) | (((f.crc ^ id) >> 8) & 0x0F));
	b[1] = (uint8_t)(f.crc ^ id);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_link_conf c = {
		.ring_order = SL_LINK_ORDER_MIN,
		.keepalive_ns = 100,
		.ctrl_interval_ns = 50,
		.fc_frames = 6,
		.release = release_cb,
	};
	struct sl_link_rx_frame in[8];
	struct sl_link_delivery out[8];
	struct sl_link_tx_frame tx[16];
	struct sl_link *l;
	uint32_t expect = 0, fed = 0;
	size_t pos = 1;
	uint64_t now = 0;
	unsigned taken;

	if (size < 1)
		return 0;
	c.fmt.mode = data[0] & 1 ? SL_WIRE_MODE_EXTENDED : SL_WIRE_MODE_FAITHFUL;
	c.fmt.scope_bytes = data[0] & 2 ? SL_WIRE_SCOPE_ALL : 8;
	c.replay = (data[0] & 5) == 5 ? SL_LINK_REPLAY_MISSING : SL_LINK_REPLAY_RING;
	l = sl_link_create(&c);
	if (l == NULL)
		abort();
	memset(state_of, 0, sizeof(state_of));
	while (pos < size && fed < MAX_FRAMES) {
		unsigned n = 0, nd;

		while (n < 8 && pos < size && fed < MAX_FRAMES) {
			size_t len = SL_MIN((size_t)data[pos], size - pos - 1);

			memcpy(frames[fed], data + pos + 1, len);
			if (len && (frames[fed][0] & 1))
				repair(&c.fmt, frames[fed], len, expect++);
			in[n].buf = frames[fed];
			in[n].len = (uint16_t)len;
			in[n].handle = frames[fed];
			pos += 1 + len;
			fed++;
			n++;
		}
		nd = sl_link_rx_burst(l, now, in, n, out);
		if (nd > n)
			abort();
		for (unsigned i = 0; i < nd; i++) {
			uint8_t *p = out[i].handle;
			size_t k = (size_t)(p - &frames[0][0]) / 256;

			if (state_of[k] != 0 || out[i].body_off + out[i].body_len > 255)
				abort();
			state_of[k] = 1;
		}
		now += 37;
		sl_link_tx_burst(l, now, NULL, 0, &taken, tx, 16);
		sl_link_rx_consumed(l, nd / 2 + 1);
	}
	for (uint32_t i = 0; i < fed; i++)
		if (state_of[i] == 0)
			abort();
	sl_link_free(l);
	return 0;
}
