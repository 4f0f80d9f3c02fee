/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/api/oob.c between two threads over loopback (IPv4 and IPv6): exchange of infos
 * field for field, sync, a swap larger than the socket buffers, and a malformed, a silent and a
 * missing peer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "sluice.h"

#define SWAP_BYTES (4u << 20)

/* A port no one listens on now (bound to 0, read, closed). */
static uint16_t
free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static struct sl_qp_info
info_of(uint32_t seed)
{
	struct sl_qp_info i = {.qpn = seed,
			       .rkey = ~seed,
			       .addr = UINT64_C(0x0123456789abcdef) + seed,
			       .len = UINT64_C(1) << 40 | seed};

	memset(i.host, 'h', sizeof(i.host)); /* no NUL: the receiver ends it */
	i.host[0] = (char)('a' + seed % 26);
	return i;
}

/* One end's part: exchange 3 infos, sync, swap SWAP_BYTES. */
struct side {
	const char *host; /* NULL: server */
	uint16_t port;
	uint32_t seed;
	struct sl_qp_info theirs[3];
	uint8_t *mine, *got;
	int rc;
};

static void *
side_run(void *arg)
{
	struct side *s = arg;
	struct sl_qp_info mine[3] = {info_of(s->seed), info_of(s->seed + 1), info_of(s->seed + 2)};
	struct sl_oob *o =
		s->host ? sl_oob_connect(s->host, s->port, 5000) : sl_oob_accept(s->port, 5000);

	s->rc = -1;
	if (!o)
		return NULL;
	s->rc = sl_oob_exchange(o, mine, s->theirs, 3);
	if (!s->rc)
		s->rc = sl_oob_sync(o);
	if (!s->rc)
		s->rc = sl_oob_swap(o, s->mine, s->got, SWAP_BYTES);
	if (!s->rc)
		s->rc = sl_oob_sync(o);
	sl_oob_close(o);
	return NULL;
}

static void
both_sides(const char *host)
{
	struct side srv = {.port = free_port(), .seed = 10}, cli = srv;
	pthread_t t;

	cli.host = host;
	cli.seed = 20;
	srv.mine = malloc(SWAP_BYTES);
	srv.got = malloc(SWAP_BYTES);
	cli.mine = malloc(SWAP_BYTES);
	cli.got = malloc(SWAP_BYTES);
	for (uint32_t i = 0; i < SWAP_BYTES; i++) {
		srv.mine[i] = (uint8_t)(i * 3);
		cli.mine[i] = (uint8_t)(i * 5 + 1);
	}
	/* the client first: it tries again until the server listens */
	assert_int_equal(pthread_create(&t, NULL, side_run, &cli), 0);
	usleep(50000);
	side_run(&srv);
	pthread_join(t, NULL);
	assert_int_equal(srv.rc, 0);
	assert_int_equal(cli.rc, 0);
	for (uint32_t k = 0; k < 3; k++) {
		struct sl_qp_info a = info_of(20 + k), b = info_of(10 + k);

		a.host[sizeof(a.host) - 1] = b.host[sizeof(b.host) - 1] = '\0';
		assert_memory_equal(&srv.theirs[k], &a, sizeof(a));
		assert_memory_equal(&cli.theirs[k], &b, sizeof(b));
	}
	assert_memory_equal(srv.got, cli.mine, SWAP_BYTES);
	assert_memory_equal(cli.got, srv.mine, SWAP_BYTES);
	free(srv.mine);
	free(srv.got);
	free(cli.mine);
	free(cli.got);
}

static void
oob_exchange__ipv4(void **state)
{
	(void)state;
	both_sides("127.0.0.1");
}

static void
oob_exchange__ipv6(void **state)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};

	(void)state;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		skip();
	}
	close(fd);
	both_sides("::1");
}

/* A peer that writes bytes (or nothing) instead of speaking the protocol, then holds on. */
struct raw {
	uint16_t port;
	const void *bytes;
	size_t len;
	int hold_ms;
};

