/*
 * profile.c - the sampled profile of a log file (profile.h): the image_load
 * records (the rundown's and the kernel's) give each process's mappings
 * as the trace goes, in time order; each profile record's call chain is
 * named frame by frame (symbol.c) and its stack counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "ringlog/reader.h"
#include "symbol.h"
#include "vec.h"

#define ID_PROCESS_FORK 69
#define ID_PROCESS_EXEC 70
#define ID_PROCESS_RUNDOWN 78
#define ID_IMAGE_LOAD 112
#define ID_PROFILE 120
#define MAX_FRAMES 128

/* Interned names: every frame name once; stacks are arrays of indices. */
struct priv {
	char **names;
	size_t nnames, capnames;
	size_t *slots;     /* open addressing: index + 1, 0 empty */
	size_t nslots;
	uint32_t *frames;  /* every sample's frames, innermost first */
	size_t nframes, capframes;
	struct smp { size_t at; uint32_t n; } *smps;
	size_t nsmps, capsmps;
	char *damage;
	const char **stack_frames;
	struct { uint32_t pid; size_t name; } *comms;
	size_t ncomms, capcomms;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211u;
	return h;
}

static int intern(struct priv *p, const char *s, uint32_t *out)
{
	if (p->nnames * 2 >= p->nslots) {
		size_t n = p->nslots ? 2 * p->nslots : 1024;
		size_t *t = calloc(n, sizeof *t);
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < p->nnames; i++) {
			size_t h = hash(p->names[i]) & (n - 1);
			while (t[h])
				h = (h + 1) & (n - 1);
			t[h] = i + 1;
		}
		free(p->slots);
		p->slots = t;
		p->nslots = n;
	}
	size_t h = hash(s) & (p->nslots - 1);
	while (p->slots[h]) {
		if (strcmp(p->names[p->slots[h] - 1], s) == 0) {
			*out = (uint32_t)(p->slots[h] - 1);
			return 0;
		}
		h = (h + 1) & (p->nslots - 1);
	}
	if (rlog__vec_room(&p->names, p->nnames, &p->capnames, sizeof *p->names, 1024) < 0)
		return -ENOMEM;
	char *d = strdup(s);
	if (!d)
		return -ENOMEM;
	p->names[p->nnames] = d;
	p->slots[h] = p->nnames + 1;
	*out = (uint32_t)p->nnames++;
	return 0;
}

static int push_frame(struct priv *p, uint32_t f)
{
	if (rlog__vec_room(&p->frames, p->nframes, &p->capframes, sizeof *p->frames, 4096) < 0)
		return -ENOMEM;
	p->frames[p->nframes++] = f;
	return 0;
}

/* The fields of a system record by name (docs/FORMAT.md's tables). */
struct fields { uint64_t pid, tid, ip, addr, len, pgoff, child; const uint8_t *s1, *s2; uint16_t l1, l2; };

static int decode(struct rlog_reader *r, const struct rlog_event *ev, struct fields *f)
{
	const struct rlog_schema *s = rlog_reader_schema(r, ev);
	int n = s ? rlog_event_field_count(s, ev) : -1;
	if (n < 0)
		return -EBADMSG;
	memset(f, 0, sizeof *f);
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		struct rlog_value v;
		if (rlog_event_field(s, ev, (unsigned)i, &off, &v) < 0)
			return -EBADMSG;
		const char *nm = s->fields[i].name;
		if (strcmp(nm, "pid") == 0) f->pid = v.v.u;
		else if (strcmp(nm, "tid") == 0) f->tid = v.v.u;
		else if (strcmp(nm, "ip") == 0) f->ip = v.v.u;
		else if (strcmp(nm, "addr") == 0) f->addr = v.v.u;
		else if (strcmp(nm, "len") == 0) f->len = v.v.u;
		else if (strcmp(nm, "pgoff") == 0) f->pgoff = v.v.u;
		else if (strcmp(nm, "child_tid") == 0) f->child = (uint32_t)v.v.i;
		else if (strcmp(nm, "filename") == 0 || strcmp(nm, "callchain") == 0 || strcmp(nm, "comm") == 0 ||
			 strcmp(nm, "child_comm") == 0) {
			f->s1 = v.bytes;
			f->l1 = v.len;
		}
	}
	return 0;
}

static int set_comm(struct priv *p, uint32_t pid, const uint8_t *b, uint16_t n)
{
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)n, (const char *)b);
	uint32_t idx;
	if (intern(p, name, &idx) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].pid == pid) {
			p->comms[i].name = idx;
			return 0;
		}
	if (rlog__vec_room(&p->comms, p->ncomms, &p->capcomms, sizeof *p->comms, 64) < 0)
		return -ENOMEM;
	p->comms[p->ncomms].pid = pid;
	p->comms[p->ncomms++].name = idx;
	return 0;
}

