/*
 * convert_perfetto.c - a ringlog log file as Perfetto's own trace format, a
 * stream of TracePacket messages (the `Trace` message's repeated field 1),
 * which ui.perfetto.dev and trace_processor load natively and at sizes
 * where the Chrome JSON breaks (docs/CONVERT.md).  The messages and field
 * numbers written are exactly those of docs/perfetto/ringlog_perfetto.proto.
 *
 * Each file opens with the first packet of its own trusted packet
 * sequence (id 1), flagged SEQ_INCREMENTAL_STATE_CLEARED, holding the
 * clock snapshot and the sequence's defaults (timestamps on clock 64,
 * ringlog's session clock in ns); the descriptors, ftrace bundles, process
 * trees and totals go on it.  Each thread's TrackEvents go on a sequence
 * of its own (id 2 and up), which starts in each file with the same kind
 * of packet, its defaults also naming the thread's track: its events
 * leave the track out, and its names are interned on it.  Every later
 * packet of a sequence is flagged SEQ_NEEDS_INCREMENTAL_STATE.  Then, in
 * the reader's time order:
 *
 *   - a TrackDescriptor before the first use of each track: a process
 *     track per pid, a thread track per (pid, tid), a "lost" track under a
 *     thread for its DATA_LOSS records, a counter track per counter;
 *   - a TrackEvent per event, its name and category interned (the
 *     InternedData of the packet that first uses them), a schema'd event's
 *     fields as typed debug annotations with interned names;
 *   - the system events' scheduling records (docs/FORMAT.md, "System
 *     events") as Perfetto's ftrace events, which its UI draws as CPU
 *     tracks and thread states: an FtraceEventBundle per CPU, filled as
 *     the CPU's records come and written when 64 KiB or at the file's
 *     end; the rundown's processes and threads as ProcessTree packets;
 *   - at the end, a ChromeEventBundle whose metadata (trace_processor's
 *     metadata table) holds the session's totals.
 *
 * A split (--split, --max-size) ends a file as a whole trace (open spans
 * ended at its last time, the totals) and starts the next as a new one
 * (clock snapshot, descriptors and interned names again, open spans begun
 * again), so that each file opens on its own.
 *
 * The common event (a schema met before in the file, on a track already
 * described, nothing to intern) is written from its schema's template:
 * the TrackEvent's constant bytes encoded once, its values read straight
 * from the payload (template_make, te_fill); the reader's events come in
 * batches (reader/batch.h).  The output is the same as the general way's.
 *
 * One host of several (opt->host, docs/CONVERT.md "Several hosts") is
 * written the same way after the hosts before it, into the same output,
 * with these differences: its sequence ids and track uuids follow the
 * previous host's; its snapshots give BOOTTIME CLOCK_REALTIME's value (the
 * merged timeline) and leave MONOTONIC_RAW out; its pids and tids are
 * the Chrome output's (host_id), its processes "HOST: name"; its system
 * events stay instants (system_event); its metadata says which host.
 *
 * Memory: per thread its open-span stack, the names interned (the
 * distinct names, not the events), the tracks; the output goes out in
 * 1 MiB writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "convert.h"
#include "map.h"
#include "names.h"
#include "pb.h"
#include "reader/batch.h"
#include "ringlog/reader.h"
#include "satmath.h"
#include "utf8.h"
#include "vec.h"
#include "writer.h"

#define OUT_FLUSH (1u << 20)
#define BATCH 64 /* events taken from the reader at a time */

/* Field numbers: Perfetto's protos (docs/perfetto/ringlog_perfetto.proto). */
enum {
	TRACE_PACKET = 1,
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11,
	TP_INTERNED = 12, TP_SEQ_FLAGS = 13, TP_CHROME_EVENTS = 5, TP_DEFAULTS = 59,
	TP_TRACK_DESC = 60,
	TPD_CLOCK_ID = 58, TPD_TRACK_EVENT = 11, TED_TRACK = 11,
	CS_CLOCKS = 1, CS_PRIMARY = 2, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	PD_PID = 1, PD_NAME = 6,
	THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	TE_CATEGORY_IIDS = 3, TE_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11,
	TE_COUNTER = 30, TE_DOUBLE_COUNTER = 44, TE_EXTRA_TRACKS = 31, TE_EXTRA_VALUES = 12,
	TE_EXTRA_DOUBLE_TRACKS = 45, TE_EXTRA_DOUBLE_VALUES = 46,
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6,
	ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, IN_IID = 1, IN_NAME = 2,
	CEB_METADATA = 2, CM_NAME = 1, CM_STRING = 2,
	TP_FTRACE = 1, TP_PROCESS_TREE = 2, FB_CPU = 1, FB_EVENT = 2, FE_TIMESTAMP = 1, FE_PID = 2,
	PT_PROCESSES = 1, PT_THREADS = 2, PTP_PID = 1, PTP_PPID = 2, PTP_CMDLINE = 3,
	PTP_CMDLINE_IS_COMM = 9, PTT_TID = 1, PTT_NAME = 2, PTT_TGID = 3,
};

/*
 * The system events written as ftrace events: the FtraceEvent field of
 * each, and per field of its schema (pid and tid first, docs/FORMAT.md's
 * table) the field of Perfetto's message it goes to, 0 for none; types:
 * 'i' an integer, 's' a string.  A record whose schema is not this one
 * (another name, other fields) stays an instant on the system track.
 */
static const struct ftrace_map {
	uint16_t id;
	uint16_t field;
	const char *name;
	const char *types;
	uint8_t to[9];
} ftrace_maps[] = {
	{ 64, 4, "sched_switch", "iiiiiiiss", { 0, 0, 2, 4, 3, 6, 7, 1, 5 } },
	{ 65, 17, "sched_wakeup", "iiiiis", { 0, 0, 2, 3, 5, 1 } },
	{ 66, 20, "sched_waking", "iiiiis", { 0, 0, 2, 3, 5, 1 } },
	{ 67, 114, "sched_wakeup_new", "iiiiis", { 0, 0, 2, 3, 5, 1 } },
	{ 69, 239, "sched_process_fork", "iiiiss", { 0, 0, 2, 4, 1, 3 } },
	{ 70, 237, "sched_process_exec", "iiiis", { 0, 0, 2, 3, 1 } },
	{ 71, 238, "sched_process_exit", "iiiis", { 0, 0, 2, 4, 1 } },
	{ 72, 240, "sched_process_free", "iiis", { 0, 0, 2, 1 } },
	{ 73, 235, "task_newtask", "iiiis", { 0, 0, 1, 3, 2 } },
	{ 74, 236, "task_rename", "iiiss", { 0, 0, 1, 2, 3 } },
};

#define RUNDOWN_PROCESS 78 /* process_rundown: pid, tid, ppid, comm, cmdline */
#define RUNDOWN_THREAD 79  /* thread_rundown: pid, tid, comm */
#define BUNDLE_MAX (64u << 10)

/* A CPU's FtraceEventBundle being filled: its events, encoded. */
struct cpu_bundle {
	uint32_t cpu;
	struct rlog__buf ev;
};

enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { CLOCK_REALTIME = 1, CLOCK_MONOTONIC_RAW = 5, CLOCK_BOOTTIME = 6, CLOCK_SESSION = 64 };
#define SEQ_ID 1 /* the file's own packets; a thread's from 2 on */

/* Names given small ids: iid = index + 1, valid until the next file. */
struct interner {
	unsigned field;       /* its InternedData field */
	struct rlog__map map; /* hash (probed) -> index */
	struct rlog__buf text;
	size_t *off;          /* index -> offset in text ("name\0") */
	size_t n, cap;
};

/*
 * A trusted packet sequence and its incremental state: the file's own
 * (SEQ_ID: its clock snapshot, descriptors, ftrace bundles, process
 * trees, totals) and one per thread, which carries its TrackEvents.  A
 * thread's sequence starts, in each file, with a packet flagged
 * SEQ_INCREMENTAL_STATE_CLEARED holding its clock snapshot and defaults
 * (clock 64; its thread's track, which its events then leave out).
 */
struct seq {
	uint32_t id;
	unsigned gen;             /* its names are those of file gen */
	bool fresh;               /* its first packet in the file is not written */
	uint64_t prev_ts;         /* its latest timestamp: clock 64 is incremental */
	uint64_t track;           /* its events' default track, or 0 */
	struct interner names, cats, anns;
};

#define TSC 16u
struct thread {
	uint32_t pid, tid;
	uint64_t uuid, lost_uuid;
	struct seq *seq;
	/* Its slice end's TrackEvent (type; the track is its sequence's
	 * default): the bytes of every end on its track. */
	char end[16];
	uint8_t end_len;
	unsigned gen, lost_gen;   /* described in file gen (0: not yet) */
	const struct rlog_schema **stack; /* open spans, innermost last */
	size_t depth, cap;
	char *name;               /* a THREAD_NAME record's payload, or NULL */
	/* The schemas of its events taken from the reader's runs, by ID
	 * (direct-mapped): rlog_reader_schema's answer for an event of the
	 * ID after from ticks (rlog__reader_schema_one). */
	struct {
		const struct rlog_schema *s;
		uint64_t from;
		const struct scache *e; /* its template on the thread's sequence */
		uint64_t epoch;         /* it was found ready at this pf.epoch */
		uint16_t id;
	} sc[TSC];
	/* A TrackEvent packet's bytes between its timestamp and the body's
	 * length: the sequence id, the flags, the TrackEvent's tag. */
	char mid[16];
	uint8_t mid_len;
};

struct process {
	uint32_t pid;
	uint64_t uuid;
	unsigned gen;
	char *name;
};

struct ctrack {
	uint64_t uuid, parent;
	unsigned gen;
	char *name;
};

/*
 * The interned ids of a schema's names in the current file: its name, its
 * category and its fields' annotation names, so that an event of a type
 * seen before costs no hashing nor comparing of names.  A direct-mapped
 * cache by the schema's address (the reader keeps a schema in place until
 * it is closed); gen 0 or another file's: not valid.
 */
#define SCACHE 256u
/* Room for the largest TrackEvent of a template: the head, track and name
 * copied whole, per field its annotation's tag, length (a string's up to
 * 3 bytes), header copied whole and a 10-byte varint, and the payload. */
#define TE_ROOM(nf, len) (64 + 32u * (nf) + (len))
struct scache {
	const struct rlog_schema *s;
	uint32_t seq;             /* the sequence whose names these are */
	unsigned gen;
	uint64_t name_iid, cat_iid;
	uint64_t ann_iid[RLOG_SCHEMA_MAX_FIELDS];
	/*
	 * Its TrackEvent's template (an event's instant or a span's begin):
	 * the constant bytes, category and type before the track, the name
	 * after it, and per field its annotation's bytes after the length
	 * (the name's iid, the value's tag).  te_fill() writes an event from
	 * them, its thread's track and the values taken straight from the
	 * payload: no per-event struct, lookup or nested length.  fast: every
	 * field is a number or a string (bytes go out as hex, the general
	 * way) and the schema is not a counter's.
	 */
	bool fast;
	uint8_t pre_len, nf;
	uint16_t fixed;           /* the payload's fixed part (te_body) */
	char pre[32];             /* category, type, name: up to 3 + 11 + 11 bytes */
	uint8_t ftype[RLOG_SCHEMA_MAX_FIELDS];
	uint8_t alen[RLOG_SCHEMA_MAX_FIELDS];
	/* A field's annotation: its tag, a byte for its length (the value's
	 * size added), the name's iid and the value's tag. */
	char ann[RLOG_SCHEMA_MAX_FIELDS][16];
	/*
	 * A counter schema's TrackEvent (schema_counter_out) on the counter
	 * tracks of process cpid in file cgen: the type and first track, and
	 * per field the bytes before its value (its extra track, the value's
	 * tag).  Only for a schema of numbers alone (csize bytes of payload).
	 */
	const struct rlog_schema *cs;
	unsigned cgen;
	uint32_t cpid;
	uint16_t csize;
	uint8_t chead_len, cnf;
	uint8_t ctype[RLOG_SCHEMA_MAX_FIELDS];
	char chead[16];
	uint8_t cplen[RLOG_SCHEMA_MAX_FIELDS];
	char cpre[RLOG_SCHEMA_MAX_FIELDS][16];
};

