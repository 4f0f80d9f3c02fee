/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_msg_check.c - the sluice provider's FI_EP_MSG connections where fi_pingpong does not take
 * them: refusals, errors and shutdown, through <rdma/fabric.h> only.
 *
 *   fi_msg_check server NAMEFILE      listens, writes its passive endpoint's name to NAMEFILE
 *   fi_msg_check client NAMEFILE      reads it and runs the cases below with the server
 *
 * Cases, in order:
 *   1. nobody listens: a connect to port 1 of the server's address is an error event on the
 *      client's EQ (fi_eq_readerr: FI_ECONNREFUSED) within WAIT_S (10) seconds, not a hang;
 *   2. rejected: the server waits for the request on its EQ's wait fd (FI_WAIT_FD,
 *      FI_GETWAIT, poll) and fi_rejects it; the client's EQ gives FI_ECONNREFUSED;
 *   3. accepted: FI_CONNREQ, fi_accept, FI_CONNECTED on both sides naming their endpoints;
 *      fi_getpeer gives each the other's name (the server's, the name it listens on); a
 *      message each way;
 *   4. shutdown: the server fi_shutdowns; the client's EQ gives FI_SHUTDOWN within WAIT_S, and
 *      its next send fails with -FI_ESHUTDOWN.
 * Exit 0 when every case holds; otherwise a line naming the case and 1.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define FI_CHECK_PROG "fi_msg_check"
#include "fi_check.h"

#define WAIT_S 10
#define NAME_MAX_BYTES 64

struct side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

static struct fi_info *
getinfo(const char *dest)
{
	struct fi_info *hints = fi_allocinfo(), *info;

	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_MSG;
	hints->fabric_attr->prov_name = strdup("sluice");
	if (dest != NULL) {
		hints->dest_addr = strdup(dest);
		hints->dest_addrlen = strlen(dest) + 1;
	}
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	return info;
}

