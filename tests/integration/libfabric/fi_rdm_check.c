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

int
main(int argc, char **argv)
{
	if (argc != 3)
		fail("usage: fi_rdm_check server|client NAMEFILE");
	if (strcmp(argv[1], "server") == 0)
		server(argv[2]);
	else if (strcmp(argv[1], "client") == 0)
		client(argv[2]);
	else
		fail("usage: fi_rdm_check server|client NAMEFILE");
	return 0;
}
