/*
 * multi.c - several log files on one timeline (multi.h): a k-way merge of
 * the files' readers by CLOCK_REALTIME, each event tagged with its host.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "multi.h"
#include "satmath.h"
#include "vec.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_rlog(const char *name)
{
	size_t k = strlen(name);
	return name[0] != '.' && k > 5 && strcmp(name + k - 5, ".rlog") == 0;
}

static int push(char ***v, size_t *n, size_t *cap, const char *dir, const char *name)
{
	if (rlog__vec_room(v, *n, cap, sizeof **v, 8) < 0)
		return -ENOMEM;
	size_t k = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
	char *s = malloc(k);
	if (!s)
		return -ENOMEM;
	if (dir)
		snprintf(s, k, "%s/%s", dir, name);
	else
		snprintf(s, k, "%s", name);
	(*v)[(*n)++] = s;
	return 0;
}

/* The .rlog files of directory dir, sorted, appended to v. */
static int add_dir(char ***v, size_t *n, size_t *cap, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	size_t first = *n;
	int err = 0;
	struct dirent *e;
	while (err == 0 && (e = readdir(d)) != NULL)
		if (is_rlog(e->d_name))
			err = push(v, n, cap, dir, e->d_name);
	closedir(d);
	if (err == 0 && *n == first)
		err = -ENOENT;
	if (err == 0)
		qsort(*v + first, *n - first, sizeof **v, cmp_str);
	return err;
}

int rlog__multi_paths(char *const *args, size_t nargs, char ***out, const char **bad)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	for (size_t i = 0; i < nargs && err == 0; i++) {
		struct stat st;
		*bad = args[i];
		if (stat(args[i], &st) < 0)
			err = -errno;
		else if (S_ISDIR(st.st_mode))
			err = add_dir(&v, &n, &cap, args[i]);
		else
			err = push(&v, &n, &cap, NULL, args[i]);
	}
	if (err < 0) {
		rlog__multi_paths_free(v, n);
		return err;
	}
	*out = v;
	return (int)n;
}

void rlog__multi_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

static bool all_hex(const char *s, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The host of a file: `ringlog collect` names its files
 * HOST_SESSION_HOSTID_RUNID.rlog (docs/SESSIONS.md), the id 32 hex digits,
 * the run 16 (HOST_SESSION_HOSTID.rlog also names a host); a
 * file named otherwise is its own host, called by its base name. */
static void name_host(struct rlog__host *h)
{
	const char *base = strrchr(h->path, '/');
	base = base ? base + 1 : h->path;
	char s[256];
	snprintf(s, sizeof s, "%s", base);
	size_t k = strlen(s);
	if (k > 5 && strcmp(s + k - 5, ".rlog") == 0)
		s[k -= 5] = '\0';
	h->id[0] = '\0';
	/* collect's run id (16 hex digits) last: the host is the same. */
	if (k > 17 + 33 && s[k - 17] == '_' && all_hex(s + k - 16, 16) && s[k - 17 - 33] == '_' &&
	    all_hex(s + k - 17 - 32, 32))
		s[k -= 17] = '\0';
	if (k > 33 && s[k - 33] == '_' && all_hex(s + k - 32, 32)) {
		memcpy(h->id, s + k - 32, 33);
		s[k -= 33] = '\0';
		/* HOST_SESSION: the session is the LOG_MARKER's, with the
		 * characters collect replaces in a file name replaced. */
		size_t sl = strlen(h->info->session_name);
		char *us = strrchr(s, '_');
		if (sl + 1 < k && s[k - sl - 1] == '_')
			s[k - sl - 1] = '\0';
		else if (us != NULL && us != s)
			*us = '\0';
	}
	/* Only file-name characters, as collect writes them: the name goes
	 * to terminals and JSON as it is. */
	size_t o = 0;
	for (const char *p = s; *p && o + 1 < sizeof h->name; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
		h->name[o++] = ok ? c : '_';
	}
	h->name[o] = '\0';
}

/* An event's real time, ns since 1970 (before base only with a clock
 * that went back: then negative against it). */
static int64_t key(const struct rlog__multi *m, size_t i)
{
	return rlog__sat_add(m->h[i].offset_ns, m->h[i].head.time_ns);
}

static bool less(const struct rlog__multi *m, size_t a, size_t b)
{
	int64_t ka = key(m, a), kb = key(m, b);
	return ka < kb || (ka == kb && a < b);
}

static void sift_down(struct rlog__multi *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, best = i;
		if (l < m->nheap && less(m, m->heap[l], m->heap[best]))
			best = l;
		if (l + 1 < m->nheap && less(m, m->heap[l + 1], m->heap[best]))
			best = l + 1;
		if (best == i)
			return;
		size_t t = m->heap[i];
		m->heap[i] = m->heap[best];
		m->heap[best] = t;
		i = best;
	}
}