struct pf {
	struct rlog_reader *r;
	const struct rlog_reader_info *info;
	int fd;
	const struct rlog__perfetto_opts *opt;
	struct rlog__convert_stats *st;
	int err;
	struct rlog__buf out, te, in, tmp, fix; /* fix: put_str's */
	uint64_t file_bytes;      /* written to the current file */
	unsigned gen;             /* the current file, from 1 */
	/* Raised whenever a template (struct scache), a file or a thread's
	 * description changes: what run_template found true of a schema's
	 * template at an epoch still holds while it is the same. */
	uint64_t epoch;
	bool emit;                /* the current event is in the window */
	bool started;             /* an event of the window was written to this file */
	int64_t file_first_ns;
	uint64_t last_ts;         /* the latest timestamp given (ts_of) */
	struct seq seq0;          /* the file's own sequence */
	struct seq *cur;          /* the sequence of the event being written */
	uint64_t next_uuid;
	uint64_t sys_uuid;        /* the track of pid 0 (the daemon and the kernel) */
	unsigned sys_gen;
	struct thread *th;
	size_t nth, th_cap;
	struct rlog__convert_last last; /* the previous event's thread */
	struct rlog__map th_map;
	struct process *pr;
	size_t npr, pr_cap;
	struct rlog__map pr_map;
	struct ctrack *ct;
	size_t nct, ct_cap;
	struct rlog__map ct_map;  /* COUNTER records: pid << 32 | counter id */
	struct rlog__map sct_map; /* schema'd counters: pid << 32 | id << 8 | field */
	uint64_t file_events, file_loss_records, file_events_lost;
	struct cpu_bundle *cpu;   /* the CPUs' bundles being filled */
	size_t ncpu, cpu_cap;
	struct rlog__buf ptree;   /* a ProcessTree being filled (the rundown's records) */
	uint64_t ptree_ts;
	struct rlog_value vals[RLOG_SCHEMA_MAX_FIELDS];
	struct scache *scache;    /* SCACHE entries */
	struct rlog_event batch[BATCH]; /* the reader's latest batch */
	struct rlog__perfetto_host *host; /* one host of several, or NULL */
	/* The output's writer thread (writer.h), started with the first full
	 * buffer; NULL: none (yet), the writes in line. */
	struct rlog__writer *w;
	bool no_writer;           /* it could not be started */
	uint64_t in_place, in_place_long; /* run_fast's packets (opts, for tests) */
};

/* Schema s's cache entry on the current sequence. */
static inline struct scache *scache_of(const struct pf *c, const struct rlog_schema *s)
{
	/* The pointer's bits mixed (Fibonacci hashing): schemas an allocator
	 * places a multiple of SCACHE x 16 bytes apart (ASan's does) must
	 * not share a slot. */
	uint64_t h = ((uint64_t)(uintptr_t)s ^ c->cur->id) * UINT64_C(0x9e3779b97f4a7c15);
	return &c->scache[(h >> 40) % SCACHE];
}

/* ------------------------------------------------------------------ */
/* Strings                                                             */

/* A string field, valid UTF-8 as protobuf's string requires: each byte
 * that does not start a valid sequence becomes U+FFFD. */
static void put_str(struct pf *c, struct rlog__buf *b, unsigned field, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0;
	uint32_t cp;
	while (i < n && s[i] < 0x80)
		i++;
	while (i < n) {
		unsigned k = rlog__utf8_len(s + i, n - i, &cp);
		if (k == 0)
			break;
		i += k;
	}
	if (i == n) {
		pb_bytes(b, field, p, n);
		return;
	}
	c->fix.len = 0;
	for (i = 0; i < n;) {
		unsigned k = rlog__utf8_len(s + i, n - i, &cp);
		if (k == 0) {
			rlog__buf_lit(&c->fix, "\xef\xbf\xbd");
			i++;
		} else {
			rlog__buf_put(&c->fix, s + i, k);
			i += k;
		}
	}
	pb_bytes(b, field, c->fix.p, c->fix.len);
}

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211u;
	return h;
}

/*
 * The iid of name s (n bytes, no NUL in it): an existing one, or a new
 * one whose entry goes into the packet's InternedData (c->in).  Returns
 * 0 when out of memory.
 */
static uint64_t intern(struct pf *c, struct interner *t, const char *s, size_t n)
{
	uint64_t key = hash_str(s, n);
	for (;; key++) {
		uint32_t i = rlog__map_get(&t->map, key);
		if (i == RLOG__MAP_NONE)
			break;
		const char *e = t->text.p + t->off[i];
		if (strncmp(e, s, n) == 0 && e[n] == '\0')
			return (uint64_t)i + 1;
	}
	if (rlog__vec_room(&t->off, t->n, &t->cap, sizeof(*t->off), 64) < 0 ||
	    rlog__map_put(&t->map, key, (uint32_t)t->n) < 0)
		return 0;
	t->off[t->n] = t->text.len;
	rlog__buf_put(&t->text, s, n);
	rlog__buf_char(&t->text, '\0');
	if (t->text.oom)
		return 0;
	uint64_t iid = ++t->n;
	size_t at = pb_open(&c->in, t->field);
	pb_uint(&c->in, IN_IID, iid);
	put_str(c, &c->in, IN_NAME, s, n);
	pb_close(&c->in, at);
	return iid;
}

static void interner_reset(struct interner *t)
{
	rlog__map_clear(&t->map);
	t->text.len = 0;
	t->n = 0;
}

static void interner_free(struct interner *t)
{
	rlog__map_free(&t->map);
	free(t->text.p);
	free(t->off);
}

/* ------------------------------------------------------------------ */
/* Packets                                                             */

/* Hands the output to the writer (a full buffer starts it), or writes it. */
static int flush_out(struct pf *c)
{
	size_t n = c->out.len;
	if (c->out.oom)
		c->err = c->err ? c->err : -ENOMEM;
	if (c->err == 0 && !c->w && !c->no_writer && n >= OUT_FLUSH)
		c->no_writer = !(c->w = rlog__writer_new(OUT_FLUSH + 65536));
	if (c->err == 0)
		c->err = c->w ? rlog__writer_hand(c->w, &c->out, c->fd) : rlog__buf_write(&c->out, c->fd);
	if (c->err == 0) {
		c->file_bytes += n;
		if (c->st)
			c->st->bytes_written += n;
	}
	c->out.len = 0;
	return c->err;
}

/* flush_out, and the writer done with everything (before the file's
 * descriptor changes, or the conversion returns). */
static int flush_all(struct pf *c)
{
	int rc = flush_out(c);
	if (rc == 0 && c->w)
		rc = c->err = rlog__writer_wait(c->w);
	return rc;
}

static int seq_header(struct pf *c, struct seq *q, uint64_t x);

/*
 * One TracePacket on sequence q (its first packet in the file first): the
 * timestamp (ts_set), the sequence, its flags, the names interned for it
 * (c->in, then emptied: a thread's sequence only) and body as field
 * `field`.
 */
static int packet(struct pf *c, struct seq *q, bool ts_set, uint64_t ts, unsigned field,
		  const struct rlog__buf *body)
{
	struct rlog__buf *b = &c->out;
	if (q->fresh) {
		int rc = seq_header(c, q, ts_set ? ts : c->last_ts);
		if (rc < 0)
			return rc;
	}
	/* Its length known before it is written (every part is), so that
	 * it goes out in one pass with one check for room.  The flags are a
	 * 1-byte varint, their tag and the sequence id's too. */
	const struct rlog__buf *in = q != &c->seq0 ? &c->in : NULL;
	size_t in_len = in ? in->len : 0;
	uint64_t dt = ts - q->prev_ts;
	size_t n = (ts_set ? 1 + pb_varint_size(dt) : 0) + 3 + pb_varint_size(q->id) +
		   (in_len ? 1 + pb_varint_size(in_len) + in_len : 0) +
		   pb_varint_size((uint64_t)field << 3 | PB_LEN) + pb_varint_size(body->len) + body->len;
	if (!rlog__buf_need(b, 1 + 10 + n))
		return -ENOMEM;
	char *p = b->p + b->len, *p0 = p;
	*p++ = (char)(TRACE_PACKET << 3 | PB_LEN);
	p += pb_varint_at(p, n);
	if (ts_set) {
		*p++ = (char)(TP_TIMESTAMP << 3 | PB_VARINT);
		p += pb_varint_at(p, dt);
		q->prev_ts = ts;
	}
	*p++ = (char)(TP_SEQ_ID << 3 | PB_VARINT);
	p += pb_varint_at(p, q->id);
	*p++ = (char)(TP_SEQ_FLAGS << 3 | PB_VARINT);
	*p++ = (char)SEQ_NEEDS;
	if (in_len) {
		*p++ = (char)(TP_INTERNED << 3 | PB_LEN);
		p += pb_varint_at(p, c->in.len);
		memcpy(p, c->in.p, c->in.len);
		p += c->in.len;
		c->in.len = 0;
	}
	p += pb_varint_at(p, (uint64_t)field << 3 | PB_LEN);
	p += pb_varint_at(p, body->len);
	memcpy(p, body->p, body->len);
	p += body->len;
	b->len += (size_t)(p - p0);
	if (c->st)
		c->st->packets++;
	if (b->len >= OUT_FLUSH)
		return flush_out(c);
	return b->oom || body->oom || c->in.oom ? -ENOMEM : 0;
}

/*
 * The first packet of sequence q in a file: its state cleared, the clock
 * snapshot, the defaults.  x is the session clock's value at the snapshot,
 * which the sequence's first timestamp counts from: clock 64 is
 * incremental (each packet's timestamp the nanoseconds since the previous
 * one's on its sequence), so that a timestamp costs a byte or two, not
 * nine.  A sequence-scoped clock (64 to 127): each sequence has its own
 * snapshot.
 */
static int seq_header(struct pf *c, struct seq *q, uint64_t x)
{
	struct rlog__buf *b = &c->out;
	int64_t since = (int64_t)(x - c->info->sync_monotonic_ns);
	size_t at = pb_open(b, TRACE_PACKET);
	pb_uint(b, TP_SEQ_ID, q->id);
	pb_uint(b, TP_SEQ_FLAGS, SEQ_CLEARED);
	size_t cs = pb_open(b, TP_CLOCK_SNAPSHOT);
	/* The session clock is CLOCK_MONOTONIC_RAW's nanoseconds (the LOG_MARKER's
	 * sync pair, docs/FORMAT.md): ringlog's time 0 is sync_monotonic_ns.
	 * BOOTTIME, Perfetto's default trace clock, is taken as equal to it: a
	 * log file does not record it (they differ by the time the machine was
	 * suspended since boot). */
	static const unsigned ids[] = { CLOCK_SESSION, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW,
					CLOCK_REALTIME };
	uint64_t real = c->info->sync_realtime_ns + (uint64_t)since;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		/* One host of several: the trace clock is the merged timeline,
		 * CLOCK_REALTIME, and BOOTTIME is given its value; each host's
		 * own monotonic clocks are left out (Perfetto knows one clock of
		 * an id per trace, and theirs are unrelated). */
		if (c->host && ids[i] == CLOCK_MONOTONIC_RAW)
			continue;
		size_t k = pb_open(b, CS_CLOCKS);
		pb_uint(b, CLK_ID, ids[i]);
		pb_uint(b, CLK_TIMESTAMP,
			ids[i] == CLOCK_REALTIME || (c->host && ids[i] == CLOCK_BOOTTIME) ? real : x);
		if (ids[i] == CLOCK_SESSION)
			pb_uint(b, CLK_INCREMENTAL, 1);
		pb_close(b, k);
	}
	pb_uint(b, CS_PRIMARY, CLOCK_BOOTTIME);
	pb_close(b, cs);
	size_t d = pb_open(b, TP_DEFAULTS);
	pb_uint(b, TPD_CLOCK_ID, CLOCK_SESSION);
	if (q->track) {
		size_t e = pb_open(b, TPD_TRACK_EVENT);
		pb_uint(b, TED_TRACK, q->track);
		pb_close(b, e);
	}
	pb_close(b, d);
	pb_close(b, at);
	q->prev_ts = x;
	q->fresh = false;
	if (c->st)
		c->st->packets++;
	return b->oom ? -ENOMEM : 0;
}

/* The first packet of a file: its own sequence's. */
static int file_header(struct pf *c, uint64_t x)
{
	c->seq0.gen = c->gen;
	return seq_header(c, &c->seq0, x);
}

/* Thread t's events go on its sequence from now on: in a new file, its
 * names are interned anew and its first packet will clear its state. */
static void use_seq(struct pf *c, struct thread *t)
{
	struct seq *q = t->seq;
	c->cur = q;
	if (q->gen == c->gen)
		return;
	interner_reset(&q->names);
	interner_reset(&q->cats);
	interner_reset(&q->anns);
	q->gen = c->gen;
	q->fresh = true;
}

/* ns since the start as the session clock, in [0, 2^64 - 1] (a crafted
 * file's times and sync_monotonic_ns may add up past either end). */
