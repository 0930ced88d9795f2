/*
 * cmd_stats.c - `ringlog stats FILE [--json]`: what a log file holds, in
 * totals: duration, events and bytes per event name and per thread, the
 * rate, losses by cause, damaged regions.  The formats are specified in
 * docs/DUMP.md.
 *
 * Speed is the point (the target is 50 million events per second on a
 * 2-core machine), so stats does not merge threads by time: it counts
 * during the reader's open pass (rlog_reader_open_visit), each block right
 * after the reader has checked it, while it is still in the cache.  The
 * counting loop reads one header word per record (two for a flagged one)
 * and adds to a counter per (pid, event ID), found through a small cache
 * that is valid for a block; names are resolved once at the end, from the
 * latest schema of each (pid, ID) in the file.
 *
 * What counts as what:
 *   events     every record but LOG_MARKER, DATA_LOSS, TIME_SYNC and the
 *              metadata records (EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME,
 *              unflagged), which are counted apart
 *   bytes      the bytes the records take in the file (header, timestamp,
 *              flag word, payload and fill)
 *   duration   from the first to the last record of the application's
 *              blocks (not the daemon's: the LOG_MARKER can be written long
 *              before the first event)
 *   lost       the sums of the DATA_LOSS records, by cause and per thread
 *
 * Exit status as `ringlog dump`: 0, 1 (unreadable, or damaged regions:
 * the totals of what could be read are printed first, then one line per
 * region on stderr), 2 (usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "record.h"
#include "ringlog/abi.h"
#include "ringlog/reader.h"

#define USAGE "usage: ringlog stats FILE [--json]"

static char out_buf[1 << 16];

/* Events of one (pid, event ID). */
struct id_count {
	uint32_t pid;
	uint16_t id;
	uint64_t events, bytes;
};

/* One thread's totals. */
struct thread_count {
	uint32_t pid, tid;
	uint64_t events, bytes;
	uint64_t meta;                 /* metadata records */
	uint64_t lost_events, lost_bytes;
	bool timed;                    /* first/last hold an application block's times */
	uint64_t first, last;          /* ticks */
};

/* The DATA_LOSS records of one cause. */
struct loss_count {
	uint32_t cause;
	uint64_t records, events, bytes;
};

/* An open-addressing index (slot = index + 1, 0 empty) over a vector. */
struct index {
	uint32_t *slot;
	size_t cap;
};

#define CACHE 64 /* direct-mapped cache of id -> counter, valid for one pid */

struct stats {
	struct id_count *ids;
	size_t nids, ids_cap;
	struct index id_index;

	struct thread_count *threads;
	size_t nthreads, threads_cap;
	struct index thread_index;

	struct loss_count *losses;
	size_t nlosses;

	uint32_t cache_pid;
	uint16_t cache_id[CACHE];
	uint32_t cache_at[CACHE];

	uint64_t events, bytes, meta, loss_records, lost_events, lost_bytes;
	bool timed;
	uint64_t first, last;
};

/* A row of the per-name table: (pid, ID) counts merged by name and ID. */
struct name_row {
	const char *name;  /* the schema's or a reserved ID's name, or NULL ... */
	char num[8];       /* ... and then the ID in decimal */
	uint16_t id;
	uint64_t events, bytes;
};

static const char *row_name(const struct name_row *w)
{
	return w->name ? w->name : w->num;
}

static uint64_t mix(uint64_t k)
{
	k *= UINT64_C(0x9e3779b97f4a7c15);
	return k ^ (k >> 29);
}

/* Finds key in idx (keys of the vector through key_of); returns the
 * vector index or SIZE_MAX, and the slot where it is or would go. */
#define INDEX_FIND(idx, vec, keyexpr, key, slot_out)                          \
	do {                                                                   \
		size_t mask_ = (idx)->cap - 1, j_ = mix(key) & mask_;          \
		found_ = SIZE_MAX;                                             \
		while ((idx)->slot[j_]) {                                      \
			size_t i_ = (idx)->slot[j_] - 1;                       \
			if (keyexpr(&(vec)[i_]) == (key)) {                    \
				found_ = i_;                                   \
				break;                                         \
			}                                                      \
			j_ = (j_ + 1) & mask_;                                 \
		}                                                              \
		(slot_out) = j_;                                               \
	} while (0)

