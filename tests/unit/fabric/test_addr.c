/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/fabric/addr.c: endpoint names parsed in their one spelling only, formatted back
 * to the same string, and the handshake message encoded and decoded field for field, with each
 * bad field refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fab_addr.h"

static int
parse(const char *s, struct sl_fab_addr *a)
{
	return sl_fab_addr_parse(s, strlen(s) + 1, a);
}

static void
sl_fab_addr_parse__accepts_names(void **state)
{
	struct sl_fab_addr a;

	(void)state;
	assert_int_equal(parse("fi_sluice://10.199.0.2:41234", &a), 0);
	assert_int_equal(a.ip4, 0x0ac70002u);
	assert_int_equal(a.port, 41234);
	assert_int_equal(parse("fi_sluice://0.0.0.0:0", &a), 0);
	assert_int_equal(a.ip4, 0);
	assert_int_equal(a.port, 0);
	assert_int_equal(parse("fi_sluice://255.255.255.255:65535", &a), 0);
	assert_int_equal(a.ip4, 0xffffffffu);
	assert_int_equal(a.port, 65535);
}

static void
sl_fab_addr_parse__refuses_other_spellings(void **state)
{
	static const char *const bad[] = {
		"",
		"fi_sluice://",
		"fi_sluice:/10.0.0.1:1",
		"FI_SLUICE://10.0.0.1:1",
		"fi_sockaddr://10.0.0.1:1",
		"fi_sluice://10.0.0.1",
		"fi_sluice://10.0.0.1:",
		"fi_sluice://10.0.0:1",
		"fi_sluice://10.0.0.1.2:1",
		"fi_sluice://256.0.0.1:1",
		"fi_sluice://10.0.0.1:65536",
		"fi_sluice://010.0.0.1:1",
		"fi_sluice://10.0.0.1:01",
		"fi_sluice://10.0.0.1:1 ",
		"fi_sluice:// 10.0.0.1:1",
		"fi_sluice://10.0.0.-1:1",
		"fi_sluice://10.0.0.1:+1",
		"fi_sluice://1000.0.0.1:1",
		"fi_sluice://10.0.0.1:123456",
		"fi_sluice://10..0.1:1",
		"fi_sluice://[::1]:1",
	};
	struct sl_fab_addr a = {.ip4 = 7, .port = 7};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &a), -EINVAL);
		assert_int_equal(a.ip4, 7); /* untouched */
	}
	assert_int_equal(sl_fab_addr_parse(NULL, 10, &a), -EINVAL);
}

static void
sl_fab_addr_parse__stops_at_len(void **state)
{
	const char *s = "fi_sluice://10.0.0.1:123";
	struct sl_fab_addr a;

	(void)state;
	/* Without its NUL within len, the name ends at len: here inside the port. */
	assert_int_equal(sl_fab_addr_parse(s, strlen(s) - 1, &a), 0);
	assert_int_equal(a.port, 12);
	assert_int_equal(sl_fab_addr_parse(s, 5, &a), -EINVAL);
}

static void
sl_fab_addr_format__round_trips(void **state)
{
	const struct sl_fab_addr in[] = {{0, 0}, {0x7f000001u, 1}, {0xffffffffu, 65535}};
	char buf[SL_FAB_ADDR_STRLEN];
	struct sl_fab_addr out;

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		size_t n = sl_fab_addr_format(&in[i], buf, sizeof(buf));

		assert_int_equal(n, strlen(buf));
		assert_true(n < SL_FAB_ADDR_STRLEN);
		assert_int_equal(parse(buf, &out), 0);
		assert_true(sl_fab_addr_eq(&in[i], &out));
	}
	sl_fab_addr_format(&in[2], buf, sizeof(buf));
	assert_string_equal(buf, "fi_sluice://255.255.255.255:65535");
	assert_int_equal(strlen(buf) + 1, SL_FAB_ADDR_STRLEN); /* the longest fits exactly */
}

static void
sl_fab_addr_lt__orders_by_address_then_port(void **state)
{
	const struct sl_fab_addr a = {1, 9}, b = {2, 1}, c = {2, 2};

	(void)state;
	assert_true(sl_fab_addr_lt(&a, &b));
	assert_true(sl_fab_addr_lt(&b, &c));
	assert_false(sl_fab_addr_lt(&c, &b));
	assert_false(sl_fab_addr_lt(&b, &b));
}

static const struct sl_fab_hs hello = {
	.kind = SL_FAB_HS_HELLO,
	.qpn = 0x01020304u,
	.psn = 0x00abcdefu,
	.token = 0xdeadbeefu,
	.name = {.ip4 = 0x0ac70001u, .port = 4242},
};

static void
sl_fab_hs_decode__round_trips(void **state)
{
	uint8_t buf[SL_FAB_HS_BYTES];
	struct sl_fab_hs m;

	(void)state;
	sl_fab_hs_encode(&hello, buf);
	assert_memory_equal(buf, "SLFI\0\1\0\1", 8);
	assert_int_equal(sl_fab_hs_decode(buf, &m), 0);
	assert_int_equal(m.kind, SL_FAB_HS_HELLO);
	assert_int_equal(m.qpn, hello.qpn);
	assert_int_equal(m.psn, hello.psn);
	assert_int_equal(m.token, hello.token);
	assert_true(sl_fab_addr_eq(&m.name, &hello.name));
}

static void
sl_fab_hs_decode__refuses_bad_fields(void **state)
{
	uint8_t buf[SL_FAB_HS_BYTES];
	struct sl_fab_hs m;
	struct sl_fab_hs zero_token = hello;

	(void)state;
	/* magic, version, kind */
	for (size_t off = 0; off < 8; off++) {
		sl_fab_hs_encode(&hello, buf);
		buf[off] ^= 0x40;
		assert_int_equal(sl_fab_hs_decode(buf, &m), -EPROTO);
	}
	zero_token.token = 0;
	sl_fab_hs_encode(&zero_token, buf);
	assert_int_equal(sl_fab_hs_decode(buf, &m), -EPROTO);
	/* a name with no NUL in its field, and one that does not parse */
	sl_fab_hs_encode(&hello, buf);
	memset(buf + 20, '1', SL_FAB_ADDR_STRLEN);
	assert_int_equal(sl_fab_hs_decode(buf, &m), -EPROTO);
	sl_fab_hs_encode(&hello, buf);
	buf[20 + 12] = 'x';
	assert_int_equal(sl_fab_hs_decode(buf, &m), -EPROTO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_fab_addr_parse__accepts_names),
		cmocka_unit_test(sl_fab_addr_parse__refuses_other_spellings),
		cmocka_unit_test(sl_fab_addr_parse__stops_at_len),
		cmocka_unit_test(sl_fab_addr_format__round_trips),
		cmocka_unit_test(sl_fab_addr_lt__orders_by_address_then_port),
		cmocka_unit_test(sl_fab_hs_decode__round_trips),
		cmocka_unit_test(sl_fab_hs_decode__refuses_bad_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