static uint64_t mono_of(const struct pf *c, int64_t ns)
{
	uint64_t m = c->info->sync_monotonic_ns;
	if (ns >= 0)
		return (uint64_t)ns > UINT64_MAX - m ? UINT64_MAX : m + (uint64_t)ns;
	uint64_t back = 0u - (uint64_t)ns;
	return back > m ? 0 : m - back;
}

/* The packet's timestamp: mono_of(ns), never before the previous
 * packet's (the reader's order is by time; a record it could not place
 * exactly keeps the sequence monotonic). */
static uint64_t ts_of(struct pf *c, int64_t ns)
{
	uint64_t ts = mono_of(c, ns);
	if (ts < c->last_ts) {
		ts = c->last_ts;
		if (c->st)
			c->st->clamped++;
	}
	c->last_ts = ts;
	return ts;
}

/* ------------------------------------------------------------------ */
/* Tracks                                                              */

static int descriptor_out(struct pf *c)
{
	int rc = packet(c, &c->seq0, false, 0, TP_TRACK_DESC, &c->tmp);
	c->tmp.len = 0;
	return rc;
}

/* The track of pid 0's records (the daemon's and the kernel's): a plain
 * track, not a process (pid 0 is the kernel's idle task to Perfetto). */
static int sys_track(struct pf *c, uint64_t *uuid)
{
	if (c->sys_uuid == 0)
		c->sys_uuid = ++c->next_uuid;
	*uuid = c->sys_uuid;
	if (c->sys_gen == c->gen)
		return 0;
	c->sys_gen = c->gen;
	c->tmp.len = 0;
	pb_uint(&c->tmp, TD_UUID, c->sys_uuid);
	if (c->host) {
		char name[160];
		int n = snprintf(name, sizeof(name), "%s: system (pid 0)", c->host->name);
		put_str(c, &c->tmp, TD_NAME, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1);
	} else {
		pb_bytes(&c->tmp, TD_NAME, "system (pid 0)", 14);
	}
	return descriptor_out(c);
}

/* A pid or tid as the descriptors give it: one host's of several are its
 * own (RLOG__PERFETTO_MAX_HOSTS). */
static uint64_t host_id(const struct pf *c, uint32_t id)
{
	return c->host ? RLOG__CHROME_HOST_IDS * (c->host->index + 1) + id : id;
}

static struct process *process_of(struct pf *c, uint32_t pid)
{
	bool added;
	long i = rlog__convert_entry(&c->pr, &c->npr, &c->pr_cap, sizeof(*c->pr), &c->pr_map, pid,
				     &added);
	if (i < 0)
		return NULL;
	struct process *p = &c->pr[i];
	if (added) {
		p->pid = pid;
		p->uuid = ++c->next_uuid;
	}
	return p;
}

/* The process track of pid (described first), or pid 0's track. */
static int process_track(struct pf *c, uint32_t pid, uint64_t *uuid)
{
	if (pid == 0)
		return sys_track(c, uuid);
	struct process *p = process_of(c, pid);
	if (!p)
		return -ENOMEM;
	*uuid = p->uuid;
	if (p->gen == c->gen)
		return 0;
	p->gen = c->gen;
	const char *n = rlog_reader_process_name(c->r, pid);
	if (!n)
		n = p->name;
	c->tmp.len = 0;
	pb_uint(&c->tmp, TD_UUID, p->uuid);
	size_t at = pb_open(&c->tmp, TD_PROCESS);
	pb_uint(&c->tmp, PD_PID, host_id(c, pid));
	if (c->host) {
		/* "HOST: name", "HOST: pid N" unnamed: as the Chrome output, so
		 * that the UI lists a host's processes together. */
		char pn[32];
		if (!n) {
			snprintf(pn, sizeof(pn), "pid %" PRIu32, pid);
			n = pn;
		}
		size_t fl;
		char *full = rlog__convert_host_name(c->host->name, n, strlen(n), &fl);
		if (!full)
			return -ENOMEM;
		put_str(c, &c->tmp, PD_NAME, full, fl);
		free(full);
	} else if (n) {
		put_str(c, &c->tmp, PD_NAME, n, strlen(n));
	}
	pb_close(&c->tmp, at);
	return descriptor_out(c);
}

static struct thread *thread_of(struct pf *c, uint32_t pid, uint32_t tid)
{
	bool added;
	long i = rlog__convert_entry_last(&c->th, &c->nth, &c->th_cap, sizeof(*c->th), &c->th_map,
					  (uint64_t)pid << 32 | tid, &added, &c->last);
	if (i < 0)
		return NULL;
	struct thread *t = &c->th[i];
	if (added) {
		t->pid = pid;
		t->tid = tid;
		t->uuid = ++c->next_uuid;
		t->end[0] = (char)(TE_TYPE << 3 | PB_VARINT);
		t->end[1] = (char)SLICE_END;
		t->end_len = 2;
		if (!(t->seq = calloc(1, sizeof(*t->seq))))
			return NULL;
		t->seq->id = c->seq0.id + 1 + (uint32_t)i;
		char *m = t->mid;
		*m++ = (char)(TP_SEQ_ID << 3 | PB_VARINT);
		m += pb_varint_at(m, t->seq->id);
		*m++ = (char)(TP_SEQ_FLAGS << 3 | PB_VARINT);
		*m++ = (char)SEQ_NEEDS;
		*m++ = (char)(TP_TRACK_EVENT << 3 | PB_LEN);
		t->mid_len = (uint8_t)(m - t->mid);
		t->seq->track = t->uuid;
		t->seq->names.field = ID_NAMES;
		t->seq->cats.field = ID_CATEGORIES;
		t->seq->anns.field = ID_ANNOTATION_NAMES;
	}
	if (!t->seq)
		return NULL;
	return t;
}

/* The thread's track, described first (with its process's). */
static int thread_track(struct pf *c, struct thread *t)
{
	if (t->gen == c->gen)
		return 0;
	uint64_t parent;
	int rc = process_track(c, t->pid, &parent);
	if (rc < 0)
		return rc;
	t->gen = c->gen;
	c->epoch++;
	c->tmp.len = 0;
	pb_uint(&c->tmp, TD_UUID, t->uuid);
	pb_uint(&c->tmp, TD_PARENT, parent);
	if (t->pid == 0) {
		/* A stream of pid 0 is not a thread: for system blocks, tid is
		 * the CPU (docs/FORMAT.md, "System events"). */
		char name[32];
		int n = snprintf(name, sizeof(name), "pid 0 tid %" PRIu32, t->tid);
		pb_bytes(&c->tmp, TD_NAME, name, (size_t)n);
		return descriptor_out(c);
	}
	const char *n = rlog_reader_thread_name(c->r, t->pid, t->tid);
	if (!n)
		n = t->name;
	size_t at = pb_open(&c->tmp, TD_THREAD);
	pb_uint(&c->tmp, THD_PID, host_id(c, t->pid));
	pb_uint(&c->tmp, THD_TID, host_id(c, t->tid));
	if (n)
		put_str(c, &c->tmp, THD_NAME, n, strlen(n));
	pb_close(&c->tmp, at);
	return descriptor_out(c);
}

/* The thread's "lost" track, a child of its thread track. */
static int lost_track(struct pf *c, struct thread *t)
{
	int rc = thread_track(c, t);
	if (rc < 0 || t->lost_gen == c->gen)
		return rc;
	if (t->lost_uuid == 0)
		t->lost_uuid = ++c->next_uuid;
	t->lost_gen = c->gen;
	c->tmp.len = 0;
	pb_uint(&c->tmp, TD_UUID, t->lost_uuid);
	pb_uint(&c->tmp, TD_PARENT, t->uuid);
	pb_bytes(&c->tmp, TD_NAME, "lost", 4);
	return descriptor_out(c);
}

/* The uuid of the counter track under map m's key if it is described in
 * this file (the common case, before its name is made), else 0. */
static uint64_t counter_known(const struct pf *c, const struct rlog__map *m, uint64_t key)
{
	uint32_t i = rlog__map_get(m, key);
	return i != RLOG__MAP_NONE && c->ct[i].gen == c->gen ? c->ct[i].uuid : 0;
}

/* The counter track under map m's key (created with name n, parent pid's
 * track), described first; *uuid receives it. */
static int counter_track(struct pf *c, struct rlog__map *m, uint64_t key, uint32_t pid,
			 const char *n, size_t nlen, uint64_t *uuid)
{
	bool added;
	long i = rlog__convert_entry(&c->ct, &c->nct, &c->ct_cap, sizeof(*c->ct), m, key, &added);
	if (i < 0)
		return (int)i;
	struct ctrack *k = &c->ct[i];
	if (added) {
		k->uuid = ++c->next_uuid;
		if (!(k->name = strndup(n, nlen)))
			return -ENOMEM;
	}
	*uuid = k->uuid;
	if (k->gen == c->gen)
		return 0;
	int rc = process_track(c, pid, &k->parent);
	if (rc < 0)
		return rc;
	k->gen = c->gen;
	c->tmp.len = 0;
	pb_uint(&c->tmp, TD_UUID, k->uuid);
	pb_uint(&c->tmp, TD_PARENT, k->parent);
	put_str(c, &c->tmp, TD_NAME, k->name, strlen(k->name));
	size_t at = pb_open(&c->tmp, TD_COUNTER);
	pb_close(&c->tmp, at);
	return descriptor_out(c);
}

/* ------------------------------------------------------------------ */
/* Track events                                                        */

/* Starts c->te as a TrackEvent of type on track with the interned name
 * and category cat_iid (0: none). */
static void te_start_iid(struct pf *c, unsigned type, uint64_t track, uint64_t name_iid,
			 uint64_t cat_iid)
{
	struct rlog__buf *b = &c->te;
	b->len = 0;
	if (cat_iid)
		pb_uint(b, TE_CATEGORY_IIDS, cat_iid);
	pb_uint(b, TE_TYPE, type);
	if (track != c->cur->track)
		pb_uint(b, TE_TRACK, track);
	pb_uint(b, TE_NAME_IID, name_iid);
}

/* Starts c->te as a TrackEvent of type on track with name and category
 * (interned; NULL: none). */
static int te_start(struct pf *c, unsigned type, uint64_t track, const char *name, size_t nlen,
		    const char *cat)
{
	struct rlog__buf *b = &c->te;
	b->len = 0;
	if (cat) {
		uint64_t iid = intern(c, &c->cur->cats, cat, strlen(cat));
		if (!iid)
			return -ENOMEM;
		pb_uint(b, TE_CATEGORY_IIDS, iid);
	}
	pb_uint(b, TE_TYPE, type);
	if (track != c->cur->track)
		pb_uint(b, TE_TRACK, track);
	if (name) {
		uint64_t iid = intern(c, &c->cur->names, name, nlen);
		if (!iid)
			return -ENOMEM;
		pb_uint(b, TE_NAME_IID, iid);
	}
	return 0;
}

/* Opens a debug annotation of interned name iid; pb_close() it. */
static size_t ann_open_iid(struct pf *c, uint64_t iid)
{
	size_t at = pb_open(&c->te, TE_ANNOTATIONS);
	pb_uint(&c->te, DA_NAME_IID, iid);
	if (!iid)
		c->te.oom = true;
	return at;
}

/* Opens a debug annotation named name (interned); pb_close() it. */
static size_t ann_open(struct pf *c, const char *name)
{
	return ann_open_iid(c, intern(c, &c->cur->anns, name, strlen(name)));
}

static void ann_uint(struct pf *c, const char *name, uint64_t v)
{
	size_t at = ann_open(c, name);
	pb_uint(&c->te, DA_UINT, v);
	pb_close(&c->te, at);
}

static void ann_int(struct pf *c, const char *name, int64_t v)
{
	size_t at = ann_open(c, name);
	pb_uint(&c->te, DA_INT, (uint64_t)v);
	pb_close(&c->te, at);
}

static void ann_bool(struct pf *c, const char *name, bool v)
{
	size_t at = ann_open(c, name);
	pb_uint(&c->te, DA_BOOL, v);
	pb_close(&c->te, at);
}

static void ann_str(struct pf *c, const char *name, const void *p, size_t n)
{
	size_t at = ann_open(c, name);
	put_str(c, &c->te, DA_STRING, p, n);
	pb_close(&c->te, at);
}

/* n bytes at p as a hex string_value (in an open annotation). */
static void hex_value(struct pf *c, const void *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *s = p;
	pb_tag(&c->te, DA_STRING, PB_LEN);
	pb_varint(&c->te, 2 * n);
	if (rlog__buf_need(&c->te, 2 * n)) {
		char *d = c->te.p + c->te.len;
		for (size_t i = 0; i < n; i++) {
			d[2 * i] = digits[s[i] >> 4];
			d[2 * i + 1] = digits[s[i] & 15];
		}
		c->te.len += 2 * n;
	}
}