/* A new program: the process's name is its file's base name, cut to the
 * kernel's 15 bytes of comm.  Its mappings stay: the new program's come
 * before the exec record (the kernel maps it during the exec), and they
 * replace the old ones where they overlap. */
static int exec_comm(struct priv *p, uint32_t pid, const uint8_t *file, uint16_t n)
{
	uint16_t b = n;
	while (b > 0 && file[b - 1] != '/')
		b--;
	return set_comm(p, pid, file + b, (uint16_t)(n - b > 15 ? 15 : n - b));
}

/* One sample: its frames named, innermost first, then its process. */
static int sample(struct priv *p, struct rlog_sym *sy, const struct fields *f)
{
	uint64_t addrs[MAX_FRAMES];
	size_t n = 0;
	char chain[1100];
	snprintf(chain, sizeof chain, "%.*s", (int)f->l1, (const char *)f->s1);
	for (char *c = chain; *c && n < MAX_FRAMES;) {
		char *end;
		uint64_t a = strtoull(c, &end, 16);
		if (end == c)
			break;
		addrs[n++] = a;
		c = end;
	}
	if (n == 0)
		addrs[n++] = f->ip;
	if (rlog__vec_room(&p->smps, p->nsmps, &p->capsmps, sizeof *p->smps, 1024) < 0)
		return -ENOMEM;
	size_t at = p->nframes;
	for (size_t i = 0; i < n; i++) {
		/* The first frame of each part (kernel, then user) is the
		 * interrupted instruction; the others are return addresses. */
		bool exact = i == 0 || (!rlog__sym_is_kernel(addrs[i]) && rlog__sym_is_kernel(addrs[i - 1]));
		char name[512];
		uint32_t idx;
		rlog__sym_name(sy, (uint32_t)f->pid, addrs[i], exact, name, sizeof name);
		if (intern(p, name, &idx) < 0 || push_frame(p, idx) < 0)
			return -ENOMEM;
	}
	char proc[32];
	snprintf(proc, sizeof proc, "[pid %u]", (unsigned)f->pid);
	uint32_t idx = UINT32_MAX;
	for (size_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].pid == f->pid)
			idx = (uint32_t)p->comms[i].name;
	if (idx == UINT32_MAX && intern(p, f->pid == 0 ? "[idle]" : proc, &idx) < 0)
		return -ENOMEM;
	if (push_frame(p, idx) < 0)
		return -ENOMEM;
	p->smps[p->nsmps++] = (struct smp){ at, (uint32_t)(n + 1) };
	return 0;
}

static const struct priv *sort_p;

static int smp_cmp(const void *a, const void *b)
{
	const struct smp *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(&sort_p->frames[x->at], &sort_p->frames[y->at], x->n * sizeof(uint32_t));
}