static uint64_t id_key(const struct id_count *c) { return (uint64_t)c->pid << 16 | c->id; }
static uint64_t thread_key(const struct thread_count *t) { return (uint64_t)t->pid << 32 | t->tid; }

static int index_grow(struct index *idx, size_t n, const void *vec, size_t elem,
		      uint64_t (*key)(const void *))
{
	size_t cap = idx->cap ? idx->cap * 2 : 256;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j = mix(key((const char *)vec + i * elem)) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(idx->slot);
	idx->slot = slot;
	idx->cap = cap;
	return 0;
}

static uint64_t id_key_v(const void *p) { return id_key(p); }
static uint64_t thread_key_v(const void *p) { return thread_key(p); }

/* The counter of (pid, id): its index, or SIZE_MAX (no memory). */
static size_t id_counter(struct stats *st, uint32_t pid, uint16_t id)
{
	uint64_t key = (uint64_t)pid << 16 | id;
	size_t found_, j;

	if (2 * (st->nids + 1) > st->id_index.cap &&
	    index_grow(&st->id_index, st->nids, st->ids, sizeof(*st->ids), id_key_v) < 0)
		return SIZE_MAX;
	INDEX_FIND(&st->id_index, st->ids, id_key, key, j);
	if (found_ != SIZE_MAX)
		return found_;
	if (st->nids == st->ids_cap) {
		size_t cap = st->ids_cap ? 2 * st->ids_cap : 64;
		struct id_count *v = realloc(st->ids, cap * sizeof(*v));
		if (!v)
			return SIZE_MAX;
		st->ids = v;
		st->ids_cap = cap;
	}
	st->ids[st->nids] = (struct id_count){ .pid = pid, .id = id };
	st->id_index.slot[j] = (uint32_t)st->nids + 1;
	return st->nids++;
}

static struct thread_count *thread_counter(struct stats *st, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	size_t found_, j;

	if (2 * (st->nthreads + 1) > st->thread_index.cap &&
	    index_grow(&st->thread_index, st->nthreads, st->threads, sizeof(*st->threads),
		       thread_key_v) < 0)
		return NULL;
	INDEX_FIND(&st->thread_index, st->threads, thread_key, key, j);
	if (found_ != SIZE_MAX)
		return &st->threads[found_];
	if (st->nthreads == st->threads_cap) {
		size_t cap = st->threads_cap ? 2 * st->threads_cap : 64;
		struct thread_count *v = realloc(st->threads, cap * sizeof(*v));
		if (!v)
			return NULL;
		st->threads = v;
		st->threads_cap = cap;
	}
	st->threads[st->nthreads] = (struct thread_count){ .pid = pid, .tid = tid };
	st->thread_index.slot[j] = (uint32_t)st->nthreads + 1;
	return &st->threads[st->nthreads++];
}

