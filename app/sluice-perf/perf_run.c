/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_run.c - sluice-perf's measurement loops on libsluice (perftest's run_iter_* in spirit).
 *
 * Setup. Each side opens a context on its daemon, allocates per QP one buffer of two halves
 * (send half, receive half; each the largest message), registers it (LOCAL_WRITE, plus
 * REMOTE_WRITE for write tests or REMOTE_READ for read tests), creates one send CQ and one
 * receive CQ and the QPs with --program, --pacer, --receiver and the rate limit. The server
 * accepts the client on the out-of-band port; the two trade their parameters (and refuse a
 * mismatch), then struct sl_qp_info per QP, connect, and meet at a barrier (sl_oob_sync).
 * WRITEs land in the peer's receive half, READs read the peer's send half into ours.
 *
 * bw tests. Every sending QP keeps tx_depth requests outstanding, posting in bursts round the
 * QPs. One request in cq_mod (min(-Q, tx_depth), -Q 100 unless given: perftest's CQ
 * moderation) is signaled, and the last one of the run; its wr_id carries the QP and how many
 * requests it completes. Every post burst is stamped (CLOCK_MONOTONIC) for each message in it
 * and every completion marks "messages up to j done at t": perf_stats.c turns those into
 * perftest's peak and average.
 * send_bw's receiver keeps rx_depth RECVs posted per QP, reposts each one as it completes and
 * counts messages; its figure (no peak, as perftest's server) runs from the first arrival to
 * the last. -D: margin = D / 4 of warm-up, then D - 2 margin measured (the completions that
 * arrive in that window, over its length), then margin of cool-down, then the QPs stop.
 *
 * lat tests (one QP, one request at a time). write_lat: each side WRITEs the message to the
 * other's receive half and then spins on its own receive half's last byte until the peer's
 * WRITE of the same round changes it (the round number, mod 256); the client starts each
 * round, the server answers. send_lat: SEND and wait for the RECV completion of the answer.
 * read_lat: the client READs and waits for its completion; the server waits. Each round's
 * start is stamped; the rounds' differences are the samples. -D: the rounds that start in
 * the measured window, over its length; the server answers until no round has come for a
 * second after its end.
 *
 * -e: a loop that finds nothing to do arms the CQs, polls once more, then sleeps on their event
 * fds (idle()): on a machine with fewer cores than spinning processes a spinning tool takes
 * time slices from the daemon it waits for. A plain WRITE completes nothing at its target, so
 * write_lat -e sends WRITE with immediate, and each side sleeps on the RECV completion the
 * peer's WRITE brings (notified()).
 *
 * Reports. After every size the sides swap their rows (sl_oob_swap): -b adds the two, a side
 * that measured nothing (the server of write_bw, read_bw, read_lat) prints the client's, as
 * perftest's server does.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf_report.h"
#include "perf_run.h"
#include "sl_common.h"
#include "sluice.h"

/*
 * libsluice applies the accept / connect timeout to every later exchange too: the server waits
 * for its client, and at every barrier, as long as it takes (perftest's server waits too); the
 * client gives the server 30 s each time.
 */
#define RUN_ACCEPT_MS (-1)
#define RUN_CONNECT_MS 30000
/* 10 s without a completion (plus what a rate limit explains, bw_silence_ns): the peer is gone */
#define RUN_SILENCE_NS UINT64_C(10000000000)
#define RUN_DRAIN_NS UINT64_C(1000000000)  /**< -D lat server: answers until 1 s after */
#define RUN_BURST 32u                      /**< requests posted per call */
#define RUN_POLL 64                        /**< completions polled per call */
#define RUN_EVENT_WAIT_MS 100              /**< -e: longest sleep on the event fds */
#define RUN_LAT_SQ 16u                     /**< send queue of a lat QP */
#define RUN_MEM_SLACK (UINT64_C(32) << 20) /**< context memory beyond buffers: rings */
#define NS_PER_S UINT64_C(1000000000)

static_assert(SL_PERF_NAME_MAX == SL_NAME_MAX, "--program / --pacer fit sl_qp_attr's names");

struct run_qp {
	struct sl_qp *qp;
	struct sl_mr *mr;
	uint8_t *buf;           /**< [send half | receive half] */
	struct sl_qp_info peer; /**< the peer's QP and MR */
	uint64_t posted;        /**< requests posted this size */
	uint64_t completed;     /**< requests completed this size */
};

struct run {
	const struct sl_perf_args *a;
	bool client;
	enum sl_perf_verb verb;
	uint64_t half_bytes; /**< each buffer half: the largest message, bytes */
	uint64_t rate_bps;   /**< every QP's limit, bits/s (0: none) */
	struct sl_ctx *ctx;
	struct sl_cq *scq, *rcq;
	struct sl_oob *oob;
	struct run_qp *q;
	uint64_t *posted_ns;        /**< bw: post time of message i, every QP (NULL: no peak) */
	struct sl_perf_mark *marks; /**< bw: completions seen */
	size_t nmarks;
	uint64_t *stamp_ns;                               /**< lat: start of each round */
	uint64_t sample_start_ns, sample_end_ns, end_ns;  /**< -D windows, this size */
	uint64_t tot_posted, tot_completed, tot_received; /**< messages this size, every QP */
	uint64_t window_msgs, window_recvs; /**< -D: completions, arrivals in the window */
	uint64_t first_post_ns, first_recv_ns, last_recv_ns, last_progress_ns;
	uint64_t silence_ns;           /**< bw: no completion for this long is an error */
	bool armed;                    /**< -e: the CQs are armed since the last empty poll */
	uint64_t lat_posted, lat_done; /**< lat: requests posted, their completions reaped */
	struct sl_perf_result res[SL_PERF_SWEEP_COUNT];
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/*
 * The target learns of each message through a RECV completion: SEND, and write_lat's WRITE with
 * immediate under -e (a plain WRITE completes nothing at its target).
 */
static bool
notified(const struct run *r)
{
	return r->verb == SL_PERF_SEND || (r->verb == SL_PERF_WRITE && r->a->rx_depth != 0);
}

/* What failed and why; -1. */
static int
sl_err(const char *what, int err)
{
	fprintf(stderr, " %s failed: %s\n", what, strerror(err < 0 ? -err : err));
	return -1;
}

static int
wc_err(const struct sl_wc *wc)
{
	fprintf(stderr, " completion error on QP %" PRIu32 " (wr_id %#" PRIx64 "): %s\n", wc->qpn,
		wc->wr_id, sl_wc_status_str((enum sl_wc_status)wc->status));
	return -1;
}

static uint64_t
bytes_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* --- setup -------------------------------------------------------------------------------- */

static int
run_open(struct run *r)
{
	const struct sl_perf_args *a = r->a;
	bool lat = sl_perf_test_is_lat(a->test);
	uint64_t buf_bytes = bytes_up(2 * r->half_bytes, 4096);
	struct sl_ctx_attr ca = {.mem_bytes = a->qps * buf_bytes + RUN_MEM_SLACK};
	struct sl_qp_attr qa = {0};
	unsigned access = SL_ACCESS_LOCAL_WRITE;

	r->ctx = sl_ctx_open(a->socket[0] != '\0' ? a->socket : NULL, &ca);
	if (r->ctx == NULL)
		return sl_err("sl_ctx_open (is sluiced running? -S names its socket)", errno);
	qa.sq_depth = sl_align_pow2_u32(lat ? RUN_LAT_SQ : a->tx_depth);
	qa.rq_depth = notified(r) ? sl_align_pow2_u32(a->rx_depth) : 0;
	r->scq = sl_cq_create(r->ctx, a->qps * qa.sq_depth);
	if (r->scq == NULL)
		return sl_err("sl_cq_create (send)", errno);
	r->rcq = sl_cq_create(r->ctx, a->qps * (qa.rq_depth > 0 ? qa.rq_depth : 1));
	if (r->rcq == NULL)
		return sl_err("sl_cq_create (receive)", errno);
	qa.send_cq = r->scq;
	qa.recv_cq = r->rcq;
	memcpy(qa.program, a->program, sizeof(qa.program));
	memcpy(qa.pacer, a->pacer, sizeof(qa.pacer));
	qa.receiver = a->receiver;
	qa.rate_limit_bps = r->rate_bps; /* payload, as perftest's: the daemon adds the headers */
	qa.rate_limit_msg_bytes = r->rate_bps ? (uint32_t)a->size_bytes : 0;
	qa.max_msg_bytes = (uint32_t)r->half_bytes;
	if (r->verb == SL_PERF_WRITE)
		access |= SL_ACCESS_REMOTE_WRITE;
	if (r->verb == SL_PERF_READ)
		access |= SL_ACCESS_REMOTE_READ;
	r->q = calloc(a->qps, sizeof(*r->q));
	if (r->q == NULL)
		return sl_err("calloc (QPs)", ENOMEM);
	for (uint32_t i = 0; i < a->qps; i++) {
		struct run_qp *q = &r->q[i];

		q->buf = sl_mem_alloc(r->ctx, buf_bytes);
		if (q->buf == NULL)
			return sl_err("sl_mem_alloc (message buffers)", errno);
		q->mr = sl_mr_reg(r->ctx, q->buf, buf_bytes, access);
		if (q->mr == NULL)
			return sl_err("sl_mr_reg", errno);
		q->qp = sl_qp_create(r->ctx, &qa);
		if (q->qp == NULL)
			return sl_err("sl_qp_create (--program, --pacer, --receiver)", errno);
	}
	return 0;
}

/* RECVs into the receive half, n per QP, tagged with the QP. */
static int
post_recvs(struct run *r, uint32_t qi, uint32_t n)
{
	struct sl_recv_wr wr[RUN_BURST];
	struct run_qp *q = &r->q[qi];
	int rc;

	while (n > 0) {
		uint32_t k = n < RUN_BURST ? n : RUN_BURST;

		for (uint32_t i = 0; i < k; i++)
			wr[i] = (struct sl_recv_wr){.wr_id = qi,
						    .lkey = sl_mr_lkey(q->mr),
						    .addr = q->buf + r->half_bytes,
						    .len = (uint32_t)r->half_bytes};
		rc = sl_post_recv(q->qp, wr, (int)k);
		if (rc <= 0)
			return sl_err("sl_post_recv", rc < 0 ? rc : ENOBUFS);
		n -= (uint32_t)rc;
	}
	return 0;
}

/* Parameters, then QP infos, connect, receive buffers, barrier. */
static int
run_connect(struct run *r)
{
	const struct sl_perf_args *a = r->a;
	struct sl_perf_wire mine, theirs;
	struct sl_qp_info *info;
	char err[512];
	int rc;

	if (r->client) {
		r->oob = sl_oob_connect(a->server, a->port, RUN_CONNECT_MS);
	} else {
		printf("\n************************************\n");
		printf("* Waiting for client to connect... *\n");
		printf("************************************\n");
		fflush(stdout);
		r->oob = sl_oob_accept(a->port, RUN_ACCEPT_MS);
	}
	if (r->oob == NULL)
		return sl_err(r->client ? "sl_oob_connect (server host, -p port)"
					: "sl_oob_accept (-p port)",
			      errno);
	sl_perf_wire_encode(a, &mine);
	rc = sl_oob_swap(r->oob, &mine, &theirs, sizeof(mine));
	if (rc != 0)
		return sl_err("sl_oob_swap (parameters)", rc);
	if (sl_perf_wire_check(a, &theirs, !r->client, err, sizeof(err)) != 0) {
		fprintf(stderr, " %s\n", err);
		return -1;
	}
	info = calloc(2 * (size_t)a->qps, sizeof(*info));
	if (info == NULL)
		return sl_err("calloc (QP infos)", ENOMEM);
	for (uint32_t i = 0; i < a->qps; i++)
		sl_qp_info(r->q[i].qp, r->q[i].mr, &info[i]);
	rc = sl_oob_exchange(r->oob, info, info + a->qps, a->qps);
	for (uint32_t i = 0; rc == 0 && i < a->qps; i++) {
		r->q[i].peer = info[a->qps + i];
		rc = sl_qp_connect(r->q[i].qp, &r->q[i].peer);
		if (rc != 0)
			sl_err("sl_qp_connect", rc);
	}
	free(info);
	if (rc != 0)
		return rc < 0 && rc != -1 ? sl_err("sl_oob_exchange (QP infos)", rc) : -1;
	if (notified(r)) {
		for (uint32_t i = 0; i < a->qps; i++)
			if (post_recvs(r, i, a->rx_depth) != 0)
				return -1;
	}
	rc = sl_oob_sync(r->oob);
	return rc == 0 ? 0 : sl_err("sl_oob_sync (after connect)", rc);
}

static void
run_close(struct run *r)
{
	if (r->q != NULL)
		for (uint32_t i = 0; i < r->a->qps; i++) {
			if (r->q[i].qp != NULL)
				sl_qp_destroy(r->q[i].qp);
			if (r->q[i].mr != NULL)
				sl_mr_dereg(r->q[i].mr);
			sl_mem_free(r->ctx, r->q[i].buf);
		}
	if (r->scq != NULL)
		sl_cq_destroy(r->scq);
	if (r->rcq != NULL)
		sl_cq_destroy(r->rcq);
	if (r->ctx != NULL)
		sl_ctx_close(r->ctx);
	if (r->oob != NULL)
		sl_oob_close(r->oob);
	free(r->q);
	free(r->posted_ns);
	free(r->marks);
	free(r->stamp_ns);
}

/* --- time windows of -D ------------------------------------------------------------------- */

static void
windows_start(struct run *r)
{
	const struct sl_perf_args *a = r->a;
	uint64_t t0 = now_ns();

	r->sample_start_ns = t0 + a->margin_s * NS_PER_S;
	r->sample_end_ns = t0 + (a->duration_s - a->margin_s) * NS_PER_S;
	r->end_ns = t0 + a->duration_s * NS_PER_S;
}

static bool
in_sample(const struct run *r, uint64_t t)
{
	return t >= r->sample_start_ns && t < r->sample_end_ns;
}

/* --- bw ------------------------------------------------------------------------------------ */

/* How many requests the signaled one at index nth of its QP completes (cq_mod, or the rest). */
static uint64_t
bw_covers(const struct sl_perf_args *a, uint64_t nth)
{
	uint64_t rem = (nth + 1) % a->cq_mod;

	return rem == 0 ? a->cq_mod : rem;
}

/* Post up to a burst on QP qi: sizes, signaling and stamps as the file's essay says. */
static int
bw_post(struct run *r, uint32_t qi, uint64_t size)
{
	const struct sl_perf_args *a = r->a;
	struct run_qp *q = &r->q[qi];
	struct sl_wr wr[RUN_BURST];
	uint64_t room = a->tx_depth - (q->posted - q->completed), t;
	uint32_t k;
	int rc;

	if (a->duration_s == 0 && a->iters - q->posted < room)
		room = a->iters - q->posted;
	for (k = 0; k < RUN_BURST && k < room; k++) {
		uint64_t nth = q->posted + k; /* this request's index on its QP */
		bool last = a->duration_s == 0 && nth == a->iters - 1;
		bool read = r->verb == SL_PERF_READ;

		wr[k] = (struct sl_wr){
			.opcode = r->verb == SL_PERF_SEND ? SL_WR_SEND
							  : (read ? SL_WR_READ : SL_WR_WRITE),
			.lkey = sl_mr_lkey(q->mr),
			.addr = read ? q->buf + r->half_bytes : q->buf,
			.len = (uint32_t)size,
			.raddr = read ? q->peer.addr : q->peer.addr + r->half_bytes,
			.rkey = q->peer.rkey,
		};
		if ((nth + 1) % a->cq_mod == 0 || last) {
			wr[k].flags = SL_WR_F_SIGNALED;
			wr[k].wr_id = (uint64_t)qi << 32 | bw_covers(a, nth);
		}
	}
	if (k == 0)
		return 0;
	t = now_ns();
	rc = sl_post_send(q->qp, wr, (int)k);
	if (rc == -ENOBUFS)
		return 0; /* the daemon has not taken the last ones yet: poll, then again */
	if (rc < 0)
		return sl_err("sl_post_send", rc);
	if (r->tot_posted == 0)
		r->first_post_ns = t;
	for (int i = 0; i < rc && r->posted_ns != NULL; i++)
		r->posted_ns[r->tot_posted + (uint64_t)i] = t;
	q->posted += (uint64_t)rc;
	r->tot_posted += (uint64_t)rc;
	return 0;
}

/* Send completions: credit the QPs, mark for the peak, count -D's window. */
static int
bw_poll_send(struct run *r)
{
	struct sl_wc wc[RUN_POLL];
	int n = sl_cq_poll(r->scq, wc, RUN_POLL);
	uint64_t t;

	if (n <= 0)
		return n < 0 ? sl_err("sl_cq_poll (send)", n) : 0;
	t = now_ns();
	for (int i = 0; i < n; i++) {
		uint64_t covers = wc[i].wr_id & UINT32_MAX;
		uint32_t qi = (uint32_t)(wc[i].wr_id >> 32);

		if (wc[i].status != SL_WC_SUCCESS)
			return wc_err(&wc[i]);
		if (qi >= r->a->qps || covers == 0 || covers > r->a->cq_mod) {
			fprintf(stderr,
				" completion with a wr_id sluice-perf did not post: %#" PRIx64 "\n",
				wc[i].wr_id);
			return -1;
		}
		r->q[qi].completed += covers;
		r->tot_completed += covers;
		r->last_progress_ns = t;
		if (r->a->duration_s != 0) {
			if (in_sample(r, t))
				r->window_msgs += covers;
		} else if (r->marks != NULL) {
			r->marks[r->nmarks++] =
				(struct sl_perf_mark){.idx = r->tot_completed - 1, .t_ns = t};
		}
	}
	return n;
}

/* RECV completions: count, repost. */
static int
bw_poll_recv(struct run *r)
{
	struct sl_wc wc[RUN_POLL];
	int n = sl_cq_poll(r->rcq, wc, RUN_POLL);
	uint64_t t;

	if (n <= 0)
		return n < 0 ? sl_err("sl_cq_poll (receive)", n) : 0;
	t = now_ns();
	for (int i = 0; i < n; i++) {
		if (wc[i].status != SL_WC_SUCCESS)
			return wc_err(&wc[i]);
		if (wc[i].wr_id >= r->a->qps)
			return wc_err(&wc[i]);
		if (r->tot_received == 0)
			r->first_recv_ns = t;
		r->tot_received++;
		if (r->a->duration_s != 0 && in_sample(r, t))
			r->window_recvs++;
		if (post_recvs(r, (uint32_t)wc[i].wr_id, 1) != 0)
			return -1;
	}
	r->last_recv_ns = t;
	r->last_progress_ns = t;
	return n;
}

/*
 * -e: a poll round found nothing. The first time, arm the CQs and return (the caller polls
 * once more: a completion may have come before the arm); the next time, sleep on their event
 * fds until one is readable (at most RUN_EVENT_WAIT_MS, so the loop's silence check still
 * runs). Without -e: nothing (spin). 0 or -1.
 */
static int
idle(struct run *r)
{
	struct pollfd p[2] = {{.fd = sl_cq_event_fd(r->scq), .events = POLLIN},
			      {.fd = sl_cq_event_fd(r->rcq), .events = POLLIN}};
	nfds_t n = r->rcq == r->scq ? 1 : 2;
	uint64_t events;
	int rc;

	if (!r->a->events)
		return 0;
	if (!r->armed) {
		if ((rc = sl_cq_arm(r->scq)) != 0 || (n == 2 && (rc = sl_cq_arm(r->rcq)) != 0))
			return sl_err("sl_cq_arm", rc);
		r->armed = true;
		return 0;
	}
	r->armed = false;
	if (poll(p, n, RUN_EVENT_WAIT_MS) < 0 && errno != EINTR)
		return sl_err("poll (CQ events)", errno);
	for (nfds_t i = 0; i < n; i++)
		if ((p[i].revents & POLLIN) &&
		    read(p[i].fd, &events, sizeof(events)) != sizeof(events) && errno != EAGAIN)
			return sl_err("read (CQ event fd)", errno);
	return 0;
}

static int
silent(uint64_t ns)
{
	fprintf(stderr, " no completion for %" PRIu64 " s: the peer or the daemon stopped\n",
		ns / NS_PER_S);
	return -1;
}

/*
 * How long a bw run may see no completion: RUN_SILENCE_NS, plus twice what a signaled batch
 * (cq_mod messages of size) takes at the QPs' rate limit, so that a slow limit is not taken
 * for a dead peer.
 */
static uint64_t
bw_silence_ns(const struct run *r, uint64_t size)
{
	double batch_s;

	if (r->rate_bps == 0)
		return RUN_SILENCE_NS;
	batch_s = 2.0 * r->a->cq_mod * (double)size * 8 / (double)r->rate_bps;
	return RUN_SILENCE_NS + (uint64_t)(batch_s * (double)NS_PER_S);
}

/* One size of a bw test: send, receive or both; the row this side measured into *res. */
static int
run_bw(struct run *r, uint64_t size, struct sl_perf_result *res)
{
	const struct sl_perf_args *a = r->a;
	bool sends = r->client || a->bidir;
	bool recvs = r->verb == SL_PERF_SEND && (!r->client || a->bidir);
	uint64_t total = a->iters * a->qps, t;

	for (uint32_t i = 0; i < a->qps; i++)
		r->q[i].posted = r->q[i].completed = 0;
	r->tot_posted = r->tot_completed = r->tot_received = 0;
	r->window_msgs = r->window_recvs = 0;
	r->nmarks = 0;
	if (a->duration_s != 0)
		windows_start(r);
	r->last_progress_ns = now_ns();
	r->silence_ns = bw_silence_ns(r, size);
	res->kind = SL_PERF_KIND_BW;
	for (;;) {
		t = now_ns();
		bool timed_out = a->duration_s != 0 && t >= r->end_ns;
		bool send_done =
			!sends || (a->duration_s == 0 ? r->tot_completed == total : timed_out);
		bool recv_done =
			!recvs || (a->duration_s == 0 ? r->tot_received == total : timed_out);

		if (send_done && recv_done)
			break;
		if (t - r->last_progress_ns > r->silence_ns)
			return silent(r->silence_ns);
		uint64_t posted = r->tot_posted;
		int got = 0, rc;

		for (uint32_t i = 0; sends && !timed_out && i < a->qps; i++)
			if (bw_post(r, i, size) != 0)
				return -1;
		if (sends && (rc = bw_poll_send(r)) < 0)
			return -1;
		got += sends ? rc : 0;
		if (recvs && (rc = bw_poll_recv(r)) < 0)
			return -1;
		got += recvs ? rc : 0;
		if (got == 0 && r->tot_posted == posted && idle(r) != 0)
			return -1;
	}
	if (a->duration_s != 0)
		return sl_perf_bw_window(sends ? r->window_msgs : r->window_recvs,
					 r->sample_end_ns - r->sample_start_ns, size, &res->bw);
	if (!sends) /* send_bw's receiver: first arrival to last, no peak (perftest's) */
		return sl_perf_bw_window(total, r->last_recv_ns - r->first_recv_ns, size, &res->bw);
	return sl_perf_bw_compute(r->posted_ns, r->first_post_ns, total, r->marks, r->nmarks, size,
				  &res->bw);
}

/* --- lat ----------------------------------------------------------------------------------- */

/* Reap send completions (a lat test signals each request); errors stop the run. */
static int
lat_reap(struct run *r, unsigned *reaped)
{
	struct sl_wc wc[RUN_POLL];
	int n = sl_cq_poll(r->scq, wc, RUN_POLL);

	if (n < 0)
		return sl_err("sl_cq_poll (send)", n);
	for (int i = 0; i < n; i++)
		if (wc[i].status != SL_WC_SUCCESS)
			return wc_err(&wc[i]);
	if (reaped != NULL)
		*reaped += (unsigned)n;
	r->lat_done += (uint64_t)n;
	return 0;
}

/* Post one signaled request on QP 0, making room in the send queue first if it is full. */
static int
lat_post(struct run *r, uint64_t size, uint64_t round)
{
	struct run_qp *q = &r->q[0];
	bool read = r->verb == SL_PERF_READ;
	struct sl_wr wr = {
		.wr_id = round,
		.opcode = r->verb == SL_PERF_SEND ? SL_WR_SEND
			  : read                  ? SL_WR_READ
			  : notified(r)           ? SL_WR_WRITE_WITH_IMM
						  : SL_WR_WRITE,
		.flags = SL_WR_F_SIGNALED,
		.lkey = sl_mr_lkey(q->mr),
		.addr = read ? q->buf + r->half_bytes : q->buf,
		.len = (uint32_t)size,
		.raddr = read ? q->peer.addr : q->peer.addr + r->half_bytes,
		.rkey = q->peer.rkey,
	};
	uint64_t t0 = now_ns();
	int rc;

	while ((rc = sl_post_send(q->qp, &wr, 1)) == -ENOBUFS) {
		if (lat_reap(r, NULL) != 0)
			return -1;
		if (now_ns() - t0 > RUN_SILENCE_NS)
			return silent(RUN_SILENCE_NS);
	}
	if (rc == 1)
		r->lat_posted++;
	return rc == 1 ? 0 : sl_err("sl_post_send", rc < 0 ? rc : EIO);
}

/* Wait for the completions of every request posted (the last answer is not left to be flushed
 * when the QP goes). 0 or -1. */
static int
lat_drain(struct run *r)
{
	uint64_t since = now_ns();

	while (r->lat_done < r->lat_posted) {
		unsigned got = 0;

		if (lat_reap(r, &got) != 0)
			return -1;
		if (got == 0 && idle(r) != 0)
			return -1;
		if (now_ns() - since > RUN_SILENCE_NS)
			return silent(RUN_SILENCE_NS);
	}
	return 0;
}

/*
 * Wait for the peer's half of round `round`: write_lat the last byte of our receive half,
 * send_lat a RECV, read_lat our READ's completion. 0, 1 when deadline_ns passed first (only
 * -D's server gives one), -1 on an error.
 */
static int
lat_wait(struct run *r, uint64_t size, uint64_t round, uint64_t deadline_ns)
{
	volatile uint8_t *last = r->q[0].buf + r->half_bytes + size - 1;
	uint64_t since = now_ns();
	unsigned got = 0;

	for (;;) {
		if (r->verb == SL_PERF_WRITE && !notified(r)) {
			if (__atomic_load_n(last, __ATOMIC_ACQUIRE) == (uint8_t)round)
				return 0;
			if (lat_reap(r, NULL) != 0)
				return -1;
		} else if (r->verb == SL_PERF_READ) {
			if (lat_reap(r, &got) != 0)
				return -1;
			if (got > 0)
				return 0;
			if (idle(r) != 0)
				return -1;
		} else {
			struct sl_wc wc;
			int n = sl_cq_poll(r->rcq, &wc, 1);

			if (n < 0)
				return sl_err("sl_cq_poll (receive)", n);
			if (n == 1) {
				if (wc.status != SL_WC_SUCCESS)
					return wc_err(&wc);
				return post_recvs(r, 0, 1);
			}
			unsigned sent = 0;

			if (lat_reap(r, &sent) != 0)
				return -1;
			if (sent == 0 && idle(r) != 0)
				return -1;
		}
		uint64_t t = now_ns();

		if (deadline_ns != 0 && t >= deadline_ns)
			return 1;
		if (deadline_ns == 0 && t - since > RUN_SILENCE_NS)
			return silent(RUN_SILENCE_NS);
	}
}

/* One size of a lat test: the client starts each round, the server answers it. */
static int
run_lat(struct run *r, uint64_t size, struct sl_perf_result *res)
{
	const struct sl_perf_args *a = r->a;
	volatile uint8_t *mine = r->q[0].buf + size - 1;
	bool dur = a->duration_s != 0;
	uint64_t rounds = 0, window = 0, t;
	unsigned rtt_div = r->verb == SL_PERF_READ ? 1 : 2;
	int rc;

	if (dur)
		windows_start(r);
	for (uint64_t i = 1; dur || i <= a->iters; i++) {
		t = now_ns();
		if (r->client) {
			if (dur && t >= r->end_ns)
				break;
			*mine = (uint8_t)i;
			if (lat_post(r, size, i) != 0 || lat_wait(r, size, i, 0) != 0)
				return -1;
		} else {
			rc = lat_wait(r, size, i, dur ? r->end_ns + RUN_DRAIN_NS : 0);
			if (rc < 0)
				return -1;
			if (rc == 1)
				break;
			t = now_ns();
			*mine = (uint8_t)i;
			if (lat_post(r, size, i) != 0)
				return -1;
		}
		if (dur)
			window += in_sample(r, t);
		else
			r->stamp_ns[rounds] = t;
		rounds++;
	}
	if (lat_drain(r) != 0)
		return -1;
	if (dur) {
		res->kind = SL_PERF_KIND_LAT_DUR;
		return sl_perf_lat_dur_compute(window, r->sample_end_ns - r->sample_start_ns,
					       rtt_div, size, &res->dur);
	}
	for (uint64_t i = 0; i + 1 < rounds; i++)
		r->stamp_ns[i] = r->stamp_ns[i + 1] - r->stamp_ns[i];
	res->kind = SL_PERF_KIND_LAT;
	return sl_perf_lat_compute(r->stamp_ns, rounds - 1, rtt_div, size, a->iters, &res->lat);
}

/* --- the run ------------------------------------------------------------------------------- */

/* Does this side measure the test (else it shows the peer's row)? */
static bool
measures(const struct run *r)
{
	return r->client || r->a->bidir || r->a->test == SL_PERF_SEND_BW ||
	       r->a->test == SL_PERF_WRITE_LAT || r->a->test == SL_PERF_SEND_LAT;
}

/* One size: reset, barrier, measure, swap rows, the row to print into *out. */
static int
run_size(struct run *r, uint64_t size, struct sl_perf_result *out)
{
	uint8_t mine_b[SL_PERF_RESULT_BYTES], theirs_b[SL_PERF_RESULT_BYTES];
	struct sl_perf_result mine = {.kind = SL_PERF_KIND_BW}, theirs;
	int rc;

	for (uint32_t i = 0; i < r->a->qps; i++) { /* write_lat's flags start from 0 */
		r->q[i].buf[size - 1] = 0;
		r->q[i].buf[r->half_bytes + size - 1] = 0;
	}
	rc = sl_oob_sync(r->oob);
	if (rc != 0)
		return sl_err("sl_oob_sync (start of a size)", rc);
	if (measures(r)) {
		rc = sl_perf_test_is_lat(r->a->test) ? run_lat(r, size, &mine)
						     : run_bw(r, size, &mine);
		if (rc == -1)
			return -1;
		if (rc != 0) {
			fprintf(stderr, " %" PRIu64 " B: too few completions to time the run\n",
				size);
			return -1;
		}
	}
	sl_perf_result_encode(&mine, mine_b);
	rc = sl_oob_swap(r->oob, mine_b, theirs_b, sizeof(mine_b));
	if (rc != 0)
		return sl_err("sl_oob_swap (results)", rc);
	if (sl_perf_result_decode(theirs_b, &theirs) != 0) {
		fprintf(stderr, " the peer's results are malformed\n");
		return -1;
	}
	*out = measures(r) ? mine : theirs;
	if (r->a->bidir && mine.kind == SL_PERF_KIND_BW && theirs.kind == SL_PERF_KIND_BW)
		sl_perf_bw_add(&out->bw, &theirs.bw);
	return 0;
}

static int
run_alloc_samples(struct run *r)
{
	const struct sl_perf_args *a = r->a;

	if (a->duration_s != 0)
		return 0;
	if (sl_perf_test_is_lat(a->test)) {
		r->stamp_ns = calloc(a->iters, sizeof(*r->stamp_ns));
		return r->stamp_ns != NULL ? 0 : sl_err("calloc (latency samples)", ENOMEM);
	}
	r->marks = calloc((size_t)a->qps * (a->iters / a->cq_mod + 1), sizeof(*r->marks));
	if (r->marks == NULL)
		return sl_err("calloc (completion marks)", ENOMEM);
	if (a->no_peak)
		return 0;
	r->posted_ns = calloc((size_t)a->qps * a->iters, sizeof(*r->posted_ns));
	return r->posted_ns != NULL ? 0 : sl_err("calloc (post times)", ENOMEM);
}

static int
write_json(const struct run *r, unsigned n)
{
	FILE *f = fopen(r->a->json_file, "w");
	int rc;

	if (f == NULL)
		return sl_err(r->a->json_file, errno);
	rc = sl_perf_json_write(f, r->a, sl_ctx_host(r->ctx), r->rate_bps, r->res, n);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc == 0 ? 0 : sl_err(r->a->json_file, rc);
}

int
sl_perf_run(const struct sl_perf_args *a)
{
	struct run r = {.a = a, .client = a->server[0] != '\0', .verb = sl_perf_test_verb(a->test)};
	uint64_t sizes[SL_PERF_SWEEP_COUNT];
	unsigned n = sl_perf_sizes(a, sizes, SL_PERF_SWEEP_COUNT);
	int rc = -1;

	r.half_bytes = bytes_up(sizes[n - 1], 64);
	if (sl_perf_args_rate_bps(a, a->size_bytes, &r.rate_bps) != 0) {
		fprintf(stderr, " --rate_limit out of range\n");
		return -1;
	}
	if (run_alloc_samples(&r) != 0 || run_open(&r) != 0 || run_connect(&r) != 0)
		goto out;
	sl_perf_print_banner(stdout, a, sl_ctx_host(r.ctx));
	for (uint32_t i = 0; i < a->qps; i++) {
		struct sl_qp_info mine;

		sl_qp_info(r.q[i].qp, r.q[i].mr, &mine);
		sl_perf_print_address(stdout, "local", mine.qpn, mine.psn, mine.rkey, mine.addr);
		sl_perf_print_address(stdout, "remote", r.q[i].peer.qpn, r.q[i].peer.psn,
				      r.q[i].peer.rkey, r.q[i].peer.addr);
	}
	sl_perf_print_header(stdout, a);
	fflush(stdout); /* a script waits for the addresses to know the run has begun */
	for (unsigned i = 0; i < n; i++) {
		if (run_size(&r, sizes[i], &r.res[i]) != 0)
			goto out;
		sl_perf_print_row(stdout, a, &r.res[i]);
		fflush(stdout);
	}
	sl_perf_print_footer(stdout, a, r.rate_bps);
	rc = sl_oob_sync(r.oob);
	if (rc != 0) {
		rc = sl_err("sl_oob_sync (end)", rc);
		goto out;
	}
	rc = a->out_json ? write_json(&r, n) : 0;
out:
	run_close(&r);
	return rc;
}
