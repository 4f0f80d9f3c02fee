/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oob.c - the out-of-band exchange (sluice.h's sl_oob_*): one TCP connection between a server
 * that accepts one client and that client, as perftest trades its QP numbers and keys.
 *
 * Wire. A message is a 12-byte header in network byte order,
 *     magic u32 "SLOB" | type u16 | count u16 | length u32 (payload bytes)
 * then length bytes: INFO carries count struct sl_qp_info, each 64 bytes written field by field
 * in network byte order (qpn u32, psn u32, token u32, rkey u32, addr u64, len u64, host 32
 * bytes, NUL-padded);
 * SWAP carries count 0 and the caller's bytes. A barrier (sl_oob_sync) is a single byte, 0xA5,
 * each way. Both ends send, then receive, the same kind of message: a header that is not the one
 * expected (magic, type, count, length) is -EPROTO at once, before its payload is waited for.
 *
 * Time. Every exchange has timeout_ms (given at accept / connect; < 0: none) from its start to
 * its end. The socket is non-blocking and one poll(2) loop moves both directions at once, so two
 * ends swapping more than the socket buffers hold never wait on each other.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api_priv.h"
#include "sl_common.h"

#define OOB_MAGIC 0x534C4F42u /**< "SLOB" */
#define OOB_HDR_BYTES 12u
#define OOB_INFO_BYTES 64u
#define OOB_SYNC_BYTE 0xA5u
#define OOB_RETRY_MS 100 /**< a refused connect is tried again after this, ms */

enum oob_type {
	OOB_INFO = 1,
	OOB_SWAP = 2,
};

struct sl_oob {
	int fd;
	int timeout_ms; /**< per exchange; < 0: none */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline for poll(2) (-1: no deadline). */
static int
left_ms(int64_t deadline)
{
	int64_t l;

	if (deadline < 0)
		return -1;
	l = deadline - now_ms();
	return l > 0 ? (int)l : 0;
}

static int64_t
deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Wait for events on fd until deadline: 0, -ETIMEDOUT, or -errno. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int n;

	do
		n = poll(&p, 1, left_ms(deadline));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

static struct sl_oob *
oob_new(int fd, int timeout_ms)
{
	struct sl_oob *o = malloc(sizeof(*o));
	int one = 1;

	if (!o || fcntl(fd, F_SETFL, O_NONBLOCK) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		int err = errno;

		free(o);
		close(fd);
		errno = err;
		return NULL;
	}
	o->fd = fd;
	o->timeout_ms = timeout_ms;
	return o;
}

/* A listening socket on port, IPv6 accepting IPv4 too where the host has IPv6, else IPv4. */
static int
oob_listen(uint16_t port)
{
	struct sockaddr_in6 a6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY)};
	int one = 1, zero = 0, fd;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ||
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
			bind(fd, (struct sockaddr *)&a6, sizeof(a6)))) {
		if (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL) {
			int err = errno;

			close(fd);
			errno = err;
			return -1;
		}
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(fd, (struct sockaddr *)&a4, sizeof(a4)))
			goto fail;
	}
	if (listen(fd, 1))
		goto fail;
	return fd;
fail:
	one = errno;
	close(fd);
	errno = one;
	return -1;
}

SL_API_EXPORT struct sl_oob *
sl_oob_accept(uint16_t port, int timeout_ms)
{
	int lfd = oob_listen(port), fd, rc;

	if (lfd < 0)
		return NULL;
	rc = wait_fd(lfd, POLLIN, deadline_of(timeout_ms));
	fd = rc ? -1 : accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (!rc && fd < 0)
		rc = -errno;
	close(lfd);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return oob_new(fd, timeout_ms);
}

/* One attempt at ai before deadline: the connected fd, or -errno. */
static int
oob_try(const struct addrinfo *ai, int64_t deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			ai->ai_protocol);
	int rc = 0, err = 0;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		rc = errno == EINPROGRESS ? wait_fd(fd, POLLOUT, deadline) : -errno;
		if (!rc && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			rc = -errno;
		else if (!rc && err)
			rc = -err;
	}
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

SL_API_EXPORT struct sl_oob *
sl_oob_connect(const char *host, uint16_t port, int timeout_ms)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
	int64_t deadline = deadline_of(timeout_ms);
	char serv[8];
	int fd = -ECONNREFUSED, g;

	if (!host) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(serv, sizeof(serv), "%u", port);
	g = getaddrinfo(host, serv, &hints, &res);
	if (g) {
		errno = g == EAI_SYSTEM ? errno : EHOSTUNREACH;
		return NULL;
	}
	/* A server not listening yet refuses: try again until the deadline, as a peer starting a
	 * moment later is the usual case. */
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = oob_try(ai, deadline);
			if (fd >= 0 || fd == -ETIMEDOUT)
				break;
		}
		if (fd != -ECONNREFUSED || left_ms(deadline) == 0)
			break;
		poll(NULL, 0,
		     deadline < 0 || left_ms(deadline) > OOB_RETRY_MS ? OOB_RETRY_MS
								      : left_ms(deadline));
	}
	freeaddrinfo(res);
	if (fd == -ECONNREFUSED && left_ms(deadline) == 0)
		fd = -ETIMEDOUT;
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return oob_new(fd, timeout_ms);
}

SL_API_EXPORT void
sl_oob_close(struct sl_oob *o)
{
	if (!o)
		return;
	close(o->fd);
	free(o);
}

