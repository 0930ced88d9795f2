/*
 * test_ring_flush - the single ring's flush application (src/ring/,
 * `ringlog ring-flush`) and `ringlog emit --ring`, on rings crafted in
 * files, read back through the reader library:
 *
 *   - records that wrap around the end of a 256-byte ring, over and over
 *     (payload lengths 0..40): every record byte-exact, in order;
 *   - a full ring: the exact events and bytes written, one DATA_LOSS record
 *     (cause NO_BUFFER) with the exact lost events and bytes, after the
 *     records, with the ring's pid and tid; reported once only (a second
 *     flush reports nothing); NESTED losses likewise;
 *   - 64-bit times from 32-bit timestamps: wraps, steps of 2^31 and more
 *     (TIME_SYNC records), small steps back, across drains (a counter
 *     clock, so every time is known exactly); with CLOCK_MONOTONIC and the
 *     TSC, every record's time equals the full clock value its producer
 *     read; the LOG_MARKER's fields;
 *   - the choice of a drain's first time (rlog__ring_first_time);
 *   - hostile rings: not a ring (each reason, exact message, no output
 *     file), a write offset that is not one, a malformed record, a forged
 *     DATA_LOSS, a read offset that is not one: one line on stderr, the
 *     good records kept, the rest counted as a CORRUPT loss, exit 1;
 *   - the command line: usage errors, an existing output, --force,
 *     --create, and emit --ring.
 */
#define _GNU_SOURCE
#include "ring/flush.h"
#include "ring_util.h"
#include "tap.h"

static uint32_t seq_payload(uint32_t seq, uint8_t *p)
{
	uint32_t len = seq % 41;
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 7 + i);
	return len;
}

/* Many laps of a small ring, drained by the library in-process. */
static void test_wrap_laps(void)
{
	struct t_ring t;
	t_ring_create(&t, "laps", 256, RLOG_TICK_COUNTER, 1000000);
	const char *log = t_log("laps");
	unlink(log);
	int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0644);
	struct rlog__ring_view v;
	char why[256];
	ASSERT_EQ(rlog__ring_map(t.path, &v, why, sizeof why), 0);
	struct rlog__ring_flush f;
	ASSERT_EQ(rlog__ring_flush_init(&f, &v, fd, "laps"), 0);
	enum { N = 600 };
	uint32_t straddles = 0, written = 0, drained = 0;
	uint8_t p[64];
	for (uint32_t seq = 0; seq < N; seq++) {
		uint32_t len = seq_payload(seq, p);
		uint32_t w = atomic_load(&t.r->write_off);
		int rc = rlog_ring_write(t.r, 1024 + seq % 3, p, len, seq * 10);
		if (rc != 1) {
			/* Full: drain, then it must fit. */
			ASSERT_EQ(rc, -ENOBUFS);
			int n = rlog__ring_flush_drain(&f);
			drained += n > 0 ? (uint32_t)n : 0;
			w = atomic_load(&t.r->write_off);
			rc = rlog_ring_write(t.r, 1024 + seq % 3, p, len, seq * 10);
			if (rc != 1) {
				ok(0, "record %u fits after a drain (%d)", seq, rc);
				break;
			}
			/* The discarded attempt is a counted loss. */
		}
		written++;
		straddles += rlog_ring_record_size(len, 0) > 256 - w;
	}
	int n = rlog__ring_flush_drain(&f);
	drained += n > 0 ? (uint32_t)n : 0;
	ASSERT_EQ(rlog__ring_flush_finish(&f), 0);
	uint64_t lost = atomic_load(&t.r->lost_events);
	ASSERT_EQ_U64(f.lf.events_written, N);
	ASSERT_EQ_U64(f.lost_events, lost);
	ASSERT_EQ(f.corrupt_count, 0);
	rlog__ring_flush_free(&f);
	close(fd);
	rlog__ring_unmap(&v);
	diag("%u records, %u straddled the end, %u bytes drained, %" PRIu64 " full", written,
	     straddles, drained, lost);
	ok(straddles >= 50, "records straddled the end of the ring (%u)", straddles);
	ok(drained > 40 * 256, "the ring went round more than 40 times (%u bytes)", drained);

	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	ASSERT_EQ_U64(tf.events, N);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], lost);
	uint32_t seq = 0, bad = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		if (ev->from_daemon)
			continue;
		uint8_t want[64];
		uint32_t len = seq_payload(seq, want);
		if (ev->id != 1024 + seq % 3 || ev->length != len || ev->ticks != (uint64_t)seq * 10 ||
		    memcmp(ev->payload, want, len) != 0 || ev->flagged || !ev->has_time) {
			if (bad++ < 3)
				diag("record %u: id %u length %u ticks %" PRIu64, seq, ev->id,
				     ev->length, ev->ticks);
		}
		seq++;
	}
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(seq, N);
	t_file_free(&tf);
	unlink(log);
	t_ring_destroy(&t);
}

