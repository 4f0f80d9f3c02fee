/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_check.c - two-host checks of libsluice through two sluiced daemons: isolation (a WRITE or
 * READ the target must refuse touches no byte and completes with a remote access error) and
 * the application churn that the killed-application test drives.
 *
 *   api_check -S sock -p port isolation-server
 *   api_check -S sock -p port isolation-client HOST
 *       One QP per case. The server registers three regions in its context A (W: local and
 *       remote write; R: remote read only; and nothing remote in N) and one in a second context
 *       B (another application on the same daemon, remote write and read); it fills each with a
 *       pattern, exchanges infos and waits. The client runs each case on its own QP (a refusal
 *       puts a QP in error, as verbs does) and checks its completion status; at the end the
 *       server checks that W holds the client's bytes exactly where the accepted WRITE put them
 *       and that every other byte of every region is unchanged.
 *
 *   api_check -S sock -p port churn-server
 *   api_check -S sock -p port churn-client HOST
 *       The client connects one QP and WRITEs into the server's region until killed; the
 *       server serves one client, then waits for its QP to fail, then exits 0 (it is killed
 *       too in most rounds). The test around it counts the daemons' fds and memory.
 *
 *   api_check -S sock -p port [-q QPS] [-n MSGS] spread-server
 *   api_check -S sock -p port [-q QPS] [-n MSGS] [-w FILE] spread-client HOST
 *       QPS QPs (8) in one application on each side, all completing into one CQ: the client
 *       SENDs MSGS messages (2000) of SPREAD_BYTES on each, the server checks each one byte for
 *       byte and in order on its QP (the QP's index and the message's number are in its first
 *       bytes, a pattern of both after them). Both print the QPNs once connected; the daemons
 *       place the QPs on their lanes, so one CQ gathers the completions of several lanes. With
 *       -w, the client waits until FILE exists before the first message (the test looks at the
 *       daemons' QPs meanwhile).
 *
 * Exit status: 0 when every check held, 1 otherwise (each failure printed), 2 on usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice.h>

#define REGION_BYTES 4096u
#define SPREAD_QPS_MAX 64u
#define TIMEOUT_MS 10000

enum iso_case {
	ISO_WRITE_OK,        /**< WRITE 64 B into W at offset 128: accepted */
	ISO_WRITE_BAD_KEY,   /**< W's key with its bits flipped */
	ISO_WRITE_RANGE,     /**< W's key, 64 B from 32 B before its end */
	ISO_WRITE_NO_ACCESS, /**< R's key: no remote write */
	ISO_READ_NO_ACCESS,  /**< N's key: no remote read */
	ISO_READ_OK,         /**< READ 256 B of R: accepted, the bytes checked */
	ISO_OTHER_APP,       /**< B's key, valid in B, through a QP of A */
	ISO_CASES,
};

static const char *const iso_name[ISO_CASES] = {
	"write accepted",
	"write with a wrong key",
	"write past the region's end",
	"write without access",
	"read without access",
	"read accepted",
	"another application's key",
};

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "api_check: FAIL: " __VA_ARGS__);                          \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static void
die(const char *what, int err)
{
	fprintf(stderr, "api_check: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint8_t
pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static void
fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = pattern(seed, i);
}

struct app {
	struct sl_ctx *ctx;
	struct sl_cq *cq;
};

static void
app_open(struct app *a, const char *sock)
{
	a->ctx = sl_ctx_open(sock, NULL);
	if (a->ctx == NULL)
		die("sl_ctx_open", errno);
	a->cq = sl_cq_create(a->ctx, 256);
	if (a->cq == NULL)
		die("sl_cq_create", errno);
}

static struct sl_qp *
qp_new(struct app *a)
{
	struct sl_qp_attr attr = {
		.send_cq = a->cq, .recv_cq = a->cq, .sq_depth = 16, .rq_depth = 16};
	struct sl_qp *qp = sl_qp_create(a->ctx, &attr);

	if (qp == NULL)
		die("sl_qp_create", errno);
	return qp;
}

static struct sl_mr *
region(struct app *a, unsigned access, uint32_t seed)
{
	uint8_t *p = sl_mem_alloc(a->ctx, REGION_BYTES);
	struct sl_mr *mr;

	if (p == NULL)
		die("sl_mem_alloc", errno);
	fill(p, REGION_BYTES, seed);
	mr = sl_mr_reg(a->ctx, p, REGION_BYTES, access);
	if (mr == NULL)
		die("sl_mr_reg", errno);
	return mr;
}

/* One completion within TIMEOUT_MS, or exit. */
static struct sl_wc
wait_one(struct sl_cq *cq)
{
	struct timespec t0, t;
	struct sl_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = sl_cq_poll(cq, &wc, 1);

		if (n < 0)
			die("sl_cq_poll", -n);
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > TIMEOUT_MS)
			die("no completion", ETIMEDOUT);
	}
}