static int func_cmp(const void *a, const void *b)
{
	const struct rlog_prof_func *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int stack_cmp(const void *a, const void *b)
{
	const struct rlog_prof_stack *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	for (size_t i = 0; i < x->nframes && i < y->nframes; i++) {
		int c = strcmp(x->frames[i], y->frames[i]);
		if (c)
			return c;
	}
	return x->nframes < y->nframes ? -1 : x->nframes > y->nframes;
}

static int summarize(struct rlog_prof *out, struct priv *p)
{
	sort_p = p;
	if (p->nsmps > 0) /* qsort(NULL, 0, ...) is undefined */
		qsort(p->smps, p->nsmps, sizeof *p->smps, smp_cmp);
	out->funcs = calloc(p->nnames ? p->nnames : 1, sizeof *out->funcs);
	out->stacks = calloc(p->nsmps ? p->nsmps : 1, sizeof *out->stacks);
	p->stack_frames = calloc(p->nframes ? p->nframes : 1, sizeof *p->stack_frames);
	uint64_t *seen = calloc(p->nnames ? p->nnames : 1, sizeof *seen);
	if (!out->funcs || !out->stacks || !p->stack_frames || !seen) {
		free(seen);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nnames; i++)
		out->funcs[i].name = p->names[i];
	size_t fi = 0;
	for (size_t i = 0; i < p->nsmps; i++) {
		const struct smp *s = &p->smps[i];
		const uint32_t *fr = &p->frames[s->at];
		/* frames innermost first, the process last (not a function) */
		out->funcs[fr[0]].self++;
		for (uint32_t j = 0; j + 1 < s->n; j++)
			if (seen[fr[j]] != i + 1) {
				seen[fr[j]] = i + 1;
				out->funcs[fr[j]].total++;
			}
		if (i > 0 && smp_cmp(s, s - 1) == 0) {
			out->stacks[out->nstacks - 1].samples++;
			continue;
		}
		struct rlog_prof_stack *st = &out->stacks[out->nstacks++];
		st->frames = &p->stack_frames[fi];
		st->nframes = s->n;
		st->samples = 1;
		for (uint32_t j = 0; j < s->n; j++)
			p->stack_frames[fi++] = p->names[fr[s->n - 1 - j]];
	}
	free(seen);
	size_t nf = 0;
	for (size_t i = 0; i < p->nnames; i++)
		if (out->funcs[i].total > 0)
			out->funcs[nf++] = out->funcs[i];
	out->nfuncs = nf;
	qsort(out->funcs, out->nfuncs, sizeof *out->funcs, func_cmp);
	qsort(out->stacks, out->nstacks, sizeof *out->stacks, stack_cmp);
	return 0;
}

int rlog__profile_build(const char *path, const struct rlog_prof_opts *o, struct rlog_prof *out,
			char **damage, size_t *ndamage)
{
	memset(out, 0, sizeof *out);
	*damage = NULL;
	*ndamage = 0;
	struct priv *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	out->priv = p;
	struct rlog_reader *r;
	int rc = rlog_reader_open(path, &r);
	if (rc < 0)
		return rc;
	struct rlog_sym *sy = rlog__sym_new(o->kallsyms);
	if (!sy) {
		rlog_reader_close(r);
		return -ENOMEM;
	}
	struct rlog_event ev;
	while (rc >= 0 && (rc = rlog_reader_next(r, &ev)) > 0) {
		if (ev.id != ID_PROFILE && ev.id != ID_IMAGE_LOAD && ev.id != ID_PROCESS_RUNDOWN &&
		    ev.id != ID_PROCESS_FORK && ev.id != ID_PROCESS_EXEC)
			continue;
		struct fields f;
		/* A record that does not match its schema is left out (it
		 * is not the daemon's: an application may use the ID). */
		if (!ev.from_daemon || decode(r, &ev, &f) < 0)
			continue;
		if (ev.id == ID_IMAGE_LOAD)
			rc = rlog__sym_map(sy, (uint32_t)f.pid, f.addr, f.len, f.pgoff, (const char *)f.s1, f.l1);
		else if (ev.id == ID_PROCESS_RUNDOWN)
			rc = set_comm(p, (uint32_t)f.pid, f.s1, f.l1);
		else if (ev.id == ID_PROCESS_EXEC)
			rc = exec_comm(p, (uint32_t)f.pid, f.s1, f.l1);
		else if (ev.id == ID_PROCESS_FORK && f.child != f.pid)
			/* A new process has its parent's mappings (the kernel
			 * writes no image_load for them).  A new thread is a
			 * fork too: its copy is never asked (a sample's pid is
			 * its process's). */
			rc = rlog__sym_fork(sy, (uint32_t)f.pid, (uint32_t)f.child) < 0 ? -ENOMEM
				: set_comm(p, (uint32_t)f.child, f.s1, f.l1);
		else if ((!o->by_pid || f.pid == o->pid) && (!o->by_tid || f.tid == o->tid))
			rc = sample(p, sy, &f);
	}
	if (rc >= 0) {
		size_t nd = rlog_reader_damage_count(r), len = 0;
		for (size_t i = 0; i < nd; i++) {
			struct rlog_damage dm;
			if (rlog_reader_damage(r, i, &dm) == 0)
				len += strlen(dm.message) + 1;
		}
		p->damage = calloc(len + 1, 1);
		if (p->damage) {
			char *w = p->damage;
			for (size_t i = 0; i < nd; i++) {
				struct rlog_damage dm;
				if (rlog_reader_damage(r, i, &dm) == 0) {
					strcpy(w, dm.message);
					w += strlen(dm.message) + 1;
					(*ndamage)++;
				}
			}
			*damage = p->damage;
		}
		out->samples = p->nsmps;
		out->kernel_named = rlog__sym_kernel_named(sy);
		rc = summarize(out, p);
	}
	rlog__sym_free(sy);
	rlog_reader_close(r);
	return rc < 0 ? rc : 0;
}

void rlog__profile_free(struct rlog_prof *out)
{
	struct priv *p = out->priv;
	if (p) {
		for (size_t i = 0; i < p->nnames; i++)
			free(p->names[i]);
		free(p->names);
		free(p->slots);
		free(p->frames);
		free(p->smps);
		free(p->damage);
		free(p->stack_frames);
		free(p->comms);
		free(p);
	}
	free(out->funcs);
	free(out->stacks);
	memset(out, 0, sizeof *out);
}
