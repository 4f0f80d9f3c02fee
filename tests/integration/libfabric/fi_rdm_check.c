/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_rdm_check.c - what fi_pingpong does not reach of the sluice provider, through
 * <rdma/fabric.h> only: an application of libfabric, not of libsluice.
 *
 *   fi_rdm_check server NAMEFILE      writes its endpoint name to NAMEFILE, then
 *   fi_rdm_check client NAMEFILE      reads it and runs the cases below with the server
 *
 * Cases, in order:
 *   1. unexpected: the client sends MSGS (200) messages with fi_senddata (CQ data = the index)
 *      of 1 B to 16 KiB, its name in the first, while the server posts no receive: for 3 s
 *      it only waits in fi_cq_sread (which must wake for the client's handshake and return
 *      nothing); the server then posts its receives one at a time and waits with
 *      fi_cq_sreadfrom on its FI_WAIT_FD CQ of FI_CQ_FORMAT_DATA: every message arrives in
 *      order, byte for byte, with FI_REMOTE_CQ_DATA and its index, and once the client's
 *      name is in the server's AV, with the client's fi_addr_t as its source (FI_SOURCE);
 *   2. truncation: a 4096-byte message into a 100-byte receive completes with FI_ETRUNC,
 *      olen 3996, and the first 100 bytes placed;
 *   3. reply: the server sends to the client's name (inserted into an FI_AV_MAP) and the
 *      client, which polls its FI_WAIT_NONE CQ, gets it;
 *   4. peer gone: the server exits; the client's sends to it must complete with an error
 *      (fi_cq_readerr) within GONE_S (30) seconds, not hang.
 * Exit 0 when every case holds; otherwise a line naming the case and 1.
 *
 *   fi_rdm_check gone-server NAMEFILE          receives whatever comes, for ever
 *   fi_rdm_check gone-client NAMEFILE TIMEOUT_MS
 *
 * A peer killed mid-transfer (test_libfabric.sh peer-gone kills the server, or its sluiced):
 * the server writes its name to NAMEFILE and its pid to NAMEFILE.pid, keeps GONE_RX receives
 * posted and reposts each as it completes, and answers every GONE_CREDIT messages with a
 * credit (FI_RM_DISABLED: a sender that outruns its receiver past sluiced's stash fails, so
 * the client sends at most GONE_WINDOW ahead of the credits). The client keeps up to GONE_TX
 * sends of GONE_BYTES in flight to it (its name in the first), writes NAMEFILE.streaming once
 * GONE_WARMUP have completed, and streams on until the test's NAMEFILE.killed appears. From
 * then it keeps GONE_TX sends outstanding to the gone peer, credits or not, until one fails
 * (sends the peer's sluiced acknowledged before it noticed complete as they should), then posts
 * nothing: every send outstanding must complete, in an error entry of a peer's failure
 * (FI_ETIMEDOUT: its QP's retries ran out; FI_ECONNRESET, FI_EREMOTEIO, FI_ECANCELED), the
 * last within 2 x TIMEOUT_MS + 2 s of the kill (TIMEOUT_MS: sluiced's [api] timeout_ms,
 * after which a QP with nothing acknowledged fails); a new send to the peer must then be
 * refused at once with its error. The server,
 * when its own sluiced is the one killed, sees its receives end in FI_ECONNABORTED and exits
 * with status 2. The client prints one JSON line: counts, the error, the time it took.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define FI_CHECK_PROG "fi_rdm_check"
#include "fi_check.h"

#define MSGS 200
#define MAX_BYTES 16384 /**< 200 messages of up to this wait in sluiced's stash: < 4 MiB */
#define GONE_S 30
#define GONE_RX 64       /**< receives the gone-server keeps posted */
#define GONE_TX 16       /**< sends the gone-client keeps in flight (FI_SLUICE_TX_SLOTS) */
#define GONE_BYTES 65536 /**< each of them, bytes */
#define GONE_CREDIT 16   /**< the server's credit message says it took this many */
#define GONE_WINDOW                                                                                \
	32                /**< messages the client sends ahead of the credits: 2 MiB, in           \
			   *   the half of sluiced's stash share (4 MiB) an application has */
#define GONE_WARMUP 200   /**< sends completed before the client says it streams */
#define GONE_STREAM_S 120 /**< the stream's longest wait for the kill, s */

static void
open_side(struct fi_side *s, enum fi_wait_obj wait, enum fi_av_type av_type)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = wait, .size = 256};
	struct fi_av_attr av_attr = {.type = av_type};

	hints->caps = FI_MSG | FI_SOURCE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("sluice");
	hints->domain_attr->cq_data_size = 4;
	fi_side_open(s, hints, &cq_attr, &av_attr);
}

static uint8_t
pattern(unsigned msg, size_t i)
{
	return (uint8_t)(msg * 131 + i * 7 + 1);
}

