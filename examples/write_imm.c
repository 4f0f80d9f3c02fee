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

#include "example.h"

#define IMM 0xC0FFEE42u

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
		if (poll(&p, 1, EX_TIMEOUT_MS) != 1)
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
	struct ex e = {.name = "write_imm", .port = EX_PORT, .bytes = 65536};
	const struct sl_qp_info *theirs = &e.theirs;
	unsigned long bytes;
	const char *host;
	struct sl_mr *mr;
	struct sl_wc wc;
	uint8_t *buf;
	int rc;

	ex_args(&e, argc, argv);
	host = e.host;
	bytes = e.bytes;
	/* the server's region takes the peer's WRITE; the client's is only read from */
	ex_attach(&e, bytes, host ? 0 : SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	buf = e.buf;
	mr = e.mr;
	if (!host) {
		/* the immediate's notification consumes a RECV; its buffer takes no byte */
		struct sl_recv_wr r = {.lkey = sl_mr_lkey(mr), .addr = buf, .len = 0};

		rc = sl_post_recv(e.qp, &r, 1);
		if (rc != 1)
			die("sl_post_recv", -rc);
	}
	ex_exchange(&e, host ? NULL : mr);

	if (host) {
		struct sl_wr w = {.opcode = SL_WR_WRITE_WITH_IMM,
				  .flags = SL_WR_F_SIGNALED,
				  .lkey = sl_mr_lkey(mr),
				  .addr = buf,
				  .len = (uint32_t)bytes,
				  .raddr = theirs->addr,
				  .rkey = theirs->rkey,
				  .imm = IMM};

		if (theirs->len < bytes) {
			fprintf(stderr,
				"write_imm: the server's region has %llu bytes, %lu asked\n",
				(unsigned long long)theirs->len, bytes);
			return 1;
		}
		for (size_t j = 0; j < bytes; j++)
			buf[j] = pattern(j);
		rc = sl_post_send(e.qp, &w, 1);
		if (rc != 1)
			die("sl_post_send", -rc);
		wait_one(e.cq);
	} else {
		wc = wait_one(e.cq);
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
	ex_barrier(&e);
	printf("write_imm: %lu bytes and immediate 0x%x %s\n", bytes, IMM,
	       host ? "written" : "received and checked");
	ex_close(&e);
	return 0;
}