/* One record straddling the end, through the command and dump. */
static void test_wrap_cli(void)
{
	struct t_ring t;
	t_ring_create(&t, "wcli", 64, RLOG_TICK_COUNTER, 1000);
	atomic_store(&t.r->write_off, 56);
	atomic_store(&t.r->read_off, 56);
	atomic_store(&t.r->read_cache, 56);
	ASSERT_EQ(rlog_ring_write(t.r, RLOG_ID_RAW_STRING, "straddling", 10, 3000), 1);
	ASSERT_EQ(atomic_load(&t.r->write_off), 12); /* 8 bytes at the end, 12 at the start */
	const char *log = t_log("wcli");
	struct h_run r;
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), 20);
	ASSERT_EQ(atomic_load(&t.r->read_off), 12);
	h_ringlog(&r, "dump", log, NULL);
	ASSERT_EQ(r.status, 0);
	/* 3000 ticks at 1 kHz: 3 s after tick 0. */
	ASSERT_CONTAINS(r.out, "    3000000000       0       0 RAW_STRING   \"straddling\"\n");
	unlink(log);
	t_ring_destroy(&t);
}

static void test_full(void)
{
	struct t_ring t;
	t_ring_create(&t, "full", 4096, RLOG_TICK_COUNTER, 1000000);
	t.r->pid = 4242;
	t.r->tid = 4243;
	uint64_t v[2] = { 0, 0 };
	int ones = 0, lost = 0;
	for (uint32_t i = 0; lost < 10; i++) {
		v[0] = i + 1;
		int rc = rlog_ring_write(t.r, 1024, v, 16, 100 + i);
		ones += rc == 1;
		lost += rc == -ENOBUFS;
	}
	ASSERT_EQ(ones, 170); /* 4092 / 24 */
	ASSERT_EQ(atomic_load(&t.r->lost_bytes), 240);
	const char *log = t_log("full");
	struct h_run r;
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 170);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), 170 * 24);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 10);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), 240);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_bytes"), 0);
	ASSERT_EQ(atomic_load(&t.r->read_off), atomic_load(&t.r->write_off));
	ASSERT_EQ(atomic_load(&t.r->reported_lost_events), 10);
	ASSERT_EQ(atomic_load(&t.r->reported_lost_bytes), 240);

	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	ASSERT_EQ_U64(tf.events, 170);
	ASSERT_EQ_U64(tf.loss_records, 1);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], 10);
	ASSERT_EQ_U64(tf.loss_bytes[RLOG_LOSS_NO_BUFFER], 240);
	/* The DATA_LOSS is the last record, at the last event's time, with the
	 * ring's pid and tid; the events count 1..170 from pid 4242 tid 4243. */
	struct t_event *last = &tf.e[tf.n - 1];
	ok(last->ev.from_daemon && last->ev.id == RLOG_ID_DATA_LOSS, "the DATA_LOSS comes last");
	ASSERT_EQ(last->ev.pid, 4242);
	ASSERT_EQ(last->ev.tid, 4243);
	ASSERT_EQ_U64(last->ev.ticks, 100 + 169);
	ASSERT_EQ(last->loss.cause, RLOG_LOSS_NO_BUFFER);
	uint64_t want = 1, bad = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		if (ev->from_daemon)
			continue;
		uint64_t s;
		memcpy(&s, ev->payload, 8);
		bad += s != want || ev->pid != 4242 || ev->tid != 4243 || ev->ticks != 100 + want - 1;
		want++;
	}
	ASSERT_EQ_U64(bad, 0);
	t_file_free(&tf);

	/* Reported once: a second flush finds nothing new. */
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	t_read(log, &tf, false);
	ASSERT_EQ_U64(tf.loss_records, 0);
	t_file_free(&tf);

	/* Two nested writes (a handler inside a write) and one more event. */
	atomic_store(&t.r->busy, 1);
	ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 16, 500), -EBUSY);
	ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 8, 501), -EBUSY);
	atomic_store(&t.r->busy, 0);
	ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 16, 502), 1);
	t_flush_once(&r, t.path, log);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 2);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), 24 + 16);
	t_read(log, &tf, false);
	ASSERT_EQ_U64(tf.loss_records, 1);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NESTED], 2);
	ASSERT_EQ_U64(tf.loss_bytes[RLOG_LOSS_NESTED], 40);
	t_file_free(&tf);
	unlink(log);
	t_ring_destroy(&t);
}