/* --- isolation --------------------------------------------------------------------------- */

static int
isolation_server(const char *sock, uint16_t port)
{
	struct app a, b;
	struct sl_mr *w, *r, *n, *other;
	struct sl_qp *qp[ISO_CASES];
	struct sl_qp_info mine[ISO_CASES + 3], theirs[ISO_CASES + 3];
	struct sl_oob *o;
	uint8_t *p;
	int rc;

	app_open(&a, sock);
	app_open(&b, sock);
	w = region(&a, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE, 1);
	r = region(&a, SL_ACCESS_REMOTE_READ, 2);
	n = region(&a, SL_ACCESS_LOCAL_WRITE, 3);
	other = region(&b, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE | SL_ACCESS_REMOTE_READ,
		       4);
	for (int i = 0; i < ISO_CASES; i++) {
		qp[i] = qp_new(&a);
		sl_qp_info(qp[i], NULL, &mine[i]);
	}
	/* the regions travel as three more infos (their QPN is unused) */
	sl_qp_info(qp[0], w, &mine[ISO_CASES]);
	sl_qp_info(qp[0], r, &mine[ISO_CASES + 1]);
	sl_qp_info(qp[0], n, &mine[ISO_CASES + 2]);
	o = sl_oob_accept(port, TIMEOUT_MS);
	if (o == NULL)
		die("sl_oob_accept", errno);
	rc = sl_oob_exchange(o, mine, theirs, ISO_CASES + 3);
	if (rc == 0) {
		/* B's region, which the client will name through one of A's QPs */
		struct sl_qp_info oi, ignored;

		sl_qp_info(qp[0], other, &oi);
		rc = sl_oob_exchange(o, &oi, &ignored, 1);
	}
	if (rc != 0)
		die("exchange", -rc);
	for (int i = 0; i < ISO_CASES; i++) {
		rc = sl_qp_connect(qp[i], &theirs[i]);
		if (rc != 0)
			die("sl_qp_connect", -rc);
	}
	if ((rc = sl_oob_sync(o)) != 0 || (rc = sl_oob_sync(o)) != 0)
		die("sync", -rc);
	/* The client is done: check every byte. */
	p = sl_mr_addr(w);
	for (uint32_t i = 0; i < REGION_BYTES; i++) {
		uint8_t want = i >= 128 && i < 192 ? pattern(100, i - 128) : pattern(1, i);

		if (p[i] != want) {
			CHECK(false, "W byte %u is %u, want %u", i, p[i], want);
			break;
		}
	}
	for (uint32_t s = 2; s <= 4; s++) {
		const struct sl_mr *m = s == 2 ? r : s == 3 ? n : other;
		const uint8_t *q = sl_mr_addr(m);

		for (uint32_t i = 0; i < REGION_BYTES; i++)
			if (q[i] != pattern(s, i)) {
				CHECK(false, "region %u byte %u changed", s, i);
				break;
			}
	}
	sl_oob_close(o);
	sl_ctx_close(b.ctx);
	sl_ctx_close(a.ctx);
	printf("isolation-server: %s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}

static int
isolation_client(const char *sock, const char *host, uint16_t port)
{
	struct app a;
	struct sl_qp *qp[ISO_CASES];
	struct sl_qp_info mine[ISO_CASES + 3], theirs[ISO_CASES + 3], other;
	struct sl_mr *src;
	uint8_t *buf;
	struct sl_oob *o;
	int rc;

	app_open(&a, sock);
	buf = sl_mem_alloc(a.ctx, REGION_BYTES);
	if (buf == NULL)
		die("sl_mem_alloc", errno);
	fill(buf, REGION_BYTES, 100);
	src = sl_mr_reg(a.ctx, buf, REGION_BYTES, SL_ACCESS_LOCAL_WRITE);
	if (src == NULL)
		die("sl_mr_reg", errno);
	for (int i = 0; i < ISO_CASES; i++) {
		qp[i] = qp_new(&a);
		sl_qp_info(qp[i], NULL, &mine[i]);
	}
	for (int i = ISO_CASES; i < ISO_CASES + 3; i++)
		sl_qp_info(qp[0], NULL, &mine[i]);
	o = sl_oob_connect(host, port, TIMEOUT_MS);
	if (o == NULL)
		die("sl_oob_connect", errno);
	rc = sl_oob_exchange(o, mine, theirs, ISO_CASES + 3);
	if (rc == 0)
		rc = sl_oob_exchange(o, &mine[0], &other, 1);
	if (rc != 0)
		die("exchange", -rc);
	for (int i = 0; i < ISO_CASES; i++) {
		rc = sl_qp_connect(qp[i], &theirs[i]);
		if (rc != 0)
			die("sl_qp_connect", -rc);
	}
	if ((rc = sl_oob_sync(o)) != 0)
		die("sync", -rc);
	const struct sl_qp_info *w = &theirs[ISO_CASES], *r = &theirs[ISO_CASES + 1],
				*n = &theirs[ISO_CASES + 2];
	for (int i = 0; i < ISO_CASES; i++) {
		struct sl_wr wr = {.wr_id = (uint64_t)i,
				   .opcode = SL_WR_WRITE,
				   .flags = SL_WR_F_SIGNALED,
				   .lkey = sl_mr_lkey(src),
				   .addr = buf,
				   .len = 64,
				   .raddr = w->addr + 128,
				   .rkey = w->rkey};
		uint8_t want = SL_WC_REM_ACCESS_ERR;
		struct sl_wc wc;

		switch (i) {
		case ISO_WRITE_OK:
			want = SL_WC_SUCCESS;
			break;
		case ISO_WRITE_BAD_KEY:
			wr.rkey ^= 0x5a5a0000u;
			break;
		case ISO_WRITE_RANGE:
			wr.raddr = w->addr + w->len - 32;
			break;
		case ISO_WRITE_NO_ACCESS:
			wr.raddr = r->addr;
			wr.rkey = r->rkey;
			break;
		case ISO_READ_NO_ACCESS:
			wr.opcode = SL_WR_READ;
			wr.addr = buf + 1024;
			wr.raddr = n->addr;
			wr.rkey = n->rkey;
			break;
		case ISO_READ_OK:
			wr.opcode = SL_WR_READ;
			wr.addr = buf + 1024;
			wr.len = 256;
			wr.raddr = r->addr;
			wr.rkey = r->rkey;
			want = SL_WC_SUCCESS;
			break;
		case ISO_OTHER_APP:
			wr.raddr = other.addr;
			wr.rkey = other.rkey;
			break;
		}
		rc = sl_post_send(qp[i], &wr, 1);
		if (rc != 1)
			die("sl_post_send", rc < 0 ? -rc : EIO);
		wc = wait_one(a.cq);
		CHECK(wc.wr_id == (uint64_t)i && wc.status == want,
		      "%s: wr %" PRIu64 " status %s, want %s", iso_name[i], wc.wr_id,
		      sl_wc_status_str(wc.status), sl_wc_status_str(want));
		if (i == ISO_READ_OK)
			for (uint32_t k = 0; k < 256; k++)
				if (buf[1024 + k] != pattern(2, k)) {
					CHECK(false, "read byte %u is %u, want %u", k,
					      buf[1024 + k], pattern(2, k));
					break;
				}
		printf("isolation-client: %-28s %s\n", iso_name[i], sl_wc_status_str(wc.status));
	}
	if ((rc = sl_oob_sync(o)) != 0)
		die("sync", -rc);
	sl_oob_close(o);
	sl_ctx_close(a.ctx);
	return failures ? 1 : 0;
}

/* --- churn ------------------------------------------------------------------------------- */

static int
churn(const char *sock, const char *host, uint16_t port)
{
	struct app a;
	struct sl_mr *mr;
	struct sl_qp *qp;
	struct sl_qp_info mine, theirs;
	struct sl_oob *o;
	uint8_t *buf;
	uint64_t posted = 0, done = 0;
	int rc;

	app_open(&a, sock);
	buf = sl_mem_alloc(a.ctx, REGION_BYTES);
	if (buf == NULL)
		die("sl_mem_alloc", errno);
	mr = sl_mr_reg(a.ctx, buf, REGION_BYTES, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		die("sl_mr_reg", errno);
	qp = qp_new(&a);
	sl_qp_info(qp, mr, &mine);
	o = host ? sl_oob_connect(host, port, TIMEOUT_MS) : sl_oob_accept(port, TIMEOUT_MS);
	if (o == NULL)
		die(host ? "sl_oob_connect" : "sl_oob_accept", errno);
	if ((rc = sl_oob_exchange(o, &mine, &theirs, 1)) != 0 ||
	    (rc = sl_qp_connect(qp, &theirs)) != 0 || (rc = sl_oob_sync(o)) != 0)
		die("setup", -rc);
	printf("churn: connected\n");
	fflush(stdout);
	/* Both sides WRITE into each other until one is killed; the survivor sees its QP fail. */
	for (;;) {
		struct sl_wc wc[16];
		struct sl_wr wr = {.opcode = SL_WR_WRITE,
				   .flags = SL_WR_F_SIGNALED,
				   .lkey = sl_mr_lkey(mr),
				   .addr = buf,
				   .len = 1024,
				   .raddr = theirs.addr,
				   .rkey = theirs.rkey};
		int n;

		while (posted - done < 8) {
			wr.wr_id = posted;
			if (sl_post_send(qp, &wr, 1) != 1)
				break;
			posted++;
		}
		n = sl_cq_poll(a.cq, wc, 16);
		for (int i = 0; i < n; i++) {
			done++;
			if (wc[i].status != SL_WC_SUCCESS) {
				printf("churn: QP ended (%s) after %" PRIu64 " writes\n",
				       sl_wc_status_str(wc[i].status), done);
				sl_oob_close(o);
				sl_ctx_close(a.ctx);
				return 0;
			}
		}
	}
}

/* --- spread ------------------------------------------------------------------------------ */

#define SPREAD_BYTES 4096u /**< a message */
#define SPREAD_DEPTH 32u   /**< sends outstanding, receives posted, per QP */

/* Message seq of QP index q: its two numbers, then a pattern of both. */
static void
spread_fill(uint8_t *p, uint32_t q, uint32_t seq)
{
	memcpy(p, &q, 4);
	memcpy(p + 4, &seq, 4);
	fill(p + 8, SPREAD_BYTES - 8, q * 1000003u + seq);
}

/* Wait until path exists (TIMEOUT_MS at most), or exit. */
static void
wait_file(const char *path)
{
	for (int ms = 0; access(path, F_OK) != 0; ms += 10) {
		if (ms > TIMEOUT_MS)
			die(path, ETIMEDOUT);
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
}

static int
spread(const char *sock, const char *host, uint16_t port, uint32_t qps, uint32_t msgs,
       const char *go)
{
	struct sl_qp_info mine[SPREAD_QPS_MAX], theirs[SPREAD_QPS_MAX];
	struct sl_qp *qp[SPREAD_QPS_MAX];
	uint32_t next[SPREAD_QPS_MAX] = {0}, done[SPREAD_QPS_MAX] = {0}, left = qps * msgs;
	struct sl_ctx *ctx = sl_ctx_open(sock, NULL);
	struct sl_cq *cq;
	struct sl_mr *mr;
	struct sl_oob *o;
	uint8_t *buf, *want = malloc(SPREAD_BYTES);
	int rc;

	if (ctx == NULL || want == NULL)
		die("sl_ctx_open", errno);
	cq = sl_cq_create(ctx, qps * SPREAD_DEPTH);
	buf = sl_mem_alloc(ctx, (size_t)qps * SPREAD_DEPTH * SPREAD_BYTES);
	if (cq == NULL || buf == NULL)
		die("sl_cq_create", errno);
	mr = sl_mr_reg(ctx, buf, (size_t)qps * SPREAD_DEPTH * SPREAD_BYTES, SL_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("sl_mr_reg", errno);
	for (uint32_t q = 0; q < qps; q++) {
		struct sl_qp_attr attr = {.send_cq = cq,
					  .recv_cq = cq,
					  .sq_depth = SPREAD_DEPTH,
					  .rq_depth = SPREAD_DEPTH,
					  .max_msg_bytes = SPREAD_BYTES};

		qp[q] = sl_qp_create(ctx, &attr);
		if (qp[q] == NULL)
			die("sl_qp_create", errno);
		sl_qp_info(qp[q], mr, &mine[q]);
	}
	o = host ? sl_oob_connect(host, port, TIMEOUT_MS) : sl_oob_accept(port, TIMEOUT_MS);
	if (o == NULL)
		die(host ? "sl_oob_connect" : "sl_oob_accept", errno);
	if ((rc = sl_oob_exchange(o, mine, theirs, qps)) != 0)
		die("exchange", -rc);
	for (uint32_t q = 0; q < qps; q++) {
		if ((rc = sl_qp_connect(qp[q], &theirs[q])) != 0)
			die("sl_qp_connect", -rc);
		printf("spread: QP %u: QPN %u to the peer's %u\n", q, mine[q].qpn, theirs[q].qpn);
		/* the server's receives, each QP's own SPREAD_DEPTH slots of buf */
		for (uint32_t k = 0; !host && k < SPREAD_DEPTH; k++) {
			struct sl_recv_wr r = {.wr_id = (uint64_t)q * SPREAD_DEPTH + k,
					       .lkey = sl_mr_lkey(mr),
					       .addr = buf + ((size_t)q * SPREAD_DEPTH + k) *
								     SPREAD_BYTES,
					       .len = SPREAD_BYTES};

			if ((rc = sl_post_recv(qp[q], &r, 1)) != 1)
				die("sl_post_recv", -rc);
		}
	}
	fflush(stdout);
	if (go != NULL)
		wait_file(go);
	if ((rc = sl_oob_sync(o)) != 0) /* every RECV posted before the first SEND */
		die("sync", -rc);
	while (left) {
		struct sl_wc wc[64];
		int n;

		for (uint32_t q = 0; host && q < qps; q++)
			while (next[q] < msgs && next[q] - done[q] < SPREAD_DEPTH) {
				uint32_t slot = q * SPREAD_DEPTH + next[q] % SPREAD_DEPTH;
				uint8_t *p = buf + (size_t)slot * SPREAD_BYTES;
				struct sl_wr w = {.wr_id = q,
						  .opcode = SL_WR_SEND,
						  .flags = SL_WR_F_SIGNALED,
						  .lkey = sl_mr_lkey(mr),
						  .addr = p,
						  .len = SPREAD_BYTES};

				spread_fill(p, q, next[q]);
				if ((rc = sl_post_send(qp[q], &w, 1)) != 1)
					die("sl_post_send", -rc);
				next[q]++;
			}
		n = sl_cq_poll(cq, wc, 64);
		if (n < 0)
			die("sl_cq_poll", -n);
		for (int i = 0; i < n; i++) {
			uint32_t q = host ? (uint32_t)wc[i].wr_id
					  : (uint32_t)(wc[i].wr_id / SPREAD_DEPTH);
			uint8_t *p = buf + wc[i].wr_id * SPREAD_BYTES;

			if (wc[i].status != SL_WC_SUCCESS || q >= qps || wc[i].qpn != mine[q].qpn)
				die("a completion", EIO);
			if (!host) { /* check it, then post the slot again */
				struct sl_recv_wr r = {.wr_id = wc[i].wr_id,
						       .lkey = sl_mr_lkey(mr),
						       .addr = p,
						       .len = SPREAD_BYTES};

				spread_fill(want, q, done[q]);
				CHECK(wc[i].byte_len == SPREAD_BYTES &&
					      memcmp(p, want, SPREAD_BYTES) == 0,
				      "QP %u: message %u not as sent", q, done[q]);
				if (done[q] + SPREAD_DEPTH < msgs &&
				    (rc = sl_post_recv(qp[q], &r, 1)) != 1)
					die("sl_post_recv", -rc);
			}
			done[q]++;
			left--;
		}
	}
	if ((rc = sl_oob_sync(o)) != 0)
		die("sync", -rc);
	printf("spread: %u QPs on one CQ, %u messages of %u bytes each %s\n", qps, msgs,
	       SPREAD_BYTES, host ? "sent" : "checked");
	sl_oob_close(o);
	sl_ctx_close(ctx);
	free(want);
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *go = NULL;
	uint16_t port = 18600;
	uint32_t qps = 8, msgs = 2000;
	int c;

	while ((c = getopt(argc, argv, "S:p:q:n:w:")) != -1) {
		switch (c) {
		case 'S':
			sock = optarg;
			break;
		case 'p':
			port = (uint16_t)atoi(optarg);
			break;
		case 'q':
			qps = (uint32_t)atoi(optarg);
			break;
		case 'n':
			msgs = (uint32_t)atoi(optarg);
			break;
		case 'w':
			go = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || qps == 0 || qps > SPREAD_QPS_MAX || msgs == 0) {
		fprintf(stderr,
			"usage: api_check -S socket -p port [-q QPS (1..%u)] [-n MSGS] [-w FILE] "
			"isolation-server|isolation-client HOST|churn-server|churn-client "
			"HOST|spread-server|spread-client HOST\n",
			SPREAD_QPS_MAX);
		return 2;
	}
	const char *mode = argv[optind], *host = optind + 1 < argc ? argv[optind + 1] : NULL;

	if (strcmp(mode, "isolation-server") == 0)
		return isolation_server(sock, port);
	if (strcmp(mode, "isolation-client") == 0 && host)
		return isolation_client(sock, host, port);
	if (strcmp(mode, "churn-server") == 0)
		return churn(sock, NULL, port);
	if (strcmp(mode, "churn-client") == 0 && host)
		return churn(sock, host, port);
	if (strcmp(mode, "spread-server") == 0)
		return spread(sock, NULL, port, qps, msgs, NULL);
	if (strcmp(mode, "spread-client") == 0 && host)
		return spread(sock, host, port, qps, msgs, go);
	fprintf(stderr, "api_check: unknown mode %s\n", mode);
	return 2;
}