static void ann_hex(struct pf *c, const char *name, const void *p, size_t n)
{
	size_t at = ann_open(c, name);
	hex_value(c, p, n);
	pb_close(&c->te, at);
}

/* A decoded value, by its type: ints, doubles, strings; bytes as hex;
 * its name interned as iid. */
static void ann_value_iid(struct pf *c, uint64_t iid, const struct rlog_value *v)
{
	unsigned type = v->field->type;
	if (type >= RLOG_FIELD_U8 && type <= RLOG_FIELD_F64 && iid &&
	    rlog__buf_need(&c->te, 2 + 11 + 11)) {
		/* A number: the annotation's length is known before it is
		 * written, so it goes straight in (at most 24 bytes). */
		bool dbl = type == RLOG_FIELD_F64;
		unsigned vt = dbl ? DA_DOUBLE : type <= RLOG_FIELD_U64 ? DA_UINT : DA_INT;
		unsigned n = 1 + pb_varint_size(iid) + 1 + (dbl ? 8 : pb_varint_size(v->v.u));
		char *p = c->te.p + c->te.len, *p0 = p;
		*p++ = (char)(TE_ANNOTATIONS << 3 | PB_LEN);
		*p++ = (char)n;
		*p++ = (char)(DA_NAME_IID << 3 | PB_VARINT);
		p += pb_varint_at(p, iid);
		*p++ = (char)(vt << 3 | (dbl ? PB_FIXED64 : PB_VARINT));
		if (dbl) {
			memcpy(p, &v->v.f, 8); /* little endian, as the wire */
			p += 8;
		} else {
			p += pb_varint_at(p, v->v.u);
		}
		c->te.len += (size_t)(p - p0);
		return;
	}
	size_t at = ann_open_iid(c, iid);
	switch (v->field->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
		pb_uint(&c->te, DA_UINT, v->v.u);
		break;
	case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
		pb_uint(&c->te, DA_INT, (uint64_t)v->v.i);
		break;
	case RLOG_FIELD_F64:
		pb_double(&c->te, DA_DOUBLE, v->v.f);
		break;
	case RLOG_FIELD_BYTES:
		hex_value(c, v->bytes, v->len);
		break;
	default: /* STRING */
		put_str(c, &c->te, DA_STRING, v->bytes, v->len);
		break;
	}
	pb_close(&c->te, at);
}

/* The same, named name. */
static void ann_value(struct pf *c, const char *name, const struct rlog_value *v)
{
	ann_value_iid(c, intern(c, &c->cur->anns, name, strlen(name)), v);
}

static int te_out(struct pf *c, int64_t ns)
{
	if (c->st)
		c->st->events_written++;
	c->file_events++;
	struct seq *q = c->cur;
	if (c->in.len || q->fresh)
		return packet(c, q, true, ts_of(c, ns), TP_TRACK_EVENT, &c->te);
	/* packet()'s bytes for a TrackEvent with no names to intern, the
	 * common packet. */
	uint64_t ts = ts_of(c, ns), dt = ts - q->prev_ts;
	size_t bl = c->te.len;
	size_t n = 1 + pb_varint_size(dt) + 4 + pb_varint_size(q->id) + pb_varint_size(bl) + bl;
	if (!rlog__buf_need(&c->out, 1 + 10 + n))
		return -ENOMEM;
	char *p = c->out.p + c->out.len, *p0 = p;
	*p++ = (char)(TRACE_PACKET << 3 | PB_LEN);
	p += pb_varint_at(p, n);
	*p++ = (char)(TP_TIMESTAMP << 3 | PB_VARINT);
	p += pb_varint_at(p, dt);
	*p++ = (char)(TP_SEQ_ID << 3 | PB_VARINT);
	p += pb_varint_at(p, q->id);
	*p++ = (char)(TP_SEQ_FLAGS << 3 | PB_VARINT);
	*p++ = (char)SEQ_NEEDS;
	*p++ = (char)(TP_TRACK_EVENT << 3 | PB_LEN);
	p += pb_varint_at(p, bl);
	/* The body, a few dozen bytes: a fixed 64 when both buffers have the
	 * room (c->out keeps 64 KiB past OUT_FLUSH), the bytes past it
	 * written over by the next packet. */
	if (bl <= 64 && c->te.cap >= 64 && c->out.cap - (size_t)(p - c->out.p) >= 64)
		memcpy(p, c->te.p, 64);
	else
		memcpy(p, c->te.p, bl);
	p += bl;
	c->out.len += (size_t)(p - p0);
	q->prev_ts = ts;
	if (c->st)
		c->st->packets++;
	if (c->out.len >= OUT_FLUSH)
		return flush_out(c);
	return c->te.oom ? -ENOMEM : 0;
}

static void cat_text(char *buf, const struct rlog_schema *s)
{
	char *e = buf + 4;
	*--e = '\0';
	char *p = rlog__convert_u64_text(e, s->category);
	memmove(buf, p, (size_t)(e - p) + 1);
}

/* te_body is inlined into run_fast, its caller per event: called, it
 * cost a dozen instructions an event in saving and restoring registers
 * (callgrind).  A GCC and Clang attribute, as merge.c's MERGE_INLINE. */
#if defined(__GNUC__)
#define TE_INLINE __attribute__((always_inline)) inline
#else
#define TE_INLINE inline
#endif

/* Schema s's template in its cache entry e, its names' ids set. */
static void template_make(struct scache *e, const struct rlog_schema *s)
{
	char *p = e->pre;
	unsigned fixed = 0;
	e->fast = s->kind != RLOG_KIND_COUNTER;
	e->nf = s->field_count;
	*p++ = (char)(TE_CATEGORY_IIDS << 3 | PB_VARINT);
	p += pb_varint_at(p, e->cat_iid);
	*p++ = (char)(TE_TYPE << 3 | PB_VARINT);
	*p++ = (char)(s->kind == RLOG_KIND_SPAN ? SLICE_BEGIN : INSTANT);
	*p++ = (char)(TE_NAME_IID << 3 | PB_VARINT);
	p += pb_varint_at(p, e->name_iid);
	e->pre_len = (uint8_t)(p - e->pre);
	for (unsigned i = 0; i < s->field_count; i++) {
		unsigned type = s->fields[i].type, vt;
		unsigned wire = PB_VARINT;
		if (type >= RLOG_FIELD_U8 && type <= RLOG_FIELD_U64) {
			vt = DA_UINT;
		} else if (type >= RLOG_FIELD_I8 && type <= RLOG_FIELD_I64) {
			vt = DA_INT;
		} else if (type == RLOG_FIELD_F64) {
			vt = DA_DOUBLE;
			wire = PB_FIXED64;
		} else if (type == RLOG_FIELD_STRING) {
			vt = DA_STRING;
			wire = PB_LEN;
		} else {
			e->fast = false;
			return;
		}
		e->ftype[i] = (uint8_t)type;
		fixed += type == RLOG_FIELD_STRING ? 2u : rlog__num_size(type);
		p = e->ann[i];
		*p++ = (char)(TE_ANNOTATIONS << 3 | PB_LEN);
		*p++ = 0;
		*p++ = (char)(DA_NAME_IID << 3 | PB_VARINT);
		p += pb_varint_at(p, e->ann_iid[i]);
		*p++ = (char)(vt << 3 | wire);
		e->alen[i] = (uint8_t)(p - e->ann[i]);
	}
	e->fixed = (uint16_t)fixed;
}

/*
 * c->te as schema s's TrackEvent on its thread's track (its sequence's
 * default) from its template e,
 * the values read from the payload pl (len bytes) as rlog__values_decode
 * reads them.  Returns 1, or 0 when the event needs the general way: a
 * payload not of the schema's shape (it goes out raw), a string that is
 * not ASCII (put_str's check), which write what this would.
 */
static TE_INLINE char *te_body(const struct scache *restrict e, const uint8_t *restrict pl,
			       size_t len, char *restrict p);

static int te_fill(struct pf *c, const struct scache *e, const uint8_t *pl, size_t len)
{
	/* Room for the largest (TE_ROOM). */
	c->te.len = 0;
	if (!rlog__buf_need(&c->te, TE_ROOM(e->nf, len)))
		return 0;
	char *p = te_body(e, pl, len, c->te.p);
	if (!p)
		return 0;
	c->te.len = (size_t)(p - c->te.p);
	return 1;
}

/*
 * The number field of type t (a constant where the callers' switches
 * inline it: one load of its own size, no second switch) at *q, read as
 * rlog__values_decode reads it (rlog__num_load); *q advanced past it.
 */
static inline uint64_t num_take(const uint8_t **q, unsigned t)
{
	uint64_t v = rlog__num_load(*q, t);
	*q += rlog__num_size(t);
	return v;
}

/* The value of a number field of type t (U8 to I64) at *q, as a case per
 * type: the switch te_body and counter_body share. */
#define NUM_CASES(q, v)                                                         \
	case RLOG_FIELD_U8: v = num_take(&q, RLOG_FIELD_U8); break;             \
	case RLOG_FIELD_U16: v = num_take(&q, RLOG_FIELD_U16); break;           \
	case RLOG_FIELD_U32: v = num_take(&q, RLOG_FIELD_U32); break;           \
	case RLOG_FIELD_U64: v = num_take(&q, RLOG_FIELD_U64); break;           \
	case RLOG_FIELD_I8: v = num_take(&q, RLOG_FIELD_I8); break;             \
	case RLOG_FIELD_I16: v = num_take(&q, RLOG_FIELD_I16); break;           \
	case RLOG_FIELD_I32: v = num_take(&q, RLOG_FIELD_I32); break;           \
	case RLOG_FIELD_I64: v = num_take(&q, RLOG_FIELD_I64); break

/*
 * te_fill's TrackEvent at p (TE_ROOM bytes of room): returns its end, or
 * NULL for the general way.  The template, the payload and the output do
 * not overlap (restrict: the compiler need not read the template again
 * after each byte written).
 *
 * The payload's shape is checked as a whole, not field by field: its
 * fixed parts (e->fixed bytes: the numbers, each string's length) first,
 * then each string's text against what is left over (slack), and at the
 * end nothing left over.  That accepts exactly the payloads
 * rlog__values_decode accepts (len == fixed + the strings' lengths, each
 * read where the fields before it end), and every read stays within len:
 * before field i, fixed + the texts so far <= len, so the fixed parts
 * from field i on fit after them.
 */
static TE_INLINE char *te_body(const struct scache *restrict e, const uint8_t *restrict pl,
			       size_t len, char *restrict p)
{
	memcpy(p, e->pre, sizeof(e->pre));
	p += e->pre_len;
	if (len < e->fixed)
		return NULL;
	size_t slack = len - e->fixed;
	const uint8_t *q = pl;
	for (unsigned i = 0; i < e->nf; i++) {
		unsigned al = e->alen[i];
		uint64_t v;
		/* The annotation's bytes copied whole, its length set after. */
		memcpy(p, e->ann[i], 16);
		switch (e->ftype[i]) {
		NUM_CASES(q, v);
		case RLOG_FIELD_F64:
			p[1] = (char)(al - 2u + 8u);
			p += al;
			memcpy(p, q, 8); /* little endian, as the wire */
			p += 8;
			q += 8;
			continue;
		default: { /* RLOG_FIELD_STRING (template_make's types) */
			uint16_t sl;
			memcpy(&sl, q, 2);
			if (sl > slack)
				return NULL;
			slack -= sl;
			q += 2;
			size_t hl = al - 2u, n = hl + pb_varint_size(sl) + sl;
			if (n < 0x80) {
				p[1] = (char)n;
				p += al;
			} else { /* a length of two bytes or more */
				p++;
				p += pb_varint_at(p, n);
				memcpy(p, e->ann[i] + 2, 14);
				p += hl;
			}
			p += pb_varint_at(p, sl);
			/* Copied 8 bytes at a time, ASCII checked on the way. */
			unsigned k = 0;
			uint64_t hi = 0;
			for (; k + 8 <= sl; k += 8) {
				uint64_t w;
				memcpy(&w, q + k, 8);
				hi |= w;
				memcpy(p + k, &w, 8);
			}
			if (k + 4 <= sl) {
				uint32_t w;
				memcpy(&w, q + k, 4);
				hi |= w;
				memcpy(p + k, &w, 4);
				k += 4;
			}
			for (; k < sl; k++) {
				hi |= q[k];
				p[k] = (char)q[k];
			}
			if (hi & UINT64_C(0x8080808080808080))
				return NULL;
			p += sl;
			q += sl;
			continue;
		}
		}
		/* The value first, its size then known (one pass over it). */
		unsigned vs = pb_varint_at(p + al, v);
		p[1] = (char)(al - 2u + vs);
		p += al + vs;
	}
	return slack ? NULL : p;
}