static void test_times_counter(void)
{
	struct t_ring t;
	t_ring_create(&t, "tc", 1024, RLOG_TICK_COUNTER, 1000000);
	/* The 64-bit time of each record, and the 32-bit timestamp written. */
	static const uint64_t want[] = {
		0xffffff00u,          /* first: its own value */
		0x100000100u,         /* + 0x200 across the wrap */
		0x1800000ffu,         /* + 0x7fffffff: no TIME_SYNC */
		0x2000000ffu,         /* + 2^31: TIME_SYNC */
		0x2f00000ffu,         /* + 0xf0000000 (forward): TIME_SYNC */
		0x2f00000efu,         /* - 0x10: a step back, TIME_SYNC */
		0x2f000010fu,         /* + 0x20 */
		/* second drain */
		0x30000010eu,         /* + 0x0fffffff */
		0x2f000010fu,         /* - 0x0fffffff: step back, TIME_SYNC */
	};
	enum { N = sizeof want / sizeof want[0] };
	const char *log = t_log("tc");
	unlink(log);
	int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0644);
	struct rlog__ring_view v;
	char why[256];
	ASSERT_EQ(rlog__ring_map(t.path, &v, why, sizeof why), 0);
	struct rlog__ring_flush f;
	ASSERT_EQ(rlog__ring_flush_init(&f, &v, fd, "tc"), 0);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t p = i;
		ASSERT_EQ(rlog_ring_write(t.r, 1024, &p, 8, (uint32_t)want[i]), 1);
		if (i == 6)
			ASSERT_EQ(rlog__ring_flush_drain(&f), 7 * 16);
	}
	ASSERT_EQ(rlog__ring_flush_drain(&f), 2 * 16);
	ASSERT_EQ(rlog__ring_flush_finish(&f), 0);
	ASSERT_EQ_U64(f.time_syncs, 4);
	rlog__ring_flush_free(&f);
	close(fd);
	rlog__ring_unmap(&v);

	struct t_file tf;
	t_read(log, &tf, true);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	ASSERT_EQ_U64(tf.events, N);
	ASSERT_EQ_U64(tf.time_syncs, 4);
	ASSERT_EQ(tf.info.tick_source, RLOG_TICK_COUNTER);
	ASSERT_EQ_U64(tf.info.tick_freq_hz, 1000000);
	ASSERT_EQ_U64(tf.info.start_ticks, 0);
	ASSERT_EQ(tf.info.buffer_size, 1024);
	ASSERT_EQ(tf.info.buffer_count, 1);
	ASSERT_STREQ(tf.info.session_name, "tc");
	int seen = 0, bad = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		if (ev->from_daemon || (!ev->flagged && ev->id == RLOG_ID_TIME_SYNC))
			continue;
		uint64_t k;
		memcpy(&k, ev->payload, 8);
		seen++;
		if (k >= N || ev->ticks != want[k] || ev->time_ns != (int64_t)(want[k] * 1000)) {
			bad++;
			diag("record %" PRIu64 ": ticks 0x%" PRIx64 " time_ns %" PRId64, k, ev->ticks,
			     ev->time_ns);
		}
	}
	ASSERT_EQ(seen, N);
	ASSERT_EQ(bad, 0);
	t_file_free(&tf);
	unlink(log);
	t_ring_destroy(&t);
}

