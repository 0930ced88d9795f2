/*
 * rundown.c - the /proc walk of rundown.h.
 */
#define _GNU_SOURCE
#include "rundown.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"

/* One process's files, read before any callback. */
struct proc_files {
	struct rlog__buf comm, cmdline, stat, maps;
};

/* Reads file name of directory dirfd into b (emptied first), at most max
 * bytes (*cut set if there was more).  Returns 0 or -errno. */
static int read_at(int dirfd, const char *name, struct rlog__buf *b, size_t max, bool *cut)
{
	b->len = 0;
	if (cut)
		*cut = false;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = 0;
	for (;;) {
		if (b->len >= max) {
			char c;
			ssize_t more = read(fd, &c, 1);
			if (cut)
				*cut = more > 0;
			break;
		}
		size_t want = max - b->len < 65536 ? max - b->len : 65536;
		if (!rlog__buf_need(b, want)) {
			err = -ENOMEM;
			break;
		}
		ssize_t n = read(fd, b->p + b->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
	}
	close(fd);
	return err;
}

/* A comm file's bytes without the newline the kernel ends it with. */
static size_t comm_len(const struct rlog__buf *b)
{
	return b->len > 0 && b->p[b->len - 1] == '\n' ? b->len - 1 : b->len;
}

/* Gone: the process (or thread) exited before or while it was read. */
static bool gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

/* ppid, /proc/PID/stat field 4: after the last ')' (the comm, field 2,
 * may hold any byte but NUL, ')' and spaces included). */
static int stat_ppid(const struct rlog__buf *b, uint32_t *ppid)
{
	const char *close_paren = NULL;
	for (size_t i = 0; i < b->len; i++)
		if (b->p[i] == ')')
			close_paren = b->p + i;
	char tail[64];
	size_t k = close_paren ? (size_t)(b->p + b->len - close_paren) : 0;
	if (k < 4)
		return -EBADMSG;
	if (k > sizeof tail - 1)
		k = sizeof tail - 1;
	memcpy(tail, close_paren, k);
	tail[k] = '\0';
	char state;
	unsigned long v;
	if (sscanf(tail, ") %c %lu", &state, &v) != 2 || v > UINT32_MAX)
		return -EBADMSG;
	*ppid = (uint32_t)v;
	return 0;
}

/* Calls back the executable mappings of a maps text. */
static int maps_walk(uint32_t pid, const struct rlog__buf *b, const struct rlog__rundown_ops *ops,
		     struct rlog__rundown_stats *st)
{
	const char *p = b->p, *end = b->p + b->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		char head[160];
		size_t hl = (size_t)(eol - p) < sizeof head - 1 ? (size_t)(eol - p) : sizeof head - 1;
		memcpy(head, p, hl);
		head[hl] = '\0';
		/* start-end perms offset major:minor inode   path */
		unsigned long long start, stop, offset, inode;
		unsigned major, minor;
		char perms[8];
		int used = 0;
		if (sscanf(head, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &stop, perms, &offset,
			   &major, &minor, &inode, &used) == 7 &&
		    strlen(perms) == 4 && perms[2] == 'x') {
			/* The path starts after the spaces that pad the inode
			 * column, and runs to the end of the line. */
			const char *path = p + used;
			while (path < eol && *path == ' ')
				path++;
			struct rlog__rundown_mapping m = {
				.pid = pid, .start = start, .end = stop, .offset = offset,
				.dev_major = major, .dev_minor = minor, .inode = inode,
				.path = path, .path_len = (size_t)(eol - path),
				.prot = (perms[0] == 'r' ? PROT_READ : 0u) |
					(perms[1] == 'w' ? PROT_WRITE : 0u) | PROT_EXEC,
				.shared = perms[3] == 's',
			};
			st->mappings++;
			if (ops->mapping) {
				int rc = ops->mapping(&m, ops->arg);
				if (rc < 0)
					return rc;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* Calls back the threads of the process whose /proc directory is pfd. */
static int threads_walk(uint32_t pid, int pfd, struct rlog__buf *comm,
			const struct rlog__rundown_ops *ops, struct rlog__rundown_stats *st)
{
	int tfd = openat(pfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return gone(-errno) ? 0 : -errno;
	DIR *d = fdopendir(tfd);
	if (d == NULL) {
		close(tfd);
		return -ENOMEM;
	}
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *endp;
		unsigned long tid = strtoul(e->d_name, &endp, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *endp || tid > UINT32_MAX)
			continue;
		char path[32];
		snprintf(path, sizeof path, "%lu/comm", tid);
		int err = read_at(dirfd(d), path, comm, 64, NULL);
		if (gone(err)) {
			st->threads_vanished++;
			continue;
		}
		if (err < 0) {
			rc = err;
			break;
		}
		struct rlog__rundown_thread t = { .pid = pid, .tid = (uint32_t)tid, .comm = comm->p,
						  .comm_len = comm_len(comm) };
		st->threads++;
		if (ops->thread)
			rc = ops->thread(&t, ops->arg);
	}
	closedir(d);
	return rc;
}

/* One process: its files read, then called back.  Returns 0, a
 * callback's value, or -ENOMEM; a process gone is counted, not an error. */
static int process_walk(int procfd, uint32_t pid, struct proc_files *f,
			const struct rlog__rundown_ops *ops, struct rlog__rundown_stats *st)
{
	char name[16];
	snprintf(name, sizeof name, "%u", pid);
	int pfd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		st->vanished++;
		return 0;
	}
	bool cut = false;
	uint32_t ppid = 0;
	int err = read_at(pfd, "stat", &f->stat, 4096, NULL);
	if (err == 0)
		err = read_at(pfd, "comm", &f->comm, 64, NULL);
	if (err == 0)
		err = read_at(pfd, "cmdline", &f->cmdline, RLOG__RUNDOWN_CMDLINE_MAX, &cut);
	/* Another user's maps need ptrace's permission: without it, the
	 * process and its threads are still named. */
	if (err == 0 && read_at(pfd, "maps", &f->maps, SIZE_MAX, NULL) < 0)
		f->maps.len = 0;
	if (err == 0)
		err = stat_ppid(&f->stat, &ppid);
	if (err < 0 || f->comm.len == 0) {
		/* Gone (an empty stat or comm is a process reaped while
		 * read), or damage that only a dying process shows. */
		close(pfd);
		if (err == -ENOMEM)
			return err;
		st->vanished++;
		return 0;
	}
	struct rlog__rundown_process p = {
		.pid = pid, .ppid = ppid, .comm = f->comm.p, .comm_len = comm_len(&f->comm),
		.cmdline = f->cmdline.p, .cmdline_len = f->cmdline.len, .cmdline_cut = cut,
	};
	st->processes++;
	int rc = ops->process ? ops->process(&p, ops->arg) : 0;
	/* f->comm is the threads' scratch from here on. */
	if (rc == 0)
		rc = threads_walk(pid, pfd, &f->comm, ops, st);
	if (rc == 0)
		rc = maps_walk(pid, &f->maps, ops, st);
	close(pfd);
	return rc;
}

int rlog__rundown_walk(const char *proc, const uint32_t *pids, size_t npids,
		       const struct rlog__rundown_ops *ops, struct rlog__rundown_stats *st)
{
	struct rlog__rundown_stats local;
	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof *st);
	int procfd = open(proc ? proc : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	struct proc_files f;
	memset(&f, 0, sizeof f);
	int rc = 0;
	if (npids) {
		for (size_t i = 0; i < npids && rc == 0; i++)
			rc = process_walk(procfd, pids[i], &f, ops, st);
	} else {
		int dfd = dup(procfd);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (d == NULL) {
			rc = dfd >= 0 ? -ENOMEM : -errno;
			if (dfd >= 0)
				close(dfd);
		}
		struct dirent *e;
		while (d && rc == 0 && (e = readdir(d)) != NULL) {
			char *endp;
			unsigned long pid = strtoul(e->d_name, &endp, 10);
			if (e->d_name[0] < '1' || e->d_name[0] > '9' || *endp || pid > UINT32_MAX)
				continue;
			rc = process_walk(procfd, (uint32_t)pid, &f, ops, st);
		}
		if (d)
			closedir(d);
	}
	rlog__buf_free(&f.comm);
	rlog__buf_free(&f.cmdline);
	rlog__buf_free(&f.stat);
	rlog__buf_free(&f.maps);
	close(procfd);
	return rc;
}
