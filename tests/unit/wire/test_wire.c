/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/wire.c: the worked examples of docs/wire-format.md byte for byte, round
 * trips in both modes and both VCODE scopes, and every rejection reason of the decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_common.h"
#include "crc12.h"
#include "sl_wire.h"

static const struct sl_wire_fmt faithful = {SL_WIRE_MODE_FAITHFUL, 16};
static const struct sl_wire_fmt faithful_all = {SL_WIRE_MODE_FAITHFUL, SL_WIRE_SCOPE_ALL};
static const struct sl_wire_fmt extended = {SL_WIRE_MODE_EXTENDED, 16};

/* Body of the data examples: bytes 0x01..0x14 (a 16-byte transport header + 4 payload bytes). */
static void
example_body(uint8_t *b)
{
	for (int i = 0; i < 20; i++)
		b[i] = (uint8_t)(i + 1);
}

static void
sl_wire_encode_ctrl__worked_examples(void **state)
{
	static const uint8_t idle0[] = {0x80, 0x5c, 0x00, 0x01};
	static const uint8_t pause5[] = {0x82, 0x86, 0x00, 0x10};
	static const uint8_t nack4097[] = {0x84, 0x27, 0x10, 0x00};
	static const uint8_t ext_nack[] = {0x82, 0x9c, 0x12, 0x34, 0x56, 0x78,
					   0x10, 0x00, 0x12, 0x34, 0x56, 0x68};
	uint8_t out[SL_WIRE_CTRL_MAX];

	(void)state;
	assert_int_equal(sl_wire_encode_ctrl(&faithful, out, 0, SL_WIRE_KEY_IDLE, 0), 4);
	assert_memory_equal(out, idle0, sizeof(idle0));
	assert_int_equal(sl_wire_encode_ctrl(&faithful, out, 5, SL_WIRE_KEY_PAUSE_REQ, 0), 4);
	assert_memory_equal(out, pause5, sizeof(pause5));
	/* ID 4097 = 1 mod 4096: only the low 12 bits of the ID enter VCODE. */
	assert_int_equal(sl_wire_encode_ctrl(&faithful, out, 4097, SL_WIRE_KEY_RETRANS_REQ, 0), 4);
	assert_memory_equal(out, nack4097, sizeof(nack4097));
	assert_int_equal(sl_wire_encode_ctrl(&extended, out, 0x12345678, SL_WIRE_KEY_RETRANS_REQ,
					     0x12345668),
			 12);
	assert_memory_equal(out, ext_nack, sizeof(ext_nack));
}

/*
 * Every faithful header's VCODE against the reference CRC: sl_crc12_bitwise over the header with
 * VCODE zeroed, then the covered body, XOR the ID (wire.c keeps the headers' CRCs in a table).
 */
static void
sl_wire_encode__faithful_vcode_matches_the_bitwise_crc(void **state)
{
	uint8_t body[20], out[SL_WIRE_CTRL_MAX], hdr[SL_WIRE_HDR_MAX], zero[2];
	const uint32_t id = 0xabc;

	(void)state;
	example_body(body);
	for (uint8_t meta = SL_WIRE_META_VALID; meta <= SL_WIRE_META_EOM_FULL; meta++) {
		zero[0] = (uint8_t)(SL_WIRE_SYN_DATA << 6 | meta << 4);
		zero[1] = 0;
		sl_wire_encode_data(&faithful, hdr, meta, id, body, sizeof(body));
		assert_int_equal(sl_get_be16(hdr) & SL_CRC12_MASK,
				 (sl_crc12_bitwise(sl_crc12_bitwise(0, zero, 2), body, 16) ^ id) &
					 SL_CRC12_MASK);
	}
	sl_wire_encode_filler(&faithful, out, id, SL_WIRE_FC_PAUSE);
	zero[0] = (uint8_t)(SL_WIRE_SYN_DATA << 6 | SL_WIRE_META_FILLER << 4);
	assert_int_equal(sl_get_be16(out) & SL_CRC12_MASK,
			 (sl_crc12_bitwise(sl_crc12_bitwise(0, zero, 2), out + 2, 1) ^ id) &
				 SL_CRC12_MASK);
	sl_wire_encode_ctrl(&faithful, out, id, SL_WIRE_KEY_IDLE, 0);
	zero[0] = (uint8_t)(SL_WIRE_SYN_CTRL << 6);
	assert_int_equal(sl_get_be16(out) & SL_CRC12_MASK,
			 (sl_crc12_bitwise(sl_crc12_bitwise(0, zero, 2), out + 2, 2) ^ id) &
				 SL_CRC12_MASK);
}

