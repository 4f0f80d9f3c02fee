/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target for sl_wire_decode() in both modes and both VCODE scopes. Besides memory safety
 * it checks two properties: the decoder never reports a body outside the input, and a frame
 * it accepts re-encodes to the same link header when given the ID its VCODE implies (so
 * encoder and decoder agree on every covered byte).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct sl_wire_fmt *fmt, const uint8_t *data, size_t size)
{
	struct sl_wire_frame f;
	uint8_t out[SL_WIRE_CTRL_MAX];
	size_t h = sl_wire_hdr_len(fmt), n;
	uint32_t id;

	if (sl_wire_decode(fmt, data, size, &f) != SL_WIRE_OK)
		return;
	if ((size_t)f.body_off + f.body_len != size || f.body_off != h)
		abort();
	/* Faithful: the ID modulo 4096 that makes VCODE verify; extended: the explicit ID. */
	id = fmt->mode == SL_WIRE_MODE_EXTENDED ? f.id : (uint32_t)(f.crc ^ f.vcode);
	if (!sl_wire_vcode_ok(&f, id))
		return; /* extended: VCODE does not match the explicit ID */
	if (f.syn == SL_WIRE_SYN_CTRL)
		n = sl_wire_encode_ctrl(fmt, out, id, f.key, f.arg);
	else if (f.meta == SL_WIRE_META_FILLER)
		n = sl_wire_encode_filler(fmt, out, id, f.fc);
	else
		n = sl_wire_encode_data(fmt, out, f.meta, id, data + h, f.body_len);
	if (memcmp(out, data, h) != 0 || (f.meta == SL_WIRE_META_FILLER && memcmp(out, data, n)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sl_wire_fmt fmts[] = {
		{SL_WIRE_MODE_FAITHFUL, 16},
		{SL_WIRE_MODE_FAITHFUL, SL_WIRE_SCOPE_ALL},
		{SL_WIRE_MODE_EXTENDED, 0},
		{SL_WIRE_MODE_EXTENDED, SL_WIRE_SCOPE_ALL},
	};

	for (unsigned i = 0; i < SL_ARRAY_SIZE(fmts); i++)
		check(&fmts[i], data, size);
	return 0;
}
