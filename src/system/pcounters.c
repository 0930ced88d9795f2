/*
 * pcounters.c - per-process counters from /proc and from the kernel's
 * taskstats (pcounters.h).
 */
#define _GNU_SOURCE
#include "system/pcounters.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/acct.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "procstat.h"

uint32_t rlog__pcounters_payload(const struct rlog__pcounters *c, uint8_t *pl)
{
	uint32_t head[4] = { c->pid, c->pid, c->kind, c->threads };
	uint64_t v[12] = { c->minflt, c->majflt, c->utime_ns, c->stime_ns, c->nvcsw, c->nivcsw,
			   c->rss_kb, c->rss_peak_kb, c->vm_kb, c->vm_peak_kb, c->read_bytes,
			   c->write_bytes };
	memcpy(pl, head, sizeof head);
	memcpy(pl + sizeof head, v, sizeof v);
	return (uint32_t)(sizeof head + sizeof v);
}

/* The value of "key: N" in /proc/PID/io (0 if unreadable). */
static uint64_t io_field(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static uint64_t kb(pid_t pid, const char *key)
{
	uint64_t v = rlog__proc_status_kb(pid, key);
	return v == UINT64_MAX ? 0 : v;
}

int rlog__pcounters_read(pid_t pid, struct rlog__pcounters *c)
{
	struct rlog__proc_figures f;
	int rc = rlog__procstat_figures(pid, true, &f);
	if (rc < 0)
		return rc;
	memset(c, 0, sizeof *c);
	c->pid = (uint32_t)pid;
	c->kind = RLOG_PCOUNTERS_RUNDOWN;
	c->minflt = f.v[0];
	c->majflt = f.v[1];
	c->nvcsw = f.v[2];
	c->nivcsw = f.v[3];
	c->utime_ns = f.v[4];
	c->stime_ns = f.v[5];
	c->threads = (uint32_t)kb(pid, "Threads");
	c->rss_kb = kb(pid, "VmRSS");
	c->rss_peak_kb = kb(pid, "VmHWM");
	c->vm_kb = kb(pid, "VmSize");
	c->vm_peak_kb = kb(pid, "VmPeak");
	char path[64], text[1024];
	snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		text[n] = '\0';
		c->read_bytes = io_field(text, "\nread_bytes: ");
		c->write_bytes = io_field(text, "\nwrite_bytes: ");
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* taskstats (Documentation/accounting/taskstats.rst)               */
/* ---------------------------------------------------------------- */

/* A process with threads that exited before its last one: their sums. */
struct pending {
	struct rlog__pcounters c;
};

struct rlog__tstats {
	int fd;
	uint16_t family;
	uint64_t overruns;
	struct pending *p;
	size_t np, cap;
	uint8_t buf[65536];
};

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	uint8_t attrs[64];
};

static int req_send(int fd, uint16_t type, uint8_t cmd, uint16_t attr, const void *val,
		    uint16_t len)
{
	struct req m;
	memset(&m, 0, sizeof m);
	m.n.nlmsg_type = type;
	m.n.nlmsg_flags = NLM_F_REQUEST;
	m.g.cmd = cmd;
	m.g.version = 1;
	struct nlattr *a = (struct nlattr *)m.attrs;
	a->nla_type = attr;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(m.attrs + NLA_HDRLEN, val, len);
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(fd, &m, m.n.nlmsg_len, 0, (struct sockaddr *)&to, sizeof to) < 0)
		return -errno;
	return 0;
}

/* The generic netlink family id of "TASKSTATS". */
static int family_id(int fd)
{
	int rc = req_send(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, "TASKSTATS", 10);
	if (rc < 0)
		return rc;
	uint8_t buf[4096];
	ssize_t n = recv(fd, buf, sizeof buf, 0);
	if (n < 0)
		return -errno;
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_len > (size_t)n)
		return -EBADMSG;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		return e->error < 0 ? e->error : -ENOENT;
	}
	const uint8_t *p = buf + NLMSG_LENGTH(GENL_HDRLEN), *end = buf + h->nlmsg_len;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID && a->nla_len >= NLA_HDRLEN + 2) {
			uint16_t id;
			memcpy(&id, p + NLA_HDRLEN, 2);
			return id;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	return -ENOENT;
}