static void
sl_wire_encode_filler__worked_example(void **state)
{
	static const uint8_t fc_pause16[] = {0x49, 0x02, 0x01};
	uint8_t out[SL_WIRE_CTRL_MAX];

	(void)state;
	assert_int_equal(sl_wire_encode_filler(&faithful, out, 16, SL_WIRE_FC_PAUSE), 3);
	assert_memory_equal(out, fc_pause16, sizeof(fc_pause16));
	assert_int_equal(sl_wire_encode_filler(&extended, out, 16, SL_WIRE_FC_RESUME), 7);
	assert_int_equal(out[6], SL_WIRE_FC_RESUME);
}

static void
sl_wire_encode_data__worked_examples(void **state)
{
	static const uint8_t hdr_scope16[] = {0x76, 0x0d}, hdr_all[] = {0x77, 0x61};
	static const uint8_t hdr_ext[] = {0x57, 0x9d, 0x12, 0x34, 0x56, 0x78};
	uint8_t body[20], hdr[SL_WIRE_HDR_MAX];

	(void)state;
	example_body(body);
	assert_int_equal(sl_wire_encode_data(&faithful, hdr, SL_WIRE_META_EOM_FULL, 100, body, 20),
			 2);
	assert_memory_equal(hdr, hdr_scope16, 2);
	assert_int_equal(
		sl_wire_encode_data(&faithful_all, hdr, SL_WIRE_META_EOM_FULL, 100, body, 20), 2);
	assert_memory_equal(hdr, hdr_all, 2);
	assert_int_equal(
		sl_wire_encode_data(&extended, hdr, SL_WIRE_META_VALID, 0x12345678, body, 20), 6);
	assert_memory_equal(hdr, hdr_ext, 6);
}

/* Build hdr + body contiguously and decode it. */
static enum sl_wire_reject
data_roundtrip(const struct sl_wire_fmt *fmt, uint8_t meta, uint32_t id, uint8_t *frame,
	       size_t body_len, struct sl_wire_frame *f)
{
	size_t h = sl_wire_hdr_len(fmt);
	uint8_t hdr[SL_WIRE_HDR_MAX];

	assert_int_equal(sl_wire_encode_data(fmt, hdr, meta, id, frame + h, body_len), h);
	memcpy(frame, hdr, h);
	return sl_wire_decode(fmt, frame, h + body_len, f);
}

static void
sl_wire_decode__data_roundtrip_and_id_check(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &faithful_all, &extended};
	uint8_t frame[64];
	struct sl_wire_frame f;

	(void)state;
	for (unsigned m = 0; m < 3; m++) {
		size_t h = sl_wire_hdr_len(fmts[m]);

		example_body(frame + h);
		assert_int_equal(
			data_roundtrip(fmts[m], SL_WIRE_META_EOM_PARTIAL, 4096 + 77, frame, 20, &f),
			SL_WIRE_OK);
		assert_int_equal(f.syn, SL_WIRE_SYN_DATA);
		assert_int_equal(f.meta, SL_WIRE_META_EOM_PARTIAL);
		assert_int_equal(f.body_off, h);
		assert_int_equal(f.body_len, 20);
		assert_true(sl_wire_vcode_ok(&f, 4096 + 77));
		assert_true(sl_wire_vcode_ok(&f, 77)); /* mod 4096 */
		assert_false(sl_wire_vcode_ok(&f, 76));
		assert_false(sl_wire_vcode_ok(&f, 78));
		if (fmts[m]->mode == SL_WIRE_MODE_EXTENDED)
			assert_int_equal(f.id, 4096 + 77);
	}
}

