/*
 * nats_server.h - Debian's nats-server for the NATS tests (test_sink_nats.c,
 * test_collect_nats.c): started with JetStream on a free loopback port,
 * its store in sd, killed (SIGKILL) and started again.
 */
#ifndef RLOG_TEST_NATS_SERVER_H
#define RLOG_TEST_NATS_SERVER_H

#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static char sd[256];
static int port;
static struct proc_bg server;

/* A free port on loopback (the kernel's pick). */
static inline int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static inline bool port_open(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok_ = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok_;
}

static inline void server_start(void)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	const char *argv[] = { "nats-server", "-js", "-sd", sd, "-p", p, "-a", "127.0.0.1", NULL };
	proc_start(&server, argv);
	bool up = false;
	for (int i = 0; i < 1000 && !(up = port_open()); i++)
		proc_sleep_ms(10);
	ok(up, "nats-server listens on %d", port);
}

static inline void server_kill(void)
{
	proc_signal(&server, SIGKILL);
	struct run r_ = proc_reap(&server);
	run_free(&r_);
}

#endif
