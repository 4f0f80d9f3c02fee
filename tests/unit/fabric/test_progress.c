/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/fabric/progress.c (with peer.c and cq.c under it) against the fake daemon
 * (h_fabric.h), two endpoints in one process, each on its own domain (two clients of the
 * fake): messages move both ways, in order, byte for byte; a CQ is never written past its
 * size: a receiver that does not read its CQ holds the sender back, and every message is
 * delivered once it reads; the error completions of a peer that fails with more sends waiting
 * than the CQ holds wait for room too; and a daemon that goes away with sends and receives
 * outstanding ends each in an FI_ECONNABORTED error completion, wakes a sleeping fi_cq_sread,
 * and refuses new sends. Every wait is on a count with a deadline, none on time alone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "h_fabric.h"

#define DEADLINE_S 10
#define MSG_BYTES 256
#define RX_SLOTS 4 /**< FI_SLUICE_RX_SLOTS' default: receive slots per peer */

static time_t
deadline(void)
{
	return time(NULL) + DEADLINE_S;
}

static void
fill(uint8_t *buf, unsigned msg)
{
	for (size_t k = 0; k < MSG_BYTES; k++)
		buf[k] = (uint8_t)(msg * 131 + k * 7 + 1);
}

/* Completions on cq into e[*n..max), counted in *n; -FI_EAVAIL fails the test. */
static void
take(struct fid_cq *cq, struct fi_cq_msg_entry *e, unsigned *n, unsigned max)
{
	ssize_t r = *n < max ? fi_cq_read(cq, e + *n, max - *n) : 0;

	if (r == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};

		fi_cq_readerr(cq, &err, 0);
		fail_msg("an error completion: %s (%s)", fi_strerror(err.err),
			 fi_cq_strerror(cq, err.prov_errno, NULL, NULL, 0));
	}
	if (r > 0)
		*n += (unsigned)r;
	else if (r != -FI_EAGAIN && r != 0)
		fail_msg("fi_cq_read: %s", fi_strerror((int)-r));
}

/* Move the endpoints of cq, which has nothing to report. */
static void
pump(struct fid_cq *cq)
{
	struct fi_cq_msg_entry e;

	assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
}

/* The next error completion on cq, waited for. */
static void
take_err(struct fid_cq *cq, struct fi_cq_err_entry *err)
{
	struct fi_cq_msg_entry e;

	for (time_t end = deadline(); time(NULL) < end;) {
		ssize_t r = fi_cq_read(cq, &e, 1);

		if (r == -FI_EAVAIL) {
			assert_int_equal(fi_cq_readerr(cq, err, 0), 1);
			return;
		}
		if (r != -FI_EAGAIN)
			fail_msg("fi_cq_read: %zd, not an error completion", r);
	}
	fail_msg("no error completion within %d s", DEADLINE_S);
}

static void
progress__messages_move_both_ways_in_order(void **state)
{
	static uint8_t rbuf[2][8][MSG_BYTES], sbuf[2][8][MSG_BYTES];
	struct fi_cq_msg_entry e[2][32];
	unsigned got[2] = {0, 0};
	struct h_side s[2];
	fi_addr_t to[2];

	(void)state;
	h_side_open(&s[0], &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG}, NULL);
	h_side_open(&s[1], &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG}, NULL);
	to[0] = h_side_insert(&s[0], &s[1]);
	to[1] = h_side_insert(&s[1], &s[0]);
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < 8; i++) {
			assert_int_equal(
				fi_recv(s[k].ep, rbuf[k][i], MSG_BYTES, NULL, 0, rbuf[k][i]), 0);
			fill(sbuf[k][i], k * 8 + i);
			assert_int_equal(
				fi_send(s[k].ep, sbuf[k][i], MSG_BYTES, NULL, to[k], sbuf[k][i]),
				0);
		}
	for (time_t end = deadline(); (got[0] < 16 || got[1] < 16) && time(NULL) < end;)
		for (unsigned k = 0; k < 2; k++)
			take(s[k].tx_cq, e[k], &got[k], 16);
	assert_int_equal(got[0], 16);
	assert_int_equal(got[1], 16);
	for (unsigned k = 0; k < 2; k++) {
		unsigned sends = 0, recvs = 0;

		for (unsigned i = 0; i < 16; i++) {
			if (e[k][i].flags & FI_SEND) {
				assert_ptr_equal(e[k][i].op_context, sbuf[k][sends++]);
				continue;
			}
			assert_true(e[k][i].flags & FI_RECV);
			assert_int_equal(e[k][i].len, MSG_BYTES);
			assert_ptr_equal(e[k][i].op_context, rbuf[k][recvs]);
			/* from the other side, in its order */
			assert_memory_equal(rbuf[k][recvs], sbuf[1 - k][recvs], MSG_BYTES);
			recvs++;
		}
		assert_int_equal(sends, 8);
		assert_int_equal(recvs, 8);
	}
	h_side_close(&s[1]);
	h_side_close(&s[0]);
}

