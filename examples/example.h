/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * example.h - what every example does before and after its own transfer: read the flags, attach
 * to sluiced, set up one memory region, one CQ and one QP, meet the peer over the out-of-band
 * exchange and connect, and at the end meet it again and close. Header-only, so that each
 * example still builds by hand from its one C file with libsluice alone.
 *
 * A server runs without a host argument and waits for the client; the client names the
 * server's host. Both sides give the same -p (TCP port of the exchange) and -s (bytes).
 */
#ifndef SL_EXAMPLE_H
#define SL_EXAMPLE_H

/* The example defines _POSIX_C_SOURCE (getopt under -std=c11) before it includes this. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice.h>

#define EX_PORT 18515       /* perftest's */
#define EX_TIMEOUT_MS 60000 /* to meet the peer, and for each completion */

/* One example's flags and objects. */
struct ex {
	const char *name;    /* the program's name, first word of every message */
	const char *sock;    /* -S: sluiced's socket, NULL for the default */
	const char *host;    /* the server's host (client), NULL (server) */
	unsigned long port;  /* -p */
	unsigned long bytes; /* -s: message or region size, bytes */
	unsigned long iters; /* -n: iterations; 0 before ex_args: no -n flag */
	struct sl_ctx *ctx;
	uint8_t *buf; /* sl_mem_alloc'd, registered as mr */
	struct sl_mr *mr;
	struct sl_cq *cq; /* the QP's send and receive CQ */
	struct sl_qp *qp;
	struct sl_oob *oob;
	struct sl_qp_info theirs; /* the peer's QP (and region, if it exposed one) */
};

static const char *ex_name = "example";

static void
die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", ex_name, what, strerror(err));
	exit(1);
}

/*
 * Read the flags into e, whose name, port, bytes and iters hold the defaults (iters 0: the
 * example takes no -n). Exits 0 after -h, 2 on a bad flag or value.
 */
static void
ex_args(struct ex *e, int argc, char **argv)
{
	const char *opts = e->iters ? "S:p:s:n:h" : "S:p:s:h";
	int c;

	ex_name = e->name;
	while ((c = getopt(argc, argv, opts)) != -1) {
		switch (c) {
		case 'S':
			e->sock = optarg;
			break;
		case 'p':
			e->port = strtoul(optarg, NULL, 0);
			break;
		case 's':
			e->bytes = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			e->iters = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-S socket] [-p port] [-s bytes] %s[server-host]\n",
				argv[0], strchr(opts, 'n') ? "[-n iterations] " : "");
			exit(c == 'h' ? 0 : 2);
		}
	}
	if (optind < argc - 1 || !e->port || e->port > 65535 || !e->bytes ||
	    e->bytes > (1u << 20) || (strchr(opts, 'n') && !e->iters)) {
		fprintf(stderr, "%s: bad arguments (bytes 1..1048576, port 1..65535)\n", e->name);
		exit(2);
	}
	e->host = optind < argc ? argv[optind] : NULL;
}

/* Attach to sluiced; allocate and register mem_bytes with access; one CQ, one QP on it. */
static void
ex_attach(struct ex *e, size_t mem_bytes, unsigned access)
{
	e->ctx = sl_ctx_open(e->sock, NULL);
	if (!e->ctx)
		die("cannot attach to sluiced", errno);
	e->buf = sl_mem_alloc(e->ctx, mem_bytes);
	if (!e->buf)
		die("sl_mem_alloc", errno);
	e->mr = sl_mr_reg(e->ctx, e->buf, mem_bytes, access);
	e->cq = e->mr ? sl_cq_create(e->ctx, 16) : NULL;
	e->qp = e->cq ? sl_qp_create(e->ctx,
				     &(struct sl_qp_attr){.send_cq = e->cq, .recv_cq = e->cq})
		      : NULL;
	if (!e->qp)
		die("setting up the queue pair", errno);
}

/*
 * Meet the peer (the client connects, the server accepts), trade QP descriptions (with
 * `expose`'s address and rkey, or none: NULL) into e->theirs, connect, and wait until both
 * sides have connected.
 */
static void
ex_exchange(struct ex *e, struct sl_mr *expose)
{
	struct sl_qp_info mine;
	int rc;

	e->oob = e->host ? sl_oob_connect(e->host, (uint16_t)e->port, EX_TIMEOUT_MS)
			 : sl_oob_accept((uint16_t)e->port, EX_TIMEOUT_MS);
	if (!e->oob)
		die(e->host ? "cannot reach the server" : "no client came", errno);
	sl_qp_info(e->qp, expose, &mine);
	rc = sl_oob_exchange(e->oob, &mine, &e->theirs, 1);
	if (!rc)
		rc = sl_qp_connect(e->qp, &e->theirs);
	if (!rc)
		rc = sl_oob_sync(e->oob);
	if (rc)
		die("connecting to the peer", -rc);
}

/* The final barrier: both sides are done with the transfer. */
static void
ex_barrier(struct ex *e)
{
	int rc = sl_oob_sync(e->oob);

	if (rc)
		die("the final barrier", -rc);
}

static void
ex_close(struct ex *e)
{
	sl_oob_close(e->oob);
	sl_ctx_close(e->ctx);
}

#endif /* SL_EXAMPLE_H */