static size_t
msg_len(unsigned i)
{
	return i == 0 ? FI_CHECK_NAME_BYTES : 1 + ((size_t)i * 2654435761u) % MAX_BYTES;
}

/* One completion and its source: fi_cq_sreadfrom (wait) or fi_cq_readfrom spun, with a
 * deadline. */
static int
one_from(struct fi_side *s, struct fi_cq_data_entry *e, fi_addr_t *src, bool wait, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	ssize_t n;

	do {
		n = wait ? fi_cq_sreadfrom(s->cq, e, 1, src, NULL, 1000)
			 : fi_cq_readfrom(s->cq, e, 1, src);
		if (n == 1 || (n < 0 && n != -FI_EAGAIN))
			return (int)n;
	} while (time(NULL) < end);
	return -FI_ETIMEDOUT;
}

static int
one(struct fi_side *s, struct fi_cq_data_entry *e, bool wait, int timeout_s)
{
	fi_addr_t src;

	return one_from(s, e, &src, wait, timeout_s);
}

static void
server(const char *namefile)
{
	static uint8_t buf[MAX_BYTES];
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = {0};
	struct fi_side s = {0};
	fi_addr_t client = FI_ADDR_NOTAVAIL, src;

	open_side(&s, FI_WAIT_FD, FI_AV_TABLE);
	name_write(namefile, s.name, s.name_len);
	/* Case 1: the client sends everything before the first receive is posted. */
	for (time_t end = time(NULL) + 3; time(NULL) < end;)
		if (fi_cq_sread(s.cq, &e, 1, NULL, 500) != -FI_EAGAIN)
			fail("unexpected: a completion with no receive posted");
	for (unsigned i = 0; i < MSGS; i++) {
		size_t len = msg_len(i);

		memset(buf, 0, sizeof(buf));
		CHECK(fi_recv(s.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, &s));
		if (one_from(&s, &e, &src, true, 10) != 1)
			fail("unexpected: a message did not complete");
		if (src != client)
			fail("FI_SOURCE: a message's source is not the client's fi_addr_t");
		if (!(e.flags & FI_RECV) || !(e.flags & FI_REMOTE_CQ_DATA) || e.data != i ||
		    e.len != len || e.op_context != &s || e.buf != buf)
			fail("unexpected: a completion's fields");
		if (i == 0) {
			if (fi_av_insert(s.av, buf, 1, &client, 0, NULL) != 1)
				fail("server: the client's name does not insert");
			continue;
		}
		for (size_t k = 0; k < len; k++)
			if (buf[k] != pattern(i, k))
				fail("unexpected: a byte differs");
	}
	/* Case 2: truncation. */
	CHECK(fi_recv(s.ep, buf, 100, NULL, FI_ADDR_UNSPEC, &s));
	if (one(&s, &e, true, 10) != -FI_EAVAIL || fi_cq_readerr(s.cq, &err, 0) != 1 ||
	    err.err != FI_ETRUNC || err.olen != 3996 || buf[99] != pattern(MSGS, 99))
		fail("truncation: no FI_ETRUNC of olen 3996");
	/* Case 3: a reply to the client's name. */
	memcpy(buf, "done", 5);
	CHECK(fi_send(s.ep, buf, 5, NULL, client, &s));
	if (one(&s, &e, true, 10) != 1 || !(e.flags & FI_SEND))
		fail("reply: no send completion");
	fi_side_close(&s);
	printf("server: %u messages checked, truncation and reply done\n", MSGS);
}