/* A clock the flush side reads: each record carries the full value its
 * producer read, and the file must give exactly that time. */
static void times_readable(uint32_t source, const char *tag)
{
	struct t_ring t;
	t_ring_create(&t, tag, 8192, source, 0);
	const char *log = t_log(tag);
	unlink(log);
	int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0644);
	/* A backlog before the flush application starts. */
	for (int i = 0; i < 50; i++) {
		uint64_t now = rlog__ticks(source);
		ASSERT_EQ(rlog_ring_write(t.r, 1024, &now, 8, (uint32_t)now), 1);
	}
	struct rlog__ring_view v;
	char why[256];
	ASSERT_EQ(rlog__ring_map(t.path, &v, why, sizeof why), 0);
	struct rlog__ring_flush f;
	ASSERT_EQ(rlog__ring_flush_init(&f, &v, fd, tag), 0);
	ASSERT_EQ(rlog__ring_flush_drain(&f), 50 * 16);
	for (int i = 0; i < 50; i++) {
		uint64_t now = rlog__ticks(source);
		rlog_ring_write(t.r, 1024, &now, 8, (uint32_t)now);
	}
	ASSERT_EQ(rlog__ring_flush_drain(&f), 50 * 16);
	ASSERT_EQ(rlog__ring_flush_finish(&f), 0);
	rlog__ring_flush_free(&f);
	close(fd);
	rlog__ring_unmap(&v);

	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ_U64(tf.events, 100);
	ASSERT_EQ(tf.info.tick_source, source);
	int bad = 0, negative = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		negative += ev->time_ns < 0;
		if (ev->from_daemon)
			continue;
		uint64_t full;
		memcpy(&full, ev->payload, 8);
		bad += ev->ticks != full;
	}
	ok(bad == 0, "%s: every record's time is its producer's clock reading (%d differ)", tag,
	   bad);
	ok(negative == 0, "%s: no time before the LOG_MARKER", tag);
	t_file_free(&tf);
	unlink(log);
	t_ring_destroy(&t);
}

static void test_first_time(void)
{
	const uint64_t W = UINT64_C(1) << 32;
	/* Counter: forward from the cursor, or the value itself. */
	ASSERT_EQ_U64(rlog__ring_first_time(false, 0, false, 0, 77, 99, 22), 77);
	ASSERT_EQ_U64(rlog__ring_first_time(true, 5 * W + 0x20000000, false, 0, 50, 60, 10),
		      6 * W + 50);
	/* ... or a small step back (less than RLOG_RING_BACKSTEP). */
	ASSERT_EQ_U64(rlog__ring_first_time(true, 5 * W + 100, false, 0, 90, 95, 5), 5 * W + 90);
	/* Readable, no cursor: back from now by the span. */
	ASSERT_EQ_U64(rlog__ring_first_time(false, 0, true, 9 * W + 1000, 400, 900, 500),
		      9 * W + 400);
	/* ...the newest record a little after now (another CPU's clock). */
	ASSERT_EQ_U64(rlog__ring_first_time(false, 0, true, 9 * W + 1000, 400, 1100, 700),
		      9 * W + 400);
	/* Readable, the cursor less than a wrap before now: forward. */
	ASSERT_EQ_U64(rlog__ring_first_time(true, 9 * W + 100, true, 9 * W + 5000, 300, 400, 100),
		      9 * W + 300);
	/* Readable, the cursor three wraps before now: back from now. */
	ASSERT_EQ_U64(rlog__ring_first_time(true, 6 * W + 100, true, 9 * W + 5000, 300, 400, 100),
		      9 * W + 300);
	/* ...unless that lands before the cursor: forward. */
	ASSERT_EQ_U64(rlog__ring_first_time(true, 6 * W + 100, true, 8 * W + 50, 300, 40,
					    (int64_t)(2 * W)),
		      6 * W + 300);
}

/* Writes a raw ring header (for the hostile cases) into a file. */
static void write_file(const char *path, const void *p, size_t n)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	BAIL_IF(fd < 0 || write(fd, p, n) != (ssize_t)n, "write %s", path);
	close(fd);
}

