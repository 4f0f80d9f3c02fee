/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h_sluiced.c - the fake daemon (h_daemon.c) as a process, for running the examples end to
 * end: two example processes attached to it stand for two hosts.
 *
 *   h_sluiced SOCKET    serve at SOCKET until SIGTERM or SIGINT; prints "listening" once
 *                       clients can connect (the socket file appears at bind(), before that)
 */
#include <signal.h>
#include <stdio.h>

#include "h_daemon.h"

int
main(int argc, char **argv)
{
	static struct h_daemon d;
	sigset_t set;
	int sig;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* the daemon's thread inherits it */
	h_daemon_start(&d, argv[1]);
	printf("listening\n");
	fflush(stdout);
	sigwait(&set, &sig);
	h_daemon_stop(&d);
	return 0;
}
