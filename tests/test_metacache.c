/*
 * test_metacache - the daemon's cache of metadata records
 * (src/common/metacache.h), which the file modes, the real-time streams
 * and snapshots write again as copy blocks:
 *
 *   1. it keeps the latest record per key (schema: pid and event ID;
 *      thread name: pid and tid; process name: pid), by time, whatever
 *      the order they come in; an older record does not replace a newer;
 *   2. it ignores what is not metadata (events, TIME_SYNC, flagged
 *      records with metadata IDs, a schema too short for its event ID);
 *   3. rendered, it gives one copy block per (pid, tid), records in time
 *      order with a TIME_SYNC before a jump of 2^31 ticks, base_time the
 *      first record's time; the blocks decode back into the same records;
 *   4. it stays within its limit, dropping the oldest entries (counted),
 *      and the rendered bytes never exceed its cost;
 *   5. a counter's name (COUNTER_NAME, the daemon's, tid 0) is kept per pid
 *      and counter ID, apart from the process's name.
 */
#include "metacache.h"
#include "record.h"
#include "tap.h"

/* A time-stamped record of id with payload p (n bytes) at ticks. */
static uint32_t rec(uint8_t *out, unsigned id, uint64_t ticks, const void *p, unsigned n)
{
	uint32_t w[2] = { rlog__hdr_make(id, n, true), (uint32_t)ticks };
	memcpy(out, w, 8);
	memcpy(out + 8, p, n);
	uint32_t size = rlog__record_size(id, n, true);
	memset(out + 8 + n, 0, size - 8 - n);
	return size;
}

struct seen {
	int blocks;
	uint32_t pid[16], tid[16], records[16];
	uint64_t base[16];
	int syncs;
	char text[512];  /* "pid/tid:id@ticks ..." of every record */
	size_t bytes;
};

static int emit(void *arg, uint32_t pid, uint32_t tid, uint64_t base, const void *data,
		uint32_t size, uint32_t records)
{
	struct seen *s = arg;
	int i = s->blocks++;
	if (i < 16) {
		s->pid[i] = pid;
		s->tid[i] = tid;
		s->records[i] = records;
		s->base[i] = base;
	}
	s->bytes += 48 + size;
	uint64_t cursor = base;
	const uint8_t *d = data;
	for (uint32_t off = 0; off < size;) {
		struct rlog__record r;
		int sz = rlog__record_decode(d + off, size - off, &r);
		if (sz < 0 || rlog__time_apply(&cursor, &r) < 0)
			return -EBADMSG;
		if (r.id == RLOG_ID_TIME_SYNC)
			s->syncs++;
		else
			snprintf(s->text + strlen(s->text), sizeof s->text - strlen(s->text),
				 "%u/%u:%u@%llu ", pid, tid, r.id, (unsigned long long)cursor);
		off += (uint32_t)sz;
	}
	return 0;
}