#define N_BOUND 100
#define CQ_SIZE 64

static void
progress__a_full_cq_holds_the_sender_back_and_loses_nothing(void **state)
{
	static uint8_t rbuf[N_BOUND][MSG_BYTES], sbuf[N_BOUND][MSG_BYTES];
	struct fi_cq_msg_entry se[N_BOUND], re[N_BOUND];
	unsigned sent = 0, recvd = 0;
	struct h_side a, b;
	fi_addr_t to;

	(void)state;
	h_side_open(&a, &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG}, NULL);
	/* b's receives complete on a CQ of CQ_SIZE; reading its send CQ moves b without
	 * reading them */
	h_side_open(&b, &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG},
		    &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG, .size = CQ_SIZE});
	to = h_side_insert(&a, &b);
	for (unsigned i = 0; i < N_BOUND; i++) {
		assert_int_equal(fi_recv(b.ep, rbuf[i], MSG_BYTES, NULL, 0, rbuf[i]), 0);
		fill(sbuf[i], i);
		assert_int_equal(fi_send(a.ep, sbuf[i], MSG_BYTES, NULL, to, sbuf[i]), 0);
	}
	/* b's CQ fills, then its receive slots; then a's next SEND waits at the daemon */
	for (time_t end = deadline(); sent < CQ_SIZE + RX_SLOTS && time(NULL) < end;) {
		take(a.tx_cq, se, &sent, N_BOUND);
		pump(b.tx_cq);
	}
	assert_int_equal(sent, CQ_SIZE + RX_SLOTS);
	for (unsigned i = 0; i < 100; i++) {
		take(a.tx_cq, se, &sent, N_BOUND);
		pump(b.tx_cq);
	}
	assert_int_equal(sent, CQ_SIZE + RX_SLOTS); /* held back, not dropped */
	/* the CQ holds exactly its size, oldest first, and no FI_EOVERRUN error */
	assert_int_equal(fi_cq_read(b.rx_cq, re, N_BOUND), CQ_SIZE);
	recvd = CQ_SIZE;
	for (time_t end = deadline(); (sent < N_BOUND || recvd < N_BOUND) && time(NULL) < end;) {
		take(a.tx_cq, se, &sent, N_BOUND);
		take(b.rx_cq, re, &recvd, N_BOUND);
	}
	assert_int_equal(sent, N_BOUND);
	assert_int_equal(recvd, N_BOUND);
	for (unsigned i = 0; i < N_BOUND; i++) {
		assert_ptr_equal(se[i].op_context, sbuf[i]);
		assert_ptr_equal(re[i].op_context, rbuf[i]);
		assert_memory_equal(rbuf[i], sbuf[i], MSG_BYTES);
	}
	h_side_close(&b);
	h_side_close(&a);
}

#define N_DOOMED 128 /**< FI_SLUICE_TX_SLOTS of the run: twice the CQ's size */

static void
progress__error_completions_wait_for_room_in_the_cq(void **state)
{
	static uint8_t sbuf[N_DOOMED][MSG_BYTES];
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	char name[H_NAME_BYTES];
	struct fi_cq_err_entry err;
	struct fi_cq_msg_entry e;
	struct h_side a;
	fi_addr_t to;
	int lfd;

	(void)state;
	h_side_open(&a, &(struct fi_cq_attr){.format = FI_CQ_FORMAT_MSG, .size = CQ_SIZE}, NULL);
	/* a peer that takes the connection into its backlog and never answers, then closes */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	snprintf(name, sizeof(name), "fi_sluice://127.0.0.1:%u", ntohs(sa.sin_port));
	assert_int_equal(fi_av_insert(a.av, name, 1, &to, 0, NULL), 1);
	for (unsigned i = 0; i < N_DOOMED; i++)
		assert_int_equal(fi_send(a.ep, sbuf[i], MSG_BYTES, NULL, to, sbuf[i]), 0);
	assert_int_equal(fi_cq_read(a.tx_cq, &e, 1), -FI_EAGAIN); /* the HELLO goes out */
	close(lfd); /* resets the connection: the handshake is refused */
	/* every send completes in error, each once, in order, though twice the CQ's size */
	for (unsigned i = 0; i < N_DOOMED; i++) {
		take_err(a.tx_cq, &err);
		assert_int_equal(err.err, FI_ECONNREFUSED);
		assert_true(err.flags & FI_SEND);
		assert_ptr_equal(err.op_context, sbuf[i]);
	}
	assert_int_equal(fi_cq_read(a.tx_cq, &e, 1), -FI_EAGAIN);
	assert_int_equal(fi_send(a.ep, sbuf[0], MSG_BYTES, NULL, to, sbuf[0]), -FI_ECONNREFUSED);
	h_side_close(&a);
}