static void counter_fill(struct pf *c, const struct scache *e, const uint8_t *pl);
static inline char *counter_body(const struct scache *e, const uint8_t *pl, char *p);

/*
 * An event the templates write (the common one): a schema'd event, a
 * span's begin or end or a counter schema's event, timed, on a track
 * already described, of a schema already met in this file, with no names
 * to intern.  Returns 1
 * (written), 0 (the general way writes it) or -ENOMEM.
 */
static int fast_event(struct pf *c, struct thread *t, const struct rlog_schema *s,
		      const struct rlog_event *ev)
{
	const struct scache *e = scache_of(c, s);
	if (!ev->has_time || c->in.len || (ev->pid == 0 && ev->from_daemon))
		return 0;
	if (s->kind == RLOG_KIND_COUNTER) {
		if (e->cs != s || e->cgen != c->gen || e->cpid != ev->pid || ev->length != e->csize ||
		    !rlog__buf_need(&c->te, 16 + 26u * s->field_count))
			return 0;
		c->te.len = 0;
		counter_fill(c, e, ev->payload);
	} else if (e->s != s || e->gen != c->gen || e->seq != c->cur->id || !e->fast ||
		   t->gen != c->gen) {
		return 0;
	} else if (s->kind != RLOG_KIND_SPAN) {
		if (ev->flagged || !te_fill(c, e, ev->payload, ev->length))
			return 0;
	} else if (!ev->flagged) {
		return 0;
	} else if (ev->flag == RLOG_SPAN_BEGIN) {
		if (t->depth == RLOG__SPANS_OPEN ||
		    rlog__vec_room(&t->stack, t->depth, &t->cap, sizeof(*t->stack), 8) < 0 ||
		    !te_fill(c, e, ev->payload, ev->length))
			return 0;
		t->stack[t->depth++] = s;
	} else if (ev->flag == RLOG_SPAN_END && ev->length == 0 && t->depth &&
		   t->stack[t->depth - 1]->id == s->id) {
		/* The innermost span ends: one slice end. */
		t->depth--;
		if (c->st)
			c->st->spans++;
		memcpy(c->te.p, t->end, sizeof(t->end));
		c->te.len = t->end_len;
	} else {
		return 0;
	}
	if (c->st)
		c->st->schema_events++;
	int rc = te_out(c, ev->time_ns);
	return rc < 0 ? rc : 1;
}

/*
 * The interned ids of schema s's names in this file, interned now if they
 * are not yet (in the order te_start and the annotations would intern
 * them: category, name, fields, so that the output is the same).  NULL
 * when out of memory.
 */
static const struct scache *schema_iids(struct pf *c, const struct rlog_schema *s)
{
	struct scache *e = scache_of(c, s);
	if (e->s == s && e->gen == c->gen && e->seq == c->cur->id)
		return e;
	char cat[4];
	cat_text(cat, s);
	e->s = NULL;
	c->epoch++;
	e->cat_iid = intern(c, &c->cur->cats, cat, strlen(cat));
	e->name_iid = intern(c, &c->cur->names, s->name, strlen(s->name));
	if (!e->cat_iid || !e->name_iid)
		return NULL;
	for (unsigned i = 0; i < s->field_count; i++) {
		const char *n = s->fields[i].name;
		if (!(e->ann_iid[i] = intern(c, &c->cur->anns, n, strlen(n))))
			return NULL;
	}
	e->s = s;
	e->gen = c->gen;
	e->seq = c->cur->id;
	template_make(e, s);
	return e;
}

/* Starts c->te as a TrackEvent of type on track named after schema s,
 * with its fields (c->vals) as annotations.  Returns 0 or -ENOMEM. */
static int schema_te(struct pf *c, unsigned type, uint64_t track, const struct rlog_schema *s)
{
	const struct scache *e = schema_iids(c, s);
	if (!e)
		return -ENOMEM;
	te_start_iid(c, type, track, e->name_iid, e->cat_iid);
	for (unsigned i = 0; i < s->field_count; i++)
		ann_value_iid(c, e->ann_iid[i], &c->vals[i]);
	return 0;
}

/* A span's begin, on its thread's track; continued: re-begun at the start
 * of a file or of the window, its fields left in the earlier part. */
static int begin_out(struct pf *c, struct thread *t, const struct rlog_schema *s, int64_t ns,
		     bool continued, bool untimed)
{
	use_seq(c, t);
	int rc = thread_track(c, t);
	if (rc < 0)
		return rc;
	if (!continued) {
		if (schema_te(c, SLICE_BEGIN, t->uuid, s) < 0)
			return -ENOMEM;
	} else {
		char cat[4];
		cat_text(cat, s);
		rc = te_start(c, SLICE_BEGIN, t->uuid, s->name, strlen(s->name), cat);
		if (rc < 0)
			return rc;
		ann_bool(c, "continued", true);
	}
	if (untimed)
		ann_bool(c, "untimed", true);
	return te_out(c, ns);
}

static int end_out(struct pf *c, struct thread *t, int64_t ns)
{
	use_seq(c, t);
	int rc = thread_track(c, t);
	if (rc == 0)
		rc = te_start(c, SLICE_END, t->uuid, NULL, 0, NULL);
	return rc < 0 ? rc : te_out(c, ns);
}

static int span_begin(struct pf *c, struct thread *t, const struct rlog_schema *s,
		      const struct rlog_event *ev)
{
	if (t->depth == RLOG__SPANS_OPEN) {
		/* The outermost open span, no longer tracked (convert.h): a
		 * slice never ended, as at the end of the trace. */
		if (c->st)
			c->st->unmatched_begins++;
		memmove(&t->stack[0], &t->stack[1], --t->depth * sizeof(*t->stack));
	}
	if (rlog__vec_room(&t->stack, t->depth, &t->cap, sizeof(*t->stack), 8) < 0)
		return -ENOMEM;
	t->stack[t->depth++] = s;
	return c->emit ? begin_out(c, t, s, ev->time_ns, false, !ev->has_time) : 0;
}

/*
 * Per thread, an END closes the innermost open BEGIN of the same ID (as
 * in `ringlog dump` and the Chrome output).  Perfetto's slice end closes
 * the innermost slice of the track: the spans opened inside the one that
 * ends, still open, are ended with it and begun again after it, so that
 * each slice Perfetto draws is a span's.
 */
static int span_end(struct pf *c, struct thread *t, const struct rlog_schema *s,
		    const struct rlog_event *ev)
{
	size_t i = t->depth;
	while (i > 0 && t->stack[i - 1]->id != s->id)
		i--;
	if (i == 0) {
		if (c->st)
			c->st->unmatched_ends++;
		if (!c->emit)
			return 0;
		char cat[4];
		cat_text(cat, s);
		int rc = thread_track(c, t);
		if (rc == 0)
			rc = te_start(c, INSTANT, t->uuid, s->name, strlen(s->name), cat);
		if (rc < 0)
			return rc;
		ann_str(c, "span", "end without begin", 17);
		return te_out(c, ev->time_ns);
	}
	if (c->st)
		c->st->spans++;
	int rc = 0;
	if (c->emit) {
		for (size_t k = t->depth; k >= i && rc == 0; k--)
			rc = end_out(c, t, ev->time_ns);
		for (size_t k = i; k < t->depth && rc == 0; k++)
			rc = begin_out(c, t, t->stack[k], ev->time_ns, true, false);
	}
	memmove(&t->stack[i - 1], &t->stack[i], (t->depth - i) * sizeof(*t->stack));
	t->depth--;
	return rc;
}

static int raw_out(struct pf *c, struct thread *t, const struct rlog_event *ev,
		   const struct rlog_schema *s)
{
	char name[300], cat[4];
	size_t n = rlog__convert_event_name(name, sizeof(name), ev, s, false);
	if (c->st) {
		c->st->raw_events++;
		c->st->mismatched += s != NULL;
	}
	if (!c->emit)
		return 0;
	if (s)
		cat_text(cat, s);
	int rc = thread_track(c, t);
	if (rc == 0)
		rc = te_start(c, INSTANT, t->uuid, name, n, s ? cat : "raw");
	if (rc < 0)
		return rc;
	if (s)
		ann_bool(c, "mismatch", true);
	if (ev->flagged)
		ann_uint(c, "flag", ev->flag);
	ann_hex(c, "payload", ev->payload, ev->length);
	int count = rlog_event_raw_count(ev);
	if (ev->id == RLOG_ID_RAW_STRING) {
		ann_str(c, "value", ev->payload, ev->length);
	} else {
		struct rlog_value v;
		char vn[24];
		for (int i = 0; i < count && rlog_event_raw_value(ev, (unsigned)i, &v) == 1; i++) {
			snprintf(vn, sizeof(vn), "values[%d]", i);
			ann_value(c, vn, &v);
		}
	}
	if (!ev->has_time)
		ann_bool(c, "untimed", true);
	return te_out(c, ev->time_ns);
}

/* A DATA_LOSS: an instant on the thread's "lost" track (pid 0's on the
 * system track) with what was lost and when. */
static int loss_out(struct pf *c, struct thread *t, const struct rlog_event *ev,
		    const struct rlog_loss *l)
{
	if (c->st) {
		c->st->loss_records++;
		c->st->events_lost += l->events;
	}
	if (!c->emit)
		return 0;
	c->file_loss_records++;
	c->file_events_lost += l->events;
	const char *cn = rlog__loss_cause_name(l->cause);
	char cbuf[24], name[48];
	if (!cn) {
		snprintf(cbuf, sizeof(cbuf), "unknown(%" PRIu32 ")", l->cause);
		cn = cbuf;
	}
	int n = snprintf(name, sizeof(name), "data_loss: %s", cn);
	int rc = lost_track(c, t);
	if (rc == 0)
		rc = te_start(c, INSTANT, t->lost_uuid, name, (size_t)n, "ringlog");
	if (rc < 0)
		return rc;
	ann_uint(c, "events", l->events);
	ann_uint(c, "bytes", l->bytes);
	ann_str(c, "cause", cn, strlen(cn));
	if (l->fields & RLOG_LOSS_HAS_BLOCKS)
		ann_uint(c, "blocks", l->blocks);
	if (l->fields & RLOG_LOSS_HAS_RANGE) {
		/* The events lost lie after first and at or before last. */
		ann_int(c, "after_ns", rlog_reader_time_ns(c->r, l->first_time));
		ann_int(c, "until_ns", rlog_reader_time_ns(c->r, l->last_time));
	}
	return te_out(c, ev->time_ns);
}

/* A COUNTER record: its absolute value on the counter's track (the value,
 * not the delta: the Chrome output's reasoning, convert_chrome.c). */
static int counter_out(struct pf *c, struct thread *t, const struct rlog_event *ev)
{
	struct rlog_counter k;
	if (rlog_event_counter(c->r, ev, &k) < 0)
		return raw_out(c, t, ev, NULL); /* never for an event of the reader */
	if (c->st)
		c->st->counter_records++;
	if (!k.value_known) {
		if (c->st)
			c->st->counter_unknown++;
		return 0;
	}
	if (!c->emit)
		return 0;
	uint64_t key = (uint64_t)ev->pid << 32 | k.counter_id;
	uint64_t uuid = counter_known(c, &c->ct_map, key);
	if (!uuid) {
		char name[300];
		int n = k.name ? snprintf(name, sizeof(name), "%s", k.name)
			       : snprintf(name, sizeof(name), "counter #%" PRIu32, k.counter_id);
		if (n >= (int)sizeof(name))
			n = sizeof(name) - 1;
		int rc = counter_track(c, &c->ct_map, key, ev->pid, name, (size_t)n, &uuid);
		if (rc < 0)
			return rc;
	}
	c->te.len = 0;
	pb_uint(&c->te, TE_TYPE, COUNTER);
	pb_uint(&c->te, TE_TRACK, uuid);
	pb_uint(&c->te, TE_COUNTER, k.value);
	return te_out(c, ev->time_ns);
}

/* Counter schema s's template for process pid's tracks uuid[] (described
 * in this file), when its fields are all numbers: the bytes that
 * schema_counter_out writes around the values. */