static void
sl_wire_decode__scope_decides_what_payload_bytes_count(void **state)
{
	uint8_t frame[64];
	struct sl_wire_frame f;

	(void)state;
	/* Header scope (16 body bytes): a flip in byte 17 of the body goes unnoticed... */
	example_body(frame + 2);
	assert_int_equal(data_roundtrip(&faithful, SL_WIRE_META_VALID, 9, frame, 20, &f),
			 SL_WIRE_OK);
	frame[2 + 17] ^= 0x04;
	assert_int_equal(sl_wire_decode(&faithful, frame, 22, &f), SL_WIRE_OK);
	assert_true(sl_wire_vcode_ok(&f, 9));
	/* ...a flip inside the transport header is caught... */
	frame[2 + 3] ^= 0x04;
	assert_int_equal(sl_wire_decode(&faithful, frame, 22, &f), SL_WIRE_OK);
	assert_false(sl_wire_vcode_ok(&f, 9));
	/* ...and whole-frame scope catches both. */
	example_body(frame + 2);
	assert_int_equal(data_roundtrip(&faithful_all, SL_WIRE_META_VALID, 9, frame, 20, &f),
			 SL_WIRE_OK);
	frame[2 + 17] ^= 0x04;
	assert_int_equal(sl_wire_decode(&faithful_all, frame, 22, &f), SL_WIRE_OK);
	assert_false(sl_wire_vcode_ok(&f, 9));
}

static void
sl_wire_decode__ctrl_and_filler_fields(void **state)
{
	uint8_t out[SL_WIRE_CTRL_MAX + 40] = {0};
	struct sl_wire_frame f;

	(void)state;
	/* Control frame padded to the Ethernet minimum: padding is ignored and not covered. */
	sl_wire_encode_ctrl(&extended, out, 300, SL_WIRE_KEY_RETRANS_REQ, 284);
	memset(out + 12, 0xAA, 34);
	assert_int_equal(sl_wire_decode(&extended, out, 46, &f), SL_WIRE_OK);
	assert_int_equal(f.syn, SL_WIRE_SYN_CTRL);
	assert_int_equal(f.key, SL_WIRE_KEY_RETRANS_REQ);
	assert_int_equal(f.arg, 284);
	assert_int_equal(f.id, 300);
	assert_true(sl_wire_vcode_ok(&f, 300));
	sl_wire_encode_filler(&faithful, out, 41, SL_WIRE_FC_RESUME);
	assert_int_equal(sl_wire_decode(&faithful, out, 46, &f), SL_WIRE_OK);
	assert_int_equal(f.meta, SL_WIRE_META_FILLER);
	assert_int_equal(f.fc, SL_WIRE_FC_RESUME);
	assert_true(sl_wire_vcode_ok(&f, 41));
	/* The control argument is covered: changing it breaks VCODE. */
	sl_wire_encode_ctrl(&extended, out, 300, SL_WIRE_KEY_RETRANS_REQ, 284);
	out[11] ^= 1;
	assert_int_equal(sl_wire_decode(&extended, out, 12, &f), SL_WIRE_OK);
	assert_false(sl_wire_vcode_ok(&f, 300));
	/* The goodbye keys decode like RIFL's three. */
	sl_wire_encode_ctrl(&faithful, out, 77, SL_WIRE_KEY_LEAVE, 0);
	assert_int_equal(sl_wire_decode(&faithful, out, 4, &f), SL_WIRE_OK);
	assert_int_equal(f.key, SL_WIRE_KEY_LEAVE);
	assert_true(sl_wire_vcode_ok(&f, 77));
	sl_wire_encode_ctrl(&faithful, out, 78, SL_WIRE_KEY_LEAVE_ACK, 0);
	assert_int_equal(sl_wire_decode(&faithful, out, 4, &f), SL_WIRE_OK);
	assert_int_equal(f.key, SL_WIRE_KEY_LEAVE_ACK);
	assert_true(sl_wire_vcode_ok(&f, 78));
}