static void
client(const char *namefile)
{
	static uint8_t buf[MAX_BYTES], rbuf[64];
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = {0};
	char name[FI_CHECK_NAME_BYTES] = {0};
	struct fi_side s = {0};
	fi_addr_t srv;
	int errs = 0;
	unsigned sends = 0;
	bool got_reply = false;

	name_read(namefile, name, sizeof(name));
	open_side(&s, FI_WAIT_NONE, FI_AV_MAP);
	if (fi_av_insert(s.av, name, 1, &srv, 0, NULL) != 1)
		fail("client: the server's name does not insert");
	/* The reply's receive first, so that it is not taken by case 1. */
	CHECK(fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, rbuf));
	for (unsigned i = 0; i <= MSGS; i++) {
		size_t len = i == MSGS ? 4096 : msg_len(i);
		ssize_t rc;

		if (i == 0)
			memcpy(buf, s.name, s.name_len);
		else
			for (size_t k = 0; k < len; k++)
				buf[k] = pattern(i, k);
		while ((rc = fi_senddata(s.ep, buf, len, NULL, i, srv, buf)) == -FI_EAGAIN) {
			if (one(&s, &e, false, 10) != 1 || !(e.flags & FI_SEND))
				fail("client: a send did not complete");
			sends++;
		}
		CHECK(rc);
	}
	/* The sends still outstanding, and the reply among them. */
	while (!got_reply || sends < MSGS + 1) {
		if (one(&s, &e, false, 20) != 1)
			fail("client: a send or the reply did not complete");
		if (e.flags & FI_SEND) {
			sends++;
			continue;
		}
		if (e.op_context != rbuf || memcmp(rbuf, "done", 5) != 0)
			fail("reply: wrong message");
		got_reply = true;
	}
	/* Case 4: the server is gone (it exits after its reply); sends must fail, not hang. */
	sleep(1);
	for (time_t end = time(NULL) + GONE_S; time(NULL) < end && errs == 0;) {
		ssize_t rc = fi_send(s.ep, buf, 64, NULL, srv, buf);
		int r;

		if (rc < 0 && rc != -FI_EAGAIN) {
			errs = 1; /* the peer failed already: refused at once */
			break;
		}
		r = one(&s, &e, false, 1);
		if (r == -FI_EAVAIL && fi_cq_readerr(s.cq, &err, 0) == 1 && err.err != 0)
			errs = 1;
	}
	if (!errs)
		fail("peer gone: no error within 30 s");
	fi_side_close(&s);
	printf("client: %u messages sent, reply received, the gone peer reported (%s)\n", MSGS,
	       err.err ? fi_strerror(err.err) : "refused at once");
}

static void
gone_server(const char *namefile)
{
	static uint8_t bufs[GONE_RX][GONE_BYTES], credit = 1;
	struct fi_cq_err_entry err = {0};
	struct fi_cq_data_entry e;
	struct fi_side s = {0};
	fi_addr_t client = FI_ADDR_NOTAVAIL;
	unsigned long got = 0;
	char path[4096];
	FILE *f;

	open_side(&s, FI_WAIT_FD, FI_AV_TABLE);
	for (unsigned i = 0; i < GONE_RX; i++)
		CHECK(fi_recv(s.ep, bufs[i], GONE_BYTES, NULL, FI_ADDR_UNSPEC, bufs[i]));
	snprintf(path, sizeof(path), "%s.pid", namefile);
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
		fail("gone-server: cannot write the pid file");
	name_write(namefile, s.name, s.name_len);
	for (;;) {
		ssize_t n = fi_cq_sread(s.cq, &e, 1, NULL, 1000);

		if (n == 1 && (e.flags & FI_RECV)) {
			/* the first message is the client's name; every GONE_CREDIT after it, a
			 * credit back */
			if (got++ == 0 &&
			    fi_av_insert(s.av, e.op_context, 1, &client, 0, NULL) != 1)
				fail("gone-server: the client's name does not insert");
			CHECK(fi_recv(s.ep, e.op_context, GONE_BYTES, NULL, FI_ADDR_UNSPEC,
				      e.op_context));
			if (got % GONE_CREDIT == 1 && got > 1)
				CHECK(fi_inject(s.ep, &credit, 1, client));
			continue;
		}
		if (n == 1 || n == -FI_EAGAIN)
			continue;
		if (n != -FI_EAVAIL || fi_cq_readerr(s.cq, &err, 0) != 1)
			fail("gone-server: fi_cq_sread failed");
		if (err.err != FI_ECONNABORTED)
			fail("gone-server: an error completion but sluiced's going away");
		printf("gone-server: its sluiced is gone: a receive ended in %s\n",
		       fi_strerror(err.err));
		exit(2);
	}
}

static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* An error a peer's failure may end a send with. */
static bool
peer_error(int err)
{
	return err == FI_ETIMEDOUT || err == FI_ECONNRESET || err == FI_EREMOTEIO ||
	       err == FI_ECANCELED;
}

/* What gone_reap found. */
enum gone_event { GONE_NONE, GONE_SENT, GONE_CREDITED };

/* One completion of the stream, if there is one: a send's (*err 0, or its error, which must be
 * a peer's failure), or a credit's (its receive posted again). */
static enum gone_event
gone_reap(struct fi_side *s, uint8_t *credit, int *err)
{
	struct fi_cq_err_entry ee = {0};
	struct fi_cq_data_entry e;
	ssize_t n = fi_cq_read(s->cq, &e, 1);

	*err = 0;
	if (n == -FI_EAGAIN)
		return GONE_NONE;
	if (n == 1 && (e.flags & FI_RECV)) {
		CHECK(fi_recv(s->ep, credit, 1, NULL, FI_ADDR_UNSPEC, credit));
		return GONE_CREDITED;
	}
	if (n == 1)
		return GONE_SENT;
	if (n != -FI_EAVAIL || fi_cq_readerr(s->cq, &ee, 0) != 1 || !(ee.flags & FI_SEND))
		fail("gone-client: fi_cq_read gave neither a send, a credit nor a send's error");
	if (!peer_error(ee.err))
		fail("gone-client: a send ended in an error that is no peer's failure");
	*err = ee.err;
	return GONE_SENT;
}