static void
open_fabric(struct side *s, struct fi_info *info)
{
	struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_FD};

	CHECK(fi_fabric(info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
}

/* An endpoint for info on s's fabric and EQ, its domain and CQ, enabled. */
static void
open_ep(struct side *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = 64};

	CHECK(fi_domain(s->fabric, info, &s->domain, NULL));
	CHECK(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
	CHECK(fi_endpoint(s->domain, info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(s->ep));
}

static void
close_ep(struct side *s)
{
	CHECK(fi_close(&s->ep->fid));
	CHECK(fi_close(&s->cq->fid));
	CHECK(fi_close(&s->domain->fid));
}

/* The next event within WAIT_S: its number, or -FI_EAVAIL with the error in *err. */
static int
event(struct side *s, struct fi_eq_cm_entry *e, struct fi_eq_err_entry *err)
{
	uint32_t ev;
	ssize_t n = fi_eq_sread(s->eq, &ev, e, sizeof(*e), WAIT_S * 1000, 0);

	if (n == -FI_EAVAIL) {
		if (fi_eq_readerr(s->eq, err, 0) != sizeof(*err))
			fail("fi_eq_readerr: no error after -FI_EAVAIL");
		return -FI_EAVAIL;
	}
	if (n == -FI_EAGAIN)
		fail("no event within 10 s");
	if (n != sizeof(*e))
		fail("fi_eq_sread: not a connection event");
	return (int)ev;
}

/* One completion within WAIT_S. */
static void
completion(struct side *s, const char *what)
{
	struct fi_cq_entry e;
	time_t end = time(NULL) + WAIT_S;
	ssize_t n;

	do {
		n = fi_cq_read(s->cq, &e, 1);
		if (n == 1)
			return;
		if (n != -FI_EAGAIN)
			fail(what);
	} while (time(NULL) < end);
	fail(what);
}

static void
server(const char *namefile)
{
	struct fi_info *info = getinfo(NULL), *req;
	struct fi_eq_cm_entry e;
	struct fi_eq_err_entry err = {0};
	struct fid_pep *pep;
	struct side s = {0};
	char name[NAME_MAX_BYTES], peer[NAME_MAX_BYTES], buf[64];
	size_t len = sizeof(name);
	struct pollfd pfd = {.events = POLLIN};
	uint32_t ev;

	open_fabric(&s, info);
	CHECK(fi_passive_ep(s.fabric, info, &pep, NULL));
	CHECK(fi_pep_bind(pep, &s.eq->fid, 0));
	CHECK(fi_listen(pep));
	CHECK(fi_getname(&pep->fid, name, &len));
	name_write(namefile, name, len);
	/* Case 2: the request, waited for on the EQ's fd, refused. */
	CHECK(fi_control(&s.eq->fid, FI_GETWAIT, &pfd.fd));
	for (time_t end = time(NULL) + 2 * WAIT_S;
	     fi_eq_read(s.eq, &ev, &e, sizeof(e), 0) == -FI_EAGAIN;)
		if (time(NULL) > end || poll(&pfd, 1, 1000) < 0)
			fail("rejected: no FI_CONNREQ on the EQ's wait fd");
	if (ev != FI_CONNREQ || e.fid != &pep->fid || e.info == NULL || e.info->handle == NULL)
		fail("rejected: not an FI_CONNREQ of the passive endpoint");
	CHECK(fi_reject(pep, e.info->handle, NULL, 0));
	fi_freeinfo(e.info);
	/* Case 3: the next one accepted. */
	if (event(&s, &e, &err) != FI_CONNREQ || e.fid != &pep->fid)
		fail("accepted: no FI_CONNREQ");
	req = e.info;
	open_ep(&s, req);
	CHECK(fi_recv(s.ep, buf, sizeof(buf), NULL, 0, buf));
	CHECK(fi_accept(s.ep, NULL, 0));
	if (event(&s, &e, &err) != FI_CONNECTED || e.fid != &s.ep->fid)
		fail("accepted: no FI_CONNECTED for the server's endpoint");
	len = sizeof(peer);
	CHECK(fi_getpeer(s.ep, peer, &len));
	completion(&s, "accepted: the client's message did not arrive");
	if (strcmp(buf, "hello") != 0)
		fail("accepted: the client's message differs");
	CHECK(fi_send(s.ep, peer, len, NULL, 0, NULL));
	completion(&s, "accepted: the reply's send did not complete");
	/* Case 4: the server ends the connection. */
	CHECK(fi_shutdown(s.ep, 0));
	close_ep(&s);
	CHECK(fi_close(&pep->fid));
	CHECK(fi_close(&s.eq->fid));
	CHECK(fi_close(&s.fabric->fid));
	fi_freeinfo(req);
	fi_freeinfo(info);
	printf("server: rejected one request, accepted one (%s), shut it down\n", peer);
}

/* Connect s (a new endpoint for dest) and wait for the outcome: the event's number. */
static int
connect_to(struct side *s, const char *dest, struct fi_info **info, struct fi_eq_err_entry *err)
{
	struct fi_eq_cm_entry e;
	int ev;

	*info = getinfo(dest);
	open_ep(s, *info);
	CHECK(fi_connect(s->ep, dest, NULL, 0));
	ev = event(s, &e, err);
	if (ev == FI_CONNECTED && e.fid != &s->ep->fid)
		fail("FI_CONNECTED names another endpoint");
	if (ev == -FI_EAVAIL && err->fid != &s->ep->fid)
		fail("the error event names another endpoint");
	return ev;
}

static void
client(const char *namefile)
{
	struct fi_eq_err_entry err = {0};
	struct fi_eq_cm_entry e;
	struct fi_info *info, *refused_info, *rejected_info;
	struct side s = {0};
	char name[NAME_MAX_BYTES], dead[NAME_MAX_BYTES], peer[NAME_MAX_BYTES], mine[NAME_MAX_BYTES];
	char buf[64] = "hello";
	size_t len;
	ssize_t rc;

	name_read(namefile, name, sizeof(name));
	/* Case 1: port 1 of the server's address. */
	snprintf(dead, sizeof(dead), "%.*s:1", (int)(strrchr(name, ':') - name), name);
	info = getinfo(name);
	open_fabric(&s, info);
	if (connect_to(&s, dead, &refused_info, &err) != -FI_EAVAIL || err.err != FI_ECONNREFUSED)
		fail("nobody listens: no FI_ECONNREFUSED error event");
	close_ep(&s);
	/* Case 2: the server rejects. */
	if (connect_to(&s, name, &rejected_info, &err) != -FI_EAVAIL || err.err != FI_ECONNREFUSED)
		fail("rejected: no FI_ECONNREFUSED error event");
	close_ep(&s);
	/* Case 3: accepted; a message each way. */
	fi_freeinfo(info);
	if (connect_to(&s, name, &info, &err) != FI_CONNECTED)
		fail("accepted: no FI_CONNECTED");
	len = sizeof(peer);
	CHECK(fi_getpeer(s.ep, peer, &len));
	if (strcmp(peer, name) != 0)
		fail("accepted: fi_getpeer is not the server's name");
	len = sizeof(mine);
	CHECK(fi_getname(&s.ep->fid, mine, &len));
	CHECK(fi_recv(s.ep, buf + 8, sizeof(buf) - 8, NULL, 0, NULL));
	CHECK(fi_send(s.ep, buf, 6, NULL, 0, NULL));
	completion(&s, "accepted: the send did not complete");
	completion(&s, "accepted: the server's reply did not arrive");
	if (strcmp(buf + 8, mine) != 0)
		fail("accepted: the server's fi_getpeer is not the client's fi_getname");
	/* Case 4: the server shuts the connection down. */
	if (event(&s, &e, &err) != FI_SHUTDOWN || e.fid != &s.ep->fid)
		fail("shutdown: no FI_SHUTDOWN");
	rc = fi_send(s.ep, buf, 6, NULL, 0, NULL);
	if (rc != -FI_ESHUTDOWN)
		fail("shutdown: a send after FI_SHUTDOWN does not fail with -FI_ESHUTDOWN");
	close_ep(&s);
	CHECK(fi_close(&s.eq->fid));
	CHECK(fi_close(&s.fabric->fid));
	fi_freeinfo(info);
	fi_freeinfo(refused_info);
	fi_freeinfo(rejected_info);
	printf("client: refused (nobody listening, rejected), connected as %s, shut down\n", mine);
}

int
main(int argc, char **argv)
{
	if (argc != 3)
		fail("usage: fi_msg_check server|client NAMEFILE");
	if (strcmp(argv[1], "server") == 0)
		server(argv[2]);
	else if (strcmp(argv[1], "client") == 0)
		client(argv[2]);
	else
		fail("usage: fi_msg_check server|client NAMEFILE");
	return 0;
}