static void
sl_wire_decode__rejects_with_reason(void **state)
{
	uint8_t b[16] = {0};
	struct sl_wire_frame f;

	(void)state;
	assert_int_equal(sl_wire_decode(&faithful, b, 0, &f), SL_WIRE_ERR_SHORT);
	assert_int_equal(sl_wire_decode(&faithful, b, 1, &f), SL_WIRE_ERR_SHORT);
	assert_int_equal(sl_wire_decode(&extended, b, 5, &f), SL_WIRE_ERR_SHORT);
	b[0] = 0x00; /* SYN 00 */
	assert_int_equal(sl_wire_decode(&faithful, b, 8, &f), SL_WIRE_ERR_SYN);
	b[0] = 0xC0; /* SYN 11 */
	assert_int_equal(sl_wire_decode(&faithful, b, 8, &f), SL_WIRE_ERR_SYN);
	b[0] = 0x90; /* control, META 01 */
	assert_int_equal(sl_wire_decode(&faithful, b, 8, &f), SL_WIRE_ERR_CTRL_META);
	b[0] = 0x80; /* control without its key */
	assert_int_equal(sl_wire_decode(&faithful, b, 3, &f), SL_WIRE_ERR_SHORT);
	assert_int_equal(sl_wire_decode(&extended, b, 10, &f), SL_WIRE_ERR_SHORT);
	b[2] = 0x00, b[3] = 0x11; /* key 0x0011 */
	assert_int_equal(sl_wire_decode(&faithful, b, 4, &f), SL_WIRE_ERR_KEY);
	b[2] = 0x05, b[3] = 0x00; /* key 0x0500: LEAVE | LEAVE_ACK */
	assert_int_equal(sl_wire_decode(&faithful, b, 4, &f), SL_WIRE_ERR_KEY);
	b[0] = 0x40; /* filler without FC byte */
	assert_int_equal(sl_wire_decode(&faithful, b, 2, &f), SL_WIRE_ERR_SHORT);
	b[2] = 0x03; /* FC code 3 */
	assert_int_equal(sl_wire_decode(&faithful, b, 3, &f), SL_WIRE_ERR_FC);
	b[0] = 0x50; /* data without body */
	assert_int_equal(sl_wire_decode(&faithful, b, 2, &f), SL_WIRE_ERR_EMPTY);
	assert_int_equal(sl_wire_decode(&extended, b, 6, &f), SL_WIRE_ERR_EMPTY);
	assert_int_equal(sl_wire_decode(&faithful, b, 70000, &f), SL_WIRE_ERR_LONG);
	for (int r = 0; r < SL_WIRE_ERR__MAX; r++)
		assert_string_not_equal(sl_wire_reject_name(r), "unknown");
	assert_string_equal(sl_wire_reject_name(SL_WIRE_ERR__MAX), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_wire_encode_ctrl__worked_examples),
		cmocka_unit_test(sl_wire_encode_filler__worked_example),
		cmocka_unit_test(sl_wire_encode__faithful_vcode_matches_the_bitwise_crc),
		cmocka_unit_test(sl_wire_encode_data__worked_examples),
		cmocka_unit_test(sl_wire_decode__data_roundtrip_and_id_check),
		cmocka_unit_test(sl_wire_decode__scope_decides_what_payload_bytes_count),
		cmocka_unit_test(sl_wire_decode__ctrl_and_filler_fields),
		cmocka_unit_test(sl_wire_decode__rejects_with_reason),
	};

	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