static void *
raw_peer(void *arg)
{
	struct raw *r = arg;
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(r->port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = -1;

	for (int i = 0; i < 200; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(fd);
		fd = -1;
		usleep(10000);
	}
	if (fd < 0)
		abort();
	if (r->len && write(fd, r->bytes, r->len) != (ssize_t)r->len)
		abort();
	usleep(r->hold_ms * 1000);
	close(fd);
	return NULL;
}

static int
do_exchange(struct sl_oob *o)
{
	struct sl_qp_info mine = info_of(1), theirs;

	return sl_oob_exchange(o, &mine, &theirs, 1);
}

/* The server's op against a raw peer, with timeout_ms per exchange; op's result. */
static int
against_raw(const void *bytes, size_t len, int hold_ms, int timeout_ms, int (*op)(struct sl_oob *o))
{
	struct raw r = {.port = free_port(), .bytes = bytes, .len = len, .hold_ms = hold_ms};
	struct sl_oob *o;
	pthread_t t;
	int rc;

	assert_int_equal(pthread_create(&t, NULL, raw_peer, &r), 0);
	o = sl_oob_accept(r.port, timeout_ms);
	assert_non_null(o);
	rc = op(o);
	sl_oob_close(o);
	pthread_join(t, NULL);
	return rc;
}

static void
oob_exchange__malformed_peer_is_eproto(void **state)
{
	/* magic "SLOB", INFO, count, length 56 per info, in network order */
	static const uint8_t garbage[12] = "GET / HTTP/";
	static const uint8_t two[12] = {'S', 'L', 'O', 'B', 0, 1, 0, 2, 0, 0, 0, 112};
	static const uint8_t swap[12] = {'S', 'L', 'O', 'B', 0, 2, 0, 1, 0, 0, 0, 56};
	static const uint8_t short_len[12] = {'S', 'L', 'O', 'B', 0, 1, 0, 1, 0, 0, 0, 55};

	(void)state;
	/* answered at once, without waiting out the timeout for a payload */
	assert_int_equal(against_raw(garbage, 12, 300, 10000, do_exchange), -EPROTO);
	assert_int_equal(against_raw(two, 12, 300, 10000, do_exchange), -EPROTO);
	assert_int_equal(against_raw(swap, 12, 300, 10000, do_exchange), -EPROTO);
	assert_int_equal(against_raw(short_len, 12, 300, 10000, do_exchange), -EPROTO);
	assert_int_equal(against_raw(garbage, 1, 300, 10000, sl_oob_sync), -EPROTO);
}

static void
oob_exchange__silent_peer_is_etimedout(void **state)
{
	(void)state;
	assert_int_equal(against_raw(NULL, 0, 1000, 200, do_exchange), -ETIMEDOUT);
	assert_int_equal(against_raw(NULL, 0, 1000, 200, sl_oob_sync), -ETIMEDOUT);
}

static void
oob_exchange__peer_gone_is_econnreset(void **state)
{
	(void)state;
	assert_int_equal(against_raw(NULL, 0, 0, 2000, do_exchange), -ECONNRESET);
	/* half a header, then gone */
	assert_int_equal(against_raw("SLOB", 4, 0, 2000, do_exchange), -ECONNRESET);
}

static void
oob_connect__nobody_listening_times_out(void **state)
{
	uint16_t port = free_port();

	(void)state;
	errno = 0;
	assert_null(sl_oob_connect("127.0.0.1", port, 300));
	assert_int_equal(errno, ETIMEDOUT);
	errno = 0;
	assert_null(sl_oob_accept(port, 100));
	assert_int_equal(errno, ETIMEDOUT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(oob_exchange__ipv4),
		cmocka_unit_test(oob_exchange__ipv6),
		cmocka_unit_test(oob_exchange__malformed_peer_is_eproto),
		cmocka_unit_test(oob_exchange__silent_peer_is_etimedout),
		cmocka_unit_test(oob_exchange__peer_gone_is_econnreset),
		cmocka_unit_test(oob_connect__nobody_listening_times_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