/*
 * Send out[0, out_len) and receive in[0, in_len) at once, before the exchange's deadline. Once
 * check_len bytes have arrived, check(in) must return 0 or the exchange ends with its error.
 */
static int
oob_xfer(struct sl_oob *o, const uint8_t *out, size_t out_len, uint8_t *in, size_t in_len,
	 size_t check_len, int (*check)(const uint8_t *in, const void *arg), const void *arg)
{
	int64_t deadline = deadline_of(o->timeout_ms);
	size_t sent = 0, got = 0;
	bool checked = !check;

	while (sent < out_len || got < in_len) {
		struct pollfd p = {.fd = o->fd,
				   .events = (short)((sent < out_len ? POLLOUT : 0) |
						     (got < in_len ? POLLIN : 0))};
		ssize_t n;
		int rc;

		rc = poll(&p, 1, left_ms(deadline));
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		if (rc < 0)
			continue;
		if (sent < out_len && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = send(o->fd, out + sent, out_len - sent, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return errno == EPIPE ? -ECONNRESET : -errno;
			sent += n > 0 ? (size_t)n : 0;
		}
		if (got < in_len && (p.revents & (POLLIN | POLLERR | POLLHUP))) {
			n = recv(o->fd, in + got, in_len - got, 0);
			if (n == 0)
				return -ECONNRESET;
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return -errno;
			got += n > 0 ? (size_t)n : 0;
		}
		if (!checked && got >= check_len) {
			rc = check(in, arg);
			if (rc)
				return rc;
			checked = true;
		}
	}
	return 0;
}

/* The header this end expects from the peer is the one it sends: compare the bytes. */
static int
hdr_check(const uint8_t *in, const void *mine)
{
	return memcmp(in, mine, OOB_HDR_BYTES) ? -EPROTO : 0;
}

/* Send a message of type with count and payload[0, len), receive the peer's alike into rx. */
static int
oob_msg(struct sl_oob *o, uint16_t type, uint16_t count, const void *payload, uint8_t *rx,
	size_t len)
{
	uint8_t *out, *in;
	int rc;

	if (!o || len > UINT32_MAX - OOB_HDR_BYTES)
		return -EINVAL;
	out = malloc(OOB_HDR_BYTES + len);
	in = malloc(OOB_HDR_BYTES + len);
	if (!out || !in) {
		rc = -ENOMEM;
		goto out;
	}
	sl_put_be32(out, OOB_MAGIC);
	sl_put_be16(out + 4, type);
	sl_put_be16(out + 6, count);
	sl_put_be32(out + 8, (uint32_t)len);
	if (len)
		memcpy(out + OOB_HDR_BYTES, payload, len);
	rc = oob_xfer(o, out, OOB_HDR_BYTES + len, in, OOB_HDR_BYTES + len, OOB_HDR_BYTES,
		      hdr_check, out);
	if (!rc && len)
		memcpy(rx, in + OOB_HDR_BYTES, len);
out:
	free(out);
	free(in);
	return rc;
}

SL_API_EXPORT int
sl_oob_exchange(struct sl_oob *o, const struct sl_qp_info *mine, struct sl_qp_info *theirs,
		unsigned n)
{
	size_t len = (size_t)n * OOB_INFO_BYTES;
	uint8_t *buf;
	int rc;

	if (n > UINT16_MAX || (n && (!mine || !theirs)))
		return -EINVAL;
	buf = calloc(1, len ? len : 1);
	if (!buf)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = buf + (size_t)i * OOB_INFO_BYTES;

		sl_put_be32(p, mine[i].qpn);
		sl_put_be32(p + 4, mine[i].psn);
		sl_put_be32(p + 8, mine[i].token);
		sl_put_be32(p + 12, mine[i].rkey);
		sl_put_be64(p + 16, mine[i].addr);
		sl_put_be64(p + 24, mine[i].len);
		strncpy((char *)p + 32, mine[i].host, sizeof(mine[i].host) - 1);
	}
	rc = oob_msg(o, OOB_INFO, (uint16_t)n, buf, buf, len);
	for (unsigned i = 0; !rc && i < n; i++) {
		const uint8_t *p = buf + (size_t)i * OOB_INFO_BYTES;

		theirs[i].qpn = sl_get_be32(p);
		theirs[i].psn = sl_get_be32(p + 4);
		theirs[i].token = sl_get_be32(p + 8);
		theirs[i].rkey = sl_get_be32(p + 12);
		theirs[i].addr = sl_get_be64(p + 16);
		theirs[i].len = sl_get_be64(p + 24);
		memcpy(theirs[i].host, p + 32, sizeof(theirs[i].host));
		theirs[i].host[sizeof(theirs[i].host) - 1] = '\0';
	}
	free(buf);
	return rc;
}

SL_API_EXPORT int
sl_oob_swap(struct sl_oob *o, const void *mine, void *theirs, size_t n)
{
	if (n && (!mine || !theirs))
		return -EINVAL;
	return oob_msg(o, OOB_SWAP, 0, mine, theirs, n);
}

static int
sync_check(const uint8_t *in, const void *arg)
{
	(void)arg;
	return *in == OOB_SYNC_BYTE ? 0 : -EPROTO;
}

SL_API_EXPORT int
sl_oob_sync(struct sl_oob *o)
{
	uint8_t out = OOB_SYNC_BYTE, in;

	if (!o)
		return -EINVAL;
	return oob_xfer(o, &out, 1, &in, 1, 1, sync_check, NULL);
}