int rlog__tstats_open(struct rlog__tstats **out)
{
	struct rlog__tstats *t = calloc(1, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	t->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int rc = t->fd < 0 ? -errno : 0;
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	if (rc == 0 && bind(t->fd, (struct sockaddr *)&me, sizeof me) < 0)
		rc = -errno;
	if (rc == 0) {
		/* Room for bursts of exits between two reads (a message is
		 * some 600 bytes); as root past rmem_max. */
		int sz = 8 << 20;
		if (setsockopt(t->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) < 0)
			setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
		rc = family_id(t->fd);
	}
	if (rc >= 0) {
		t->family = (uint16_t)rc;
		long n = sysconf(_SC_NPROCESSORS_CONF);
		char mask[32];
		int len = snprintf(mask, sizeof mask, "0-%ld", n > 0 ? n - 1 : 0);
		rc = req_send(t->fd, t->family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
			      mask, (uint16_t)(len + 1));
	}
	if (rc < 0) {
		rlog__tstats_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

static struct pending *pending_find(struct rlog__tstats *t, uint32_t pid)
{
	for (size_t i = 0; i < t->np; i++)
		if (t->p[i].c.pid == pid)
			return &t->p[i];
	return NULL;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* One exiting thread's taskstats. */
static int one_exit(struct rlog__tstats *t, const struct taskstats *ts, rlog__tstats_fn *fn, void *arg)
{
	uint32_t tgid = ts->ac_tgid ? ts->ac_tgid : ts->ac_pid;
	struct pending *p = pending_find(t, tgid);
	struct rlog__pcounters c;
	if (p) {
		c = p->c;
	} else {
		memset(&c, 0, sizeof c);
		c.pid = tgid;
		c.kind = RLOG_PCOUNTERS_EXIT;
	}
	c.threads++;
	c.minflt += ts->ac_minflt;
	c.majflt += ts->ac_majflt;
	c.utime_ns += ts->ac_utime * 1000;
	c.stime_ns += ts->ac_stime * 1000;
	c.nvcsw += ts->nvcsw;
	c.nivcsw += ts->nivcsw;
	c.rss_peak_kb = max64(c.rss_peak_kb, ts->hiwater_rss);
	c.vm_peak_kb = max64(c.vm_peak_kb, ts->hiwater_vm);
	c.read_bytes += ts->read_bytes;
	c.write_bytes += ts->write_bytes;
	if (ts->ac_flag & AGROUP) {
		if (p)
			*p = t->p[--t->np];
		fn(arg, &c);
		return 1;
	}
	if (p) {
		p->c = c;
		return 0;
	}
	if (t->np == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct pending *np = cap <= 65536 ? realloc(t->p, cap * sizeof *np) : NULL;
		if (np == NULL) {
			/* This thread's share cannot be summed: counted as
			 * an exit lost (rlog__tstats_overruns), as an
			 * overrun's are. */
			t->overruns++;
			return 0;
		}
		t->p = np;
		t->cap = cap;
	}
	t->p[t->np++].c = c;
	return 0;
}

int rlog__tstats_read(struct rlog__tstats *t, rlog__tstats_fn *fn, void *arg)
{
	int done = 0;
	for (;;) {
		/* Only the kernel's messages (nl_pid 0): another process may
		 * send to the socket's port. */
		struct sockaddr_nl from;
		socklen_t fl = sizeof from;
		memset(&from, 0, sizeof from);
		ssize_t n = recvfrom(t->fd, t->buf, sizeof t->buf, MSG_DONTWAIT, (struct sockaddr *)&from,
				     &fl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* Exits dropped, which ones unknown: the sums pending are
			 * forgotten (a process caught in it gets a record of the
			 * threads that exit after, or none; docs/DECISIONS.md). */
			t->overruns++;
			t->np = 0;
			continue;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? done : -errno;
		if (fl < sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0)
			continue;
		for (const uint8_t *m = t->buf; m + NLMSG_HDRLEN <= t->buf + n;) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)m;
			if (h->nlmsg_len < NLMSG_HDRLEN || m + h->nlmsg_len > t->buf + n)
				break;
			const uint8_t *p = m + NLMSG_LENGTH(GENL_HDRLEN), *end = m + h->nlmsg_len;
			/* TASKSTATS_TYPE_AGGR_PID { PID, STATS }, then, for a
			 * process of many threads, AGGR_TGID (delay accounting
			 * only: not used). */
			while (h->nlmsg_type == t->family && p + NLA_HDRLEN <= end) {
				const struct nlattr *a = (const struct nlattr *)p;
				if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
					break;
				const uint8_t *q = p + NLA_HDRLEN, *qe = p + a->nla_len;
				while (a->nla_type == TASKSTATS_TYPE_AGGR_PID && q + NLA_HDRLEN <= qe) {
					const struct nlattr *b = (const struct nlattr *)q;
					if (b->nla_len < NLA_HDRLEN || q + b->nla_len > qe)
						break;
					if (b->nla_type == TASKSTATS_TYPE_STATS) {
						struct taskstats ts;
						size_t l = b->nla_len - NLA_HDRLEN;
						memset(&ts, 0, sizeof ts);
						memcpy(&ts, q + NLA_HDRLEN, l < sizeof ts ? l : sizeof ts);
						done += one_exit(t, &ts, fn, arg);
					}
					q += NLA_ALIGN(b->nla_len);
				}
				p += NLA_ALIGN(a->nla_len);
			}
			m += NLMSG_ALIGN(h->nlmsg_len);
		}
	}
}

uint64_t rlog__tstats_overruns(const struct rlog__tstats *t)
{
	return t ? t->overruns : 0;
}

void rlog__tstats_close(struct rlog__tstats *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0) {
		long n = sysconf(_SC_NPROCESSORS_CONF);
		char mask[32];
		int len = snprintf(mask, sizeof mask, "0-%ld", n > 0 ? n - 1 : 0);
		if (t->family)
			req_send(t->fd, t->family, TASKSTATS_CMD_GET,
				 TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, mask, (uint16_t)(len + 1));
		close(t->fd);
	}
	free(t->p);
	free(t);
}
