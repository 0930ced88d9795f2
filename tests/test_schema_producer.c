/*
 * test_schema_producer - declared events (<ringlog/event.h>), spans,
 * counters, thread and process names, through the real path: the macros
 * and the library in this process (and a fork child), the daemon, the log
 * file, the reader.  The EVENT_SCHEMA records are decoded here with the
 * shared codec (src/common/schema.c), independently of the reader's
 * schema table.
 *
 * Session 1 (category 5 off):
 *   - every field type with extreme values (0, max, min, negative, -0.0,
 *     NaN, 1e-300), strings empty, NULL, 1 byte, exactly RLOG_STRING_MAX
 *     bytes and longer (cut at exactly RLOG_STRING_MAX), BYTES(16) and
 *     BYTES(4096), NULL BYTES; the payload bytes equal an independent
 *     packing, and the decoded values are exact;
 *   - an event without fields, nested spans (BEGIN with fields, END
 *     without), a counter;
 *   - a disabled category writes nothing, not even its schema; a second
 *     type with a used ID gets -EEXIST; bad schemas and metadata IDs get
 *     -EINVAL;
 *   - four threads, three named with rlog_thread_name() (one cut at a UTF-8
 *     boundary, one renamed midway), one by the kernel name; all four use
 *     a type for the first time at once: one schema record;
 *   - rlog_process_name(), and a fork child that records its own names and
 *     schemas;
 *   then: exactly one schema record per type and process, before the
 *   type's first event in time order; each thread's THREAD_NAME before its
 *   first event; each process's PROCESS_NAME before its first event;
 *   events_written counts the application's events only.
 * Session 2 (two buffers): a thread whose first event finds no buffer
 *   loses it (counted), and its next event that finds one writes its name
 *   and the schema first: metadata is never lost, and emitted = written +
 *   lost holds.
 */
#include "harness.h"

#include <math.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>

#include "ringlog/event.h"
#include "schema.h"
#include "tap.h"

#define ALL_FIELDS(F)                                                                      \
	F(U8, u8) F(U16, u16) F(U32, u32) F(U64, u64) F(I8, i8) F(I16, i16) F(I32, i32)     \
	F(I64, i64) F(F64, f64) F(STRING, str) F(BYTES(16), digest)
RLOG_DEFINE_EVENT(all_types, 2000, "test.all_types", 1, ALL_FIELDS)

#define TEXT_FIELDS(F) F(STRING, text) F(U8, tail)
RLOG_DEFINE_EVENT(text, 2001, "test.text", 1, TEXT_FIELDS)

RLOG_DEFINE_EVENT(tick, 2002, "test.tick", 1, RLOG_NO_FIELDS)

#define BIG_FIELDS(F) F(BYTES(4096), blob)
RLOG_DEFINE_EVENT(big, 2003, "test.big", 1, BIG_FIELDS)

#define WORK_FIELDS(F) F(U32, job) F(STRING, tag)
RLOG_DEFINE_SPAN(work, 2004, "test.work", 2, WORK_FIELDS)

#define DEPTH_FIELDS(F) F(U32, depth) F(I64, delta) F(F64, load)
RLOG_DEFINE_COUNTER(depth, 2005, "test.depth", 2, DEPTH_FIELDS)

#define RACE_FIELDS(F) F(U32, worker) F(U32, seq)
RLOG_DEFINE_EVENT(race, 2006, "test.race", 1, RACE_FIELDS)

RLOG_DEFINE_EVENT(muted, 2007, "test.muted", 5, RACE_FIELDS)

#define ONE_FIELDS(F) F(U32, v)
RLOG_DEFINE_EVENT(conflict_a, 2008, "test.conflict", 1, ONE_FIELDS)
#define OTHER_FIELDS(F) F(U64, v)
RLOG_DEFINE_EVENT(conflict_b, 2008, "test.conflict", 1, OTHER_FIELDS)

/* ------------------------------------------------------------------ */
/* An independent packing of payloads, and what the main thread wrote   */
/* ------------------------------------------------------------------ */

struct pk {
	uint8_t b[8192];
	size_t n;
};

static void pk_le(struct pk *p, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

static void pk_f64(struct pk *p, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	pk_le(p, u, 8);
}

static void pk_str(struct pk *p, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > RLOG_STRING_MAX)
		n = RLOG_STRING_MAX;
	pk_le(p, n, 2);
	memcpy(p->b + p->n, s ? s : "", n);
	p->n += n;
}

static void pk_bytes(struct pk *p, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p->b[p->n++] = b ? b[i] : 0;
}

