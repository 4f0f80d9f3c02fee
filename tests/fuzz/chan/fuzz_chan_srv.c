/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_chan_srv.c - the application channel's control half (lib/chan/fuzz_srv.c) against whatever
 * an application may send it: a real server on a socket in a temporary directory, with a lane
 * double that answers every command at once (as tests/unit/chan/test_srv.c's), and per input
 * one client that says HELLO with a sealed 1 MiB memfd, then sends the input as requests.
 *
 * Input: records of 1 + sizeof(struct sl_chan_req) bytes (the last one short): a control byte,
 * then the request's bytes. Control bits 0-1: send the request whole, one byte short, one byte
 * long, or as it stands (a short tail); bit 2: attach an eventfd (an fd where none belongs:
 * only HELLO carries one), bit 3: the memfd again; bit 4: leave magic and version as the input
 * has them (else they are made right, so the handlers, not only the framing check, see random
 * requests); bits 5-7: with bit 4 clear, the type is (bits 5-7) + 1. Each request is served
 * until its answer comes (or a few rounds: a malformed one may get none); the answer is read
 * with its control data, and any fd it carries (CQ_CREATE's event fd) is closed, so the run
 * does not run out of fds.
 * Checked: the server never dies; after the client hangs up it holds nothing for it (QPs, CQs,
 * MRs back to 0, one more client gone). Any violation aborts.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fuzz_chan_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_BYTES (1u << 20)
#define BASE_VA UINT64_C(0x7f0000000000)
#define QPN_BASE 100u
#define QPS 8u

/* The lane double: every command is answered at once, with success. */
struct sl_chan_lane {
	uint32_t base, n; /**< QPNs it owns */
};

int
sl_chan_lane_call(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, uint64_t timeout_ns)
{
	(void)cl;
	(void)timeout_ns;
	cmd->result = 0;
	atomic_store_explicit(&cmd->done, true, memory_order_release);
	return 0;
}

bool
sl_chan_lane_owns(const struct sl_chan_lane *cl, uint32_t qpn)
{
	return qpn - cl->base < cl->n;
}

/* The server's one lane. */
uint32_t
sl_chan_lane_index(const struct sl_chan_lane *cl)
{
	(void)cl;
	return 0;
}

static struct sl_chan_lane lane = {.base = QPN_BASE, .n = QPS};
/* Send len bytes with up to 2 fds (-1: none). */
static void
send_msg(int fd, const void *buf, size_t len, int fd0, int fd1)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	int fds[2], n = 0;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd0 >= 0)
		fds[n++] = fd0;
	if (fd1 >= 0)
		fds[n++] = fd1;
	if (n) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	(void)sendmsg(fd, &m, MSG_NOSIGNAL); /* a server that hung up on us is fine */
}

/* Read one answer and close every fd that came with it. */
static void
recv_rsp(int fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct sl_chan_rsp r;
	struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};

	if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
		return;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int rfd;

			memcpy(&rfd, CMSG_DATA(c) + i * sizeof(int), sizeof(rfd));
			close(rfd);
		}
	}
}

/* Serve until the client has an answer to read (and read it), or a few rounds. */
static void
serve(int fd)
{
	for (int i = 0; i < 4; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		fuzz_check(sl_chan_srv_poll(fuzz_srv, 0) == 0, "poll failed");
		if (poll(&p, 1, 0) == 1) {
			recv_rsp(fd);
			return;
		}
	}
}

static int
memfd(void)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	fuzz_check(fd >= 0 && ftruncate(fd, MEM_BYTES) == 0 &&
			   fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0,
		   "memfd");
	return fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t rec = 1 + sizeof(struct sl_chan_req);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct sl_chan_req hello = {.magic = SL_CHAN_MAGIC,
				    .version = SL_CHAN_VERSION,
				    .type = SL_CHAN_HELLO,
				    .u.hello = {MEM_BYTES, BASE_VA}};
	uint64_t gone;
	int fd, mfd;

	if (fuzz_srv == NULL)
		fuzz_srv_start("fuzz_chan_srv", &lane, 16, 8, QPN_BASE, QPS);
	gone = fuzz_srv_stats().clients_gone;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", fuzz_srv_path);
	fuzz_check(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect");
	mfd = memfd();
	send_msg(fd, &hello, sizeof(hello), mfd, -1);
	serve(fd);
	for (size_t off = 0; off < size; off += rec) {
		uint8_t ctl = data[off], buf[sizeof(struct sl_chan_req) + 1] = {0};
		size_t have = SL_MIN(size - off - 1, sizeof(struct sl_chan_req)), len;
		struct sl_chan_req *q = (struct sl_chan_req *)buf;
		int efd = -1;

		memcpy(buf, data + off + 1, have);
		if (!(ctl & 0x10)) {
			q->magic = SL_CHAN_MAGIC;
			q->version = SL_CHAN_VERSION;
			q->type = (uint16_t)((ctl >> 5) + 1);
		}
		len = (size_t[]){sizeof(*q), sizeof(*q) - 1, sizeof(*q) + 1, have}[ctl & 3];
		if (ctl & 4)
			efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		send_msg(fd, buf, len, efd, ctl & 8 ? mfd : -1);
		if (efd >= 0)
			close(efd);
		serve(fd);
	}
	close(fd);
	close(mfd);
	for (int i = 0; i < 50 && fuzz_srv_stats().clients_gone == gone; i++)
		fuzz_check(sl_chan_srv_poll(fuzz_srv, 1) == 0, "poll failed");
	fuzz_check(fuzz_srv_stats().clients_gone == gone + 1,
		   "the client's hang-up went unnoticed");
	fuzz_check(fuzz_srv_stats().qps == 0 && fuzz_srv_stats().cqs == 0 &&
			   fuzz_srv_stats().mrs == 0,
		   "a gone client's QPs, CQs or MRs are still held");
	return 0;
}
