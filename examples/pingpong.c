/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong.c - SEND / RECV ping-pong on libsluice: the client sends a patterned message, the
 * server checks it and sends it back, the client checks the echo; -n times.
 *
 *   server:  pingpong [-S socket] [-p port] [-s bytes] [-n iterations]
 *   client:  pingpong [-S socket] [-p port] [-s bytes] [-n iterations] server-host
 *
 * Build by hand: cc pingpong.c $(pkg-config --cflags --libs libsluice)
 */
#define _POSIX_C_SOURCE 200809L /* getopt, clock_gettime, poll under -std=c11 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice.h>

#define PORT 18515       /* perftest's */
#define TIMEOUT_MS 60000 /* to meet the peer, and for each completion */

static void
die(const char *what, int err)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(err));
	exit(1);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t
pattern(unsigned iter, size_t j)
{
	return (uint8_t)(iter * 31u + j * 7u + 1u);
}

/* Completions seen so far, by kind. */
struct seen {
	unsigned sends, recvs;
	uint32_t last_len; /* the last RECV's byte_len */
};

/*
 * Wait until sends and recvs reach the counts asked for (TIMEOUT_MS at most without a
 * completion), sleeping on the CQ's event fd between completions: poll, arm, poll again (a
 * completion may have come before the arm), then sleep. A process that spins instead takes a
 * core from the daemon on a small machine.
 */
static void
await(struct sl_cq *cq, struct seen *s, unsigned sends, unsigned recvs)
{
	struct pollfd p = {.fd = sl_cq_event_fd(cq), .events = POLLIN};
	struct sl_wc wc[8];
	uint64_t events;

	while (s->sends < sends || s->recvs < recvs) {
		int n = sl_cq_poll(cq, wc, 8);

		if (n == 0) {
			sl_cq_arm(cq);
			n = sl_cq_poll(cq, wc, 8);
		}
		if (n == 0) {
			if (poll(&p, 1, TIMEOUT_MS) != 1)
				die("waiting for a completion", ETIMEDOUT);
			if (read(p.fd, &events, sizeof(events)) != sizeof(events) &&
			    errno != EAGAIN)
				die("reading the event fd", errno);
			continue;
		}
		if (n < 0)
			die("sl_cq_poll", -n);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != SL_WC_SUCCESS) {
				fprintf(stderr, "pingpong: work request %llu failed: %s\n",
					(unsigned long long)wc[i].wr_id,
					sl_wc_status_str(wc[i].status));
				exit(1);
			}
			if (wc[i].opcode == SL_WC_RECV) {
				s->recvs++;
				s->last_len = wc[i].byte_len;
			} else {
				s->sends++;
			}
		}
	}
}

static void
post_recv(struct sl_qp *qp, struct sl_mr *mr, uint8_t *buf, size_t bytes)
{
	struct sl_recv_wr r = {.lkey = sl_mr_lkey(mr), .addr = buf, .len = (uint32_t)bytes};
	int rc = sl_post_recv(qp, &r, 1);

	if (rc != 1)
		die("sl_post_recv", -rc);
}

static void
post_send(struct sl_qp *qp, struct sl_mr *mr, uint8_t *buf, size_t bytes)
{
	struct sl_wr w = {.opcode = SL_WR_SEND,
			  .flags = SL_WR_F_SIGNALED,
			  .lkey = sl_mr_lkey(mr),
			  .addr = buf,
			  .len = (uint32_t)bytes};
	int rc = sl_post_send(qp, &w, 1);

	if (rc != 1)
		die("sl_post_send", -rc);
}

/* The message that arrived in iteration iter is the pattern, whole. */
static void
check(const uint8_t *buf, size_t bytes, const struct seen *s, unsigned iter)
{
	if (s->last_len != bytes) {
		fprintf(stderr, "pingpong: iteration %u: %u bytes arrived, %zu expected\n", iter,
			s->last_len, bytes);
		exit(1);
	}
	for (size_t j = 0; j < bytes; j++)
		if (buf[j] != pattern(iter, j)) {
			fprintf(stderr, "pingpong: iteration %u: byte %zu is %u, %u expected\n",
				iter, j, buf[j], pattern(iter, j));
			exit(1);
		}
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *host;
	unsigned long port = PORT, iters = 1000, bytes = 64;
	struct sl_qp_info mine, theirs;
	struct seen seen = {0};
	struct sl_ctx *ctx;
	struct sl_oob *oob;
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *qp;
	uint8_t *tx, *rx;
	double t0;
	int c, rc;

	while ((c = getopt(argc, argv, "S:p:s:n:h")) != -1) {
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
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-S socket] [-p port] [-s bytes] [-n iterations] "
				"[server-host]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc - 1 || !port || port > 65535 || !bytes || bytes > (1u << 20) || !iters) {
		fprintf(stderr, "pingpong: bad arguments (bytes 1..1048576, port 1..65535)\n");
		return 2;
	}
	host = optind < argc ? argv[optind] : NULL;

	ctx = sl_ctx_open(sock, NULL);
	if (!ctx)
		die("cannot attach to sluiced", errno);
	tx = sl_mem_alloc(ctx, 2 * bytes);
	if (!tx)
		die("sl_mem_alloc", errno);
	rx = tx + bytes;
	mr = sl_mr_reg(ctx, tx, 2 * bytes, SL_ACCESS_LOCAL_WRITE);
	cq = mr ? sl_cq_create(ctx, 16) : NULL;
	qp = cq ? sl_qp_create(ctx, &(struct sl_qp_attr){.send_cq = cq, .recv_cq = cq}) : NULL;
	if (!qp)
		die("setting up the queue pair", errno);
	post_recv(qp, mr, rx, bytes);

	oob = host ? sl_oob_connect(host, (uint16_t)port, TIMEOUT_MS)
		   : sl_oob_accept((uint16_t)port, TIMEOUT_MS);
	if (!oob)
		die(host ? "cannot reach the server" : "no client came", errno);
	sl_qp_info(qp, NULL, &mine);
	rc = sl_oob_exchange(oob, &mine, &theirs, 1);
	if (!rc)
		rc = sl_qp_connect(qp, &theirs);
	if (!rc)
		rc = sl_oob_sync(oob);
	if (rc)
		die("connecting to the peer", -rc);

	t0 = now_s();
	for (unsigned i = 0; i < iters; i++) {
		if (host) {
			for (size_t j = 0; j < bytes; j++)
				tx[j] = pattern(i, j);
			post_send(qp, mr, tx, bytes);
			await(cq, &seen, i + 1, i + 1);
			check(rx, bytes, &seen, i);
			post_recv(qp, mr, rx, bytes);
		} else {
			await(cq, &seen, i, i + 1); /* the last echo has left tx */
			check(rx, bytes, &seen, i);
			memcpy(tx, rx, bytes);
			post_recv(qp, mr, rx, bytes);
			post_send(qp, mr, tx, bytes);
		}
	}
	await(cq, &seen, (unsigned)iters, 0);
	rc = sl_oob_sync(oob);
	if (rc)
		die("the final barrier", -rc);
	if (host)
		printf("pingpong: %lu round trips of %lu bytes checked, %.2f us each on average\n",
		       iters, bytes, (now_s() - t0) * 1e6 / iters);
	else
		printf("pingpong: %lu messages of %lu bytes checked and echoed\n", iters, bytes);
	sl_oob_close(oob);
	sl_ctx_close(ctx);
	return 0;
}
