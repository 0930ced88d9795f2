/*
 * test_untimed - events without a timestamp (rlog_write_untimed,
 * rlog_write_untimed_flagged) through the real path: this process writes,
 * the daemon drains, the reader and the converters read.
 *
 *   1. Two threads, each a mix of timed, untimed and untimed flagged
 *      events across many 4 KiB buffers: exact counts (the daemon's
 *      events_written, the file's events), the exact bytes of an untimed
 *      record and of an untimed flagged record against docs/FORMAT.md,
 *      and the reader's times: an untimed record has its thread's previous
 *      record's time (also at the start of a buffer) and has_time false.
 *   2. A thread whose first record in the session is untimed: it has the
 *      time of the thread's THREAD_NAME record before it.
 *   3. dump (text and JSON) and both converters mark exactly those
 *      records: '~' before the time, "untimed":true, Chrome's
 *      "untimed":true, CTF classes named NAME:untimed (counted by
 *      babeltrace2 when it is installed).
 *   4. An overloaded session (two 4 KiB buffers) written with untimed
 *      events only: emitted = written + lost exactly.
 */
#include "harness.h"

#include <pthread.h>

#include "tap.h"
#include "proc_run.h"

#define PER_THREAD 6000u
#define OVL_EVENTS 200000u

/* What kind of event the k-th write of a thread is. */
enum kind { TIMED, UNTIMED, UNTIMED_FLAGGED };

static enum kind kind_of(unsigned k)
{
	if (k % 40 == 0)
		return TIMED;
	return k % 3 == 0 ? UNTIMED_FLAGGED : UNTIMED;
}

struct writer {
	struct h_tally tally;
	uint32_t tid;
};

static void *write_mix(void *arg)
{
	struct writer *w = arg;
	w->tid = (uint32_t)gettid();
	for (unsigned k = 0; k < PER_THREAD; k++) {
		uint64_t p[2] = { k + 1, 0x1122334455667788u };
		switch (kind_of(k)) {
		case TIMED:
			h_tally_add(&w->tally, rlog_write(1024, p, 8));
			break;
		case UNTIMED:
			h_tally_add(&w->tally, rlog_write_untimed(1025, p, 16));
			break;
		case UNTIMED_FLAGGED:
			/* 3 bytes: one fill byte. */
			h_tally_add(&w->tally, rlog_write_untimed_flagged(1026, (uint16_t)k, p, 3));
			break;
		}
	}
	return NULL;
}

/* A thread whose first record in the session (after its THREAD_NAME) is
 * untimed. */
static void *write_untimed_first(void *arg)
{
	struct writer *w = arg;
	w->tid = (uint32_t)gettid();
	uint64_t p[2] = { 1, 2 };
	h_tally_add(&w->tally, rlog_write_untimed(1027, p, 16));
	h_tally_add(&w->tally, rlog_write(1024, p, 8));
	return NULL;
}

/* Counts non-overlapping occurrences of needle in hay. */
static unsigned count_of(const char *hay, const char *needle)
{
	unsigned n = 0;
	size_t l = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += l)
		n++;
	return n;
}

/* Text lines of `ringlog dump` whose time column holds a '~'. */
static unsigned count_marked_lines(const char *out)
{
	unsigned n = 0;
	for (const char *p = out; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (p[0] != '#' && len > 14 && memchr(p, '~', 15) != NULL)
			n++;
		p += len + (e != NULL);
	}
	return n;
}

/* The file at path, NUL-terminated, cut at cap - 1 bytes ("" if absent). */
static size_t read_text(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return n;
}

/* Runs argv and expects exit status 0. */
static void run_ok(const char *const argv[])
{
	struct run c;
	c = proc_run(argv);
	ok(c.status == 0, "%s %s exits 0", argv[1], argv[2]);
	if (c.status != 0)
		diag("stderr: %s", c.err);
	run_free(&c);
}

static uint8_t file[4 << 20];

