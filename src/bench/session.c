/*
 * session.c - a benchmark's own sessions (session.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/session.h"

int bench_session_start(struct bench_session *s, const char *tag,
			const struct rlog__region_params *p)
{
	return bench_session_start_in(s, tag, p, "/dev/shm");
}

int bench_session_start_in(struct bench_session *s, const char *tag,
			   const struct rlog__region_params *p, const char *dir)
{
	memset(s, 0, sizeof *s);
	if (tag)
		snprintf(s->name, sizeof s->name, "bench-%s-%d", tag, (int)getpid());
	else
		snprintf(s->name, sizeof s->name, "bench-%d", (int)getpid());
	bool file = (p->log_file_mode & RLOG_MODE_OVERWRITE) == 0;
	if (file && (size_t)snprintf(s->path, sizeof s->path, "%s/ringlog-%s.rlog", dir, s->name) >=
			    sizeof s->path)
		return -ENAMETOOLONG;
	s->start = (struct rlog__start){ .name = s->name, .path = file ? s->path : NULL,
					 .params = *p, .force = file };
	int err = rlog__session_start(&s->start, &s->started);
	s->running = err == 0;
	return err;
}

int bench_session_stop(struct bench_session *s, struct rlog__stop_result *res)
{
	memset(res, 0, sizeof *res);
	if (!s->running)
		return 0;
	int err = rlog__session_stop(s->name, res, NULL, NULL);
	waitpid(s->started.daemon_pid, NULL, 0);
	if (s->path[0])
		unlink(s->path);
	s->running = false;
	return err;
}