static void sift_up(struct rlog__multi *m, size_t i)
{
	while (i > 0 && less(m, m->heap[i], m->heap[(i - 1) / 2])) {
		size_t p = (i - 1) / 2, t = m->heap[i];
		m->heap[i] = m->heap[p];
		m->heap[p] = t;
		i = p;
	}
}

int rlog__multi_open(struct rlog__multi *m, char *const *paths, size_t n, unsigned flags,
		     size_t *bad)
{
	memset(m, 0, sizeof *m);
	m->h = calloc(n ? n : 1, sizeof *m->h);
	m->heap = calloc(n ? n : 1, sizeof *m->heap);
	if (!m->h || !m->heap) {
		rlog__multi_close(m);
		*bad = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct rlog__host *h = &m->h[i];
		h->path = paths[i];
		int rc = flags & RLOG__MULTI_COUNT ? rlog_reader_open_count(paths[i], &h->r)
						   : rlog_reader_open(paths[i], &h->r);
		if (rc == 0 && (flags & ~RLOG__MULTI_COUNT))
			rc = rlog_reader_set_flags(h->r, flags & ~RLOG__MULTI_COUNT);
		if (rc < 0) {
			*bad = i;
			rlog__multi_close(m);
			return rc;
		}
		m->n = i + 1;
		h->info = rlog_reader_info(h->r);
		name_host(h);
		if (i == 0 || h->info->sync_realtime_ns < m->base_realtime_ns)
			m->base_realtime_ns = h->info->sync_realtime_ns;
	}
	/* A crafted start time far from the others: the offset saturates,
	 * as the times do (satmath.h). */
	for (size_t i = 0; i < n; i++) {
		uint64_t d = m->h[i].info->sync_realtime_ns - m->base_realtime_ns;
		m->h[i].offset_ns = d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
	}
	return 0;
}

int rlog__multi_next(struct rlog__multi *m, struct rlog_event *ev, size_t *host)
{
	if (!m->started) {
		m->started = true;
		for (size_t i = 0; i < m->n; i++) {
			int rc = rlog_reader_next(m->h[i].r, &m->h[i].head);
			if (rc < 0) {
				*host = i;
				return rc;
			}
			if (rc > 0)
				m->heap[m->nheap++] = i;
		}
		for (size_t i = m->nheap / 2; i-- > 0;)
			sift_down(m, i);
	} else if (m->has_last) {
		/* The event handed out last stayed valid until now: its
		 * reader moves on only at this call. */
		size_t l = m->last;
		m->has_last = false;
		int rc = rlog_reader_next(m->h[l].r, &m->h[l].head);
		if (rc < 0) {
			*host = l;
			return rc;
		}
		if (rc > 0) {
			m->heap[m->nheap++] = l;
			sift_up(m, m->nheap - 1);
		}
	}
	if (m->nheap == 0)
		return 0;
	size_t i = m->heap[0];
	struct rlog__host *h = &m->h[i];
	*ev = h->head;
	ev->time_ns = rlog__sat_add(ev->time_ns, h->offset_ns);
	*host = i;
	m->last = i;
	m->has_last = true;
	m->heap[0] = m->heap[--m->nheap];
	sift_down(m, 0);
	return 1;
}

void rlog__multi_close(struct rlog__multi *m)
{
	for (size_t i = 0; i < m->n; i++)
		rlog_reader_close(m->h[i].r);
	free(m->h);
	free(m->heap);
	memset(m, 0, sizeof *m);
}