static int add_loss(struct stats *st, struct thread_count *t, const uint8_t *p)
{
	uint64_t events = rlog__get64(p), bytes = rlog__get64(p + 8);
	uint32_t cause = rlog__get32(p + 16);
	size_t i;

	for (i = 0; i < st->nlosses && st->losses[i].cause != cause; i++)
		;
	if (i == st->nlosses) {
		struct loss_count *v = realloc(st->losses, (st->nlosses + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->losses = v;
		st->losses[st->nlosses++] = (struct loss_count){ .cause = cause };
	}
	st->losses[i].records++;
	st->losses[i].events += events;
	st->losses[i].bytes += bytes;
	st->loss_records++;
	st->lost_events += events;
	st->lost_bytes += bytes;
	t->lost_events += events;
	t->lost_bytes += bytes;
	return 0;
}

/*
 * The block visitor: counts every record of b.  The reader has checked
 * the block (checksum, every record well-formed) just before; the bounds
 * are checked again all the same, at a cost of one compare per record.
 */
static int count_block(void *arg, const struct rlog_block *b)
{
	struct stats *st = arg;
	const uint8_t *d = b->data, *end = d + b->size;
	uint64_t events = 0, bytes = 0;

	struct thread_count *t = thread_counter(st, b->pid, b->tid);
	if (!t)
		return -ENOMEM;
	if (b->pid != st->cache_pid || st->nids == 0) {
		memset(st->cache_id, 0, sizeof(st->cache_id)); /* ID 0 is never a record's */
		st->cache_pid = b->pid;
	}
	while ((size_t)(end - d) >= 4) {
		uint32_t h = rlog__get32(d);
		unsigned id = (h >> RLOG_HDR_ID_SHIFT) & RLOG_HDR_ID_MASK;
		unsigned len = h & RLOG_HDR_LENGTH_MASK;
		unsigned hdr = 4u + ((h >> 31) << 2);
		bool flagged = id == RLOG_ID_FLAGGED;
		if (flagged) {
			if ((size_t)(end - d) < hdr + 4)
				break;
			id = rlog__get32(d + hdr) & 0xffffu;
			hdr += 4;
		}
		uint32_t size = (hdr + len + 3u) & ~3u;
		if (size > (size_t)(end - d))
			break;
		if (id > RLOG_ID_TIME_SYNC && (id - RLOG_ID_EVENT_SCHEMA >= 3u || flagged)) {
			unsigned c = id % CACHE;
			if (st->cache_id[c] != id) {
				size_t at = id_counter(st, b->pid, (uint16_t)id);
				if (at == SIZE_MAX)
					return -ENOMEM;
				st->cache_id[c] = (uint16_t)id;
				st->cache_at[c] = (uint32_t)at;
			}
			struct id_count *ic = &st->ids[st->cache_at[c]];
			ic->events++;
			ic->bytes += size;
			events++;
			bytes += size;
		} else if (id == RLOG_ID_DATA_LOSS) {
			if (len >= sizeof(struct rlog_data_loss) && add_loss(st, t, d + hdr) < 0)
				return -ENOMEM;
		} else if (id >= RLOG_ID_EVENT_SCHEMA) {
			st->meta++;
			t->meta++;
		}
		/* LOG_MARKER and TIME_SYNC: nothing to count */
		d += size;
	}
	t->events += events;
	t->bytes += bytes;
	st->events += events;
	st->bytes += bytes;
	if (!(b->flags & RLOG_BLOCK_FLAG_DAEMON) && b->record_count > 0) {
		if (!t->timed || b->first_ticks < t->first)
			t->first = b->first_ticks;
		if (!t->timed || b->last_ticks > t->last)
			t->last = b->last_ticks;
		t->timed = true;
		if (!st->timed || b->first_ticks < st->first)
			st->first = b->first_ticks;
		if (!st->timed || b->last_ticks > st->last)
			st->last = b->last_ticks;
		st->timed = true;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Results                                                          */
/* ---------------------------------------------------------------- */

static const char *const reserved[] = {
	[RLOG_ID_RAW_U8] = "RAW_U8", [RLOG_ID_RAW_I8] = "RAW_I8", [RLOG_ID_RAW_U16] = "RAW_U16",
	[RLOG_ID_RAW_I16] = "RAW_I16", [RLOG_ID_RAW_U32] = "RAW_U32", [RLOG_ID_RAW_I32] = "RAW_I32",
	[RLOG_ID_RAW_U64] = "RAW_U64", [RLOG_ID_RAW_I64] = "RAW_I64",
	[RLOG_ID_RAW_DOUBLE] = "RAW_DOUBLE", [RLOG_ID_RAW_STRING] = "RAW_STRING",
	[RLOG_ID_COUNTER] = "COUNTER", [RLOG_ID_EVENT_SCHEMA] = "EVENT_SCHEMA",
	[RLOG_ID_THREAD_NAME] = "THREAD_NAME", [RLOG_ID_PROCESS_NAME] = "PROCESS_NAME",
	[RLOG_ID_SPAN_BEGIN] = "SPAN_BEGIN", [RLOG_ID_SPAN_END] = "SPAN_END",
};

static int row_key_cmp(const void *a, const void *b)
{
	const struct name_row *x = a, *y = b;
	int c = strcmp(row_name(x), row_name(y));
	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int row_cmp(const void *a, const void *b)
{
	const struct name_row *x = a, *y = b;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return row_key_cmp(a, b);
}

/* The per-name rows, merged by (name, ID), most events first; *n rows. */
static struct name_row *name_rows(struct stats *st, struct rlog_reader *r, size_t *n)
{
	struct name_row *rows = calloc(st->nids ? st->nids : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < st->nids; i++) {
		struct name_row *w = &rows[i];
		const struct rlog_schema *s = rlog_reader_schema_latest(r, st->ids[i].pid, st->ids[i].id);
		w->id = st->ids[i].id;
		w->events = st->ids[i].events;
		w->bytes = st->ids[i].bytes;
		if (s)
			w->name = s->name;
		else if (w->id < sizeof(reserved) / sizeof(reserved[0]))
			w->name = reserved[w->id];
		if (!w->name)
			snprintf(w->num, sizeof(w->num), "%u", (unsigned)w->id);
	}
	qsort(rows, st->nids, sizeof(*rows), row_key_cmp);
	size_t k = 0;
	for (size_t i = 0; i < st->nids; i++) {
		if (k > 0 && row_key_cmp(&rows[k - 1], &rows[i]) == 0) {
			rows[k - 1].events += rows[i].events;
			rows[k - 1].bytes += rows[i].bytes;
		} else {
			rows[k++] = rows[i];
		}
	}
	qsort(rows, k, sizeof(*rows), row_cmp);
	*n = k;
	return rows;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct thread_count *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static bool thread_shown(const struct thread_count *t)
{
	return t->events || t->meta || t->lost_events || t->lost_bytes;
}

static int loss_cmp(const void *a, const void *b)
{
	const struct loss_count *x = a, *y = b;
	return x->cause < y->cause ? -1 : x->cause > y->cause;
}

/* An aligned text table: cells are strings, numbers right-aligned. */
#define MAXCOL 8
struct table {
	size_t ncols, nrows;
	const char *head[MAXCOL];
	bool right[MAXCOL];
	char **cells; /* nrows * ncols, owned */
	size_t cap;
};

static int table_row(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] = strdup(cells[i]);
		if (!t->cells[t->nrows * t->ncols + i]) {
			for (size_t k = 0; k < i; k++)
				free(t->cells[t->nrows * t->ncols + k]);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

/* Prints the table (header included) with two spaces between columns;
 * frees the cells. */
static void table_print(FILE *f, struct table *t)
{
	size_t w[MAXCOL];
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t k = strlen(t->cells[r * t->ncols + c]);
			if (k > w[c])
				w[c] = k;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncols + c];
			bool last = c + 1 == t->ncols;
			if (c > 0)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s", (int)w[c], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", (int)w[c], s);
		}
		putc('\n', f);
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* Text of a possibly unprintable name: C-escaped into buf. */
static const char *printable(const char *s, char *buf, size_t n)
{
	FILE *m = fmemopen(buf, n, "w");
	if (!m)
		return "?";
	fmt_cstr(m, s, strlen(s));
	fclose(m);
	buf[n - 1] = '\0';
	return buf;
}

struct summary {
	int64_t first_ns, last_ns, duration_ns;
	double rate;             /* events per second; < 0 if no duration */
	size_t shown_threads;
	uint64_t damaged_records; /* known skipped records in damaged regions */
	size_t ndamage;
};

static void put_text(FILE *f, const char *path, struct rlog_reader *r, struct stats *st,
		     const struct summary *sm, struct name_row *rows, size_t nrows)
{
	const struct rlog_reader_info *info = rlog_reader_info(r);
	char src[32], started[64], a[64], b[64], c[64], d[64], e[64], g[64], h[256], k[256];
	struct table t;

	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	fprintf(f, "# ringlog stats of %s: session %s, tick source %s at %" PRIu64 " Hz, "
		"started %s\n", path, info->session_name,
		fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz, started);
	if (st->timed)
		fprintf(f, "duration  %" PRId64 ".%09" PRId64 " s (from %" PRId64 " ns to %" PRId64
			" ns)\n", sm->duration_ns / 1000000000, sm->duration_ns % 1000000000,
			sm->first_ns, sm->last_ns);
	else
		fprintf(f, "duration  0 s (no events)\n");
	fprintf(f, "events    %" PRIu64 " (%" PRIu64 " bytes)\n", st->events, st->bytes);
	if (sm->rate >= 0)
		fprintf(f, "rate      %.1f events/s\n", sm->rate);
	else
		fprintf(f, "rate      -\n");
	fprintf(f, "threads   %zu\n", sm->shown_threads);
	fprintf(f, "lost      %" PRIu64 " events (%" PRIu64 " bytes) in %" PRIu64
		" DATA_LOSS records\n", st->lost_events, st->lost_bytes, st->loss_records);
	fprintf(f, "damaged   %zu regions (%" PRIu64 " records skipped)\n", sm->ndamage,
		sm->damaged_records);
	fprintf(f, "metadata  %" PRIu64 " records\n", st->meta);

	memset(&t, 0, sizeof(t));
	t.ncols = 4;
	t.head[0] = "EVENT"; t.head[1] = "ID"; t.head[2] = "EVENTS"; t.head[3] = "BYTES";
	t.right[1] = t.right[2] = t.right[3] = true;
	for (size_t i = 0; i < nrows; i++) {
		snprintf(a, sizeof(a), "%u", (unsigned)rows[i].id);
		snprintf(b, sizeof(b), "%" PRIu64, rows[i].events);
		snprintf(c, sizeof(c), "%" PRIu64, rows[i].bytes);
		table_row(&t, (const char *[]){ row_name(&rows[i]), a, b, c });
	}
	putc('\n', f);
	table_print(f, &t);

	memset(&t, 0, sizeof(t));
	t.ncols = 8;
	t.head[0] = "PID"; t.head[1] = "TID"; t.head[2] = "EVENTS"; t.head[3] = "BYTES";
	t.head[4] = "LOST"; t.head[5] = "LOST_BYTES"; t.head[6] = "THREAD"; t.head[7] = "PROCESS";
	for (int i = 0; i < 6; i++)
		t.right[i] = true;
	for (size_t i = 0; i < st->nthreads; i++) {
		const struct thread_count *th = &st->threads[i];
		if (!thread_shown(th))
			continue;
		const char *tn = rlog_reader_thread_name(r, th->pid, th->tid);
		const char *pn = rlog_reader_process_name(r, th->pid);
		snprintf(a, sizeof(a), "%" PRIu32, th->pid);
		snprintf(b, sizeof(b), "%" PRIu32, th->tid);
		snprintf(c, sizeof(c), "%" PRIu64, th->events);
		snprintf(d, sizeof(d), "%" PRIu64, th->bytes);
		snprintf(e, sizeof(e), "%" PRIu64, th->lost_events);
		snprintf(g, sizeof(g), "%" PRIu64, th->lost_bytes);
		table_row(&t, (const char *[]){ a, b, c, d, e, g,
						tn ? printable(tn, h, sizeof(h)) : "-",
						pn ? printable(pn, k, sizeof(k)) : "-" });
	}
	putc('\n', f);
	table_print(f, &t);

	if (st->nlosses > 0) {
		memset(&t, 0, sizeof(t));
		t.ncols = 4;
		t.head[0] = "LOSS_CAUSE"; t.head[1] = "RECORDS"; t.head[2] = "EVENTS";
		t.head[3] = "BYTES";
		t.right[1] = t.right[2] = t.right[3] = true;
		for (size_t i = 0; i < st->nlosses; i++) {
			const struct loss_count *l = &st->losses[i];
			snprintf(b, sizeof(b), "%" PRIu64, l->records);
			snprintf(c, sizeof(c), "%" PRIu64, l->events);
			snprintf(d, sizeof(d), "%" PRIu64, l->bytes);
			table_row(&t, (const char *[]){ fmt_loss_cause(l->cause, a, sizeof(a)), b, c,
							d });
		}
		putc('\n', f);
		table_print(f, &t);
	}
	if (sm->ndamage > 0) {
		memset(&t, 0, sizeof(t));
		t.ncols = 4;
		t.head[0] = "DAMAGE_OFFSET"; t.head[1] = "LENGTH"; t.head[2] = "RECORDS_SKIPPED";
		t.head[3] = "KIND";
		t.right[0] = t.right[1] = t.right[2] = true;
		for (size_t i = 0; i < sm->ndamage; i++) {
			struct rlog_damage dm;
			if (rlog_reader_damage(r, i, &dm) < 0)
				continue;
			snprintf(a, sizeof(a), "%" PRIu64, dm.offset);
			snprintf(b, sizeof(b), "%" PRIu64, dm.length);
			if (dm.records_skipped >= 0)
				snprintf(c, sizeof(c), "%" PRId64, dm.records_skipped);
			else
				snprintf(c, sizeof(c), "?");
			table_row(&t, (const char *[]){ a, b, c,
				dm.kind == RLOG_DAMAGE_TRUNCATED ? "truncated" : "damaged" });
		}
		putc('\n', f);
		table_print(f, &t);
	}
}

static void json_name_or_null(FILE *f, const char *s)
{
	if (s)
		fmt_json_cstr(f, s);
	else
		fputs("null", f);
}

static void put_json(FILE *f, const char *path, struct rlog_reader *r, struct stats *st,
		     const struct summary *sm, struct name_row *rows, size_t nrows)
{
	const struct rlog_reader_info *info = rlog_reader_info(r);
	char src[32], started[64], a[32];
	uint64_t bad_first;
	uint64_t bad = rlog_reader_bad_schemas(r, &bad_first);

	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	fputs("{\"file\":", f);
	fmt_json_cstr(f, path);
	fputs(",\"session\":", f);
	fmt_json_cstr(f, info->session_name);
	fprintf(f, ",\"tick_source\":\"%s\",\"tick_hz\":%" PRIu64 ",\"started\":\"%s\"",
		fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz, started);
	if (st->timed)
		fprintf(f, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64, sm->first_ns,
			sm->last_ns);
	else
		fputs(",\"first_ns\":null,\"last_ns\":null", f);
	fprintf(f, ",\"duration_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64,
		sm->duration_ns, st->events, st->bytes);
	if (sm->rate >= 0)
		fprintf(f, ",\"rate\":%.1f", sm->rate);
	else
		fputs(",\"rate\":null", f);
	fprintf(f, ",\"metadata_records\":%" PRIu64 ",\"bad_schemas\":%" PRIu64, st->meta, bad);

	fputs(",\"names\":[", f);
	for (size_t i = 0; i < nrows; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		fmt_json_cstr(f, row_name(&rows[i]));
		fprintf(f, ",\"id\":%u,\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			(unsigned)rows[i].id, rows[i].events, rows[i].bytes);
	}
	fputs("],\"threads\":[", f);
	bool first = true;
	for (size_t i = 0; i < st->nthreads; i++) {
		const struct thread_count *th = &st->threads[i];
		if (!thread_shown(th))
			continue;
		fprintf(f, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":", first ? "" : ",",
			th->pid, th->tid);
		first = false;
		json_name_or_null(f, rlog_reader_thread_name(r, th->pid, th->tid));
		fputs(",\"process\":", f);
		json_name_or_null(f, rlog_reader_process_name(r, th->pid));
		fprintf(f, ",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"metadata_records\":%"
			PRIu64 ",\"lost_events\":%" PRIu64 ",\"lost_bytes\":%" PRIu64, th->events,
			th->bytes, th->meta, th->lost_events, th->lost_bytes);
		if (th->timed)
			fprintf(f, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64 "}",
				rlog_reader_time_ns(r, th->first), rlog_reader_time_ns(r, th->last));
		else
			fputs(",\"first_ns\":null,\"last_ns\":null}", f);
	}
	fprintf(f, "],\"lost_events\":%" PRIu64 ",\"lost_bytes\":%" PRIu64
		",\"loss_records\":%" PRIu64 ",\"losses\":[", st->lost_events, st->lost_bytes,
		st->loss_records);
	for (size_t i = 0; i < st->nlosses; i++) {
		const struct loss_count *l = &st->losses[i];
		fprintf(f, "%s{\"cause\":\"%s\",\"records\":%" PRIu64 ",\"events\":%" PRIu64
			",\"bytes\":%" PRIu64 "}", i ? "," : "", fmt_loss_cause(l->cause, a, sizeof(a)),
			l->records, l->events, l->bytes);
	}
	fputs("],\"damage\":[", f);
	for (size_t i = 0; i < sm->ndamage; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) < 0)
			continue;
		fprintf(f, "%s{\"offset\":%" PRIu64 ",\"length\":%" PRIu64 ",\"kind\":\"%s\","
			"\"records_skipped\":", i ? "," : "", dm.offset, dm.length,
			dm.kind == RLOG_DAMAGE_TRUNCATED ? "truncated" : "damaged");
		if (dm.records_skipped >= 0)
			fprintf(f, "%" PRId64, dm.records_skipped);
		else
			fputs("null", f);
		fputs(",\"message\":", f);
		fmt_json_cstr(f, dm.message);
		putc('}', f);
	}
	fputs("]}\n", f);
}

static void stats_free(struct stats *st)
{
	free(st->ids);
	free(st->id_index.slot);
	free(st->threads);
	free(st->thread_index.slot);
	free(st->losses);
}

static int usage(void)
{
	cli_error("stats: " USAGE);
	return 2;
}

int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	bool json = false;
	struct stats st;
	struct rlog_reader *r;
	struct summary sm = { 0 };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if ((argv[i][0] == '-' && argv[i][1] != '\0') || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path)
		return usage();

	memset(&st, 0, sizeof(st));
	int rc = rlog_reader_open_visit(path, count_block, &st, &r);
	if (rc < 0) {
		stats_free(&st);
		return cli_error("stats %s: %s", path, rlog_reader_strerror(rc));
	}

	/* Per-thread rows in (pid, tid) order; the index is no longer needed. */
	if (st.nthreads > 1) /* qsort's base must not be NULL, even for 0 */
		qsort(st.threads, st.nthreads, sizeof(*st.threads), thread_cmp);
	if (st.nlosses > 1)
		qsort(st.losses, st.nlosses, sizeof(*st.losses), loss_cmp);
	for (size_t i = 0; i < st.nthreads; i++)
		sm.shown_threads += thread_shown(&st.threads[i]);
	if (st.timed) {
		sm.first_ns = rlog_reader_time_ns(r, st.first);
		sm.last_ns = rlog_reader_time_ns(r, st.last);
		sm.duration_ns = sm.last_ns - sm.first_ns;
	}
	sm.rate = sm.duration_ns > 0 ? (double)st.events * 1e9 / (double)sm.duration_ns : -1.0;
	sm.ndamage = rlog_reader_damage_count(r);
	for (size_t i = 0; i < sm.ndamage; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) == 0 && dm.records_skipped > 0)
			sm.damaged_records += (uint64_t)dm.records_skipped;
	}
	size_t nrows = 0;
	struct name_row *rows = name_rows(&st, r, &nrows);
	if (!rows) {
		rlog_reader_close(r);
		stats_free(&st);
		return cli_error("stats %s: %s", path, strerror(ENOMEM));
	}

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	if (json)
		put_json(stdout, path, r, &st, &sm, rows, nrows);
	else
		put_text(stdout, path, r, &st, &sm, rows, nrows);
	int status = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		status = cli_error("stats %s: writing the output: %s", path, strerror(errno));
	for (size_t i = 0; i < sm.ndamage; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) == 0)
			status = cli_error("stats %s: %s", path, dm.message);
	}
	uint64_t first;
	uint64_t bad = rlog_reader_bad_schemas(r, &first);
	if (bad > 0)
		cli_error("stats %s: warning: %" PRIu64 " malformed EVENT_SCHEMA record%s ignored "
			  "(the first at offset %" PRIu64 ")", path, bad, bad == 1 ? "" : "s", first);
	free(rows);
	rlog_reader_close(r);
	stats_free(&st);
	return status;
}