static void counter_template(struct pf *c, const struct rlog_schema *s, uint32_t pid,
			     const uint64_t *uuid)
{
	struct scache *e = scache_of(c, s);
	unsigned size = 0;
	e->cs = NULL;
	c->epoch++;
	for (unsigned i = 0; i < s->field_count; i++) {
		unsigned t = s->fields[i].type;
		if (t < RLOG_FIELD_U8 || t > RLOG_FIELD_F64)
			return;
		bool dbl = t == RLOG_FIELD_F64;
		char *p = e->cpre[i];
		if (i > 0) {
			p += pb_varint_at(p, (uint64_t)(dbl ? TE_EXTRA_DOUBLE_TRACKS : TE_EXTRA_TRACKS) << 3 |
						     PB_VARINT);
			p += pb_varint_at(p, uuid[i]);
		}
		unsigned vf = i > 0 ? (dbl ? TE_EXTRA_DOUBLE_VALUES : TE_EXTRA_VALUES)
				    : (dbl ? TE_DOUBLE_COUNTER : TE_COUNTER);
		p += pb_varint_at(p, (uint64_t)vf << 3 | (dbl ? PB_FIXED64 : PB_VARINT));
		e->cplen[i] = (uint8_t)(p - e->cpre[i]);
		e->ctype[i] = (uint8_t)t;
		size += rlog__num_size(t);
	}
	e->chead[0] = (char)(TE_TYPE << 3 | PB_VARINT);
	e->chead[1] = (char)COUNTER;
	e->chead[2] = (char)(TE_TRACK << 3 | PB_VARINT);
	e->chead_len = (uint8_t)(3 + pb_varint_at(e->chead + 3, uuid[0]));
	e->csize = (uint16_t)size;
	e->cnf = (uint8_t)s->field_count;
	e->cpid = pid;
	e->cgen = c->gen;
	e->cs = s;
}

/* c->te as counter schema s's TrackEvent from its template e, the values
 * read from payload pl (e->csize bytes). */
static void counter_fill(struct pf *c, const struct scache *e, const uint8_t *pl)
{
	c->te.len = (size_t)(counter_body(e, pl, c->te.p) - c->te.p);
}

/* counter_fill's TrackEvent at p (16 + 26 bytes a field of room); returns
 * its end.  Its types are e's (counter_template), the payload e->csize
 * bytes. */
static inline char *counter_body(const struct scache *e, const uint8_t *pl, char *p)
{
	memcpy(p, e->chead, sizeof(e->chead));
	p += e->chead_len;
	for (unsigned i = 0; i < e->cnf; i++) {
		uint64_t v;
		memcpy(p, e->cpre[i], sizeof(e->cpre[i]));
		p += e->cplen[i];
		switch (e->ctype[i]) {
		NUM_CASES(pl, v);
		default: /* RLOG_FIELD_F64 */
			memcpy(p, pl, 8); /* little endian, as the wire */
			p += 8;
			pl += 8;
			continue;
		}
		p += pb_varint_at(p, v);
	}
	return p;
}

/*
 * A schema'd counter event: each numeric field on a counter track
 * "name.field" of the process (a string or bytes field has no track), in
 * one TrackEvent: the first field's value on its track, the others as its
 * extra counter values (TrackEvent's extra_counter_* fields).
 */
static int schema_counter_out(struct pf *c, const struct rlog_schema *s,
			      const struct rlog_event *ev)
{
	uint64_t uuid[RLOG_SCHEMA_MAX_FIELDS];
	int first = -1;
	for (unsigned i = 0; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		if (f->type == RLOG_FIELD_BYTES || f->type == RLOG_FIELD_STRING)
			continue;
		uint64_t key = (uint64_t)ev->pid << 32 | (uint64_t)s->id << 8 | i;
		uuid[i] = counter_known(c, &c->sct_map, key);
		if (!uuid[i]) {
			char name[300];
			int n = snprintf(name, sizeof(name), "%s.%s", s->name, f->name);
			if (n >= (int)sizeof(name))
				n = sizeof(name) - 1;
			int rc = counter_track(c, &c->sct_map, key, ev->pid, name, (size_t)n, &uuid[i]);
			if (rc < 0)
				return rc;
		}
		if (first < 0)
			first = (int)i;
	}
	if (first < 0)
		return 0;
	counter_template(c, s, ev->pid, uuid);
	struct rlog__buf *b = &c->te;
	b->len = 0;
	pb_uint(b, TE_TYPE, COUNTER);
	pb_uint(b, TE_TRACK, uuid[first]);
	for (unsigned i = (unsigned)first; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		const struct rlog_value *v = &c->vals[i];
		bool extra = i != (unsigned)first;
		if (f->type == RLOG_FIELD_BYTES || f->type == RLOG_FIELD_STRING)
			continue;
		if (f->type == RLOG_FIELD_F64) {
			if (extra)
				pb_uint(b, TE_EXTRA_DOUBLE_TRACKS, uuid[i]);
			pb_double(b, extra ? TE_EXTRA_DOUBLE_VALUES : TE_DOUBLE_COUNTER, v->v.f);
		} else {
			if (extra)
				pb_uint(b, TE_EXTRA_TRACKS, uuid[i]);
			pb_uint(b, extra ? TE_EXTRA_VALUES : TE_COUNTER,
				f->type >= RLOG_FIELD_I8 && f->type <= RLOG_FIELD_I64 ? (uint64_t)v->v.i
										      : v->v.u);
		}
	}
	return te_out(c, ev->time_ns);
}

static int schema_event_out(struct pf *c, struct thread *t, const struct rlog_schema *s,
			    const struct rlog_event *ev)
{
	if (c->st)
		c->st->schema_events++;
	if (!c->emit)
		return 0;
	if (s->kind == RLOG_KIND_COUNTER)
		return schema_counter_out(c, s, ev);
	int rc = thread_track(c, t);
	if (rc < 0)
		return rc;
	if (!ev->flagged) {
		/* Named after its schema alone: the names' ids are cached. */
		if (schema_te(c, INSTANT, t->uuid, s) < 0)
			return -ENOMEM;
	} else {
		char name[300], cat[4];
		size_t n = rlog__convert_event_name(name, sizeof(name), ev, s, true);
		cat_text(cat, s);
		rc = te_start(c, INSTANT, t->uuid, name, n, cat);
		if (rc < 0)
			return rc;
		for (unsigned i = 0; i < s->field_count; i++)
			ann_value(c, s->fields[i].name, &c->vals[i]);
	}
	if (!ev->has_time)
		ann_bool(c, "untimed", true);
	return te_out(c, ev->time_ns);
}

/* ------------------------------------------------------------------ */
/* System events as ftrace events                                      */

/* Writes CPU k's bundle, if it holds events, as one packet. */
static int bundle_out(struct pf *c, struct cpu_bundle *k)
{
	if (k->ev.len == 0)
		return 0;
	c->tmp.len = 0;
	pb_uint(&c->tmp, FB_CPU, k->cpu);
	rlog__buf_put(&c->tmp, k->ev.p, k->ev.len);
	k->ev.len = 0;
	int rc = k->ev.oom ? -ENOMEM : packet(c, &c->seq0, false, 0, TP_FTRACE, &c->tmp);
	c->tmp.len = 0;
	return rc;
}

/* Writes the ProcessTree being filled, at its records' time. */
static int ptree_out(struct pf *c)
{
	if (c->ptree.len == 0)
		return 0;
	uint64_t prev = c->seq0.prev_ts;
	int rc = packet(c, &c->seq0, true, c->ptree_ts > prev ? c->ptree_ts : prev, TP_PROCESS_TREE,
			&c->ptree);
	c->ptree.len = 0;
	return rc;
}

/* Writes everything held: the process tree, then every CPU's bundle. */
static int system_flush(struct pf *c)
{
	int rc = ptree_out(c);
	for (size_t i = 0; i < c->ncpu && rc == 0; i++)
		rc = bundle_out(c, &c->cpu[i]);
	return rc;
}

/* The ftrace mapping of a system event's schema s, or NULL. */
static const struct ftrace_map *ftrace_map_of(const struct rlog_schema *s)
{
	for (size_t i = 0; i < sizeof(ftrace_maps) / sizeof(ftrace_maps[0]); i++) {
		const struct ftrace_map *m = &ftrace_maps[i];
		if (m->id != s->id || strcmp(m->name, s->name) != 0 ||
		    strlen(m->types) != s->field_count)
			continue;
		for (unsigned k = 0; k < s->field_count; k++) {
			unsigned t = s->fields[k].type;
			if (m->types[k] == 's' ? t != RLOG_FIELD_STRING
					       : t < RLOG_FIELD_U8 || t > RLOG_FIELD_I64)
				return NULL;
		}
		return m;
	}
	return NULL;
}

static uint64_t int_of(const struct rlog_value *v)
{
	unsigned t = v->field->type;
	return t >= RLOG_FIELD_I8 && t <= RLOG_FIELD_I64 ? (uint64_t)v->v.i : v->v.u;
}

/* The bundle of cpu (a system block's tid), added if new. */
static struct cpu_bundle *cpu_of(struct pf *c, uint32_t cpu)
{
	for (size_t i = 0; i < c->ncpu; i++)
		if (c->cpu[i].cpu == cpu)
			return &c->cpu[i];
	if (rlog__vec_room(&c->cpu, c->ncpu, &c->cpu_cap, sizeof(*c->cpu), 8) < 0)
		return NULL;
	struct cpu_bundle *k = &c->cpu[c->ncpu++];
	memset(k, 0, sizeof(*k));
	k->cpu = cpu;
	return k;
}

/*
 * A system event of mapping m, decoded in c->vals, as an FtraceEvent in
 * its CPU's bundle: timestamp on BOOTTIME, which the clock snapshot makes
 * clock 64's absolute value (ts_of), pid the thread the CPU ran.
 */
static int ftrace_out(struct pf *c, const struct rlog_event *ev, const struct ftrace_map *m)
{
	if (c->st)
		c->st->ftrace_events++;
	if (!c->emit)
		return 0;
	struct cpu_bundle *k = cpu_of(c, ev->tid);
	if (!k)
		return -ENOMEM;
	struct rlog__buf *b = &k->ev;
	size_t at = pb_open(b, FB_EVENT);
	pb_uint(b, FE_TIMESTAMP, ts_of(c, ev->time_ns));
	pb_uint(b, FE_PID, int_of(&c->vals[1]));
	size_t e = pb_open(b, m->field);
	for (unsigned i = 2; i < strlen(m->types); i++) {
		if (m->to[i] == 0)
			continue;
		if (m->types[i] == 's')
			put_str(c, b, m->to[i], c->vals[i].bytes, c->vals[i].len);
		else
			pb_uint(b, m->to[i], int_of(&c->vals[i]));
	}
	pb_close(b, e);
	pb_close(b, at);
	if (c->st)
		c->st->events_written++;
	return b->len >= BUNDLE_MAX ? bundle_out(c, k) : 0;
}

/*
 * A process_rundown or thread_rundown (decoded in c->vals) into the
 * ProcessTree being filled: a rundown's records come together, at one
 * time, so they make one packet (or a few of 64 KiB).  The cmdline is
 * split at its spaces (the rundown joined the arguments with one), an
 * empty one (a kernel thread, a zombie) is the comm.
 */
static int rundown_out(struct pf *c, const struct rlog_event *ev)
{
	if (c->st)
		c->st->process_records++;
	if (!c->emit)
		return 0;
	if (c->ptree.len >= BUNDLE_MAX) {
		int rc = ptree_out(c);
		if (rc < 0)
			return rc;
	}
	struct rlog__buf *b = &c->ptree;
	if (b->len == 0)
		c->ptree_ts = ts_of(c, ev->time_ns);
	if (ev->id == RUNDOWN_THREAD) {
		size_t at = pb_open(b, PT_THREADS);
		pb_uint(b, PTT_TID, int_of(&c->vals[1]));
		put_str(c, b, PTT_NAME, c->vals[2].bytes, c->vals[2].len);
		pb_uint(b, PTT_TGID, int_of(&c->vals[0]));
		pb_close(b, at);
		return b->oom ? -ENOMEM : 0;
	}
	size_t at = pb_open(b, PT_PROCESSES);
	pb_uint(b, PTP_PID, int_of(&c->vals[0]));
	pb_uint(b, PTP_PPID, int_of(&c->vals[2]));
	const char *a = (const char *)c->vals[4].bytes, *end = a + c->vals[4].len;
	if (a == end) {
		put_str(c, b, PTP_CMDLINE, c->vals[3].bytes, c->vals[3].len);
		pb_uint(b, PTP_CMDLINE_IS_COMM, 1);
	}
	while (a < end) {
		const char *sp = memchr(a, ' ', (size_t)(end - a));
		if (!sp)
			sp = end;
		put_str(c, b, PTP_CMDLINE, a, (size_t)(sp - a));
		a = sp + 1;
	}
	pb_close(b, at);
	return b->oom ? -ENOMEM : 0;
}

/* A record of a system block that goes out as ftrace or a process tree:
 * writes it and returns 1; else 0 (it goes out as any event). */