#define MAX_EXPECT 64
static struct expect {
	uint16_t id, flag;
	size_t len;
	uint8_t *payload;
} expect[MAX_EXPECT];
static size_t n_expect;
static uint64_t main_ones;

/* Records the write result r of an event the file must hold. */
static void expect_event(int r, uint16_t id, uint16_t flag, const struct pk *p)
{
	ok(r == 1, "event %u flag %u written (%d)", id, flag, r);
	if (r != 1 || n_expect == MAX_EXPECT)
		return;
	main_ones++;
	struct expect *e = &expect[n_expect++];
	e->id = id;
	e->flag = flag;
	e->len = p ? p->n : 0;
	e->payload = malloc(e->len + 1);
	if (p)
		memcpy(e->payload, p->b, p->n);
}

struct row {
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
	double f64;
	const char *str;
	const uint8_t *digest;
};

static const uint8_t digest[16] = { 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3,
				    4,	  5,	6,    7,    8, 9, 0xfe, 0xff };

static struct row rows[4];

static void init_rows(void)
{
	rows[0] = (struct row){ 0, 0, 0, 0, 0, 0, 0, 0, 0.0, "", digest };
	rows[1] = (struct row){ UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX, INT8_MIN,
				INT16_MIN, INT32_MIN,  INT64_MIN,  -1.5e300,  "h\xc3\xa9llo \"w\"",
				digest };
	rows[2] = (struct row){ 1, 2, 3, 4, -1, -2, -3, -4, -0.0, NULL, NULL };
	rows[3] = (struct row){ 0x7f, 0x7fff, 0x7fffffff, INT64_MAX, INT8_MAX, INT16_MAX,
				INT32_MAX, INT64_MAX, 1e-300, "x", digest };
}

static void pack_row(struct pk *p, const struct row *w)
{
	p->n = 0;
	pk_le(p, w->u8, 1);
	pk_le(p, w->u16, 2);
	pk_le(p, w->u32, 4);
	pk_le(p, w->u64, 8);
	pk_le(p, (uint64_t)(int64_t)w->i8, 1);
	pk_le(p, (uint64_t)(int64_t)w->i16, 2);
	pk_le(p, (uint64_t)(int64_t)w->i32, 4);
	pk_le(p, (uint64_t)w->i64, 8);
	pk_f64(p, w->f64);
	pk_str(p, w->str);
	pk_bytes(p, w->digest, 16);
}

static int write_row(const struct row *w)
{
	return RLOG_EVENT(all_types, w->u8, w->u16, w->u32, w->u64, w->i8, w->i16, w->i32, w->i64,
			  w->f64, w->str, w->digest);
}

/* Checks the decoded fields of an all_types event against row w. */
static unsigned check_row_values(const struct rlog_schema *s, const struct rlog_event *ev,
				 const struct row *w)
{
	struct rlog_value v[11];
	size_t off = 0;
	for (unsigned i = 0; i < 11; i++)
		if (rlog__value_decode(s, i, ev->payload, ev->length, &off, &v[i]) != 1)
			return 100 + i;
	if (off != ev->length)
		return 99;
	/* The one-pass decoder the converters use gives the same values. */
	struct rlog_value all[11];
	if (rlog__values_decode(s, ev->payload, ev->length, all) != 11)
		return 98;
	for (unsigned i = 0; i < 11; i++)
		if (all[i].field != v[i].field || all[i].v.u != v[i].v.u ||
		    all[i].bytes != v[i].bytes || all[i].len != v[i].len)
			return 120 + i;
	double f = w->f64;
	size_t sl = w->str ? strlen(w->str) : 0;
	unsigned bad = 0;
	bad += v[0].v.u != w->u8;
	bad += v[1].v.u != w->u16;
	bad += v[2].v.u != w->u32;
	bad += v[3].v.u != w->u64;
	bad += v[4].v.i != w->i8;
	bad += v[5].v.i != w->i16;
	bad += v[6].v.i != w->i32;
	bad += v[7].v.i != w->i64;
	bad += memcmp(&v[8].v.f, &f, 8) != 0; /* bit for bit: -0.0 */
	bad += v[9].len != sl || memcmp(v[9].bytes, w->str ? w->str : "", sl) != 0;
	bad += v[10].len != 16 || (w->digest ? memcmp(v[10].bytes, w->digest, 16) != 0
					     : memcmp(v[10].bytes, (uint8_t[16]){ 0 }, 16) != 0);
	return bad;
}

/* ------------------------------------------------------------------ */
/* Threads                                                              */
/* ------------------------------------------------------------------ */

#define THREADS 4
#define RACE_EVENTS 100
#define RENAME_AT 50

static pthread_barrier_t barrier;
static const char *long_name =
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9z"; /* 63 a */

