/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_hostile.c - hostile applications against two sluiced daemons, and the well-behaved
 * application that must keep being served beside them: the daemon never blocks on what an
 * application shares, maps only memory whose pages cannot vanish, and bounds how many
 * applications it serves (docs/api.md, "The channel").
 *
 *   api_hostile -S sock -p port victim-server
 *   api_hostile -S sock -p port [-n rounds] [-s bytes] victim-client HOST
 *       SEND/RECV ping-pong on one QP, each side sleeping on its CQ's event fd between
 *       completions (so a daemon that stopped signalling would stall it). The client sends
 *       a patterned message (the round in its immediate), the server checks every byte and
 *       echoes it, the client checks the echo and times the round trip. -n 0: until SIGTERM
 *       or SIGINT, then one last round tells the server to stop, and "victim: served N" every
 *       PROGRESS_ROUNDS meanwhile. The client prints the round trips' median, 90th percentile
 *       and maximum in us.
 *
 *   api_hostile -S sock -p port cq-flood-server
 *   api_hostile -S sock -p port cq-flood-client HOST
 *       Two QPs WRITE into the peer's region, FLOOD_DEPTH in flight each, refilled once per
 *       round (a round a millisecond); every round arms both CQs and never reads an event
 *       fd: one fd is set blocking (fcntl on our end), the other is closed (its number then
 *       holds /dev/null, which libsluice closes at the end). The daemon's signal must neither
 *       block nor fail the lane: its events are refused by a full or closed socket and
 *       counted (events_unsent). Prints "flooding" once both QPs are connected; runs until SIGTERM.
 *       The client is stopped first: it waits for its WRITEs in flight, every one must have
 *       succeeded. The server's QPs then fail (the client's are gone): it prints
 *       "cq-flood: QP failed" and goes on until its own SIGTERM; the test checks that this
 *       came only after the client was stopped. Both print their WRITE count at the end.
 *
 *   api_hostile -S sock -p port stash-hog-server
 *   api_hostile -S sock -p port stash-hog-client HOST
 *       An application that never posts a RECV: the client SENDs 64 KiB on each of its
 *       STASH_HOG_QPS QPs in turn, one at a time, into the server's daemon's stash, until a
 *       SEND fails, which must be RNR_RETRY_EXC_ERR (its application's share of the stash,
 *       [api] client_stash_bytes, is full: refused for now, sent again after each backoff until
 *       the QP's timeout); the messages of its other QPs stay held. Prints
 *       "stash-hog: N SENDs of B bytes held by the peer's stash, then refused: ..."; both sides
 *       hold on until SIGTERM.
 *
 *   api_hostile -S sock -p port stash-early-server
 *   api_hostile -S sock -p port stash-early-client HOST
 *       A well-behaved application that SENDs before its peer has posted a RECV: the client's
 *       STASH_EARLY_MSGS SENDs of 64 KiB (3 MiB) must all succeed, held in the server's
 *       daemon's stash; only then does the server post its RECVs, and it checks every byte
 *       of every message and their order.
 *
 *   api_hostile -S sock -d dir hello-mem
 *       Speaks the raw channel (sl_chan_abi.h): HELLOs whose memory could vanish under the daemon
 *       must be refused: a huge-page memfd (MFD_HUGETLB) and a file outside tmpfs (an
 *       O_TMPFILE in dir) with -EINVAL, a memfd not sealed against shrinking with -EPERM; a
 *       sealed memfd on tmpfs, last, is accepted (the raw client speaks the channel right).
 *       Prints "refused N" (N: the refusals the daemon should have counted).
 *
 *   api_hostile -S sock [-c max] conn-flood
 *       Opens contexts (sl_ctx_open) until one fails, which must fail with EMFILE (the
 *       daemon's [api] clients reached), not a reset; prints "opened N", closes them all.
 *
 *   api_hostile -S sock denied
 *       Run as a user the daemon's [api] allow_users does not name, on a socket whose mode
 *       lets it connect: sl_ctx_open must fail with EACCES.
 *
 *   api_hostile -S sock hog
 *       One application takes all it may: CQs, then QPs, then MRs (one 4 KiB buffer registered
 *       over and over) until the daemon refuses one, which must be EDQUOT each time (its share,
 *       [api] client_cqs, client_qps, client_mrs, not the pool). Prints "hog: holding N CQs,
 *       N QPs, N MRs" and holds them until SIGTERM, so that another application can be shown
 *       to be served beside it.
 *
 *   api_hostile -S sock [-c n] idle
 *       n raw connections to the socket that never say HELLO, filling the daemon's client
 *       table beside the application already attached: a context opened meanwhile must fail
 *       with EMFILE; the daemon must close every one of them ([api] hello_timeout_ms), and a
 *       context then attaches. Prints "idle: n connections without HELLO, n closed by the
 *       daemon within N ms".
 *
 *   api_hostile -S sock peer-guess
 *       An application on the peer host of another's QP, which it was never given: GUESS_QPS
 *       QPs, QP i connected to QPN i of the other host (lowest-free-first numbering puts the
 *       other applications' QPs among the first few) with a first PSN and a token it can only
 *       guess (drawn at random). Each QP posts a SEND and a WRITE to a random address under a
 *       random rkey, both signaled. Every work request must complete with an error, none with
 *       success; prints "peer-guess: N work requests, each refused (status ...)".
 *
 * Exit status: 0 when every check held, 1 otherwise (each failure printed), 2 on usage.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <sl_chan_abi.h>
#include <sluice.h>

#define TIMEOUT_MS 10000
#define ROUNDS_MAX (1u << 20) /**< round trips one victim run records, at most */
#define PROGRESS_ROUNDS 256u  /**< -n 0: a progress line every this many round trips */
#define IMM_LAST 1u           /**< the client's last message: the server echoes and stops */
#define FLOOD_QPS 2           /**< QPs of a CQ flooder, one CQ each */
#define FLOOD_BYTES 1024u     /**< each WRITE, bytes */
#define FLOOD_DEPTH 16u       /**< WRITEs in flight per QP */
/*
 * The flooder's sleep per round, ns. It attacks the event fds, not the cores it shares with
 * the daemons and the victim: at 1 ms each of its CQs is still armed a thousand times a second
 * (ten unread events fill a queue), yet its wake-ups leave the victim's latency to the daemons.
 */
#define FLOOD_PAUSE_NS 1000000L
#define HELLO_BYTES (2u << 20) /**< the raw HELLOs' memory: one 2 MiB huge page */
#define CONN_MAX_DEFAULT 64u   /**< contexts conn-flood opens at most */
#define GUESS_QPS 4            /**< QPs peer-guess connects to guessed QPNs */
#define APP_QPS_MAX 8          /**< QPs of one app_open(), at most */
#define STASH_HOG_QPS 8        /**< QPs of a stash hog */
#define STASH_MSG_BYTES 65536u /**< each SEND of the stash hog and the early sender, bytes */
/*
 * The early sender's SENDs: 3 MiB, within its own share of the peer's stash (a quarter of 16
 * MiB by default), and more than a hog of STASH_HOG_QPS QPs would leave of the whole stash
 * without shares (it holds all but what its refused QP freed: an eighth).
 */
#define STASH_EARLY_MSGS 48u
#define STASH_EARLY_DEPTH 64u  /**< its QPs' ring depth: room for them all at once */
#define GUESS_BYTES 64u        /**< each of its SENDs and WRITEs, bytes */
#define GUESS_TIMEOUT_MS 60000 /**< its work requests fail within this (a QP times out) */

static volatile sig_atomic_t stop;
static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "api_hostile: FAIL: " __VA_ARGS__);                        \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static void
die(const char *what, int err)
{
	fprintf(stderr, "api_hostile: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
catch_stop(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint8_t
pattern(uint32_t round, uint32_t i)
{
	return (uint8_t)(round * 131u + i * 7u + (i >> 8) + 1u);
}

struct app {
	struct sl_ctx *ctx;
	struct sl_cq *cq;
	struct sl_qp *qp[APP_QPS_MAX];
	unsigned n_qps;
	struct sl_mr *mr;
	uint8_t *buf;
	struct sl_oob *oob;
	struct sl_qp_info peer[APP_QPS_MAX];
};

/*
 * A context, one CQ of cq_depth and n QPs of depth entries each on it, bytes of registered
 * memory; connected to the peer's n QPs.
 */
static void
app_open(struct app *a, const char *sock, const char *host, uint16_t port, size_t bytes, unsigned n,
	 uint32_t depth, uint32_t cq_depth)
{
	struct sl_qp_info mine[APP_QPS_MAX];
	int rc;

	a->ctx = sl_ctx_open(sock, NULL);
	if (a->ctx == NULL)
		die("sl_ctx_open", errno);
	a->cq = sl_cq_create(a->ctx, cq_depth);
	if (a->cq == NULL)
		die("sl_cq_create", errno);
	a->buf = sl_mem_alloc(a->ctx, bytes);
	if (a->buf == NULL)
		die("sl_mem_alloc", errno);
	a->mr = sl_mr_reg(a->ctx, a->buf, bytes, SL_ACCESS_LOCAL_WRITE);
	if (a->mr == NULL)
		die("sl_mr_reg", errno);
	a->n_qps = n;
	for (unsigned q = 0; q < n; q++) {
		struct sl_qp_attr attr = {
			.send_cq = a->cq, .recv_cq = a->cq, .sq_depth = depth, .rq_depth = depth};

		a->qp[q] = sl_qp_create(a->ctx, &attr);
		if (a->qp[q] == NULL)
			die("sl_qp_create", errno);
		sl_qp_info(a->qp[q], a->mr, &mine[q]);
	}
	a->oob = host ? sl_oob_connect(host, port, TIMEOUT_MS) : sl_oob_accept(port, TIMEOUT_MS);
	if (a->oob == NULL)
		die(host ? "sl_oob_connect" : "sl_oob_accept", errno);
	if ((rc = sl_oob_exchange(a->oob, mine, a->peer, n)) != 0)
		die("sl_oob_exchange", -rc);
	for (unsigned q = 0; q < n; q++)
		if ((rc = sl_qp_connect(a->qp[q], &a->peer[q])) != 0)
			die("sl_qp_connect", -rc);
}

static void
app_close(struct app *a)
{
	sl_oob_close(a->oob);
	sl_ctx_close(a->ctx);
}

/* --- victim -------------------------------------------------------------------------------- */

/* Completions seen so far, by kind. */
struct seen {
	uint32_t sends, recvs;
	uint32_t len, imm; /**< the last RECV's bytes and immediate */
};

/*
 * The next completion on cq, sleeping on its event fd while there is none (TIMEOUT_MS at most):
 * poll, arm, poll again, then wait on the fd.
 */
static struct sl_wc
next_wc(struct sl_cq *cq)
{
	struct pollfd p = {.fd = sl_cq_event_fd(cq), .events = POLLIN};
	struct sl_wc wc;
	uint64_t ev;

	for (;;) {
		int n = sl_cq_poll(cq, &wc, 1);

		if (n == 0) {
			sl_cq_arm(cq);
			n = sl_cq_poll(cq, &wc, 1);
		}
		if (n < 0)
			die("sl_cq_poll", -n);
		if (n == 1)
			return wc;
		do
			n = poll(&p, 1, TIMEOUT_MS);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			die("waiting on the event fd", n == 0 ? ETIMEDOUT : errno);
		while (read(p.fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev))
			;
	}
}

/* Until sends and recvs reach the counts asked for, each completion successful. */
static void
await(struct sl_cq *cq, struct seen *s, uint32_t sends, uint32_t recvs)
{
	while (s->sends < sends || s->recvs < recvs) {
		struct sl_wc wc = next_wc(cq);

		if (wc.status != SL_WC_SUCCESS) {
			fprintf(stderr, "api_hostile: wr %" PRIu64 " failed: %s\n", wc.wr_id,
				sl_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.opcode == SL_WC_RECV) {
			s->recvs++;
			s->len = wc.byte_len;
			s->imm = wc.imm;
		} else {
			s->sends++;
		}
	}
}

static void
post_recv(struct app *a, unsigned q, uint8_t *p, uint32_t bytes)
{
	struct sl_recv_wr r = {.lkey = sl_mr_lkey(a->mr), .addr = p, .len = bytes};
	int rc = sl_post_recv(a->qp[q], &r, 1);

	if (rc != 1)
		die("sl_post_recv", rc < 0 ? -rc : EIO);
}

static void
post_send(struct app *a, unsigned q, uint8_t *p, uint32_t bytes, uint32_t imm)
{
	struct sl_wr w = {.opcode = SL_WR_SEND_WITH_IMM,
			  .flags = SL_WR_F_SIGNALED,
			  .lkey = sl_mr_lkey(a->mr),
			  .addr = p,
			  .len = bytes,
			  .imm = imm};
	int rc = sl_post_send(a->qp[q], &w, 1);

	if (rc != 1)
		die("sl_post_send", rc < 0 ? -rc : EIO);
}

/* The message of this round arrived whole: 0, or 1 with the failure printed. */
static int
check_msg(const char *who, const uint8_t *p, const struct seen *s, uint32_t bytes, uint32_t round)
{
	if (s->len != bytes) {
		fprintf(stderr, "api_hostile: %s: round %u: %u bytes, want %u\n", who, round,
			s->len, bytes);
		return 1;
	}
	for (uint32_t i = 0; i < bytes; i++)
		if (p[i] != pattern(round, i)) {
			fprintf(stderr, "api_hostile: %s: round %u: byte %u is %u, want %u\n", who,
				round, i, p[i], pattern(round, i));
			return 1;
		}
	return 0;
}

static int
cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int
victim(const char *sock, const char *host, uint16_t port, uint32_t rounds, uint32_t bytes)
{
	struct app a;
	struct seen seen = {0};
	uint64_t *rtt = NULL;
	uint8_t *tx, *rx;
	uint32_t r;

	app_open(&a, sock, host, port, 2 * (size_t)bytes, 1, 16, 64);
	tx = a.buf;
	rx = a.buf + bytes;
	post_recv(&a, 0, rx, bytes);
	if (sl_oob_sync(a.oob) != 0)
		die("sl_oob_sync", EPROTO);
	printf("victim: connected\n");
	fflush(stdout);
	if (host) {
		uint32_t cap = rounds ? rounds : ROUNDS_MAX;

		rtt = malloc(cap * sizeof(*rtt));
		if (rtt == NULL)
			die("malloc", ENOMEM);
		catch_stop();
		for (r = 0;; r++) {
			/* the last round says so; with -n 0 the one after a signal */
			bool last = rounds ? r + 1 == rounds : stop || r + 1 == cap;
			uint64_t t0;

			for (uint32_t i = 0; i < bytes; i++)
				tx[i] = pattern(r, i);
			t0 = now_ns();
			post_send(&a, 0, tx, bytes, last ? IMM_LAST : 0);
			await(a.cq, &seen, r + 1, r + 1);
			rtt[r] = now_ns() - t0;
			if (check_msg("victim-client", rx, &seen, bytes, r))
				return 1;
			post_recv(&a, 0, rx, bytes);
			if (last)
				break;
			if (rounds == 0 && (r + 1) % PROGRESS_ROUNDS == 0)
				printf("victim: served %u\n", r + 1);
		}
		r++;
		qsort(rtt, r, sizeof(*rtt), cmp_u64);
		printf("victim: %u round trips of %u bytes checked; rtt_us median %.1f p90 %.1f "
		       "max %.1f\n",
		       r, bytes, rtt[r / 2] / 1e3, rtt[r * 9 / 10] / 1e3, rtt[r - 1] / 1e3);
		free(rtt);
	} else {
		for (r = 0;; r++) {
			await(a.cq, &seen, r, r + 1); /* the last echo has left tx */
			if (check_msg("victim-server", rx, &seen, bytes, r))
				return 1;
			memcpy(tx, rx, bytes);
			post_recv(&a, 0, rx, bytes);
			post_send(&a, 0, tx, bytes, seen.imm);
			if (seen.imm == IMM_LAST)
				break;
		}
		await(a.cq, &seen, r + 1, 0);
		printf("victim: %u messages checked and echoed\n", r + 1);
	}
	app_close(&a);
	return 0;
}

/* --- the early-SEND stash -------------------------------------------------------------------- */

/*
 * The hog's receiving side never posts a RECV: every SEND its peer makes is held in the lane's
 * stash. Its sending side SENDs STASH_MSG_BYTES on each of its QPs in turn, one at a time, until
 * one fails, which must be RNR_RETRY_EXC_ERR (its application's share of the stash is full: the
 * SEND is refused for now until the QP's timeout); the other QPs' messages stay held. Both then
 * hold on until SIGTERM.
 */
static int
stash_hog(const char *sock, const char *host, uint16_t port)
{
	struct app a;
	uint32_t held = 0;
	struct sl_wc wc = {.status = SL_WC_SUCCESS};

	catch_stop();
	app_open(&a, sock, host, port, STASH_MSG_BYTES, STASH_HOG_QPS, 4, 16);
	if (sl_oob_sync(a.oob) != 0)
		die("sl_oob_sync", EPROTO);
	printf("stash-hog: connected\n");
	for (unsigned q = 0; host && !stop && wc.status == SL_WC_SUCCESS; q = (q + 1) % a.n_qps) {
		post_send(&a, q, a.buf, STASH_MSG_BYTES, 0);
		wc = next_wc(a.cq);
		held += wc.status == SL_WC_SUCCESS;
	}
	if (host) {
		printf("stash-hog: %u SENDs of %u bytes held by the peer's stash, then refused: "
		       "%s\n",
		       held, STASH_MSG_BYTES, sl_wc_status_str(wc.status));
		CHECK(wc.status == SL_WC_RNR_RETRY_EXC_ERR, "the refusal is %s, want %s",
		      sl_wc_status_str(wc.status), sl_wc_status_str(SL_WC_RNR_RETRY_EXC_ERR));
	}
	while (!stop)
		pause();
	app_close(&a);
	return failures ? 1 : 0;
}

/*
 * A well-behaved application that SENDs before its peer posts RECVs: the client's
 * STASH_EARLY_MSGS SENDs must all succeed (held in the peer's stash), then the server posts its
 * RECVs and checks every byte of every message, in order.
 */
static int
stash_early(const char *sock, const char *host, uint16_t port)
{
	struct app a;
	struct seen seen = {0};

	app_open(&a, sock, host, port, (size_t)STASH_EARLY_MSGS * STASH_MSG_BYTES, 1,
		 STASH_EARLY_DEPTH, 2 * STASH_EARLY_DEPTH);
	if (sl_oob_sync(a.oob) != 0)
		die("sl_oob_sync", EPROTO);
	for (uint32_t m = 0; host && m < STASH_EARLY_MSGS; m++) {
		uint8_t *p = a.buf + (size_t)m * STASH_MSG_BYTES;

		for (uint32_t i = 0; i < STASH_MSG_BYTES; i++)
			p[i] = pattern(m, i);
		post_send(&a, 0, p, STASH_MSG_BYTES, m);
	}
	if (host) {
		await(a.cq, &seen, STASH_EARLY_MSGS, 0);
		printf("stash-early: %u SENDs of %u bytes held by the peer before its RECVs\n",
		       STASH_EARLY_MSGS, STASH_MSG_BYTES);
	}
	if (sl_oob_sync(a.oob) != 0) /* the server posts its RECVs only now */
		die("sl_oob_sync", EPROTO);
	for (uint32_t m = 0; !host && m < STASH_EARLY_MSGS; m++)
		post_recv(&a, 0, a.buf + (size_t)m * STASH_MSG_BYTES, STASH_MSG_BYTES);
	for (uint32_t m = 0; !host && m < STASH_EARLY_MSGS; m++) {
		await(a.cq, &seen, 0, m + 1);
		CHECK(seen.imm == m, "message %u arrived as %u", m, seen.imm);
		if (check_msg("stash-early", a.buf + (size_t)m * STASH_MSG_BYTES, &seen,
			      STASH_MSG_BYTES, m))
			failures++;
	}
	if (!host)
		printf("stash-early: %u messages checked\n", STASH_EARLY_MSGS);
	if (sl_oob_sync(a.oob) != 0) /* the client stays until they were checked */
		die("sl_oob_sync", EPROTO);
	app_close(&a);
	return failures ? 1 : 0;
}

/* --- CQ event flood ------------------------------------------------------------------------ */

static int
cq_flood(const char *sock, const char *host, uint16_t port)
{
	struct sl_qp_info mine[FLOOD_QPS], theirs[FLOOD_QPS];
	struct sl_cq *cq[FLOOD_QPS];
	struct sl_qp *qp[FLOOD_QPS];
	uint64_t posted[FLOOD_QPS] = {0}, done[FLOOD_QPS] = {0}, writes = 0;
	bool dead[FLOOD_QPS] = {false};
	struct timespec pause = {.tv_nsec = FLOOD_PAUSE_NS};
	struct sl_ctx *ctx;
	struct sl_oob *o;
	struct sl_mr *mr;
	uint8_t *buf;
	int rc, fl, null;

	catch_stop();
	ctx = sl_ctx_open(sock, NULL);
	if (ctx == NULL)
		die("sl_ctx_open", errno);
	buf = sl_mem_alloc(ctx, FLOOD_BYTES);
	if (buf == NULL)
		die("sl_mem_alloc", errno);
	mr = sl_mr_reg(ctx, buf, FLOOD_BYTES, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		die("sl_mr_reg", errno);
	for (int q = 0; q < FLOOD_QPS; q++) {
		struct sl_qp_attr attr = {.sq_depth = FLOOD_DEPTH, .rq_depth = 16};

		cq[q] = sl_cq_create(ctx, 64);
		if (cq[q] == NULL)
			die("sl_cq_create", errno);
		attr.send_cq = attr.recv_cq = cq[q];
		qp[q] = sl_qp_create(ctx, &attr);
		if (qp[q] == NULL)
			die("sl_qp_create", errno);
		sl_qp_info(qp[q], mr, &mine[q]);
	}
	/* CQ 0's end blocking (it is our open file, not the daemon's); CQ 1's end closed. */
	fl = fcntl(sl_cq_event_fd(cq[0]), F_GETFL);
	if (fl < 0 || fcntl(sl_cq_event_fd(cq[0]), F_SETFL, fl & ~O_NONBLOCK) != 0)
		die("fcntl on the event fd", errno);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, sl_cq_event_fd(cq[1])) < 0)
		die("closing the event fd", errno);
	close(null);
	o = host ? sl_oob_connect(host, port, TIMEOUT_MS) : sl_oob_accept(port, TIMEOUT_MS);
	if (o == NULL)
		die(host ? "sl_oob_connect" : "sl_oob_accept", errno);
	if ((rc = sl_oob_exchange(o, mine, theirs, FLOOD_QPS)) != 0)
		die("sl_oob_exchange", -rc);
	for (int q = 0; q < FLOOD_QPS; q++)
		if ((rc = sl_qp_connect(qp[q], &theirs[q])) != 0)
			die("sl_qp_connect", -rc);
	if ((rc = sl_oob_sync(o)) != 0)
		die("sl_oob_sync", -rc);
	printf("cq-flood: flooding\n");
	fflush(stdout);
	while (!stop) {
		for (int q = 0; q < FLOOD_QPS; q++) {
			struct sl_wr wr = {.opcode = SL_WR_WRITE,
					   .flags = SL_WR_F_SIGNALED,
					   .lkey = sl_mr_lkey(mr),
					   .addr = buf,
					   .len = FLOOD_BYTES,
					   .raddr = theirs[q].addr,
					   .rkey = theirs[q].rkey};
			struct sl_wc wc[FLOOD_DEPTH];
			int n;

			while (!dead[q] && posted[q] - done[q] < FLOOD_DEPTH) {
				wr.wr_id = posted[q];
				if (sl_post_send(qp[q], &wr, 1) != 1)
					break;
				posted[q]++;
			}
			n = sl_cq_poll(cq[q], wc, FLOOD_DEPTH);
			for (int i = 0; i < n; i++) {
				done[q]++;
				if (wc[i].status == SL_WC_SUCCESS) {
					writes++;
					continue;
				}
				if (host)
					die("cq-flood: a WRITE failed", EIO);
				if (!dead[q])
					printf("cq-flood: QP failed (%s)\n",
					       sl_wc_status_str(wc[i].status));
				dead[q] = true;
			}
			/* an event per arm, never read */
			sl_cq_arm(cq[q]);
		}
		nanosleep(&pause, NULL);
	}
	/* The client's WRITEs in flight complete, each one successfully. */
	for (uint64_t t0 = now_ns(); host;) {
		uint64_t left = 0;

		for (int q = 0; q < FLOOD_QPS; q++) {
			struct sl_wc wc[FLOOD_DEPTH];
			int n = sl_cq_poll(cq[q], wc, FLOOD_DEPTH);

			for (int i = 0; i < n; i++) {
				if (wc[i].status != SL_WC_SUCCESS)
					die("cq-flood: a WRITE failed", EIO);
				done[q]++;
				writes++;
			}
			left += posted[q] - done[q];
		}
		if (left == 0)
			break;
		if (now_ns() - t0 > (uint64_t)TIMEOUT_MS * 1000000u)
			die("cq-flood: WRITEs in flight", ETIMEDOUT);
	}
	printf("cq-flood: %" PRIu64 " WRITEs completed\n", writes);
	fflush(stdout);
	sl_oob_close(o);
	sl_ctx_close(ctx);
	return 0;
}

/* --- HELLO with memory that could vanish ------------------------------------------------- */

/* One raw HELLO with fd as the memory: the daemon's status (0 or -errno), or exit. */
static int
raw_hello(const char *sock, int fd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = TIMEOUT_MS / 1000};
	struct sl_chan_req q = {.magic = SL_CHAN_MAGIC,
				.version = SL_CHAN_VERSION,
				.type = SL_CHAN_HELLO,
				.seq = 1,
				.u.hello = {.mem_bytes = HELLO_BYTES, .base_va = 1u << 30}};
	struct sl_chan_rsp r;
	struct iovec iov = {.iov_base = &q, .iov_len = sizeof(q)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c;
	ssize_t n;
	int s;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("connecting to the daemon", errno);
	if (sendmsg(s, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		die("sending HELLO", errno);
	n = recv(s, &r, sizeof(r), 0);
	if (n != (ssize_t)sizeof(r))
		die("reading HELLO's answer", n < 0 ? errno : EPROTO);
	close(s);
	if (r.magic != SL_CHAN_MAGIC || r.type != SL_CHAN_HELLO || r.seq != q.seq)
		die("HELLO's answer", EPROTO);
	return r.status;
}

/* A memfd of HELLO_BYTES with the given flags and seals, or -errno. */
static int
memfd(unsigned flags, int seals)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING | flags);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, HELLO_BYTES) != 0 || (seals && fcntl(fd, F_ADD_SEALS, seals) != 0)) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

static void
hello_case(const char *sock, const char *name, int fd, int want, int *refused)
{
	int rc;

	if (fd < 0) {
		CHECK(false, "%s: cannot make the memory: %s", name, strerror(-fd));
		return;
	}
	rc = raw_hello(sock, fd);
	close(fd);
	printf("hello-mem: %-34s %s\n", name, rc ? strerror(-rc) : "accepted");
	CHECK(rc == want, "%s: HELLO answered %d, want %d", name, rc, want);
	if (want != 0 && rc == want)
		(*refused)++;
}

static int
hello_mem(const char *sock, const char *dir)
{
	int refused = 0, fd;

	hello_case(sock, "huge-page memfd (MFD_HUGETLB)",
		   memfd(MFD_HUGETLB, F_SEAL_SHRINK | F_SEAL_GROW), -EINVAL, &refused);
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 && ftruncate(fd, HELLO_BYTES) != 0) {
		close(fd);
		fd = -1;
	}
	hello_case(sock, "file outside tmpfs (O_TMPFILE)", fd < 0 ? -errno : fd, -EINVAL, &refused);
	hello_case(sock, "memfd without F_SEAL_SHRINK", memfd(0, F_SEAL_GROW), -EPERM, &refused);
	hello_case(sock, "sealed memfd on tmpfs", memfd(0, F_SEAL_SHRINK | F_SEAL_GROW), 0,
		   &refused);
	printf("hello-mem: refused %d\n", refused);
	return failures ? 1 : 0;
}

/* --- connection limit ---------------------------------------------------------------------- */

static int
conn_flood(const char *sock, uint32_t max)
{
	struct sl_ctx **ctx = calloc(max, sizeof(*ctx));
	uint32_t n = 0;
	int err = 0;

	if (ctx == NULL)
		die("calloc", ENOMEM);
	for (; n < max; n++) {
		ctx[n] = sl_ctx_open(sock, NULL);
		if (ctx[n] == NULL) {
			err = errno;
			break;
		}
	}
	printf("conn-flood: opened %u, then %s\n", n, err ? strerror(err) : "no refusal");
	CHECK(err == EMFILE, "context %u: %s, want EMFILE", n + 1,
	      err ? strerror(err) : "no refusal");
	while (n > 0)
		sl_ctx_close(ctx[--n]);
	free(ctx);
	return failures ? 1 : 0;
}

static int
denied(const char *sock)
{
	struct sl_ctx *ctx = sl_ctx_open(sock, NULL);
	int err = ctx ? 0 : errno;

	printf("denied: uid %u: %s\n", (unsigned)getuid(), ctx ? "attached" : strerror(err));
	CHECK(err == EACCES, "uid %u: %s, want EACCES", (unsigned)getuid(),
	      ctx ? "attached" : strerror(err));
	if (ctx)
		sl_ctx_close(ctx);
	return failures ? 1 : 0;
}

/* --- one application's share, and connections that never say HELLO ------------------------ */

/* Count in made the objects make yields until it yields NULL, which must be for EDQUOT. */
#define HOG(what, made, make)                                                                      \
	do {                                                                                       \
		while ((make) != NULL)                                                             \
			(made)++;                                                                  \
		CHECK(errno == EDQUOT, "hog: %s %u: %s, want EDQUOT", what, (made) + 1,            \
		      strerror(errno));                                                            \
	} while (0)

static int
hog(const char *sock)
{
	struct sl_ctx *ctx = sl_ctx_open(sock, NULL);
	struct sl_cq *first;
	struct sl_qp_attr attr = {.sq_depth = 4, .rq_depth = 4};
	uint32_t cqs = 0, qps = 0, mrs = 0;
	uint8_t *buf;

	catch_stop();
	if (ctx == NULL)
		die("sl_ctx_open", errno);
	buf = sl_mem_alloc(ctx, 4096);
	if (buf == NULL)
		die("sl_mem_alloc", errno);
	first = sl_cq_create(ctx, 4); /* the QPs' */
	if (first == NULL)
		die("sl_cq_create", errno);
	cqs = 1;
	HOG("CQ", cqs, sl_cq_create(ctx, 4));
	attr.send_cq = attr.recv_cq = first;
	HOG("QP", qps, sl_qp_create(ctx, &attr));
	HOG("MR", mrs, sl_mr_reg(ctx, buf, 4096, SL_ACCESS_LOCAL_WRITE));
	printf("hog: holding %u CQs, %u QPs, %u MRs\n", cqs, qps, mrs);
	while (!stop)
		pause();
	sl_ctx_close(ctx);
	return failures ? 1 : 0;
}

static int
idle(const char *sock, uint32_t n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pollfd *p = calloc(n, sizeof(*p));
	struct sl_ctx *ctx;
	uint64_t t0 = now_ns(), waited_ms = 0;
	uint32_t open = n;

	if (p == NULL)
		die("calloc", ENOMEM);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	for (uint32_t i = 0; i < n; i++) {
		p[i].fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		p[i].events = POLLIN;
		if (p[i].fd < 0 || connect(p[i].fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			die("connecting to the daemon", errno);
	}
	ctx = sl_ctx_open(sock, NULL);
	CHECK(ctx == NULL && errno == EMFILE,
	      "a context beside %u idle connections: %s, want EMFILE", n,
	      ctx ? "attached" : strerror(errno));
	if (ctx)
		sl_ctx_close(ctx);
	while (open > 0 && waited_ms < TIMEOUT_MS) {
		char b[8];

		if (poll(p, n, 100) < 0 && errno != EINTR)
			die("poll", errno);
		for (uint32_t i = 0; i < n; i++)
			if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    read(p[i].fd, b, sizeof(b)) <= 0) {
				close(p[i].fd);
				p[i].fd = -1; /* poll skips it from now on */
				open--;
			}
		waited_ms = (now_ns() - t0) / 1000000u;
	}
	printf("idle: %u connections without HELLO, %u closed by the daemon within %" PRIu64
	       " ms\n",
	       n, n - open, waited_ms);
	CHECK(open == 0, "%u of %u connections without HELLO still open after %d ms", open, n,
	      TIMEOUT_MS);
	ctx = sl_ctx_open(sock, NULL);
	CHECK(ctx != NULL, "a context after the idle connections went: %s", strerror(errno));
	if (ctx)
		sl_ctx_close(ctx);
	for (uint32_t i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	return failures ? 1 : 0;
}

/* --- the peer host's guesses -------------------------------------------------------------- */

static int
peer_guess(const char *sock)
{
	struct sl_ctx *ctx = sl_ctx_open(sock, NULL);
	struct sl_qp_attr attr = {.sq_depth = 4, .rq_depth = 4};
	struct sl_qp *qp[GUESS_QPS];
	struct sl_mr *mr;
	struct sl_cq *cq;
	uint8_t *buf;
	uint32_t done = 0, ok = 0, status = SL_WC_SUCCESS;
	uint64_t deadline;
	int rc;

	if (ctx == NULL)
		die("sl_ctx_open", errno);
	cq = sl_cq_create(ctx, 4 * GUESS_QPS);
	buf = sl_mem_alloc(ctx, GUESS_BYTES);
	if (cq == NULL || buf == NULL)
		die("sl_cq_create / sl_mem_alloc", errno);
	memset(buf, 0xEE, GUESS_BYTES);
	mr = sl_mr_reg(ctx, buf, GUESS_BYTES, SL_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("sl_mr_reg", errno);
	attr.send_cq = attr.recv_cq = cq;
	for (uint32_t i = 0; i < GUESS_QPS; i++) {
		struct sl_qp_info guess = {.qpn = i};
		uint32_t r[4];
		struct sl_wr wr[2] = {
			{.wr_id = 2 * i, .opcode = SL_WR_SEND},
			{.wr_id = 2 * i + 1, .opcode = SL_WR_WRITE},
		};

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			die("getrandom", errno);
		guess.psn = r[0];
		guess.token = r[1];
		qp[i] = sl_qp_create(ctx, &attr);
		if (qp[i] == NULL)
			die("sl_qp_create", errno);
		if ((rc = sl_qp_connect(qp[i], &guess)) != 0)
			die("sl_qp_connect", -rc);
		for (int k = 0; k < 2; k++) {
			wr[k].flags = SL_WR_F_SIGNALED;
			wr[k].lkey = sl_mr_lkey(mr);
			wr[k].addr = buf;
			wr[k].len = GUESS_BYTES;
		}
		wr[1].raddr = (uint64_t)r[2] << 32 | r[3];
		wr[1].rkey = r[2] ^ r[3];
		if ((rc = sl_post_send(qp[i], wr, 2)) != 2)
			die("sl_post_send", rc < 0 ? -rc : EIO);
	}
	deadline = now_ns() + GUESS_TIMEOUT_MS * UINT64_C(1000000);
	while (done < 2 * GUESS_QPS && now_ns() < deadline) {
		struct sl_wc wc[8];
		int n = sl_cq_poll(cq, wc, 8);

		if (n < 0)
			die("sl_cq_poll", -n);
		for (int k = 0; k < n; k++) {
			done++;
			ok += wc[k].status == SL_WC_SUCCESS;
			if (wc[k].status != SL_WC_SUCCESS && status == SL_WC_SUCCESS)
				status = wc[k].status;
		}
		if (n == 0)
			usleep(1000);
	}
	printf("peer-guess: %u work requests on %d QPs, %u completed, %u succeeded (first "
	       "refusal: %s)\n",
	       2 * GUESS_QPS, GUESS_QPS, done, ok, sl_wc_status_str(status));
	CHECK(done == 2 * GUESS_QPS, "%u of %d work requests completed in %d ms", done,
	      2 * GUESS_QPS, GUESS_TIMEOUT_MS);
	CHECK(ok == 0, "%u work requests on guessed QPs succeeded", ok);
	sl_ctx_close(ctx);
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *dir = "/var/tmp";
	uint32_t rounds = 500, bytes = 64, max = CONN_MAX_DEFAULT;
	uint16_t port = 18800;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "S:p:n:s:d:c:")) != -1) {
		switch (c) {
		case 'S':
			sock = optarg;
			break;
		case 'p':
			port = (uint16_t)atoi(optarg);
			break;
		case 'n':
			rounds = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'c':
			max = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || sock == NULL || bytes == 0 || rounds > ROUNDS_MAX || max == 0) {
		fprintf(stderr, "usage: api_hostile -S socket [-p port] [-n rounds] [-s bytes] "
				"[-d dir] [-c max] victim-server|victim-client HOST|"
				"cq-flood-server|cq-flood-client HOST|stash-hog-server|"
				"stash-hog-client HOST|stash-early-server|stash-early-client HOST|"
				"hello-mem|conn-flood|denied|"
				"peer-guess|hog|idle\n");
		return 2;
	}
	const char *mode = argv[optind], *host = optind + 1 < argc ? argv[optind + 1] : NULL;

	if (strcmp(mode, "victim-server") == 0)
		return victim(sock, NULL, port, 0, bytes);
	if (strcmp(mode, "victim-client") == 0 && host)
		return victim(sock, host, port, rounds, bytes);
	if (strcmp(mode, "stash-hog-server") == 0)
		return stash_hog(sock, NULL, port);
	if (strcmp(mode, "stash-hog-client") == 0 && host)
		return stash_hog(sock, host, port);
	if (strcmp(mode, "stash-early-server") == 0)
		return stash_early(sock, NULL, port);
	if (strcmp(mode, "stash-early-client") == 0 && host)
		return stash_early(sock, host, port);
	if (strcmp(mode, "cq-flood-server") == 0)
		return cq_flood(sock, NULL, port);
	if (strcmp(mode, "cq-flood-client") == 0 && host)
		return cq_flood(sock, host, port);
	if (strcmp(mode, "hello-mem") == 0)
		return hello_mem(sock, dir);
	if (strcmp(mode, "conn-flood") == 0)
		return conn_flood(sock, max);
	if (strcmp(mode, "denied") == 0)
		return denied(sock);
	if (strcmp(mode, "peer-guess") == 0)
		return peer_guess(sock);
	if (strcmp(mode, "hog") == 0)
		return hog(sock);
	if (strcmp(mode, "idle") == 0)
		return idle(sock, max);
	fprintf(stderr, "api_hostile: unknown mode %s\n", mode);
	return 2;
}
