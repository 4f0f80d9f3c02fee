/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/encap.c: the worked example of docs/wire-format.md section 1 byte for
 * byte, round trips in both IP families with every ECN value, the padding of a short frame cut
 * off, a non-zero UDP checksum checked both ways, and every rejection reason from a frame that
 * differs from a good one in that field alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_common.h"
#include "sl_wire.h"

#define PORT 4793u

static struct sl_encap
udp4(void)
{
	struct sl_encap e = {.kind = SL_ENCAP_UDP4, .udp_port = PORT};

	memcpy(e.local_ip, (const uint8_t[]){10, 0, 0, 1}, 4);
	memcpy(e.peer_ip, (const uint8_t[]){10, 0, 0, 2}, 4);
	return e;
}

static struct sl_encap
udp6(void)
{
	struct sl_encap e = {.kind = SL_ENCAP_UDP6, .udp_port = PORT};

	e.local_ip[0] = 0xfd, e.local_ip[15] = 1;
	e.peer_ip[0] = 0xfd, e.peer_ip[15] = 2;
	return e;
}

/* The same addresses seen from the other end. */
static struct sl_encap
mirror(struct sl_encap e)
{
	uint8_t t[16];

	memcpy(t, e.local_ip, 16);
	memcpy(e.local_ip, e.peer_ip, 16);
	memcpy(e.peer_ip, t, 16);
	return e;
}

static void
encap_write__worked_example(void **state)
{
	const struct sl_encap e = udp4();
	/* docs/wire-format.md section 1: a 26-byte link frame, ECT(0), source port 0xC123 */
	static const uint8_t want[28] = {
		0x45, 0x02, 0x00, 0x36, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0xb3, 10,   0,
		0,    1,    10,   0,    0,    2,    0xc1, 0x23, 0x12, 0xb9, 0x00, 0x22, 0x00, 0x00,
	};
	uint8_t out[SL_ENCAP_HDR_MAX];

	(void)state;
	assert_int_equal(sl_encap_write(&e, out, 26, 0xC123, SL_ENCAP_ECN_ECT0), 28);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(sl_encap_ethertype(&e), 0x0800);
	assert_int_equal(sl_encap_hdr_len(&e), 28);
}

/* A frame: headers of e for link_len bytes of link frame, then the frame, then pad zeros. */
static size_t
frame(const struct sl_encap *e, uint8_t *buf, size_t link_len, size_t pad, uint8_t ecn)
{
	size_t h = sl_encap_write(e, buf, link_len, 0xD00D, ecn);

	for (size_t i = 0; i < link_len; i++)
		buf[h + i] = (uint8_t)(i * 7 + 1);
	memset(buf + h + link_len, 0, pad);
	return h + link_len + pad;
}

static void
encap__round_trips_both_families(void **state)
{
	const struct sl_encap tx[2] = {udp4(), udp6()};

	(void)state;
	for (int f = 0; f < 2; f++) {
		const struct sl_encap rx_e = mirror(tx[f]);

		for (uint8_t ecn = 0; ecn <= SL_ENCAP_ECN_CE; ecn++) {
			for (size_t len = 1; len < 1500; len += 97) {
				uint8_t buf[1600];
				size_t n = frame(&tx[f], buf, len, len < 20 ? 20 : 0, ecn);
				struct sl_encap_rx rx;

				assert_int_equal(sl_encap_read(&rx_e, sl_encap_ethertype(&tx[f]),
							       buf, n, &rx),
						 SL_ENCAP_OK);
				assert_int_equal(rx.link_off, sl_encap_hdr_len(&tx[f]));
				assert_int_equal(rx.link_len, len); /* padding cut off */
				assert_int_equal(rx.ecn, ecn);
				assert_int_equal(rx.src_port, 0xD00D);
				/* The sender's own frames are not addressed to it. */
				assert_int_equal(sl_encap_read(&tx[f], sl_encap_ethertype(&tx[f]),
							       buf, n, &rx),
						 SL_ENCAP_ERR_IP_DST);
			}
		}
	}
}