static int system_event(struct pf *c, const struct rlog_event *ev, const struct rlog_schema *s)
{
	static const char *const rundown[] = { "process_rundown", "thread_rundown" };
	static const unsigned nfields[] = { 5, 3 };
	/* One host of several: Perfetto's CPUs and ftrace pids are one
	 * machine's, so two hosts' would mix; its instants on its system
	 * track keep them apart. */
	if (ev->pid != 0 || !ev->from_daemon || ev->flagged || c->host)
		return 0;
	if (ev->id == RUNDOWN_PROCESS || ev->id == RUNDOWN_THREAD) {
		unsigned k = ev->id - RUNDOWN_PROCESS;
		if (strcmp(s->name, rundown[k]) != 0 || s->field_count != nfields[k])
			return 0;
		for (unsigned i = 0; i < s->field_count; i++)
			if ((i < 3 && !(k == 1 && i == 2)) != (s->fields[i].type == RLOG_FIELD_U32))
				return 0;
		int rc = rundown_out(c, ev);
		return rc < 0 ? rc : 1;
	}
	const struct ftrace_map *m = ftrace_map_of(s);
	if (!m)
		return 0;
	int rc = ftrace_out(c, ev, m);
	return rc < 0 ? rc : 1;
}

static int set_name(char **name, const struct rlog_event *ev)
{
	char *n = strndup(ev->payload, ev->length);
	if (!n)
		return -ENOMEM;
	free(*name);
	*name = n;
	return 0;
}