static void expect_refused(const char *path, const char *why, const char *what)
{
	const char *log = t_log("refused");
	struct h_run r;
	t_flush_once(&r, path, log);
	char want[512];
	snprintf(want, sizeof want, "ringlog: ring-flush: %s: %s\n", path, why);
	ok(r.status == 1 && strcmp(r.err, want) == 0 && r.out[0] == '\0',
	   "%s: refused with one line (status %d)", what, r.status);
	if (strcmp(r.err, want) != 0)
		diag("stderr: %s", r.err);
	ok(access(log, F_OK) != 0, "%s: no log file", what);
}

static void test_not_a_ring(void)
{
	char path[256];
	snprintf(path, sizeof path, "/tmp/rlog-test-ring-bad-%d", (int)getpid());
	static _Alignas(64) unsigned char m[1024];
	memset(m, 0, sizeof m);
	write_file(path, m, sizeof m);
	expect_refused(path, "not a ring: magic 0 (not initialised)", "zeroes");
	write_file(path, m, 100);
	expect_refused(path, "not a ring: 100 bytes, smaller than a ring header (192)", "short");
	memcpy(m, "ELF!", 4);
	write_file(path, m, sizeof m);
	expect_refused(path, "not a ring: magic 0x21464c45, not 0x47524c52 (\"RLRG\")", "magic");
	struct rlog_ring *h = (struct rlog_ring *)m;
	rlog_ring_init(m, sizeof m);
	h->version = 2;
	write_file(path, m, sizeof m);
	expect_refused(path, "ring version 2; this ringlog reads version 1", "version");
	rlog_ring_init(m, sizeof m);
	h->size = 4096;
	write_file(path, m, sizeof m);
	expect_refused(path, "a ring of 4096 bytes does not fit in 832 bytes after its header",
		       "size");
	rlog_ring_init(m, sizeof m);
	h->size = 830;
	write_file(path, m, sizeof m);
	expect_refused(path, "bad ring size 830 (a multiple of 4, 64 to 1073741824)", "odd size");
	rlog_ring_init(m, sizeof m);
	h->min_free = 828;
	write_file(path, m, sizeof m);
	expect_refused(path, "minimum mark 828 is not below the ring's 828 bytes", "mark");
	rlog_ring_init(m, sizeof m);
	h->tick_source = 7;
	write_file(path, m, sizeof m);
	expect_refused(path, "unknown tick source 7", "clock");
	rlog_ring_init(m, sizeof m);
	atomic_store(&h->read_off, 7);
	write_file(path, m, sizeof m);
	expect_refused(path, "read offset 7 is not an offset in the 832-byte ring", "read offset");
	unlink(path);
	snprintf(path, sizeof path, "/tmp/rlog-test-ring-none-%d", (int)getpid());
	expect_refused(path, "No such file or directory", "missing");
}

static void test_bad_write_offset(void)
{
	struct t_ring t;
	t_ring_create(&t, "bwo", 256, RLOG_TICK_COUNTER, 1000);
	atomic_store(&t.r->write_off, 6);
	const char *log = t_log("bwo");
	struct h_run r;
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 1);
	char want[512];
	snprintf(want, sizeof want,
		 "ringlog: ring-flush: %s: write offset 6 is not an offset in the 256-byte ring: "
		 "nothing read\n",
		 t.path);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ_U64(tf.loss_records, 1);
	ok(tf.n == 2 && tf.e[1].loss.cause == RLOG_LOSS_CORRUPT && tf.e[1].loss.bytes == 0,
	   "one CORRUPT DATA_LOSS after the LOG_MARKER");
	t_file_free(&tf);
	ASSERT_EQ(atomic_load(&t.r->read_off), 0);
	unlink(log);
	t_ring_destroy(&t);
}

