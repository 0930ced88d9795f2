/*
 * props.c - a session's properties at start (ETW's EVENT_TRACE_PROPERTIES):
 * defaults, and the combinations refused, each with one reason.
 *
 * docs/SESSIONS.md is the table of every property: its flag, default,
 * range and behaviour.  The ranges:
 *
 *   BufferSize       a power of two, 4 KiB .. 1 MiB                (16 KiB)
 *   MinimumBuffers   2 .. MaximumBuffers                 (one per CPU + 2, at least 32)
 *   MaximumBuffers   MinimumBuffers .. 65536                        (1024)
 *   MaximumFileSize  1 MiB .. 1 TiB; needed by circular, newfile, preallocate
 *   LogFileMode      one of sequential, circular, newfile (a file needs -o);
 *                    preallocate (with a file and a maximum size); real-time
 *                    (with or without a file)
 *   FlushTimer       0 .. 3600 s                                     (0)
 *   high water       1 .. 100 % of the pool                          (70)
 *   counters         sources of the catalogue (src/common/counter_catalog.h)  (app)
 *   counter period   10 ms .. 60 s                                  (100 ms)
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t rlog__default_min_buffers(void)
{
	/* ETW's floor: one buffer per processor plus two.  ringlog's buffers
	 * are per thread, so a few more absorb a burst of several threads
	 * while the pool grows. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = cpus > 0 ? (uint32_t)cpus + 2 : 3;
	return n < 32 ? 32 : n;
}

void rlog__props_default(struct rlog__region_params *p)
{
	memset(p, 0, sizeof *p);
	p->buffer_size = RLOG_DEFAULT_BUFFER_SIZE;
	p->max_buffers = RLOG_DEFAULT_BUFFER_COUNT;
	p->min_buffers = rlog__default_min_buffers();
	p->high_water_pct = RLOG_DEFAULT_HIGH_WATER;
	p->log_file_mode = RLOG_MODE_SEQUENTIAL;
	p->enable_mask = ~UINT64_C(0);
	p->counter_mask = UINT64_C(1) << RLOG_CTR_BIT_APP;
	p->counter_period_ms = RLOG_COUNTER_PERIOD_MS;
}

/* True if pattern holds exactly one "%d" and no other conversion ("%%" is
 * a literal percent sign): the daemon formats the file name with it. */
static bool one_percent_d(const char *pattern)
{
	int d = 0;
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%')
			p++;
		else if (p[1] == 'd' && d++ == 0)
			p++;
		else
			return false;
	}
	return d == 1;
}

/* The "%d" conversion of a pattern one_percent_d accepts. */
static const char *percent_d(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == '%')
			p++;
		else if (p[0] == '%' && p[1] == 'd')
			return p;
	}
	return NULL;
}

int rlog__enable_parse(const char *list, char (*table)[28], uint64_t *bits, char *pending,
		       size_t n, char *why, size_t whyn)
{
	*bits = 0;
	size_t used = 0;
	pending[0] = '\0';
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		char item[32];
		if (len == 0 || len >= sizeof item) {
			snprintf(why, whyn, "--enable '%s': expected category names and numbers 0 to "
					    "63, separated by commas", list);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		p += len + (p[len] == ',');
		char *end;
		unsigned long v = strtoul(item, &end, 10);
		if (item[0] >= '0' && item[0] <= '9' && *end == '\0') {
			if (v > 63) {
				snprintf(why, whyn, "--enable: category %s: expected 0 to 63", item);
				return -EINVAL;
			}
			*bits |= UINT64_C(1) << v;
			continue;
		}
		if (!rlog__category_name_ok(item, len)) {
			snprintf(why, whyn, "--enable: '%s' is not a category name (1 to 27 of a-z, "
					    "0-9, '_', '.', '-') or number", item);
			return -EINVAL;
		}
		int found = -1;
		for (int k = 0; table && k < 64 && found < 0; k++)
			if (strcmp(table[k], item) == 0)
				found = k;
		if (found >= 0) {
			*bits |= UINT64_C(1) << found;
			continue;
		}
		if (used + len + 2 > n) {
			snprintf(why, whyn, "--enable: too many undeclared category names");
			return -EINVAL;
		}
		if (used)
			pending[used++] = ',';
		memcpy(pending + used, item, len);
		used += len;
		pending[used] = '\0';
	}
	return 0;
}

int rlog__props_check(const struct rlog__start *s, char *why, size_t n)
{
	const struct rlog__region_params *p = &s->params;
	uint32_t file_mode = p->log_file_mode & (RLOG_MODE_CIRCULAR | RLOG_MODE_NEWFILE);
	bool realtime = p->log_file_mode & RLOG_MODE_REAL_TIME;
	bool file = s->path != NULL;
	if (file_mode == (RLOG_MODE_CIRCULAR | RLOG_MODE_NEWFILE)) {
		snprintf(why, n, "--mode: choose one of sequential, circular and newfile");
		return -EINVAL;
	}
	if (!file && !realtime && !(p->log_file_mode & RLOG_MODE_OVERWRITE)) {
		snprintf(why, n, "missing -o FILE (only a real-time session, --mode real-time, or a "
				 "flight recorder, --mode overwrite, has no file)");
		return -EINVAL;
	}
	if (!file && (file_mode || (p->log_file_mode & RLOG_MODE_PREALLOCATE) || p->max_file_size)) {
		snprintf(why, n, "%s needs a log file (-o FILE)",
			 p->max_file_size ? "--max-file-size" : "this --mode");
		return -EINVAL;
	}
	if ((file_mode || (p->log_file_mode & RLOG_MODE_PREALLOCATE)) && p->max_file_size == 0) {
		snprintf(why, n, "--mode %s needs --max-file-size",
			 file_mode == RLOG_MODE_CIRCULAR ? "circular"
			 : file_mode == RLOG_MODE_NEWFILE ? "newfile" : "preallocate");
		return -EINVAL;
	}
	if ((p->log_file_mode & RLOG_MODE_NEWFILE) && !one_percent_d(s->path)) {
		snprintf(why, n, "--mode newfile: the file name '%s' must contain %%d (the file's "
				 "number) once, and no other %% but %%%%", s->path);
		return -EINVAL;
	}
	if (p->min_buffers > p->max_buffers) {
		snprintf(why, n, "--max-buffers %u is below --min-buffers %u", p->max_buffers,
			 p->min_buffers);
		return -EINVAL;
	}
	if (p->max_file_size && p->max_file_size < 2u * p->buffer_size + 4096) {
		snprintf(why, n, "--max-file-size: at least two buffers and the file header must "
				 "fit");
		return -EINVAL;
	}
	if ((p->log_file_mode & RLOG_MODE_NEWFILE) && strchr(s->path, '/') &&
	    percent_d(s->path) < strrchr(s->path, '/')) {
		snprintf(why, n, "--mode newfile: the %%d of '%s' must be in the file's name, not in "
				 "a directory", s->path);
		return -EINVAL;
	}
	return 0;
}