/* RFC 1071 over the pseudo-header and the datagram, as a peer with checksums on would send. */
static uint16_t
udp_csum(const struct sl_encap *e, const uint8_t *udp, size_t len)
{
	size_t alen = e->kind == SL_ENCAP_UDP4 ? 4 : 16;
	uint32_t s = 17 + (uint32_t)len;

	for (size_t i = 0; i < alen; i += 2)
		s += sl_get_be16(e->local_ip + i) + sl_get_be16(e->peer_ip + i);
	for (size_t i = 0; i < len; i += 2)
		s += (uint32_t)udp[i] << 8 | (i + 1 < len ? udp[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s ? (uint16_t)~s : 0xFFFF;
}

static void
encap_read__checks_a_non_zero_udp_checksum(void **state)
{
	const struct sl_encap tx[2] = {udp4(), udp6()};

	(void)state;
	for (int f = 0; f < 2; f++) {
		const struct sl_encap rx_e = mirror(tx[f]);
		size_t ip = f == 0 ? 20 : 40;
		uint8_t buf[256];
		size_t n = frame(&tx[f], buf, 101, 0, 0);
		struct sl_encap_rx rx;

		sl_put_be16(buf + ip + 6, udp_csum(&tx[f], buf + ip, n - ip));
		assert_int_equal(sl_encap_read(&rx_e, sl_encap_ethertype(&tx[f]), buf, n, &rx),
				 SL_ENCAP_OK);
		buf[n - 1] ^= 0x40;
		assert_int_equal(sl_encap_read(&rx_e, sl_encap_ethertype(&tx[f]), buf, n, &rx),
				 SL_ENCAP_ERR_UDP_CHECKSUM);
	}
}

/* IPv4: set the header checksum again after a change, so that only the field is wrong. */
static void
ip4_recsum(uint8_t *ip)
{
	uint32_t s = 0;

	sl_put_be16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		s += sl_get_be16(ip + i);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	sl_put_be16(ip + 10, (uint16_t)~s);
}

static void
encap_read__every_reason(void **state)
{
	const struct sl_encap tx4 = udp4(), rx4 = mirror(udp4());
	const struct sl_encap tx6 = udp6(), rx6 = mirror(udp6());
	const struct sl_encap eth = {.kind = SL_ENCAP_ETHERNET};
	uint8_t good4[128], good6[128], b[128];
	size_t n4 = frame(&tx4, good4, 30, 0, 0), n6 = frame(&tx6, good6, 30, 0, 0);
	struct sl_encap_rx rx;
	struct {
		const char *what;
		int family; /* 4, 6 */
		size_t at;  /* byte changed */
		uint8_t val;
		size_t len_cut; /* bytes taken off the end instead (at = SIZE_MAX) */
		enum sl_encap_reject want;
	} cases[] = {
		{"v4 version", 4, 0, 0x65, 0, SL_ENCAP_ERR_IP_VERSION},
		{"v4 options", 4, 0, 0x46, 0, SL_ENCAP_ERR_IP_OPTIONS},
		{"v4 length beyond", 4, 3, 200, 0, SL_ENCAP_ERR_IP_LENGTH},
		{"v4 length below", 4, 3, 10, 0, SL_ENCAP_ERR_IP_LENGTH},
		{"v4 fragment offset", 4, 7, 0x08, 0, SL_ENCAP_ERR_IP_FRAGMENT},
		{"v4 more fragments", 4, 6, 0x20, 0, SL_ENCAP_ERR_IP_FRAGMENT},
		{"v4 proto", 4, 9, 6, 0, SL_ENCAP_ERR_IP_PROTO},
		{"v4 dst", 4, 19, 9, 0, SL_ENCAP_ERR_IP_DST},
		{"v4 src", 4, 15, 9, 0, SL_ENCAP_ERR_IP_SRC},
		{"v4 port", 4, 23, 0x00, 0, SL_ENCAP_ERR_UDP_PORT},
		{"v4 udp length", 4, 25, 0x10, 0, SL_ENCAP_ERR_UDP_LENGTH},
		{"v4 short", 4, SIZE_MAX, 0, 45, SL_ENCAP_ERR_SHORT},
		{"v4 truncated", 4, SIZE_MAX, 0, 1, SL_ENCAP_ERR_IP_LENGTH},
		{"v6 version", 6, 0, 0x40, 0, SL_ENCAP_ERR_IP_VERSION},
		{"v6 length", 6, 5, 200, 0, SL_ENCAP_ERR_IP_LENGTH},
		{"v6 hop-by-hop", 6, 6, 0, 0, SL_ENCAP_ERR_IP_OPTIONS},
		{"v6 routing", 6, 6, 43, 0, SL_ENCAP_ERR_IP_OPTIONS},
		{"v6 fragment", 6, 6, 44, 0, SL_ENCAP_ERR_IP_OPTIONS},
		{"v6 proto", 6, 6, 6, 0, SL_ENCAP_ERR_IP_PROTO},
		{"v6 dst", 6, 39, 9, 0, SL_ENCAP_ERR_IP_DST},
		{"v6 src", 6, 23, 9, 0, SL_ENCAP_ERR_IP_SRC},
		{"v6 port", 6, 43, 0x00, 0, SL_ENCAP_ERR_UDP_PORT},
		{"v6 udp length", 6, 45, 0x10, 0, SL_ENCAP_ERR_UDP_LENGTH},
		{"v6 shorter than a udp header", 6, 5, 4, 0, SL_ENCAP_ERR_UDP_LENGTH},
		{"v6 short", 6, SIZE_MAX, 0, 60, SL_ENCAP_ERR_SHORT},
	};
	bool seen[SL_ENCAP_ERR__MAX] = {[SL_ENCAP_OK] = true};

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		bool v4 = cases[i].family == 4;
		size_t n = v4 ? n4 : n6;

		memcpy(b, v4 ? good4 : good6, n);
		if (cases[i].at == SIZE_MAX) {
			n -= cases[i].len_cut;
		} else {
			b[cases[i].at] = cases[i].val;
			if (v4 && cases[i].at != 10)
				ip4_recsum(b);
		}
		print_message("%s\n", cases[i].what);
		assert_int_equal(sl_encap_read(v4 ? &rx4 : &rx6, v4 ? 0x0800 : 0x86DD, b, n, &rx),
				 cases[i].want);
		seen[cases[i].want] = true;
	}
	memcpy(b, good4, n4);
	b[10] ^= 1;
	assert_int_equal(sl_encap_read(&rx4, 0x0800, b, n4, &rx), SL_ENCAP_ERR_IP_CHECKSUM);
	seen[SL_ENCAP_ERR_IP_CHECKSUM] = true;
	assert_int_equal(sl_encap_read(&rx4, 0x86DD, good6, n6, &rx), SL_ENCAP_ERR_ETHERTYPE);
	assert_int_equal(sl_encap_read(&eth, 0x0800, good4, n4, &rx), SL_ENCAP_ERR_ETHERTYPE);
	assert_int_equal(sl_encap_read(&eth, 0x88B5, good4, n4, &rx), SL_ENCAP_OK);
	assert_int_equal(rx.link_len, n4);
	seen[SL_ENCAP_ERR_ETHERTYPE] = true;
	memcpy(b, good4, n4);
	sl_put_be16(b + 26, 0x1234); /* a wrong non-zero checksum */
	assert_int_equal(sl_encap_read(&rx4, 0x0800, b, n4, &rx), SL_ENCAP_ERR_UDP_CHECKSUM);
	seen[SL_ENCAP_ERR_UDP_CHECKSUM] = true;
	for (unsigned r = 0; r < SL_ENCAP_ERR__MAX; r++) {
		assert_true(seen[r]);
		assert_string_not_equal(sl_encap_reject_name((enum sl_encap_reject)r), "unknown");
	}
}

static void
encap_src_port__dynamic_range_and_spread(void **state)
{
	unsigned hits[64] = {0};

	(void)state;
	for (uint32_t q = 0; q < 4096; q++) {
		uint16_t p = sl_encap_src_port(q);

		assert_true(p >= 49152);
		hits[(p - 49152) >> 8]++;
	}
	/* consecutive QPNs cover every 256-port block of the range, none more than twice fair */
	for (int i = 0; i < 64; i++)
		assert_in_range(hits[i], 1, 2 * 4096 / 64);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encap_write__worked_example),
		cmocka_unit_test(encap__round_trips_both_families),
		cmocka_unit_test(encap_read__checks_a_non_zero_udp_checksum),
		cmocka_unit_test(encap_read__every_reason),
		cmocka_unit_test(encap_src_port__dynamic_range_and_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
