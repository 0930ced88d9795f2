/*
 * journal.c - the metadata journal of a session without a log file
 * (journal.h).
 */
#define _GNU_SOURCE
#include "journal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sink.h"
#include "sink_file.h"
#include "io.h"

int rlog__journal_path(const char *name, char *out, size_t n)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -1;
	/* shm is "/ringlog.<lower-case name>" */
	int k = snprintf(out, n, "%s%s", RLOG_JOURNAL_PREFIX, shm + strlen(RLOG_SHM_PREFIX));
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

void rlog__journal_update(struct rlog__region *r, struct rlog__output *out, const char *name,
			  uint64_t *version)
{
	if (out->meta.version == *version)
		return;
	char path[160], tmp[176];
	if (rlog__journal_path(name, path, sizeof path) < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	/* FORCE: the last update's file is replaced; a link planted in its
	 * place is removed, never written through. */
	int fd = rlog__create_output(tmp, RLOG_OUT_FORCE, NULL);
	if (fd < 0)
		return;
	uint32_t pid = (uint32_t)getpid();
	struct rlog__file_opts fo = {
		.fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = r->buffer_size,
		.pid = pid, .tid = pid, .marker = rlog__daemon_marker_fn, .marker_arg = r,
	};
	struct rlog__sink *fs;
	if (rlog__sink_file_open(&fo, &fs) < 0)
		return; /* the sink closed fd */
	rlog__sink_file_copies(fs, out);
	struct rlog_log_marker m;
	rlog__daemon_marker(r, &m);
	int err = fs->ops->flush(fs);
	int err2 = fs->ops->finish(fs, &m);
	fs->ops->free(fs);
	if (err < 0 || err2 < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return;
	}
	*version = out->meta.version;
}

void rlog__journal_remove(const char *name)
{
	char path[160];
	if (rlog__journal_path(name, path, sizeof path) == 0)
		unlink(path);
}