struct worker {
	uint32_t idx;
	uint32_t tid;
	uint64_t ones, other;
	int name_rc;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	w->tid = (uint32_t)gettid();
	if (w->idx == 0)
		w->name_rc = rlog_thread_name("worker-0");
	else if (w->idx == 1)
		w->name_rc = rlog_thread_name(long_name);
	else if (w->idx == 2)
		w->name_rc = rlog_thread_name("w\xc3\xb6rker-2");
	else
		w->name_rc = prctl(PR_SET_NAME, "kernel-name", 0, 0, 0);
	pthread_barrier_wait(&barrier);
	for (uint32_t k = 0; k < RACE_EVENTS; k++) {
		if (w->idx == 0 && k == RENAME_AT)
			w->name_rc |= rlog_thread_name("worker-0b");
		int r = RLOG_EVENT(race, w->idx, k);
		w->ones += r == 1;
		w->other += r != 1;
	}
	/* A type the main thread registered: no schema record from here. */
	int r = write_row(&rows[1]);
	w->ones += r == 1;
	w->other += r != 1;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Reading the file back                                                */
/* ------------------------------------------------------------------ */

#define MAX_PIDS 4
#define MAX_TIDS 16
#define N_TYPES 9 /* IDs 2000 .. 2008 */

struct proc {
	uint32_t pid;
	unsigned schemas[N_TYPES];          /* schema records per type */
	uint8_t schema_raw[N_TYPES][512];   /* the first schema record's payload */
	uint16_t schema_len[N_TYPES];
	unsigned schema_mismatch;           /* later schema records unlike the first */
	struct rlog__schema_buf schema[N_TYPES];
	unsigned events[N_TYPES];           /* events per type */
	unsigned events_before_schema;      /* events with no schema record before them */
	unsigned names;                     /* PROCESS_NAME records */
	char name[2][RLOG_PROCESS_NAME_MAX + 1];
	bool event_seen;
	bool name_before_event;
};

struct thr {
	uint32_t pid, tid;
	unsigned names;                     /* THREAD_NAME records */
	char name[3][RLOG_THREAD_NAME_MAX + 1];
	bool event_seen;
	bool name_before_event;
	unsigned race_seen;                 /* race events seen (for the rename check) */
	int rename_at;                      /* race events before the second name, -1 */
};

struct file_view {
	struct proc p[MAX_PIDS];
	size_t np;
	struct thr t[MAX_TIDS];
	size_t nt;
	uint64_t app_events;
	uint64_t loss_events;
	uint64_t bad_schema_records;
	uint64_t meta_flagged_or_daemon;
};

static struct proc *proc_of(struct file_view *f, uint32_t pid)
{
	for (size_t i = 0; i < f->np; i++)
		if (f->p[i].pid == pid)
			return &f->p[i];
	if (f->np == MAX_PIDS)
		return NULL;
	struct proc *p = &f->p[f->np++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	return p;
}

static struct thr *thr_of(struct file_view *f, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < f->nt; i++)
		if (f->t[i].pid == pid && f->t[i].tid == tid)
			return &f->t[i];
	if (f->nt == MAX_TIDS)
		return NULL;
	struct thr *t = &f->t[f->nt++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	t->rename_at = -1;
	return t;
}

static void copy_name(char *dst, size_t cap, const struct rlog_event *ev)
{
	size_t n = ev->length < cap - 1 ? ev->length : cap - 1;
	memcpy(dst, ev->payload, n);
	dst[n] = '\0';
}

/* One pass in time order; per_event (may be NULL) sees every application
 * event of a declared type with its process's schema. */
static void view_file(const char *path, struct file_view *f,
		      void (*per_event)(const struct rlog_event *, const struct rlog_schema *))
{
	memset(f, 0, sizeof *f);
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0) {
		ok(0, "open %s", path);
		return;
	}
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon) {
			if (!ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
				struct rlog_data_loss dl;
				memcpy(&dl, ev.payload, sizeof dl);
				f->loss_events += dl.events;
			}
			if (!ev.flagged && (ev.id == RLOG_ID_EVENT_SCHEMA || ev.id == RLOG_ID_THREAD_NAME ||
					    ev.id == RLOG_ID_PROCESS_NAME))
				f->meta_flagged_or_daemon++;
			continue;
		}
		struct proc *p = proc_of(f, ev.pid);
		struct thr *t = thr_of(f, ev.pid, ev.tid);
		if (p == NULL || t == NULL)
			continue;
		if (ev.flagged && (ev.id == RLOG_ID_EVENT_SCHEMA || ev.id == RLOG_ID_THREAD_NAME ||
				   ev.id == RLOG_ID_PROCESS_NAME)) {
			f->meta_flagged_or_daemon++;
			continue;
		}
		if (!ev.flagged && ev.id == RLOG_ID_EVENT_SCHEMA) {
			struct rlog__schema_buf sb;
			if (rlog__schema_decode(ev.payload, ev.length, &sb) < 0 || sb.s.id < 2000 ||
			    sb.s.id >= 2000 + N_TYPES) {
				f->bad_schema_records++;
				continue;
			}
			unsigned k = sb.s.id - 2000;
			if (p->schemas[k]++ == 0) {
				rlog__schema_decode(ev.payload, ev.length, &p->schema[k]);
				p->schema_len[k] = ev.length < 512 ? ev.length : 512;
				memcpy(p->schema_raw[k], ev.payload, p->schema_len[k]);
			} else if (ev.length != p->schema_len[k] ||
				   memcmp(ev.payload, p->schema_raw[k], p->schema_len[k]) != 0) {
				p->schema_mismatch++;
			}
			continue;
		}
		if (!ev.flagged && ev.id == RLOG_ID_THREAD_NAME) {
			if (t->names < 3)
				copy_name(t->name[t->names], sizeof t->name[0], &ev);
			if (t->names == 1)
				t->rename_at = (int)t->race_seen;
			t->names++;
			continue;
		}
		if (!ev.flagged && ev.id == RLOG_ID_PROCESS_NAME) {
			if (p->names < 2)
				copy_name(p->name[p->names], sizeof p->name[0], &ev);
			p->names++;
			continue;
		}
		f->app_events++;
		if (!t->event_seen) {
			t->event_seen = true;
			t->name_before_event = t->names > 0;
		}
		if (!p->event_seen) {
			p->event_seen = true;
			p->name_before_event = p->names > 0;
		}
		if (ev.id == 2006)
			t->race_seen++;
		if (ev.id >= 2000 && ev.id < 2000 + N_TYPES) {
			unsigned k = ev.id - 2000;
			p->events[k]++;
			if (p->schemas[k] == 0)
				p->events_before_schema++;
			else if (per_event)
				per_event(&ev, &p->schema[k].s);
		}
	}
	ok(rlog_reader_damage_count(rd) == 0, "%s: no damage", path);
	rlog_reader_close(rd);
}

