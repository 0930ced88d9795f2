/*
 * inuse.c - whether a file is a session's log file (inuse.h).
 */
#define _GNU_SOURCE
#include "inuse.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "atomics.h"
#include "io.h"
#include "shm.h"

static bool same_file(const char *path, const struct stat *st)
{
	struct stat o;
	return stat(path, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

struct find {
	const struct stat *st;
	bool found;
};

static void check_one(const char *name, void *arg)
{
	struct find *f = arg;
	struct rlog__region r;
	if (f->found || rlog__region_open(name, &r) < 0)
		return;
	/* A copy, ended: the region is another process's to write. */
	char file[RLOG_PATH_MAX];
	memcpy(file, r.hdr->log_file, sizeof file);
	file[sizeof file - 1] = '\0';
	uint32_t mode = r.hdr->log_file_mode;
	uint64_t index = load_relaxed(&r.hdr->stats.file_index);
	rlog__region_close(&r);
	if (file[0] == '\0' || (mode & RLOG_MODE_NO_FILE))
		return;
	bool hit = false;
	if (!(mode & RLOG_MODE_NEWFILE)) {
		hit = same_file(file, f->st);
	} else {
		/* Files 1 to the one being written (a hostile index is bounded:
		 * each costs a stat). */
		if (index < 1)
			index = 1;
		for (uint64_t i = 1; i <= index && i <= 100000 && !hit; i++) {
			char path[RLOG_PATH_MAX + 24];
			hit = rlog__file_name(file, i, path, sizeof path) == 0 && same_file(path, f->st);
		}
	}
	f->found = hit;
}

bool rlog__log_file_session(const struct stat *st)
{
	struct find f = { .st = st };
	rlog__region_list(check_one, &f);
	return f.found;
}
