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

#define PORT 18515
#define TIMEOUT_MS 60000

static void
die(const char *what, int err)
{
	fprintf(stderr, "read: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint8_t
pattern(size_t j)
{
	return (uint8_t)(j * 29u + 3u);
}

/* Spin on the CQ for one completion, TIMEOUT_MS at most. */
static struct sl_wc
wait_one(struct sl_cq *cq)
{
	time_t deadline = time(NULL) + TIMEOUT_MS / 1000;
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
	const char *sock = NULL, *host;
	unsigned long port = PORT, bytes = 65536;
	struct sl_qp_info mine, theirs;
	struct sl_ctx *ctx;
	struct sl_oob *oob;
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *qp;
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
		fprintf(stderr, "read: bad arguments (bytes 1..1048576, port 1..65535)\n");
		return 2;
	}
	host = optind < argc ? argv[optind] : NULL;

	ctx = sl_ctx_open(sock, NULL);
	if (!ctx)
		die("cannot attach to sluiced", errno);
	buf = sl_mem_alloc(ctx, bytes);
	if (!buf)
		die("sl_mem_alloc", errno);
	if (!host)
		for (size_t j = 0; j < bytes; j++)
			buf[j] = pattern(j);
	/* the server's region is read by the peer; the client's takes the READ's bytes */
	mr = sl_mr_reg(ctx, buf, bytes, host ? SL_ACCESS_LOCAL_WRITE : SL_ACCESS_REMOTE_READ);
	cq = mr ? sl_cq_create(ctx, 16) : NULL;
	qp = cq ? sl_qp_create(ctx, &(struct sl_qp_attr){.send_cq = cq, .recv_cq = cq}) : NULL;
	if (!qp)
		die("setting up the queue pair", errno);

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
		struct sl_wr w = {.opcode = SL_WR_READ,
				  .flags = SL_WR_F_SIGNALED,
				  .lkey = sl_mr_lkey(mr),
				  .addr = buf,
				  .len = (uint32_t)bytes,
				  .raddr = theirs.addr,
				  .rkey = theirs.rkey};
		struct sl_wc wc;

		if (theirs.len < bytes) {
			fprintf(stderr, "read: the server's region has %llu bytes, %lu asked\n",
				(unsigned long long)theirs.len, bytes);
			return 1;
		}
		rc = sl_post_send(qp, &w, 1);
		if (rc != 1)
			die("sl_post_send", -rc);
		wc = wait_one(cq);
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
	rc = sl_oob_sync(oob);
	if (rc)
		die("the final barrier", -rc);
	printf("read: %lu bytes %s\n", bytes, host ? "read and checked" : "served");
	sl_oob_close(oob);
	sl_ctx_close(ctx);
	return 0;
}