static void
progress__a_daemon_gone_ends_outstanding_work_in_error(void **state)
{
	static uint8_t rbuf[3][MSG_BYTES], sbuf[4][MSG_BYTES];
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD};
	struct h_daemon *d = *state;
	struct fi_cq_err_entry err;
	struct fi_cq_msg_entry e[2];
	unsigned got[2] = {0, 0}, seen = 0;
	struct timespec t0, t1;
	struct h_side a, b;
	fi_addr_t to;
	ssize_t r;

	h_side_open(&a, &attr, NULL);
	h_side_open(&b, &attr, NULL);
	to = h_side_insert(&a, &b);
	/* a first message: the QPs connected */
	assert_int_equal(fi_recv(b.ep, rbuf[0], MSG_BYTES, NULL, 0, rbuf[0]), 0);
	assert_int_equal(fi_send(a.ep, sbuf[0], MSG_BYTES, NULL, to, sbuf[0]), 0);
	for (time_t end = deadline(); (got[0] < 1 || got[1] < 1) && time(NULL) < end;) {
		take(a.tx_cq, &e[0], &got[0], 1);
		take(b.tx_cq, &e[1], &got[1], 1);
	}
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 1);
	/* work outstanding at the daemon when it goes */
	atomic_store(&d->lane, false);
	pthread_mutex_lock(&d->lock); /* the lane's last pass is over */
	pthread_mutex_unlock(&d->lock);
	for (unsigned i = 1; i < 4; i++)
		assert_int_equal(fi_send(a.ep, sbuf[i], MSG_BYTES, NULL, to, sbuf[i]), 0);
	for (unsigned i = 1; i < 3; i++)
		assert_int_equal(fi_recv(b.ep, rbuf[i], MSG_BYTES, NULL, 0, rbuf[i]), 0);
	h_daemon_stop(d);
	/* a sleeping reader wakes for it: the error is there well before the timeout */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = fi_cq_sread(a.tx_cq, e, 1, NULL, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(r, -FI_EAVAIL);
	assert_true(t1.tv_sec - t0.tv_sec < 3); /* of sread's 5 */
	for (unsigned i = 1; i < 4; i++) {
		take_err(a.tx_cq, &err);
		assert_int_equal(err.err, FI_ECONNABORTED);
		assert_true(err.flags & FI_SEND);
		for (unsigned k = 1; k < 4; k++)
			if (err.op_context == sbuf[k])
				seen |= 1u << k;
	}
	assert_int_equal(seen, 0xe); /* each send once */
	assert_int_equal(fi_cq_read(a.tx_cq, e, 1), -FI_EAGAIN);
	/* the receives posted end too */
	for (unsigned i = 1; i < 3; i++) {
		take_err(b.rx_cq, &err);
		assert_int_equal(err.err, FI_ECONNABORTED);
		assert_true(err.flags & FI_RECV);
		assert_ptr_equal(err.op_context, rbuf[i]);
	}
	/* and new work is refused at once */
	assert_int_equal(fi_send(a.ep, sbuf[0], MSG_BYTES, NULL, to, sbuf[0]), -FI_ECONNABORTED);
	assert_int_equal(fi_send(b.ep, sbuf[0], MSG_BYTES, NULL, h_side_insert(&b, &a), sbuf[0]),
			 -FI_ECONNABORTED);
	h_side_close(&b);
	h_side_close(&a);
	h_daemon_start(d, h_fabric_socket()); /* for teardown */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(progress__messages_move_both_ways_in_order,
						h_fabric_setup, h_fabric_teardown),
		cmocka_unit_test_setup_teardown(
			progress__a_full_cq_holds_the_sender_back_and_loses_nothing, h_fabric_setup,
			h_fabric_teardown),
		cmocka_unit_test_setup_teardown(progress__error_completions_wait_for_room_in_the_cq,
						h_fabric_setup, h_fabric_teardown),
		cmocka_unit_test_setup_teardown(
			progress__a_daemon_gone_ends_outstanding_work_in_error, h_fabric_setup,
			h_fabric_teardown),
	};

	h_fabric_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