static void
gone_client(const char *namefile, unsigned timeout_ms)
{
	static uint8_t buf[GONE_BYTES], credit;
	const uint64_t bound_ms = 2u * timeout_ms + 2000u;
	char name[FI_CHECK_NAME_BYTES] = {0}, streaming[4096], killed[4096];
	uint64_t posted = 0, done = 0, ok = 0, errs = 0, credits = 0, t_kill = 0, t_last = 0;
	int first_err = 0, err;
	struct fi_side s = {0};
	fi_addr_t srv;
	ssize_t rc;

	name_read(namefile, name, sizeof(name));
	snprintf(streaming, sizeof(streaming), "%s.streaming", namefile);
	snprintf(killed, sizeof(killed), "%s.killed", namefile);
	open_side(&s, FI_WAIT_NONE, FI_AV_MAP);
	if (fi_av_insert(s.av, name, 1, &srv, 0, NULL) != 1)
		fail("gone-client: the server's name does not insert");
	CHECK(fi_recv(s.ep, &credit, 1, NULL, FI_ADDR_UNSPEC, &credit));
	memcpy(buf, s.name, s.name_len); /* the first message names the client */
	/*
	 * Stream, within the credits, until the kill is seen (an error before it must be
	 * followed by the kill within 2 s); from then on keep GONE_TX sends in flight
	 * regardless of credits until one fails, then post nothing and wait for the rest.
	 */
	for (uint64_t end = now_ms() + GONE_STREAM_S * 1000u, t_err = 0;;) {
		enum gone_event ev;

		while (first_err == 0 && posted - done < GONE_TX &&
		       (t_kill != 0 || posted < GONE_CREDIT * credits + GONE_WINDOW) &&
		       (rc = fi_send(s.ep, buf, sizeof(buf), NULL, srv, buf)) != -FI_EAGAIN) {
			CHECK(rc);
			posted++;
		}
		ev = gone_reap(&s, &credit, &err);
		credits += ev == GONE_CREDITED;
		if (ev == GONE_SENT) {
			done++;
			t_last = now_ms();
			ok += err == 0;
			errs += err != 0;
			if (done == GONE_WARMUP && errs == 0)
				name_write(streaming, "1", 1);
			if (err != 0 && first_err == 0) {
				first_err = err;
				t_err = now_ms();
			}
		}
		if (t_kill == 0 && access(killed, F_OK) == 0)
			t_kill = now_ms();
		if (t_kill == 0 && ((t_err != 0 && now_ms() - t_err > 2000) || now_ms() > end)) {
			fprintf(stderr, "%llu sends completed, %llu in error (%s)\n",
				(unsigned long long)done, (unsigned long long)errs,
				fi_strerror(first_err));
			fail("gone-client: a send failed with no kill, or no kill while it "
			     "streamed");
		}
		if (t_kill != 0 && first_err != 0 && done == posted)
			break;
		if (t_kill != 0 && now_ms() - t_kill > bound_ms) {
			fprintf(stderr, "%llu sends, %llu completed, %llu in error\n",
				(unsigned long long)posted, (unsigned long long)done,
				(unsigned long long)errs);
			fail("gone-client: no error, or sends outstanding, past the bound");
		}
	}
	rc = fi_send(s.ep, buf, 64, NULL, srv, buf);
	if (rc != -first_err) {
		fprintf(stderr, "new send: %zd (%s), the error: %s\n", rc, fi_strerror((int)-rc),
			fi_strerror(first_err));
		fail("gone-client: a new send to the gone peer is not refused with its error");
	}
	printf("{\"case\": \"peer-gone\", \"sends\": %llu, \"ok\": %llu, \"errors\": %llu, "
	       "\"err\": \"%s\", \"last_ms_after_kill\": %llu, \"bound_ms\": %llu, "
	       "\"new_send\": \"%s\"}\n",
	       (unsigned long long)posted, (unsigned long long)ok, (unsigned long long)errs,
	       fi_strerror(first_err), (unsigned long long)(t_last - t_kill),
	       (unsigned long long)bound_ms, fi_strerror((int)-rc));
	fi_side_close(&s);
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		server(argv[2]);
	else if (argc == 3 && strcmp(argv[1], "client") == 0)
		client(argv[2]);
	else if (argc == 3 && strcmp(argv[1], "gone-server") == 0)
		gone_server(argv[2]);
	else if (argc == 4 && strcmp(argv[1], "gone-client") == 0)
		gone_client(argv[2], (unsigned)atoi(argv[3]));
	else
		fail("usage: fi_rdm_check server|client|gone-server NAMEFILE, "
		     "fi_rdm_check gone-client NAMEFILE TIMEOUT_MS");
	return 0;
}