/* The main thread's events, in order, against what it wrote. */
static uint32_t main_pid, main_tid;
static size_t n_checked;
static unsigned payload_mismatch, value_mismatch, row_idx;

static void check_main_event(const struct rlog_event *ev, const struct rlog_schema *s)
{
	if (ev->pid != main_pid || ev->tid != main_tid)
		return;
	if (n_checked >= n_expect) {
		payload_mismatch++;
		return;
	}
	const struct expect *e = &expect[n_checked++];
	if (ev->id != e->id || ev->flag != e->flag || ev->flagged != (e->flag != 0) ||
	    ev->length != e->len || memcmp(ev->payload, e->payload, e->len) != 0) {
		payload_mismatch++;
		diag("main event %zu: id %u flag %u length %u, want id %u flag %u length %zu",
		     n_checked - 1, ev->id, ev->flag, ev->length, e->id, e->flag, e->len);
	}
	if (!rlog__payload_matches(s, ev->payload, ev->length) && ev->flag != RLOG_SPAN_END)
		value_mismatch++;
	if (ev->id == 2000 && row_idx < 4)
		value_mismatch += check_row_values(s, ev, &rows[row_idx++]);
}

static void check_schema(const struct proc *p, unsigned k, uint8_t kind, uint8_t cat,
			 const char *name, const char *fields)
{
	const struct rlog_schema *s = &p->schema[k].s;
	char got[512] = "";
	for (unsigned i = 0; i < s->field_count; i++) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof got - n, "%s%u:%u:%s", i ? " " : "", s->fields[i].type,
			 s->fields[i].count, s->fields[i].name);
	}
	/* test.race (k 6) may have several, all alike (see main). */
	ok((p->schemas[k] == 1 || (k == 6 && p->schemas[k] >= 1 && p->schema_mismatch == 0)) &&
		   s->id == 2000 + k && s->kind == kind && s->category == cat &&
		   strcmp(s->name, name) == 0 && strcmp(got, fields) == 0,
	   "pid %u schema %u: kind %u cat %u \"%s\" {%s}", p->pid, 2000 + k, s->kind, s->category,
	   s->name, got);
}

/* ------------------------------------------------------------------ */
/* Session 1                                                            */
/* ------------------------------------------------------------------ */