static void malformed(const char *tag, unsigned bad_id, uint32_t or_bits)
{
	struct t_ring t;
	t_ring_create(&t, tag, 256, RLOG_TICK_COUNTER, 1000);
	uint64_t v[2] = { 1, 2 };
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 16, (uint32_t)i), 1);
	/* Scribble on the 4th record's header (ring offset 72). */
	unsigned char *ring = (unsigned char *)t.r + RLOG_RING_HEADER_SIZE;
	uint32_t h;
	memcpy(&h, ring + 72, 4);
	if (bad_id)
		h = (h & ~(RLOG_HDR_ID_MASK << RLOG_HDR_ID_SHIFT)) | bad_id << RLOG_HDR_ID_SHIFT;
	h |= or_bits;
	memcpy(ring + 72, &h, 4);
	const char *log = t_log(tag);
	struct h_run r;
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 1);
	char want[512];
	snprintf(want, sizeof want,
		 "ringlog: ring-flush: %s: malformed record at ring offset 72 (header 0x%08x): 48 "
		 "bytes skipped\n",
		 t.path, h);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_bytes"), 48);
	ASSERT_EQ(atomic_load(&t.r->read_off), 120);
	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	ASSERT_EQ_U64(tf.events, 3);
	ASSERT_EQ_U64(tf.loss_records, 1);
	ASSERT_EQ_U64(tf.loss_bytes[RLOG_LOSS_CORRUPT], 48);
	t_file_free(&tf);
	/* The producer goes on after the skipped bytes. */
	ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 16, 9), 1);
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 1);
	unlink(log);
	t_ring_destroy(&t);
}

