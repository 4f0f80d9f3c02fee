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

#include "example.h"

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
			if (poll(&p, 1, EX_TIMEOUT_MS) != 1)
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
	struct ex e = {.name = "pingpong", .port = EX_PORT, .bytes = 64, .iters = 1000};
	unsigned long iters, bytes;
	struct seen seen = {0};
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *qp;
	const char *host;
	uint8_t *tx, *rx;
	double t0;

	ex_args(&e, argc, argv);
	host = e.host;
	iters = e.iters;
	bytes = e.bytes;
	ex_attach(&e, 2 * bytes, SL_ACCESS_LOCAL_WRITE);
	mr = e.mr;
	cq = e.cq;
	qp = e.qp;
	tx = e.buf;
	rx = tx + bytes;
	post_recv(qp, mr, rx, bytes);
	ex_exchange(&e, NULL);

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
	ex_barrier(&e);
	if (host)
		printf("pingpong: %lu round trips of %lu bytes checked, %.2f us each on average\n",
		       iters, bytes, (now_s() - t0) * 1e6 / iters);
	else
		printf("pingpong: %lu messages of %lu bytes checked and echoed\n", iters, bytes);
	ex_close(&e);
	return 0;
}