int main(void)
{
	const char *name = h_session("untimed");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("untimed"));
	h_start(name, path, "4", "256");
	ASSERT_EQ(rlog_attach(name), 0);

	/* Caller errors are refused and not counted, as for rlog_write. */
	uint64_t p[2] = { 0, 0 };
	ASSERT_EQ(rlog_write_untimed(3, p, 4), -EINVAL);
	ASSERT_EQ(rlog_write_untimed(33, p, 4), -EINVAL);
	ASSERT_EQ(rlog_write_untimed_flagged(16384, 1, p, 4), -EINVAL);
	ASSERT_EQ(rlog_write_untimed(1024, NULL, 70000), -EMSGSIZE);

	pthread_t th[3];
	struct writer w[3];
	memset(w, 0, sizeof w);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, write_mix, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(pthread_create(&th[2], NULL, write_untimed_first, &w[2]), 0);
	pthread_join(th[2], NULL);
	rlog_detach();
	uint64_t written = 0;
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ_U64(w[i].tally.lost + w[i].tally.off + w[i].tally.other, 0);
		written += w[i].tally.written;
	}
	ASSERT_EQ_U64(written, 2 * PER_THREAD + 2);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, written, 0);

	size_t fsz = h_read_whole(path, file, sizeof file);

	/* The reader: per thread, the k-th event is what write_mix wrote,
	 * untimed ones carry the time of the record before them. */
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	unsigned seen[2] = { 0, 0 }, untimed = 0, bad_kind = 0, bad_time = 0, bad_bytes = 0;
	unsigned buffer_starts = 0;
	uint64_t prev_ticks[3] = { 0, 0, 0 }, prev_block[3] = { 0, 0, 0 };
	bool first_checked = false, first_ok = false;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon)
			continue;
		int t = ev.tid == w[0].tid ? 0 : ev.tid == w[1].tid ? 1 : ev.tid == w[2].tid ? 2 : -1;
		if (t < 0)
			continue;
		if (!ev.has_time) {
			untimed++;
			if (ev.ticks != prev_ticks[t])
				bad_time++;
			if (ev.block_offset != prev_block[t])
				buffer_starts++; /* the cursor came from the block's base time */
		}
		if (t == 2 && ev.id == 1027) {
			first_checked = true;
			/* Its previous record is its THREAD_NAME, time-stamped. */
			first_ok = !ev.has_time && ev.ticks == prev_ticks[2] && prev_ticks[2] != 0;
		}
		prev_ticks[t] = ev.ticks;
		prev_block[t] = ev.block_offset;
		if (h_is_metadata(&ev) || t == 2)
			continue;
		unsigned k = seen[t]++;
		enum kind want = kind_of(k);
		unsigned want_id = want == TIMED ? 1024 : want == UNTIMED ? 1025 : 1026;
		if (ev.id != want_id || ev.has_time != (want == TIMED) ||
		    ev.flagged != (want == UNTIMED_FLAGGED)) {
			if (bad_kind++ < 5)
				diag("thread %d event %u: id %u has_time %d flagged %d", t, k, ev.id,
				     ev.has_time, ev.flagged);
			continue;
		}
		/* The bytes in the file, as FORMAT.md draws them. */
		const uint8_t *b = ev.offset + ev.size <= fsz ? file + ev.offset : NULL;
		uint64_t seq = k + 1;
		if (want == UNTIMED) {
			/* header 0x04010010: Length 16, ID 1025, fTimeStamp 0;
			 * then the 16-byte payload; 20 bytes. */
			uint8_t x[20] = { 0x10, 0x00, 0x01, 0x04 };
			memcpy(x + 4, &seq, 8);
			uint64_t tail = 0x1122334455667788u;
			memcpy(x + 12, &tail, 8);
			if (ev.size != 20 || b == NULL || memcmp(b, x, 20) != 0)
				bad_bytes++;
		} else if (want == UNTIMED_FLAGGED) {
			/* header 0x00030003: Length 3, ID 3 (FLAGGED); flag word
			 * k << 16 | 1026; payload 3 bytes, 1 fill byte 0; 12 bytes. */
			uint8_t x[12] = { 0x03, 0x00, 0x03, 0x00, 0x02, 0x04, (uint8_t)k,
					  (uint8_t)(k >> 8), (uint8_t)seq, (uint8_t)(seq >> 8),
					  (uint8_t)(seq >> 16), 0 };
			if (ev.size != 12 || ev.flag != (uint16_t)k || b == NULL || memcmp(b, x, 12) != 0)
				bad_bytes++;
		}
	}
	rlog_reader_close(rd);
	unsigned want_untimed = 0;
	for (unsigned k = 0; k < PER_THREAD; k++)
		want_untimed += kind_of(k) != TIMED;
	ASSERT_EQ(seen[0], PER_THREAD);
	ASSERT_EQ(seen[1], PER_THREAD);
	ASSERT_EQ(bad_kind, 0);
	ASSERT_EQ(bad_bytes, 0);
	ASSERT_EQ(untimed, 2 * want_untimed + 1);
	ASSERT_EQ(bad_time, 0);
	ok(buffer_starts >= 2, "untimed records at the start of a block have the thread's "
			       "previous time too (%u seen)", buffer_starts);
	ok(first_checked && first_ok, "a thread's first event, untimed, has its THREAD_NAME's time");

	/* dump and the converters mark exactly the untimed records. */
	char out[300];
	struct run c;
	const char *dump_text[] = { h_bin(), "dump", path, NULL };
	c = proc_run(dump_text);
	ASSERT_EQ(c.status, 0);
	ASSERT_EQ(count_marked_lines(c.out), 2 * want_untimed + 1);
	run_free(&c);
	const char *dump_json[] = { h_bin(), "dump", path, "--format", "json", NULL };
	c = proc_run(dump_json);
	ASSERT_EQ(c.status, 0);
	ASSERT_EQ(count_of(c.out, "\"untimed\":true"), 2 * want_untimed + 1);
	run_free(&c);

	snprintf(out, sizeof out, "%s.json", path);
	const char *chrome[] = { h_bin(), "convert", path, "--to", "chrome", "-o", out, "--force",
				 NULL };
	run_ok(chrome);
	static char cj[8 << 20];
	read_text(out, cj, sizeof cj);
	ASSERT_EQ(count_of(cj, "\"untimed\":true"), 2 * want_untimed + 1);
	unlink(out);

	snprintf(out, sizeof out, "%s.ctf", path);
	const char *ctf[] = { h_bin(), "convert", path, "--to", "ctf", "-o", out, "--force", NULL };
	run_ok(ctf);
	char meta[320];
	snprintf(meta, sizeof meta, "%s/metadata", out);
	static char mt[1 << 20];
	read_text(meta, mt, sizeof mt);
	ok(strstr(mt, "name = \"1025:untimed\"") && strstr(mt, "name = \"1026:untimed\"") &&
		   strstr(mt, "name = \"1027:untimed\"") && strstr(mt, "name = \"1024\"") &&
		   !strstr(mt, "name = \"1024:untimed\""),
	   "CTF: untimed records have classes of their own");
	if (have_babeltrace()) {
		const char *bt[] = { "babeltrace2", out, NULL };
		c = proc_run(bt);
		ASSERT_EQ(c.status, 0);
		ASSERT_EQ(count_of(c.out, ":untimed:"), 2 * want_untimed + 1);
		run_free(&c);
	} else {
		ok(1, "# SKIP babeltrace2 is not installed");
	}
	const char *rm[] = { "rm", "-rf", out, NULL };
	c = proc_run(rm);
	run_free(&c);
	unlink(path);

	/* Overload: two 4 KiB buffers, untimed events only, flat out. */
	name = h_session("untimed-ovl");
	snprintf(path, sizeof path, "%s", h_path("untimed-ovl"));
	h_start(name, path, "4", "2");
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0 };
	for (uint64_t k = 1; k <= OVL_EVENTS; k++)
		h_tally_add(&t, rlog_write_untimed(1025, &k, 8));
	rlog_detach();
	ASSERT_EQ_U64(t.written + t.lost, OVL_EVENTS);
	ASSERT_EQ_U64(t.off + t.other, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, t.written, t.lost);
	unlink(path);
	return done_testing();
}
