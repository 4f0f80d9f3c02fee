/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/arp.c: a request and a reply byte for byte as RFC 826 lays them out for
 * Ethernet and IPv4, read back; every other form (hardware, protocol, lengths, operation, short)
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_wire.h"

static const struct sl_arp req = {
	.op = SL_ARP_REQUEST,
	.sha = {0x02, 0, 0, 0, 0, 0x0a},
	.spa = {10, 199, 1, 1},
	.tpa = {10, 199, 1, 254},
};

static void
arp__request_written_as_rfc_826_and_read_back(void **state)
{
	static const uint8_t want[SL_ARP_LEN] = {
		0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01, 0x02, 0, 0,  0,   0, 0x0a,
		10,   199,  1,    1,    0, 0, 0,    0,    0,    0, 10, 199, 1, 254,
	};
	uint8_t buf[SL_ARP_LEN + 18] = {0}; /* Ethernet padding after it */
	struct sl_arp back;

	(void)state;
	assert_int_equal(sl_arp_write(buf, &req), SL_ARP_LEN);
	assert_memory_equal(buf, want, SL_ARP_LEN);
	assert_true(sl_arp_read(buf, sizeof(buf), &back));
	assert_memory_equal(&back, &req, sizeof(req));
}

static void
arp_read__refuses_other_forms(void **state)
{
	uint8_t good[SL_ARP_LEN], b[SL_ARP_LEN];
	struct sl_arp a;
	const struct {
		size_t at;
		uint8_t val;
	} bad[] = {{1, 6}, {2, 0x86}, {4, 8}, {5, 16}, {7, 3}, {7, 0}};

	(void)state;
	sl_arp_write(good, &req);
	assert_false(sl_arp_read(good, SL_ARP_LEN - 1, &a));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(b, good, sizeof(b));
		b[bad[i].at] = bad[i].val;
		assert_false(sl_arp_read(b, sizeof(b), &a));
	}
	b[7] = SL_ARP_REPLY;
	memcpy(b, good, 7);
	assert_true(sl_arp_read(b, sizeof(b), &a));
	assert_int_equal(a.op, SL_ARP_REPLY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(arp__request_written_as_rfc_826_and_read_back),
		cmocka_unit_test(arp_read__refuses_other_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