static int child_main(void)
{
	int n = 0;
	n += RLOG_EVENT(tick) == 1;
	n += write_row(&rows[3]) == 1;
	rlog_flush_thread();
	return n;
}

static void session_full(void)
{
	const char *name = h_session("schema");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("schema"));
	unlink(path);
	struct h_run r;
	/* Category 5 off. */
	h_ringlog(&r, "start", name, "-o", path, "--mask", "0xffffffffffffffdf", NULL);
	BAIL_IF(r.status != 0, "ringlog start: %s", r.err);
	ASSERT_EQ(rlog_attach(name), 0);
	main_pid = (uint32_t)getpid();
	main_tid = (uint32_t)gettid();
	init_rows();

	/* Refused, not counted. */
	uint32_t v = 1;
	ASSERT_EQ(rlog_write(RLOG_ID_THREAD_NAME, &v, 4), -EINVAL);
	ASSERT_EQ(rlog_write(RLOG_ID_EVENT_SCHEMA, &v, 4), -EINVAL);
	ASSERT_EQ(rlog_write_flagged(RLOG_ID_PROCESS_NAME, 1, &v, 4), -EINVAL);
	ASSERT_EQ(rlog_write(RLOG_ID_COUNTER, &v, 4), -EINVAL);
	ASSERT_EQ(rlog_write(RLOG_ID_SPAN_END, &v, 4), -EINVAL);
	ASSERT_EQ(rlog_thread_name(NULL), -EINVAL);
	ASSERT_EQ(rlog_thread_name(""), -EINVAL);
	ASSERT_EQ(rlog_process_name(""), -EINVAL);
	static const struct rlog_field f_bad[] = { { RLOG_FIELD_U32, 0, "x" } };
	struct rlog_schema hand = { 3000, RLOG_KIND_EVENT, 1, 1, "hand.made", f_bad };
	ASSERT_EQ(rlog_write_declared(&hand, NULL, 0, &v, 2), -EINVAL); /* payload: 2 of 4 bytes */
	ASSERT_EQ(rlog_write_declared(&hand, NULL, RLOG_SPAN_BEGIN, &v, 4), -EINVAL); /* not a span */
	struct rlog_schema bad_name = { 3001, RLOG_KIND_EVENT, 1, 1, "bad name", f_bad };
	ASSERT_EQ(rlog_write_declared(&bad_name, NULL, 0, &v, 4), -EINVAL);
	/* Category 5 is off: nothing, not even the schema. */
	ASSERT_EQ(RLOG_EVENT(muted, 1, 2), 0);

	struct pk p;
	for (int i = 0; i < 4; i++) {
		pack_row(&p, &rows[i]);
		expect_event(write_row(&rows[i]), 2000, 0, &p);
	}
	/* Strings: empty, NULL, 1 byte, exactly the maximum, cut. */
	static char s_max[RLOG_STRING_MAX + 1], s_over[3000];
	memset(s_max, 'm', RLOG_STRING_MAX);
	memset(s_over, 'o', sizeof s_over - 1);
	s_over[RLOG_STRING_MAX - 1] = 'L'; /* the last byte kept */
	s_over[RLOG_STRING_MAX] = 'X';     /* the first byte cut */
	const char *texts[] = { "", NULL, "a", s_max, s_over, "\xe2\x82\xac-euro" };
	for (uint8_t i = 0; i < 6; i++) {
		p.n = 0;
		pk_str(&p, texts[i]);
		pk_le(&p, 0xa0u + i, 1);
		expect_event(RLOG_EVENT(text, texts[i], (uint8_t)(0xa0u + i)), 2001, 0, &p);
	}
	expect_event(RLOG_EVENT(tick), 2002, 0, NULL);
	static uint8_t blob[4096];
	for (size_t i = 0; i < sizeof blob; i++)
		blob[i] = (uint8_t)(i * 13 + 7);
	p.n = 0;
	pk_bytes(&p, blob, 4096);
	expect_event(RLOG_EVENT(big, blob), 2003, 0, &p);
	p.n = 0;
	pk_bytes(&p, NULL, 4096);
	expect_event(RLOG_EVENT(big, NULL), 2003, 0, &p);
	/* Nested spans. */
	p.n = 0;
	pk_le(&p, 1, 4);
	pk_str(&p, "outer");
	expect_event(RLOG_BEGIN(work, 1, "outer"), 2004, RLOG_SPAN_BEGIN, &p);
	p.n = 0;
	pk_le(&p, 2, 4);
	pk_str(&p, "inner");
	expect_event(RLOG_BEGIN(work, 2, "inner"), 2004, RLOG_SPAN_BEGIN, &p);
	expect_event(RLOG_END(work), 2004, RLOG_SPAN_END, NULL);
	expect_event(RLOG_END(work), 2004, RLOG_SPAN_END, NULL);
	/* A counter. */
	for (int i = 0; i < 2; i++) {
		p.n = 0;
		pk_le(&p, 5u + (unsigned)i, 4);
		pk_le(&p, (uint64_t)(int64_t)(-3 - i), 8);
		pk_f64(&p, 0.75 * i);
		expect_event(RLOG_COUNTER(depth, 5u + (unsigned)i, -3 - i, 0.75 * i), 2005, 0, &p);
	}
	/* One ID, two types. */
	p.n = 0;
	pk_le(&p, 7, 4);
	expect_event(RLOG_EVENT(conflict_a, 7), 2008, 0, &p);
	ASSERT_EQ(RLOG_EVENT(conflict_b, 7), -EEXIST);
	ASSERT_EQ(RLOG_EVENT(conflict_b, 8), -EEXIST);

	/* Four threads use race for the first time at once. */
	pthread_barrier_init(&barrier, NULL, THREADS);
	pthread_t th[THREADS];
	struct worker w[THREADS];
	for (uint32_t i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .idx = i };
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	uint64_t worker_ones = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ(w[i].name_rc, 0);
		ASSERT_EQ_U64(w[i].other, 0);
		worker_ones += w[i].ones;
	}
	pthread_barrier_destroy(&barrier);

	/* Renaming the process records the new name now (this thread is
	 * bound); the fork child records the name it inherits. */
	ASSERT_EQ(rlog_process_name("schema-test"), 0);
	expect_event(RLOG_EVENT(tick), 2002, 0, NULL);
	fflush(NULL);
	pid_t child = fork();
	if (child == 0)
		_exit(child_main());
	int st = 0;
	waitpid(child, &st, 0);
	ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t written = h_kv(r.out, "events_written");
	ok(written == main_ones + worker_ones + 2,
	   "events_written %" PRIu64 " = the application's events %" PRIu64, written,
	   main_ones + worker_ones + 2);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	rlog_detach();

	struct file_view f;
	view_file(path, &f, check_main_event);
	ASSERT_EQ_U64(f.app_events, written);
	ASSERT_EQ_U64(f.bad_schema_records, 0);
	ASSERT_EQ_U64(f.meta_flagged_or_daemon, 0);
	ASSERT_EQ(n_checked, n_expect);
	ASSERT_EQ(payload_mismatch, 0);
	ASSERT_EQ(value_mismatch, 0);
	ASSERT_EQ(row_idx, 4);

	/* Per process: one schema record per type used, none for the muted
	 * type, before the first event of the type. */
	ASSERT_EQ(f.np, 2);
	struct proc *pp = proc_of(&f, main_pid), *cp = proc_of(&f, (uint32_t)child);
	BAIL_IF(pp == NULL || cp == NULL, "processes missing from the file");
	const unsigned want_parent[N_TYPES] = { 4 + THREADS, 6, 2, 2, 4, 2,
						THREADS * RACE_EVENTS, 0, 1 };
	for (unsigned k = 0; k < N_TYPES; k++) {
		ok(pp->events[k] == want_parent[k], "parent: %u events of %u (want %u)",
		   pp->events[k], 2000 + k, want_parent[k]);
		/* test.race (2006): its first use by THREADS threads at once may
		 * give more than one schema record, all alike: a thread that
		 * waited CLAIM_WAIT_NS for a preempted first writer writes its
		 * own (src/lib/declared.c; seen under TSan on a loaded machine). */
		if (k == 6)
			ok(pp->schemas[k] >= 1 && pp->schemas[k] <= THREADS,
			   "parent: %u schema records of %u (1 to %u)", pp->schemas[k], 2000 + k,
			   THREADS);
		else
			ok(pp->schemas[k] == (want_parent[k] ? 1u : 0u),
			   "parent: %u schema records of %u", pp->schemas[k], 2000 + k);
	}
	ASSERT_EQ(pp->events_before_schema, 0);
	ASSERT_EQ(pp->schema_mismatch, 0);
	check_schema(pp, 0, RLOG_KIND_EVENT, 1, "test.all_types",
		     "1:0:u8 2:0:u16 3:0:u32 4:0:u64 5:0:i8 6:0:i16 7:0:i32 8:0:i64 9:0:f64 "
		     "11:0:str 10:16:digest");
	check_schema(pp, 1, RLOG_KIND_EVENT, 1, "test.text", "11:0:text 1:0:tail");
	check_schema(pp, 2, RLOG_KIND_EVENT, 1, "test.tick", "");
	check_schema(pp, 3, RLOG_KIND_EVENT, 1, "test.big", "10:4096:blob");
	check_schema(pp, 4, RLOG_KIND_SPAN, 2, "test.work", "3:0:job 11:0:tag");
	check_schema(pp, 5, RLOG_KIND_COUNTER, 2, "test.depth", "3:0:depth 8:0:delta 9:0:load");
	check_schema(pp, 6, RLOG_KIND_EVENT, 1, "test.race", "3:0:worker 3:0:seq");
	check_schema(pp, 8, RLOG_KIND_EVENT, 1, "test.conflict", "3:0:v");
	/* The child: its own records for what it used. */
	for (unsigned k = 0; k < N_TYPES; k++) {
		unsigned want = k == 0 || k == 2;
		ok(cp->events[k] == want && cp->schemas[k] == want,
		   "child: %u events, %u schema records of %u (want %u)", cp->events[k],
		   cp->schemas[k], 2000 + k, want);
	}
	ASSERT_EQ(cp->events_before_schema, 0);
	check_schema(cp, 2, RLOG_KIND_EVENT, 1, "test.tick", "");

	/* Process names. */
	ok(pp->names == 2 && strcmp(pp->name[0], program_invocation_short_name) == 0 &&
		   strcmp(pp->name[1], "schema-test") == 0,
	   "parent PROCESS_NAME records: %u, \"%s\" then \"%s\"", pp->names, pp->name[0],
	   pp->name[1]);
	ok(pp->name_before_event, "parent: PROCESS_NAME before its first event");
	ok(cp->names == 1 && strcmp(cp->name[0], "schema-test") == 0,
	   "child PROCESS_NAME records: %u, \"%s\"", cp->names, cp->name[0]);
	ok(cp->name_before_event, "child: PROCESS_NAME before its first event");

	/* Thread names. */
	char comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	const char *want_name[THREADS] = { "worker-0", "", "w\xc3\xb6rker-2", "kernel-name" };
	char cut[64];
	memset(cut, 'a', 63); /* the UTF-8 character that straddles byte 64 is left out */
	cut[63] = '\0';
	want_name[1] = cut;
	ASSERT_EQ(f.nt, THREADS + 2);
	for (size_t i = 0; i < f.nt; i++) {
		struct thr *t = &f.t[i];
		ok(t->event_seen && t->name_before_event, "thread %u: THREAD_NAME before its first event",
		   t->tid);
		if (t->tid == main_tid || t->pid == (uint32_t)child) {
			ok(t->names == 1 && strcmp(t->name[0], comm) == 0,
			   "thread %u: kernel name \"%s\" (%u records)", t->tid, t->name[0], t->names);
			continue;
		}
		int k = -1;
		for (int j = 0; j < THREADS; j++)
			if (w[j].tid == t->tid)
				k = j;
		if (!ok(k >= 0, "thread %u is one of the workers", t->tid))
			continue;
		if (k == 0) {
			ok(t->names == 2 && strcmp(t->name[0], "worker-0") == 0 &&
				   strcmp(t->name[1], "worker-0b") == 0 && t->rename_at == RENAME_AT,
			   "worker 0: \"%s\", renamed \"%s\" after %d events", t->name[0], t->name[1],
			   t->rename_at);
		} else {
			ok(t->names == 1 && strcmp(t->name[0], want_name[k]) == 0,
			   "worker %d: \"%s\" (%u records)", k, t->name[0], t->names);
		}
	}
	for (size_t i = 0; i < n_expect; i++)
		free(expect[i].payload);
	unlink(path);
}

