/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read.c - READ on libsluice: the server exposes a patterned buffer for remote read; the client
 * READs it into its own memory and checks every byte. The server's CPU takes no part in the
 * transfer: it only waits at the final barrier.
 *
 *   server:  read [-S socket] [-p port] [-s bytes]
 *   client:  read [-S socket] [-p port] [-s bytes] server-host
 *
 * Build by hand: cc read.c $(pkg-config --cflags --libs libsluice)
 */
#define _POSIX_C_SOURCE 200809L /* getopt, clock_gettime, poll under -std=c11 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice.h>

#include "example.h"

static uint8_t
pattern(size_t j)
{
	return (uint8_t)(j * 29u + 3u);
}

/* Spin on the CQ for one completion, TIMEOUT_MS at most. */
static struct sl_wc
wait_one(struct sl_cq *cq)
{
	time_t deadline = time(NULL) + EX_TIMEOUT_MS / 1000;
	struct sl_wc wc;
	int n;

	while ((n = sl_cq_poll(cq, &wc, 1)) == 0)
		if (time(NULL) > deadline)
			die("waiting for the READ", ETIMEDOUT);
	if (n < 0)
		die("sl_cq_poll", -n);
	if (wc.status != SL_WC_SUCCESS) {
		fprintf(stderr, "read: the READ failed: %s\n", sl_wc_status_str(wc.status));
		exit(1);
	}
	return wc;
}

int
main(int argc, char **argv)
{
	struct ex e = {.name = "read", .port = EX_PORT, .bytes = 65536};
	const struct sl_qp_info *theirs = &e.theirs;
	unsigned long bytes;
	const char *host;
	struct sl_mr *mr;
	uint8_t *buf;
	int rc;

	ex_args(&e, argc, argv);
	host = e.host;
	bytes = e.bytes;
	/* the server's region is read by the peer; the client's takes the READ's bytes */
	ex_attach(&e, bytes, host ? SL_ACCESS_LOCAL_WRITE : SL_ACCESS_REMOTE_READ);
	buf = e.buf;
	mr = e.mr;
	if (!host)
		for (size_t j = 0; j < bytes; j++)
			buf[j] = pattern(j);
	ex_exchange(&e, host ? NULL : mr);

	if (host) {
		struct sl_wr w = {.opcode = SL_WR_READ,
				  .flags = SL_WR_F_SIGNALED,
				  .lkey = sl_mr_lkey(mr),
				  .addr = buf,
				  .len = (uint32_t)bytes,
				  .raddr = theirs->addr,
				  .rkey = theirs->rkey};
		struct sl_wc wc;

		if (theirs->len < bytes) {
			fprintf(stderr, "read: the server's region has %llu bytes, %lu asked\n",
				(unsigned long long)theirs->len, bytes);
			return 1;
		}
		rc = sl_post_send(e.qp, &w, 1);
		if (rc != 1)
			die("sl_post_send", -rc);
		wc = wait_one(e.cq);
		if (wc.opcode != SL_WC_READ || wc.byte_len != bytes) {
			fprintf(stderr,
				"read: completion opcode %u of %u bytes, a READ of %lu "
				"expected\n",
				wc.opcode, wc.byte_len, bytes);
			return 1;
		}
		for (size_t j = 0; j < bytes; j++)
			if (buf[j] != pattern(j)) {
				fprintf(stderr, "read: byte %zu is %u, %u expected\n", j, buf[j],
					pattern(j));
				return 1;
			}
	}
	/* the server waits here while the client reads */
	ex_barrier(&e);
	printf("read: %lu bytes %s\n", bytes, host ? "read and checked" : "served");
	ex_close(&e);
	return 0;
}