static void test_cli(void)
{
	struct t_ring t;
	t_ring_create(&t, "cli", 256, RLOG_TICK_COUNTER, 1000);
	const char *log = t_log("cli");
	const char *usage = "usage: ringlog ring-flush PATH -o FILE [--once] [--flush-timer MS] "
			    "[--create KB] [--force]\n";
	char want[1024];
	struct h_run r;
	h_ringlog(&r, "ring-flush", NULL);
	snprintf(want, sizeof want, "ringlog: ring-flush: missing PATH\n%s", usage);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, want);
	h_ringlog(&r, "ring-flush", t.path, "--once", NULL);
	snprintf(want, sizeof want, "ringlog: ring-flush: missing -o FILE\n%s", usage);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, want);
	h_ringlog(&r, "ring-flush", t.path, "-o", log, "--flush-timer", "soon", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: ring-flush: --flush-timer 'soon': expected 0 to 3600000 "
			    "milliseconds\n");
	h_ringlog(&r, "ring-flush", t.path, "-o", t.path, "--once", "--force", NULL);
	snprintf(want, sizeof want, "ringlog: ring-flush: %s: is the ring itself\n", t.path);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(atomic_load(&t.r->magic), RLOG_RING_MAGIC);
	write_file(log, "x", 1);
	h_ringlog(&r, "ring-flush", t.path, "-o", log, "--once", NULL);
	snprintf(want, sizeof want, "ringlog: ring-flush: %s: file exists (use --force to overwrite)\n",
		 log);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, want);
	h_ringlog(&r, "ring-flush", t.path, "-o", log, "--once", "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	char abs[512];
	snprintf(want, sizeof want, "ring: %s\nlog_file: %s\n", t.path, realpath(log, abs));
	ok(strncmp(r.out, want, strlen(want)) == 0, "ring-flush prints the ring and the log file");
	ASSERT_EQ_U64(h_kv(r.out, "drains"), 2);
	ASSERT_EQ_U64(h_kv(r.out, "wakeups"), 0);
	unlink(log);

	/* An output that takes nothing: nothing leaves the ring, one line. */
	uint64_t v = 1;
	ASSERT_EQ(rlog_ring_write(t.r, 1024, &v, 8, 1), 1);
	h_ringlog(&r, "ring-flush", t.path, "-o", "/dev/full", "--once", "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: ring-flush: /dev/full: No space left on device (nothing "
			    "drained: the events stay in the ring)\n");
	ASSERT_EQ(atomic_load(&t.r->read_off), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	t_ring_destroy(&t);

	/* --create: a ring of 8 KiB with the machine's session clock. */
	char path[256];
	snprintf(path, sizeof path, "/dev/shm/rlog-test-create-%d", (int)getpid());
	unlink(path);
	h_ringlog(&r, "ring-flush", path, "-o", log, "--once", "--create", "8", NULL);
	ASSERT_EQ(r.status, 0);
	struct stat st;
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ(st.st_size, 192 + 8192);
	ok((st.st_mode & 0777) == 0600, "the ring is mode 0600");
	/* ... and used as it is when it exists. */
	h_ringlog(&r, "emit", "--ring", path, "1024", "--count", "2", NULL);
	ASSERT_STREQ(r.out, "emitted: 2\nwritten: 2\nlost: 0\n");
	unlink(log);
	h_ringlog(&r, "ring-flush", path, "-o", log, "--once", "--create", "8", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 2);
	h_ringlog(&r, "ring-flush", path, "-o", log, "--create", "0", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: ring-flush: --create '0': expected 1 to 1048576 KiB\n");
	unlink(path);
	unlink(log);
}

static void test_emit_ring(void)
{
	struct t_ring t;
	t_ring_create(&t, "emit", 256, RLOG_TICK_MONOTONIC, 0);
	struct h_run r;
	h_ringlog(&r, "emit", "--ring", t.path, "1500", "--count", "3", "--payload", "0a0b0c",
		  "--flag", "7", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "emitted: 3\nwritten: 3\nlost: 0\n");
	ASSERT_EQ(atomic_load(&t.r->write_off), 3 * 16);
	/* 12 more fill it (15 * 16 = 240 of 252 bytes); 3 do not fit. */
	h_ringlog(&r, "emit", "--ring", t.path, "1500", "--count", "15", "--payload", "0a0b0c",
		  "--flag", "7", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "emitted: 15\nwritten: 12\nlost: 3\n");
	const char *log = t_log("emit");
	t_flush_once(&r, t.path, log);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 15);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 3);
	struct t_file tf;
	t_read(log, &tf, false);
	int good = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		good += !ev->from_daemon && ev->flagged && ev->id == 1500 && ev->flag == 7 &&
			ev->length == 3 && memcmp(ev->payload, "\x0a\x0b\x0c", 3) == 0;
	}
	ASSERT_EQ(good, 15);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], 3);
	t_file_free(&tf);
	unlink(log);

	h_ringlog(&r, "emit", "session", "--ring", t.path, "1500", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: emit: with --ring, give the event ID alone (not 'session "
			       "1500')\nusage: ringlog emit (NAME | --ring PATH) ID");
	h_ringlog(&r, "emit", "--ring", t.path, NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: emit: missing event ID\n");
	h_ringlog(&r, "emit", "--ring", t.path, "1500", "--payload",
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
		  "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f",
		  NULL);
	char want[512];
	snprintf(want, sizeof want,
		 "ringlog: emit: %s: a record of 256 payload bytes does not fit in the 256-byte "
		 "ring\n",
		 t.path);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, want);
	t_ring_destroy(&t);

	t_ring_create(&t, "emitc", 256, RLOG_TICK_COUNTER, 1000);
	h_ringlog(&r, "emit", "--ring", t.path, "1500", NULL);
	snprintf(want, sizeof want,
		 "ringlog: emit: %s: the ring's clock is its producer's own counter, which emit "
		 "cannot read\n",
		 t.path);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(atomic_load(&t.r->write_off), 0);
	t_ring_destroy(&t);
}

int main(void)
{
	test_first_time();
	test_wrap_laps();
	test_wrap_cli();
	test_full();
	test_times_counter();
	times_readable(RLOG_TICK_MONOTONIC, "tmono");
	if (rlog__tick_source_pick() == RLOG_TICK_TSC)
		times_readable(RLOG_TICK_TSC, "ttsc");
	else
		ok(1, "tsc times # SKIP no usable TSC here");
	test_not_a_ring();
	test_bad_write_offset();
	malformed("reserved", 0, RLOG_HDR_RESERVED_BIT);
	malformed("forged", RLOG_ID_DATA_LOSS, 0);
	malformed("metadata", RLOG_ID_THREAD_NAME, 0);
	malformed("counter", RLOG_ID_COUNTER, 0);
	malformed("ctrname", RLOG_ID_COUNTER_NAME, 0); /* the daemon's metadata: never a producer's */
	malformed("toolong", 0, 0xf000); /* Length 0xf010: past the committed bytes */
	test_cli();
	test_emit_ring();
	return done_testing();
}