/* ------------------------------------------------------------------ */
/* Session 2: no free buffer for a thread's first event                 */
/* ------------------------------------------------------------------ */

static pthread_barrier_t b2;
static _Atomic int holder_release;

static void *holder(void *arg)
{
	(void)arg;
	int r = RLOG_EVENT(tick); /* takes the second buffer */
	pthread_barrier_wait(&b2);
	while (!holder_release)
		usleep(1000);
	rlog_flush_thread(); /* hands it over: the daemon frees it */
	return (void *)(intptr_t)r;
}

struct starved {
	uint32_t tid;
	uint64_t lost, ones, other;
	int first;
};

static void *starved(void *arg)
{
	struct starved *s = arg;
	s->tid = (uint32_t)gettid();
	rlog_thread_name("starved");
	s->first = RLOG_EVENT(race, 9, 0);
	s->lost += s->first == -ENOBUFS;
	holder_release = 1;
	for (uint32_t k = 1; k < 1000 && s->ones == 0; k++) {
		int r = RLOG_EVENT(race, 9, k);
		s->ones += r == 1;
		s->lost += r == -ENOBUFS;
		s->other += r != 1 && r != -ENOBUFS;
		if (r != 1)
			usleep(2000);
	}
	return NULL;
}

static void session_starved(void)
{
	const char *name = h_session("schema2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("schema2"));
	h_start(name, path, "4", "2");
	ASSERT_EQ(rlog_attach(name), 0);
	ASSERT_EQ(RLOG_EVENT(tick), 1); /* the first buffer */
	pthread_barrier_init(&b2, NULL, 2);
	pthread_t h, st;
	pthread_create(&h, NULL, holder, NULL);
	pthread_barrier_wait(&b2);
	struct starved s = { 0 };
	pthread_create(&st, NULL, starved, &s);
	void *hr;
	pthread_join(h, &hr);
	pthread_join(st, NULL);
	pthread_barrier_destroy(&b2);
	ASSERT_EQ((int)(intptr_t)hr, 1);
	ASSERT_EQ(s.first, -ENOBUFS);
	ASSERT_EQ_U64(s.ones, 1);
	ASSERT_EQ_U64(s.other, 0);
	diag("the starved thread lost %" PRIu64 " events before a buffer was free", s.lost);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), s.lost);
	rlog_detach();

	struct file_view f;
	view_file(path, &f, NULL);
	ASSERT_EQ_U64(f.app_events, 3);
	ASSERT_EQ_U64(f.loss_events, s.lost);
	struct proc *p = proc_of(&f, (uint32_t)getpid());
	ok(p->schemas[6] == 1 && p->events[6] == 1 && p->events_before_schema == 0,
	   "the starved thread's schema record precedes its event (%u records)", p->schemas[6]);
	ok(p->schemas[2] == 1 && p->names == 1, "one tick schema, one PROCESS_NAME");
	struct thr *t = thr_of(&f, (uint32_t)getpid(), s.tid);
	ok(t->names == 1 && strcmp(t->name[0], "starved") == 0 && t->name_before_event,
	   "the starved thread's THREAD_NAME \"%s\" precedes its event", t->name[0]);
	unlink(path);
}

