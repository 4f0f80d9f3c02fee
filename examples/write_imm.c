/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_imm.c - WRITE with immediate on libsluice: the client writes a patterned buffer into the
 * server's memory region with an immediate; the server, which only posted a RECV, sleeps on the
 * CQ's event fd until the notification comes, then checks the immediate and every byte.
 *
 *   server:  write_imm [-S socket] [-p port] [-s bytes]
 *   client:  write_imm [-S socket] [-p port] [-s bytes] server-host
 *
 * Build by hand: cc write_imm.c $(pkg-config --cflags --libs libsluice)
 */
#define _POSIX_C_SOURCE 200809L /* getopt, clock_gettime, poll under -std=c11 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice.h>

#define PORT 18515
#define TIMEOUT_MS 60000
#define IMM 0xC0FFEE42u

static void
die(const char *what, int err)
{
	fprintf(stderr, "write_imm: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint8_t
pattern(size_t j)
{
	return (uint8_t)(j * 13u + 5u);
}

/*
 * One completion, sleeping on the event fd between polls: poll, arm, poll again (a completion
 * may have come between the first poll and the arm, and it would not be signalled), then wait.
 */
static struct sl_wc
wait_one(struct sl_cq *cq)
{
	struct pollfd p = {.fd = sl_cq_event_fd(cq), .events = POLLIN};
	struct sl_wc wc;
	uint64_t events;

	for (;;) {
		if (sl_cq_poll(cq, &wc, 1) == 1)
			break;
		sl_cq_arm(cq);
		if (sl_cq_poll(cq, &wc, 1) == 1)
			break;
		if (poll(&p, 1, TIMEOUT_MS) != 1)
			die("waiting for a completion", ETIMEDOUT);
		if (read(p.fd, &events, sizeof(events)) != sizeof(events) && errno != EAGAIN)
			die("reading the event fd", errno);
	}
	if (wc.status != SL_WC_SUCCESS) {
		fprintf(stderr, "write_imm: work request failed: %s\n",
			sl_wc_status_str(wc.status));
		exit(1);
	}
	return wc;
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *host;
	unsigned long port = PORT, bytes = 65536;
	struct sl_qp_info mine, theirs;
	struct sl_ctx *ctx;
	struct sl_oob *oob;
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *qp;
	struct sl_wc wc;
	uint8_t *buf;
	int c, rc;

	while ((c = getopt(argc, argv, "S:p:s:h")) != -1) {
		switch (c) {
		case 'S':
			sock = optarg;
			break;
		case 'p':
			port = strtoul(optarg, NULL, 0);
			break;
		case 's':
			bytes = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-S socket] [-p port] [-s bytes] [server-host]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc - 1 || !port || port > 65535 || !bytes || bytes > (1u << 20)) {
		fprintf(stderr, "write_imm: bad arguments (bytes 1..1048576, port 1..65535)\n");
		return 2;
	}
	host = optind < argc ? argv[optind] : NULL;

	ctx = sl_ctx_open(sock, NULL);
	if (!ctx)
		die("cannot attach to sluiced", errno);
	buf = sl_mem_alloc(ctx, bytes);
	if (!buf)
		die("sl_mem_alloc", errno);
	/* the server's region takes the peer's WRITE; the client's is only read from */
	mr = sl_mr_reg(ctx, buf, bytes, host ? 0 : SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	cq = mr ? sl_cq_create(ctx, 16) : NULL;
	qp = cq ? sl_qp_create(ctx, &(struct sl_qp_attr){.send_cq = cq, .recv_cq = cq}) : NULL;
	if (!qp)
		die("setting up the queue pair", errno);
	if (!host) {
		/* the immediate's notification consumes a RECV; its buffer takes no byte */
		struct sl_recv_wr r = {.lkey = sl_mr_lkey(mr), .addr = buf, .len = 0};

		rc = sl_post_recv(qp, &r, 1);
		if (rc != 1)
			die("sl_post_recv", -rc);
	}

	oob = host ? sl_oob_connect(host, (uint16_t)port, TIMEOUT_MS)
		   : sl_oob_accept((uint16_t)port, TIMEOUT_MS);
	if (!oob)
		die(host ? "cannot reach the server" : "no client came", errno);
	sl_qp_info(qp, host ? NULL : mr, &mine);
	rc = sl_oob_exchange(oob, &mine, &theirs, 1);
	if (!rc)
		rc = sl_qp_connect(qp, &theirs);
	if (!rc)
		rc = sl_oob_sync(oob);
	if (rc)
		die("connecting to the peer", -rc);

	if (host) {
		struct sl_wr w = {.opcode = SL_WR_WRITE_WITH_IMM,
				  .flags = SL_WR_F_SIGNALED,
				  .lkey = sl_mr_lkey(mr),
				  .addr = buf,
				  .len = (uint32_t)bytes,
				  .raddr = theirs.addr,
				  .rkey = theirs.rkey,
				  .imm = IMM};

		if (theirs.len < bytes) {
			fprintf(stderr,
				"write_imm: the server's region has %llu bytes, %lu asked\n",
				(unsigned long long)theirs.len, bytes);
			return 1;
		}
		for (size_t j = 0; j < bytes; j++)
			buf[j] = pattern(j);
		rc = sl_post_send(qp, &w, 1);
		if (rc != 1)
			die("sl_post_send", -rc);
		wait_one(cq);
	} else {
		wc = wait_one(cq);
		if (wc.opcode != SL_WC_RECV_RDMA_IMM || !(wc.flags & SL_WC_F_IMM) ||
		    wc.imm != IMM || wc.byte_len != bytes) {
			fprintf(stderr,
				"write_imm: completion opcode %u flags %u imm 0x%x bytes %u, "
				"expected "
				"a WRITE's immediate 0x%x over %lu bytes\n",
				wc.opcode, wc.flags, wc.imm, wc.byte_len, IMM, bytes);
			return 1;
		}
		for (size_t j = 0; j < bytes; j++)
			if (buf[j] != pattern(j)) {
				fprintf(stderr, "write_imm: byte %zu is %u, %u expected\n", j,
					buf[j], pattern(j));
				return 1;
			}
	}
	rc = sl_oob_sync(oob);
	if (rc)
		die("the final barrier", -rc);
	printf("write_imm: %lu bytes and immediate 0x%x %s\n", bytes, IMM,
	       host ? "written" : "received and checked");
	sl_oob_close(oob);
	sl_ctx_close(ctx);
	return 0;
}
