/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/recv/wire.c: feedback packets on the wire (docs/recv.md, section 4.2). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_recv_wire.h"

static struct sl_recv_action
fb_action(uint8_t type)
{
	struct sl_recv_action a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.conn = 0x01020304;
	a.fb.ack_psn = 0xfffffff0;
	return a;
}

static void
sl_recv_fb_encode__ack_layout_is_big_endian(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_ACK), d;
	uint8_t buf[64];
	const uint8_t want[32] = {0x11, 0x07, 0, 0, 1, 2,    3,    4,    0xff, 0xff, 0xff,
				  0xf0, 0,    3, 0, 1, 0xff, 0xff, 0xff, 0xf5, 0,    2,
				  0,    0,    0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x9a};

	(void)state;
	a.fb.flags = SL_RECV_FBF_SACK | SL_RECV_FBF_ECHO | SL_RECV_FBF_ECN;
	a.fb.acked_pkts = 3;
	a.fb.ce_pkts = 1;
	a.fb.sack_psn = 0xfffffff5;
	a.fb.echo_tx_id = 2;
	a.fb.echo_tx_ns = 0x123456789aull;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), 32);
	assert_memory_equal(buf, want, 32);
	assert_int_equal(sl_recv_fb_decode(buf, 32, 1024, &d), 32);
	assert_int_equal(d.type, SL_RECV_ACT_ACK);
	assert_int_equal(d.conn, a.conn);
	assert_int_equal(d.fb.ack_psn, a.fb.ack_psn);
	assert_int_equal(d.fb.flags, a.fb.flags);
	assert_int_equal(d.fb.sack_psn, a.fb.sack_psn);
	assert_int_equal(d.fb.echo_tx_ns, a.fb.echo_tx_ns);
	assert_int_equal(d.fb.echo_tx_id, 2);
	assert_int_equal(d.fb.acked_pkts, 3);
	assert_int_equal(d.fb.ce_pkts, 1);
}

static void
sl_recv_fb_encode__unannounced_fields_are_zero(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_ACK), d;
	uint8_t buf[32];

	(void)state;
	a.fb.ce_pkts = 9; /* no ECN flag: not sent */
	a.fb.echo_tx_ns = 77;
	a.fb.sack_psn = 5;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), 32);
	assert_int_equal(sl_recv_fb_decode(buf, 32, 1024, &d), 32);
	assert_int_equal(d.fb.ce_pkts, 0);
	assert_int_equal(d.fb.echo_tx_ns, 0);
	assert_int_equal(d.fb.sack_psn, 0);
	/* A decoder refuses a stray field. */
	buf[17] = 1;
	assert_int_equal(sl_recv_fb_decode(buf, 32, 1024, &d), -EPROTO);
}

static void
sl_recv_fb_encode__nack_holes_are_offsets_from_the_ack(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_NACK), d;
	uint8_t buf[32];

	(void)state;
	a.fb.nholes = 3;
	a.fb.hole[0] = (struct sl_recv_hole){0xfffffff0 + 40, 5}; /* across the PSN wrap */
	a.fb.hole[1] = (struct sl_recv_hole){0xfffffff0 + 20, 2};
	a.fb.hole[2] = (struct sl_recv_hole){0xfffffff0, 7};
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), 28);
	assert_int_equal(buf[0], SL_RECV_OP_NACK);
	assert_int_equal(buf[2], 3);
	assert_int_equal(buf[16] << 8 | buf[17], 40);
	assert_int_equal(buf[18] << 8 | buf[19], 5);
	assert_int_equal(buf[24] << 8 | buf[25], 0);
	assert_int_equal(sl_recv_fb_decode(buf, 28, 1024, &d), 28);
	assert_int_equal(d.fb.nholes, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(d.fb.hole[i].start_psn, a.fb.hole[i].start_psn);
		assert_int_equal(d.fb.hole[i].len_pkts, a.fb.hole[i].len_pkts);
	}
	/* A hole past the window, or empty, is refused. */
	assert_int_equal(sl_recv_fb_decode(buf, 28, 44, &d), -EBADMSG);
	buf[19] = 0;
	assert_int_equal(sl_recv_fb_decode(buf, 28, 1024, &d), -EBADMSG);
	/* Too short for its holes. */
	assert_int_equal(sl_recv_fb_decode(buf, 27, 1024, &d), -EMSGSIZE);
}

static void
sl_recv_fb_encode__cnp_and_pull(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_PULL), d;
	uint8_t buf[16];

	(void)state;
	a.fb.pull_seq = 0xabcdef01;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), 16);
	assert_int_equal(sl_recv_fb_decode(buf, 16, 1024, &d), 16);
	assert_int_equal(d.type, SL_RECV_ACT_PULL);
	assert_int_equal(d.fb.pull_seq, 0xabcdef01);
	a = fb_action(SL_RECV_ACT_CNP);
	assert_int_equal(sl_recv_fb_encode(&a, buf, 11), -ENOSPC);
	assert_int_equal(sl_recv_fb_encode(&a, buf, 12), 12);
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), 12);
	assert_int_equal(d.type, SL_RECV_ACT_CNP);
	assert_int_equal(d.conn, 0x01020304);
}

static void
sl_recv_fb_encode__rejects_data_actions_and_bad_holes(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_DELIVER);
	uint8_t buf[32];

	(void)state;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), -EINVAL);
	a = fb_action(SL_RECV_ACT_NACK);
	a.fb.nholes = 4;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), -EINVAL);
	a.fb.nholes = 1;
	a.fb.hole[0] = (struct sl_recv_hole){a.fb.ack_psn + 70000, 1};
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), -EINVAL);
	a.fb.hole[0] = (struct sl_recv_hole){a.fb.ack_psn, 0};
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), -EINVAL);
}

static void
sl_recv_fb_decode__rejects_malformed(void **state)
{
	struct sl_recv_action a = fb_action(SL_RECV_ACT_CNP), d;
	uint8_t buf[32];

	(void)state;
	assert_int_equal(sl_recv_fb_encode(&a, buf, sizeof(buf)), 12);
	assert_int_equal(sl_recv_fb_decode(buf, 11, 1024, &d), -EMSGSIZE);
	buf[0] = 0x42;
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), -EPROTO);
	buf[0] = SL_RECV_OP_CNP;
	buf[1] = SL_RECV_FBF_SACK; /* flags on a CNP */
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), -EPROTO);
	buf[1] = 0;
	buf[3] = 1; /* reserved byte */
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), -EPROTO);
	buf[3] = 0;
	buf[2] = 1; /* holes on a CNP */
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), -EPROTO);
	buf[0] = SL_RECV_OP_ACK;
	buf[2] = 0;
	assert_int_equal(sl_recv_fb_decode(buf, 12, 1024, &d), -EMSGSIZE);
	buf[0] = SL_RECV_OP_NACK;
	buf[2] = 4;
	assert_int_equal(sl_recv_fb_decode(buf, 32, 1024, &d), -EPROTO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_recv_fb_encode__ack_layout_is_big_endian),
		cmocka_unit_test(sl_recv_fb_encode__unannounced_fields_are_zero),
		cmocka_unit_test(sl_recv_fb_encode__nack_holes_are_offsets_from_the_ack),
		cmocka_unit_test(sl_recv_fb_encode__cnp_and_pull),
		cmocka_unit_test(sl_recv_fb_encode__rejects_data_actions_and_bad_holes),
		cmocka_unit_test(sl_recv_fb_decode__rejects_malformed),
	};
	return cmocka_run_group_tests_name("recv-wire", tests, NULL, NULL);
}