/*
 * rlog__values_decode against rlog__value_decode field by field, on a
 * payload of every length from 0 to one byte past a whole one (a u8, an
 * i16, a string, 3 bytes): the same values where both accept, and the
 * same refusals (a field cut short, a string's length past the end,
 * bytes left over).
 */
static void values_decode_rules(void)
{
	static const struct rlog_field f[] = {
		{ RLOG_FIELD_U8, 0, "a" }, { RLOG_FIELD_I16, 0, "b" },
		{ RLOG_FIELD_STRING, 0, "c" }, { RLOG_FIELD_BYTES, 3, "d" },
	};
	const struct rlog_schema s = { 1100, RLOG_KIND_EVENT, 0, 4, "rules", f };
	/* u8 200, i16 -2, "xyz", bytes 1 2 3, one more byte */
	static const uint8_t p[] = { 200, 0xfe, 0xff, 3, 0, 'x', 'y', 'z', 1, 2, 3, 9 };
	unsigned agree = 0, whole = 0;
	for (size_t len = 0; len <= sizeof(p); len++) {
		struct rlog_value one[4], all[4];
		size_t off = 0;
		unsigned i = 0;
		while (i < 4 && rlog__value_decode(&s, i, p, len, &off, &one[i]) == 1)
			i++;
		int want = i == 4 && off == len ? 4 : -EBADMSG;
		int got = rlog__values_decode(&s, p, len, all);
		bool same = got == want;
		for (unsigned k = 0; same && got == 4 && k < 4; k++)
			same = all[k].field == one[k].field && all[k].v.u == one[k].v.u &&
			       all[k].bytes == one[k].bytes && all[k].len == one[k].len;
		agree += same;
		whole += got == 4;
	}
	ok(agree == sizeof(p) + 1, "values_decode: agrees with value_decode at every length (%u of %zu)",
	   agree, sizeof(p) + 1);
	ok(whole == 1, "values_decode: only the whole payload (11 bytes) matches (%u lengths)", whole);
	struct rlog_value v[4];
	ok(rlog__values_decode(&s, p, 11, v) == 4 && v[0].v.u == 200 && v[1].v.i == -2 &&
		   v[2].len == 3 && memcmp(v[2].bytes, "xyz", 3) == 0 && v[3].len == 3 &&
		   v[3].bytes == p + 8,
	   "values_decode: u8 200, i16 -2, \"xyz\", bytes at +8");
}

int main(void)
{
	values_decode_rules();
	session_full();
	session_starved();
	return done_testing();
}