int main(void)
{
	struct rlog__metacache c;
	uint8_t b[256];
	uint8_t schema_a[] = { 0xd0, 0x07, 0, 0, 1, 0, 'a' };  /* ID 2000 "a" */
	uint8_t schema_b[] = { 0xd0, 0x07, 0, 0, 1, 0, 'b' };  /* ID 2000 "b" */
	rlog__metacache_init(&c, RLOG__META_LIMIT);

	/* 1: the latest by time, whatever the order. */
	uint32_t n = rec(b, RLOG_ID_EVENT_SCHEMA, 200, schema_b, sizeof schema_b);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 200, b, n), 0);
	n = rec(b, RLOG_ID_EVENT_SCHEMA, 100, schema_a, sizeof schema_a);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 12, 100, b, n), 0); /* older: ignored */
	n = rec(b, RLOG_ID_THREAD_NAME, 150, "one", 3);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 150, b, n), 0);
	n = rec(b, RLOG_ID_THREAD_NAME, 160, "two", 3);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 160, b, n), 0); /* renamed */
	n = rec(b, RLOG_ID_PROCESS_NAME, 90, "proc", 4);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 90, b, n), 0);
	ASSERT_EQ(c.live, 3);
	/* 2: not metadata. */
	n = rec(b, 2000, 300, "xx", 2);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 300, b, n), 0);
	n = rec(b, RLOG_ID_EVENT_SCHEMA, 300, "x", 1); /* no room for the event ID */
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 300, b, n), 0);
	uint32_t flagged[3] = { rlog__hdr_make(RLOG_ID_FLAGGED, 0, true), 300,
				RLOG_ID_THREAD_NAME };
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 300, flagged, sizeof flagged), 0);
	ASSERT_EQ(c.live, 3);
	/* The same record again (a copy read back) changes nothing. */
	uint64_t v = c.version;
	n = rec(b, RLOG_ID_THREAD_NAME, 160, "two", 3);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, 160, b, n), 0);
	ASSERT_EQ_U64(c.version, v);

	/* 3: rendered; a second thread far later in time. */
	n = rec(b, RLOG_ID_THREAD_NAME, (1ull << 32) + 5, "late", 4);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 13, (1ull << 32) + 5, b, n), 0);
	n = rec(b, RLOG_ID_THREAD_NAME, (3ull << 32) + 7, "later", 5);
	ASSERT_EQ(rlog__metacache_add(&c, 11, 11, (3ull << 32) + 7, b, n), 0);
	/* thread (10, 11) gets its schema far later too: a TIME_SYNC */
	n = rec(b, RLOG_ID_EVENT_SCHEMA, (2ull << 32) + 9, schema_a, sizeof schema_a);
	ASSERT_EQ(rlog__metacache_add(&c, 10, 11, (2ull << 32) + 9, b, n), 0);
	struct seen s;
	memset(&s, 0, sizeof s);
	ASSERT_EQ(rlog__metacache_render(&c, emit, &s), 0);
	ASSERT_EQ(s.blocks, 3);
	ASSERT_EQ(s.pid[0], 10);
	ASSERT_EQ(s.tid[0], 11);
	ASSERT_EQ_U64(s.base[0], 90);
	ASSERT_EQ(s.records[0], 4); /* process name, thread name, TIME_SYNC, schema */
	ASSERT_EQ(s.tid[1], 13);
	ASSERT_EQ(s.pid[2], 11);
	ASSERT_EQ(s.syncs, 1);
	ASSERT_STREQ(s.text, "10/11:35@90 10/11:34@160 10/11:33@8589934601 10/13:34@4294967301 "
			     "11/11:34@12884901895 ");
	ok(s.bytes <= c.bytes, "rendered %zu bytes <= cost %zu", s.bytes, c.bytes);
	rlog__metacache_free(&c);

	/* 4: bounded: 100 thread names of 24 bytes (cost 88 each) in 1000
	 * bytes keep the 11 newest. */
	rlog__metacache_init(&c, 1000);
	for (uint32_t i = 0; i < 100; i++) {
		char name[16];
		snprintf(name, sizeof name, "t%03u-name-xx", i);
		n = rec(b, RLOG_ID_THREAD_NAME, 1000 + i, name, 12);
		ASSERT_EQ(rlog__metacache_add(&c, 1, 100 + i, 1000 + i, b, n), 0);
	}
	ASSERT_EQ(c.live, 11);
	ASSERT_EQ_U64(c.evicted, 89);
	ok(c.bytes <= 1000, "cost %zu within 1000", c.bytes);
	memset(&s, 0, sizeof s);
	ASSERT_EQ(rlog__metacache_render(&c, emit, &s), 0);
	ASSERT_EQ(s.blocks, 11);
	ASSERT_EQ(s.tid[0], 189); /* the oldest kept */
	ok(s.bytes <= c.bytes, "rendered %zu bytes <= cost %zu", s.bytes, c.bytes);
	ok(c.n <= 2 * c.live + 64, "evicted entries compacted: %zu slots for %zu live", c.n, c.live);
	rlog__metacache_free(&c);

	/* 5: counter names, per (pid, counter ID), apart from the process name. */
	rlog__metacache_init(&c, RLOG__META_LIMIT);
	uint8_t cn1[] = { 1, 0, 0, 0, RLOG_COUNTER_SRC_APP, 0, 1, 0, 'x' };
	uint8_t cn2[] = { 2, 0, 0, 0, RLOG_COUNTER_SRC_APP, 0, 1, 0, 'y' };
	uint8_t cn1b[] = { 1, 0, 0, 0, RLOG_COUNTER_SRC_APP, 0, 1, 0, 'z' };
	n = rec(b, RLOG_ID_PROCESS_NAME, 10, "proc", 4);
	ASSERT_EQ(rlog__metacache_add(&c, 20, 0, 10, b, n), 0);
	n = rec(b, RLOG_ID_COUNTER_NAME, 11, cn1, sizeof cn1);
	ASSERT_EQ(rlog__metacache_add(&c, 20, 0, 11, b, n), 0);
	n = rec(b, RLOG_ID_COUNTER_NAME, 12, cn2, sizeof cn2);
	ASSERT_EQ(rlog__metacache_add(&c, 20, 0, 12, b, n), 0);
	ASSERT_EQ(c.live, 3);
	n = rec(b, RLOG_ID_COUNTER_NAME, 13, cn1b, sizeof cn1b); /* counter 1 renamed */
	ASSERT_EQ(rlog__metacache_add(&c, 20, 0, 13, b, n), 0);
	n = rec(b, RLOG_ID_COUNTER_NAME, 14, "\1\0", 2); /* too short for its counter ID */
	ASSERT_EQ(rlog__metacache_add(&c, 20, 0, 14, b, n), 0);
	ASSERT_EQ(c.live, 3);
	memset(&s, 0, sizeof s);
	ASSERT_EQ(rlog__metacache_render(&c, emit, &s), 0);
	ASSERT_EQ(s.blocks, 1);
	ASSERT_STREQ(s.text, "20/0:35@10 20/0:38@12 20/0:38@13 ");
	rlog__metacache_free(&c);
	return done_testing();
}