static int convert_event(struct pf *c, const struct rlog_event *ev)
{
	/* A rundown's process tree ends with its last record. */
	if (c->ptree.len && (ev->id != RUNDOWN_PROCESS && ev->id != RUNDOWN_THREAD)) {
		int rc = ptree_out(c);
		if (rc < 0)
			return rc;
	}
	struct thread *t = thread_of(c, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	use_seq(c, t);
	struct rlog_loss loss;
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_LOSS:
		if (rlog_event_loss(ev, &loss) == 0)
			return loss_out(c, t, ev, &loss);
		break;
	case RLOG_RECORD_MARKER:
		if (c->st)
			c->st->skipped++;
		return 0;
	case RLOG_RECORD_COUNTER:
		return counter_out(c, t, ev);
	case RLOG_RECORD_METADATA:
		if (c->st)
			c->st->skipped++;
		/* The reader's names (the latest in the file) come first; a
		 * record only names what the reader could not. */
		if (ev->id == RLOG_ID_THREAD_NAME)
			return set_name(&t->name, ev);
		if (ev->id == RLOG_ID_PROCESS_NAME) {
			struct process *p = process_of(c, ev->pid);
			return p ? set_name(&p->name, ev) : -ENOMEM;
		}
		return 0;
	default:
		break;
	}
	const struct rlog_schema *s = rlog_reader_schema(c->r, ev);
	if (!s)
		return raw_out(c, t, ev, NULL);
	if (c->emit) {
		int rc = fast_event(c, t, s, ev);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
	if (rlog__convert_fields(s, ev, c->vals) < 0)
		return raw_out(c, t, ev, s);
	int rc = system_event(c, ev, s);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (s->kind != RLOG_KIND_SPAN)
		return schema_event_out(c, t, s, ev);
	if (c->st)
		c->st->schema_events++;
	return ev->flag == RLOG_SPAN_END ? span_end(c, t, s, ev) : span_begin(c, t, s, ev);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* One metadata entry, name (prefixed) = the string v (n bytes). */
static void meta_put(struct pf *c, const char *prefix, const char *name, const char *v, size_t n)
{
	struct rlog__buf *b = &c->tmp;
	char key[64];
	int k = snprintf(key, sizeof(key), "%s%s", prefix, name);
	size_t at = pb_open(b, CEB_METADATA);
	pb_bytes(b, CM_NAME, key, (size_t)k);
	put_str(c, b, CM_STRING, v, n);
	pb_close(b, at);
}

/* The totals, in trace_processor's metadata table (as "cr-" keys); one
 * host's of several under "ringlog.host.INDEX.", with its name, id and
 * clock error, the first host's entry also saying how many and merged
 * time 0. */
static int metadata_out(struct pf *c)
{
	struct rlog__buf *b = &c->tmp;
	const struct rlog__perfetto_host *h = c->host;
	char v[32], prefix[40] = "ringlog.";
	const struct {
		const char *name;
		uint64_t v;
	} kv[] = {
		{ "file_index", c->gen - 1 },
		{ "track_events", c->file_events },
		{ "loss_records", c->file_loss_records },
		{ "events_lost", c->file_events_lost },
		{ "start_realtime_ns", c->info->sync_realtime_ns },
	};
	b->len = 0;
	if (h) {
		int n;
		if (h->index == 0) {
			n = snprintf(v, sizeof(v), "%u", h->count);
			meta_put(c, prefix, "hosts", v, (size_t)n);
			n = snprintf(v, sizeof(v), "%" PRIu64, h->base_realtime_ns);
			meta_put(c, prefix, "base_realtime_ns", v, (size_t)n);
		}
		snprintf(prefix, sizeof(prefix), "ringlog.host.%u.", h->index);
		meta_put(c, prefix, "name", h->name, strlen(h->name));
		meta_put(c, prefix, "id", h->id, strlen(h->id));
		meta_put(c, prefix, "clock_error", h->clock_error, strlen(h->clock_error));
		n = snprintf(v, sizeof(v), "%" PRIu64, RLOG__CHROME_HOST_IDS * (h->index + 1));
		meta_put(c, prefix, "pid_base", v, (size_t)n);
	}
	meta_put(c, prefix, "session", c->info->session_name, strlen(c->info->session_name));
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		int n = snprintf(v, sizeof(v), "%" PRIu64, kv[i].v);
		meta_put(c, prefix, kv[i].name, v, (size_t)n);
	}
	int rc = packet(c, &c->seq0, false, 0, TP_CHROME_EVENTS, b);
	b->len = 0;
	return rc;
}

/* Ends the file: the CPUs' bundles and the process tree held, the spans
 * still open ended at its last time (when it is not the last file), the
 * totals, everything written. */
static int file_end(struct pf *c, bool last)
{
	int rc = c->started ? 0 : file_header(c, c->last_ts ? c->last_ts : c->info->sync_monotonic_ns);
	if (rc == 0)
		rc = system_flush(c);
	for (size_t i = 0; i < c->nth && rc == 0 && !last && c->started; i++)
		for (size_t k = 0; k < c->th[i].depth && rc == 0; k++)
			rc = end_out(c, &c->th[i], (int64_t)(c->last_ts - c->info->sync_monotonic_ns));
	if (rc == 0)
		rc = metadata_out(c);
	return rc < 0 ? rc : flush_all(c);
}

/* The state of a new file: nothing described, nothing interned. */
static int file_begin(struct pf *c)
{
	c->gen++;
	c->epoch++;
	c->file_bytes = 0;
	c->file_events = c->file_loss_records = c->file_events_lost = 0;
	c->started = false;
	c->in.len = 0;
	if (c->st)
		c->st->files++;
	return 0;
}

/* The first event of the window in a file: the spans open before it begun
 * again at its time. */
static int start_events(struct pf *c, int64_t ns)
{
	c->started = true;
	c->file_first_ns = ns;
	uint64_t x = mono_of(c, ns);
	int rc = file_header(c, x > c->last_ts ? x : c->last_ts);
	for (size_t i = 0; i < c->nth && rc == 0; i++)
		for (size_t k = 0; k < c->th[i].depth && rc == 0; k++)
			rc = begin_out(c, &c->th[i], c->th[i].stack[k], ns, true, false);
	return rc;
}

/* Whether the event at ns, of payload n bytes, goes to a new file. */
static bool split_here(struct pf *c, int64_t ns, size_t n)
{
	const struct rlog__perfetto_opts *o = c->opt;
	if (!o || !c->started)
		return false;
	if (o->split_ns > 0 && rlog__sat_sub(ns, c->file_first_ns) >= o->split_ns)
		return true;
	if (o->max_size == 0)
		return false;
	/* Room for the largest packet this event can give (a payload as hex,
	 * descriptors, names) and the file's end (open spans, the totals),
	 * and for what is held until the file's end: the CPUs' ftrace
	 * bundles and the process tree, each with its packet's framing. */
	uint64_t need = 3u * n + 16384 + 16u * c->nth;
	uint64_t held = c->ptree.len ? c->ptree.len + 16 : 0;
	for (size_t i = 0; i < c->ncpu; i++)
		held += c->cpu[i].ev.len ? c->cpu[i].ev.len + 16 : 0;
	return c->file_bytes + c->out.len + held + need > o->max_size;
}

static int next_file(struct pf *c)
{
	int rc = file_end(c, false);
	if (rc < 0)
		return rc;
	rc = c->opt->next_file(c->opt->arg, c->gen, &c->fd);
	if (rc < 0)
		return c->err = rc;
	return file_begin(c);
}

/* One event of the reader, in its order: the window, the split, the
 * event. */
static int one_event(struct pf *c, const struct rlog_event *ev)
{
	const struct rlog__perfetto_opts *opt = c->opt;
	int rc = 0;
	if (c->st)
		c->st->events_read++;
	c->emit = !opt || ((!opt->has_since || ev->time_ns >= opt->since_ns) &&
			   (!opt->has_until || ev->time_ns <= opt->until_ns));
	if (c->emit && split_here(c, ev->time_ns, ev->length))
		rc = next_file(c);
	if (rc == 0 && c->emit && !c->started)
		rc = start_events(c, ev->time_ns);
	if (rc == 0)
		rc = convert_event(c, ev);
	return rc;
}

/* Counts of the events run_fast wrote, added to the totals at once. */
struct run_counts {
	uint64_t events, spans, clamped;
};

static void run_counts_add(struct pf *c, struct run_counts *k)
{
	if (c->st) {
		c->st->events_read += k->events;
		c->st->schema_events += k->events;
		c->st->events_written += k->events;
		c->st->packets += k->events;
		c->st->spans += k->spans;
		c->st->clamped += k->clamped;
	}
	c->file_events += k->events;
	*k = (struct run_counts){ 0 };
}

/* What a run's records share (run_out). */
struct run_ctx {
	struct thread *t;
	uint64_t start, freq;     /* the reader's clock */
	uint64_t mono;            /* sync_monotonic_ns */
	/* Ticks of a nanosecond: a time d = ticks - start below span is
	 * mono + d ns (0: none is).  span <= 2^63 and start <= 2^63, so that
	 * a time before start (d wrapped, >= 2^64 - start) is never below. */
	uint64_t span;
	uint64_t lim;             /* ns up to lim add to mono (ts_of's range) */
	/* Another rate (clock.h): its ns walked along the run, or NULL (the
	 * divisions).  run_out's own, apart from this struct: only its
	 * address goes to run_ts, not this struct's (see run_out). */
	struct rlog__ns_walk *w;
	struct run_counts k;
};

/*
 * The template entry of event id's schema on thread t, ready for
 * run_fast: rlog_reader_schema's schema for the event at ticks (from
 * rlog__reader_schema_one: a schema of one version, in force before
 * ticks) whose template in this file is made, on a described track (a
 * counter schema's for t's process).  NULL: the general way.
 */
static inline const struct scache *run_template(struct pf *c, struct thread *t, uint16_t id,
						uint64_t ticks, const struct rlog_schema **sp)
{
	unsigned k = id % TSC;
	if (t->sc[k].id != id) { /* (0 at first: no ID a run takes) */
		uint64_t from;
		const struct rlog_schema *s = rlog__reader_schema_one(c->r, t->pid, id, &from);
		if (!s)
			return NULL;
		t->sc[k].s = s;
		t->sc[k].from = from;
		t->sc[k].id = id;
		t->sc[k].e = scache_of(c, s);
		t->sc[k].epoch = 0;
	}
	if (ticks <= t->sc[k].from)
		return NULL;
	const struct scache *e = t->sc[k].e;
	if (t->sc[k].epoch != c->epoch) {
		/* fast_event's tests of the entry, once an epoch. */
		const struct rlog_schema *s = t->sc[k].s;
		if (s->kind == RLOG_KIND_COUNTER
			    ? e->cs != s || e->cgen != c->gen || e->cpid != t->pid
			    : e->s != s || e->gen != c->gen || e->seq != t->seq->id || !e->fast ||
				      t->gen != c->gen)
			return NULL;
		t->sc[k].epoch = c->epoch;
	}
	*sp = t->sc[k].s;
	return e;
}

/* mono_of(the reader's ns of ticks) for a time run_fast's line does not
 * take: another rate than 1 GHz (walked), or out of its range.  Called,
 * not inlined: run_fast's loop stays as small for a 1 GHz clock. */
static uint64_t run_ts(const struct pf *c, struct rlog__ns_walk *w, uint64_t ticks,
		       uint64_t mono, uint64_t lim)
{
	uint64_t ns;
	if (w && rlog__ns_walk_next(w, ticks, &ns) && ns <= lim)
		return mono + ns;
	return mono_of(c, rlog__ticks_since_ns(ticks, c->info->start_ticks, c->info->tick_freq_hz));
}

/*
 * A record of a run (schema s, its template e; header word hw, flag word
 * fw or 0, payload pl, at ticks), of thread x->t whose sequence is the
 * current one, that fast_event would write through te_out: the same
 * packet, written in place in the output (its TrackEvent where te_out
 * would copy it to, the lengths before it taken as one byte each and the
 * body moved in the rare case they are not).  Returns 1 (written), 0
 * (the general way writes it) or -errno.
 */
static inline int run_fast(struct pf *c, struct run_ctx *x, const struct scache *e,
			   const struct rlog_schema *s, uint32_t hw, uint32_t fw, const uint8_t *pl,
			   uint64_t ticks)
{
	struct thread *t = x->t;
	struct seq *q = t->seq;
	size_t len = rlog__hdr_length(hw);
	/* The room te_body or counter_body may write: the most of either
	 * (16 fields; a counter's 16 + 26 bytes a field are less), one
	 * comparison. */
	if (!rlog__hdr_has_time(hw) ||
	    c->out.cap - c->out.len < 64 + TE_ROOM(RLOG_SCHEMA_MAX_FIELDS, len))
		return 0;
	/* ts_of's time, kept only if the packet is written. */
	uint64_t ts, d = ticks - x->start;
	if (d < x->span)
		ts = x->mono + d;
	else
		ts = run_ts(c, x->w, ticks, x->mono, x->lim);
	bool clamp = ts < c->last_ts;
	if (clamp)
		ts = c->last_ts;
	/* The output overlaps nothing else (restrict, as in te_body). */
	char *restrict b0 = c->out.p + c->out.len;
	char *p = b0 + 3;
	b0[2] = (char)(TP_TIMESTAMP << 3 | PB_VARINT);
	p += pb_varint_at(p, ts - q->prev_ts);
	memcpy(p, t->mid, sizeof(t->mid));
	p += t->mid_len;
	char *body = p + 1, *end;
	bool end_span = false;
	if (s->kind == RLOG_KIND_COUNTER) {
		if (len != e->csize)
			return 0;
		end = counter_body(e, pl, body);
	} else if (s->kind != RLOG_KIND_SPAN) {
		if (fw || !(end = te_body(e, pl, len, body)))
			return 0;
	} else if (!fw) {
		return 0;
	} else if (fw >> 16 == RLOG_SPAN_BEGIN) {
		if (t->depth == RLOG__SPANS_OPEN ||
		    rlog__vec_room(&t->stack, t->depth, &t->cap, sizeof(*t->stack), 8) < 0 ||
		    !(end = te_body(e, pl, len, body)))
			return 0;
		t->stack[t->depth++] = s;
	} else if (fw >> 16 == RLOG_SPAN_END && len == 0 && t->depth &&
		   t->stack[t->depth - 1]->id == s->id) {
		memcpy(body, t->end, sizeof(t->end));
		end = body + t->end_len;
		end_span = true;
	} else {
		return 0;
	}
	size_t bl = (size_t)(end - body), n = (size_t)(end - (b0 + 2));
	if (bl < 0x80 && n < 0x80) {
		b0[0] = (char)(TRACE_PACKET << 3 | PB_LEN);
		b0[1] = (char)n;
		body[-1] = (char)bl;
	} else {
		/* te_out's lengths of more than a byte: the fields between
		 * them and the body move up. */
		size_t hl = (size_t)(body - 1 - (b0 + 2)), vb = pb_varint_size(bl);
		n += vb - 1;
		size_t vn = pb_varint_size(n), shift = vb - 1 + vn - 1;
		memmove(body + shift, body, bl);
		memmove(b0 + 1 + vn, b0 + 2, hl);
		b0[0] = (char)(TRACE_PACKET << 3 | PB_LEN);
		pb_varint_at(b0 + 1, n);
		pb_varint_at(b0 + 1 + vn + hl, bl);
		end += shift;
		c->in_place_long++;
	}
	c->in_place++;
	if (end_span) {
		t->depth--;
		x->k.spans++;
	}
	x->k.clamped += clamp;
	x->k.events++;
	c->last_ts = ts;
	q->prev_ts = ts;
	c->out.len += (size_t)(end - b0);
	if (c->out.len >= OUT_FLUSH) {
		run_counts_add(c, &x->k);
		return flush_out(c) < 0 ? c->err : 1;
	}
	return 1;
}

/*
 * A run of the reader (reader/batch.h): its head the general way, then
 * its records after it straight from the block, each checked as the
 * reader checks it and before the run's bound (rlog__run_next): the
 * common one (an event a template writes) by run_fast, the others as the
 * event the reader would give.  The records it takes are handed back
 * (rlog__reader_run_take).
 */
static int run_out(struct pf *c, const struct rlog__run *run)
{
	const struct rlog_event *h = &run->head;
	int rc = one_event(c, h);
	if (rc < 0)
		return rc;
	uint32_t used = 0, n = 0;
	uint64_t cur = run->cursor;
	if (run->avail == 0)
		return rlog__reader_run_take(c->r, run, 0, cur, 0);
	const struct rlog__perfetto_opts *o = c->opt;
	/* No window, no split: every event is emitted, in this file; and
	 * no record of pid 0's daemon (which fast_event leaves alone). */
	bool quick = (!o || (!o->has_since && !o->has_until && !o->split_ns && !o->max_size)) &&
		     !(h->pid == 0 && h->from_daemon);
	struct thread *th = thread_of(c, h->pid, h->tid); /* the head's, made by now */
	if (!th)
		return -ENOMEM;
	size_t ti = (size_t)(th - c->th);
	struct run_ctx x = { .start = c->info->start_ticks, .freq = c->info->tick_freq_hz,
			     .mono = c->info->sync_monotonic_ns };
	/* rlog__ticks_since_ns is d itself up to INT64_MAX, and mono_of
	 * mono + d up to UINT64_MAX. */
	uint64_t lim = UINT64_MAX - x.mono < (uint64_t)INT64_MAX ? UINT64_MAX - x.mono : (uint64_t)INT64_MAX;
	x.span = x.freq == 1000000000u && x.start <= (uint64_t)1 << 63 ? lim + 1 : 0;
	x.lim = lim;
	struct rlog__ns_walk w;
	x.w = rlog__ns_walk_init(&w, x.start, x.freq) ? &w : NULL;
	/* The run's bounds in a copy of its own: the output is written
	 * through char pointers, which may alias any object whose address
	 * has escaped (the caller's run has, to the reader; so would x's,
	 * given to a call), and the compiler would load those fields again
	 * after each byte written. */
	const struct rlog__run rl = *run;
	for (bool ready = false, fresh = true; used < rl.avail; n++) {
		uint64_t nc = cur;
		uint32_t hw, fw;
		uint32_t size = rlog__run_next(&rl, used, &nc, &hw, &fw);
		if (!size)
			break;
		uint16_t id = (uint16_t)(fw ? fw & 0xffffu : rlog__hdr_id(hw));
		/* After the timestamp (bit 31) and the flag word, if any. */
		const uint8_t *pl = rl.p + used + 4 + (hw >> 31) * 4 + (fw ? 4 : 0);
		if (fresh) {
			/* After the general way (which may describe, intern,
			 * start a file or a process tree): convert_event's way
			 * to fast_event, as far as it is the same for every
			 * record of the run. */
			x.t = &c->th[ti];
			ready = quick && c->started && !c->ptree.len && !c->in.len;
			if (ready) {
				use_seq(c, x.t);
				c->emit = true;
				ready = !x.t->seq->fresh;
			}
			fresh = false;
		}
		const struct scache *e;
		const struct rlog_schema *s;
		rc = 0;
		if (ready && (e = run_template(c, x.t, id, nc, &s)) != NULL)
			rc = run_fast(c, &x, e, s, hw, fw, pl, nc);
		if (rc == 0) {
			struct rlog_event ev;
			rlog__run_event(&rl, used, size, nc, rlog__ticks_since_ns(nc, x.start, x.freq), hw,
					fw, &ev);
			run_counts_add(c, &x.k);
			rc = one_event(c, &ev);
			fresh = true;
		}
		if (rc < 0)
			return rc;
		used += size;
		cur = nc;
	}
	run_counts_add(c, &x.k);
	return rlog__reader_run_take(c->r, run, used, cur, n);
}

static void pf_free(struct pf *c)
{
	for (size_t i = 0; i < c->nth; i++) {
		free(c->th[i].stack);
		free(c->th[i].name);
		if (c->th[i].seq) {
			interner_free(&c->th[i].seq->names);
			interner_free(&c->th[i].seq->cats);
			interner_free(&c->th[i].seq->anns);
			free(c->th[i].seq);
		}
	}
	for (size_t i = 0; i < c->npr; i++)
		free(c->pr[i].name);
	for (size_t i = 0; i < c->nct; i++)
		free(c->ct[i].name);
	for (size_t i = 0; i < c->ncpu; i++)
		free(c->cpu[i].ev.p);
	free(c->cpu);
	free(c->ptree.p);
	free(c->th);
	free(c->pr);
	free(c->ct);
	rlog__map_free(&c->th_map);
	rlog__map_free(&c->pr_map);
	rlog__map_free(&c->ct_map);
	rlog__map_free(&c->sct_map);
	interner_free(&c->seq0.names);
	interner_free(&c->seq0.cats);
	interner_free(&c->seq0.anns);
	free(c->out.p);
	free(c->te.p);
	free(c->in.p);
	free(c->tmp.p);
	free(c->fix.p);
	free(c->scache);
	rlog__writer_free(c->w);
}

int rlog__convert_perfetto(struct rlog_reader *r, int fd, const struct rlog__perfetto_opts *opt,
			   struct rlog__convert_stats *st)
{
	struct pf c;
	int rc;

	if (!r)
		return -EINVAL;
	if (opt && ((opt->max_size > 0 && opt->max_size < RLOG__PERFETTO_MIN_SIZE) ||
		    ((opt->max_size > 0 || opt->split_ns > 0) && !opt->next_file)))
		return -EINVAL;
	struct rlog__perfetto_host *host = opt ? opt->host : NULL;
	if (host && (host->index >= host->count || host->count > RLOG__PERFETTO_MAX_HOSTS ||
		     !host->name || !host->id || !host->clock_error || host->seq_base == 0 ||
		     opt->has_since || opt->has_until || opt->split_ns > 0 || opt->max_size > 0))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.r = r;
	c.info = rlog_reader_info(r);
	c.fd = fd;
	c.opt = opt;
	c.st = st;
	c.host = host;
	c.seq0.id = host ? host->seq_base : SEQ_ID;
	c.next_uuid = host ? host->uuid_base : 0;
	c.seq0.names.field = ID_NAMES;
	c.seq0.cats.field = ID_CATEGORIES;
	c.seq0.anns.field = ID_ANNOTATION_NAMES;
	c.cur = &c.seq0;
	c.no_writer = opt && opt->no_runs;
	if (st)
		memset(st, 0, sizeof(*st));
	c.scache = calloc(SCACHE, sizeof(*c.scache));
	if (!c.scache || !rlog__buf_need(&c.out, OUT_FLUSH + 65536) ||
	    !rlog__buf_need(&c.te, 4096)) {
		rc = -ENOMEM;
		goto out;
	}
	rc = file_begin(&c);
	while (rc == 0) {
		/* The reader's runs (reader/batch.h): each starts with a
		 * thread's next event, its records after it taken straight
		 * from its block; a COUNTER record and every event when told
		 * (no_runs) through the batches, in the same order. */
		struct rlog__run run;
		int n;
		if (opt && opt->no_runs) {
			n = 0;
		} else if ((rc = rlog__reader_run(r, &run)) <= 0) {
			break;
		} else if (run.head.flagged || run.head.id != RLOG_ID_COUNTER) {
			rc = run_out(&c, &run);
			continue;
		} else {
			n = 1;
		}
		if ((rc = n = rlog__reader_next_batch(r, c.batch, n ? (size_t)n : BATCH)) <= 0)
			break;
		rc = 0;
		for (int i = 0; i < n && rc == 0; i++)
			rc = one_event(&c, &c.batch[i]);
	}
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < c.nth; i++)
		if (st)
			st->unmatched_begins += c.th[i].depth;
	rc = file_end(&c, true);
	if (host) {
		host->seq_base = c.seq0.id + 1 + (uint32_t)c.nth;
		host->uuid_base = c.next_uuid;
	}
out:
	if (opt && opt->in_place)
		*opt->in_place = c.in_place;
	if (opt && opt->in_place_long)
		*opt->in_place_long = c.in_place_long;
	pf_free(&c);
	return rc;
}
