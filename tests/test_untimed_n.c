/*
 * test_untimed_n - rlog_write_untimed_n, many untimed records in one call,
 * through the real path (this process writes, the daemon drains, the
 * reader reads):
 *
 *   1. Caller errors: a bad ID or count (-EINVAL), a length no buffer
 *      holds (-EMSGSIZE); with no session, 0 and nothing counted.
 *   2. Two threads, each batches of 1 to 97 records of 0, 3, 12, 16 and 64
 *      payload bytes (every branch of the copy: memcpy, 8-byte words, a
 *      4-byte tail, fill bytes) between single rlog_write_untimed and
 *      rlog_write calls, in 4 KiB buffers, so that batches cross buffer
 *      ends: every call returns its count; the file holds each thread's
 *      records in call order, with the exact bytes docs/FORMAT.md draws,
 *      untimed, with the time of the record before them; the daemon's
 *      events_written is exactly the total.
 *   3. An overloaded session (two 4 KiB buffers), batches of 64 flat out:
 *      what the calls returned plus what they did not write is exactly
 *      emitted = written + lost in the daemon's counts; 3-byte records in
 *      reused buffers have their exact bytes, the fill byte 0.
 *   4. Two sessions (rlog_attach_add) and a thread whose first write is a
 *      batch: each record in both; records that fit only the second
 *      session's buffers go there, the call returning -EMSGSIZE, as a
 *      single call's would.
 */
#include "harness.h"

#include <pthread.h>

#include "tap.h"

#define CALLS 1000u
#define OVL_CALLS 8000u /* at most 512,000 records, 7 MB: the file fits in file[] */
#define MAX_BATCH 97u

static uint8_t file[16 << 20];

static const size_t lens[] = { 0, 3, 12, 16, 64 };

/* The j-th payload byte of the record numbered seq of a thread. */
static uint8_t byte_of(uint32_t seq, unsigned t, size_t j)
{
	return (uint8_t)(seq * 7u + j * 13u + t * 101u + 1u);
}

/* What the thread's c-th call is: a batch of n records of len bytes
 * (n 0: one rlog_write_untimed; n UINT32_MAX: one timed rlog_write). */
static void call_of(unsigned c, uint32_t *n, size_t *len)
{
	*len = lens[c % 5];
	*n = c % 11 == 0 ? 0 : c % 17 == 0 ? UINT32_MAX : 1 + (c * 31u) % MAX_BATCH;
}

struct writer {
	unsigned t;
	uint32_t tid;
	uint64_t records;      /* records the calls said they wrote */
	uint64_t short_calls;  /* calls that returned less than asked */
};

static void *write_batches(void *arg)
{
	struct writer *w = arg;
	w->tid = (uint32_t)gettid();
	static _Thread_local uint8_t buf[MAX_BATCH * 64];
	uint32_t seq = 0;
	for (unsigned c = 0; c < CALLS; c++) {
		uint32_t n;
		size_t len;
		call_of(c, &n, &len);
		uint32_t k = n == 0 || n == UINT32_MAX ? 1 : n;
		for (uint32_t i = 0; i < k; i++)
			for (size_t j = 0; j < len; j++)
				buf[i * len + j] = byte_of(seq + i, w->t, j);
		int r;
		if (n == 0)
			r = rlog_write_untimed(1030, buf, len);
		else if (n == UINT32_MAX)
			r = rlog_write(1031, buf, len);
		else
			r = rlog_write_untimed_n(1030, buf, len, n);
		if (r != (int)k)
			w->short_calls++;
		w->records += r > 0 ? (uint64_t)r : 0;
		seq += k;
	}
	return NULL;
}

/* Part 4's thread: its first write is a batch. */
struct two_sessions {
	int first, big;
	uint64_t written;
};

static void *write_two_sessions(void *arg)
{
	struct two_sessions *ts = arg;
	uint64_t v[50][2];
	for (unsigned k = 0; k < 10; k++) {
		for (unsigned i = 0; i < 50; i++) {
			v[i][0] = k * 50 + i;
			v[i][1] = ~v[i][0];
		}
		int n = rlog_write_untimed_n(1027, v, 16, 50);
		if (k == 0)
			ts->first = n;
		ts->written += n > 0 ? (uint64_t)n : 0;
	}
	static uint8_t big[3 * 8000];
	ts->big = rlog_write_untimed_n(1028, big, 8000, 3);
	return NULL;
}

int main(void)
{
	/* 1. Caller errors, and no session. */
	uint8_t p[64] = { 0 };
	ASSERT_EQ(rlog_write_untimed_n(1024, p, 16, 4), 0);
	ASSERT_EQ(rlog_write_untimed_n(3, p, 4, 1), -EINVAL);
	ASSERT_EQ(rlog_write_untimed_n(33, p, 4, 1), -EINVAL);
	ASSERT_EQ(rlog_write_untimed_n(1024, p, 4, (size_t)1 << 31), -EINVAL);
	static uint8_t big[70000];
	ASSERT_EQ(rlog_write_untimed_n(1024, big, 70000, 1), 0); /* as rlog_write_untimed */

	const char *name = h_session("untimed-n");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("untimed-n"));
	/* 8 MiB of 4 KiB buffers: more than the threads write (about 4 MB),
	 * so nothing can be lost whatever the daemon's pace. */
	h_start(name, path, "4", "2048");
	ASSERT_EQ(rlog_attach(name), 0);
	/* Records that fit no 4 KiB buffer, or no record at all; an empty
	 * batch; empty payloads with no payload bytes to point at. */
	ASSERT_EQ(rlog_write_untimed_n(1024, big, 70000, 1), -EMSGSIZE);
	ASSERT_EQ(rlog_write_untimed_n(1024, big, 8000, 2), -EMSGSIZE);
	ASSERT_EQ(rlog_write_untimed_n(1024, NULL, 16, 0), 0);
	ASSERT_EQ(rlog_write_untimed_n(1032, NULL, 0, 3), 3);

	/* 2. Two threads of mixed batches. */
	pthread_t th[2];
	struct writer w[2];
	memset(w, 0, sizeof w);
	for (unsigned i = 0; i < 2; i++) {
		w[i].t = i;
		ASSERT_EQ(pthread_create(&th[i], NULL, write_batches, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rlog_detach();
	ASSERT_EQ_U64(w[0].short_calls + w[1].short_calls, 0);
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, w[0].records + w[1].records + 3, 0);

	/* The file, thread by thread, in call order. */
	size_t fsz = h_read_whole(path, file, sizeof file);
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	uint32_t seq[2] = { 0, 0 };
	unsigned call[2] = { 0, 0 }, left[2] = { 0, 0 };
	uint64_t prev_ticks[2] = { 0, 0 }, bad = 0, untimed = 0, seen = 0, empties = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		/* The three empty records: a bare 4-byte header each. */
		const uint8_t *b4 = ev.offset + 4 <= fsz ? file + ev.offset : NULL;
		uint8_t e4[4] = { 0x00, 0x00, 0x08, 0x04 }; /* ID 1032, Length 0, untimed */
		empties += !ev.from_daemon && ev.id == 1032 && ev.size == 4 && !ev.has_time &&
			   b4 != NULL && memcmp(b4, e4, 4) == 0;
		int t = ev.tid == w[0].tid ? 0 : ev.tid == w[1].tid ? 1 : -1;
		if (t < 0 || ev.from_daemon)
			continue;
		uint64_t prev = prev_ticks[t];
		prev_ticks[t] = ev.ticks;
		if (h_is_metadata(&ev))
			continue;
		uint32_t n;
		size_t len;
		call_of(call[t], &n, &len);
		if (left[t] == 0)
			left[t] = n == 0 || n == UINT32_MAX ? 1 : n;
		bool timed = n == UINT32_MAX;
		/* header: Length, ID, fTimeStamp; the payload; fill to 4. */
		uint32_t hdr = (uint32_t)(timed ? 1031 : 1030) << 16 | (uint32_t)len |
			       (timed ? 0x80000000u : 0);
		uint8_t want[80];
		size_t at = timed ? 8 : 4, size = (at + len + 3) & ~(size_t)3;
		memset(want, 0, sizeof want);
		memcpy(want, &hdr, 4);
		for (size_t j = 0; j < len; j++)
			want[at + j] = byte_of(seq[t], (unsigned)t, j);
		const uint8_t *got = ev.offset + size <= fsz ? file + ev.offset : NULL;
		bool ok_rec = ev.id == (timed ? 1031 : 1030) && ev.length == len && ev.size == size &&
			      ev.has_time == timed && got != NULL &&
			      memcmp(got, want, timed ? 4 : size) == 0 &&
			      (len == 0 || memcmp(ev.payload, want + at, len) == 0);
		if (!timed) {
			untimed++;
			ok_rec = ok_rec && ev.ticks == prev;
		}
		if (!ok_rec && bad++ < 5)
			diag("thread %d record %u (call %u): id %u length %u size %u has_time %d", t,
			     seq[t], call[t], ev.id, ev.length, ev.size, ev.has_time);
		seen++;
		seq[t]++;
		if (--left[t] == 0)
			call[t]++;
	}
	rlog_reader_close(rd);
	ASSERT_EQ_U64(bad, 0);
	ASSERT_EQ_U64(empties, 3);
	ASSERT_EQ_U64(seen, w[0].records + w[1].records);
	ASSERT_EQ(call[0], CALLS);
	ASSERT_EQ(call[1], CALLS);
	ok(untimed > seen / 2, "most records untimed (%llu of %llu)", (unsigned long long)untimed,
	   (unsigned long long)seen);
	unlink(path);

	/* 3. Overload: two 4 KiB buffers, batches of 64 flat out. */
	name = h_session("untimed-n-ovl");
	snprintf(path, sizeof path, "%s", h_path("untimed-n-ovl"));
	h_start(name, path, "4", "2");
	ASSERT_EQ(rlog_attach(name), 0);
	/* Every other batch of 3-byte records, whose fill byte must be 0 in
	 * buffers that earlier laps filled with 0xff. */
	uint64_t batch[64][2], written = 0, emitted = 0, short_calls = 0;
	uint8_t small[64][3];
	for (uint64_t c = 0; c < OVL_CALLS; c++) {
		for (unsigned i = 0; i < 64; i++) {
			batch[i][0] = c * 64 + i;
			batch[i][1] = UINT64_MAX;
			small[i][0] = 0xa5;
			small[i][1] = 0x5a;
			small[i][2] = (uint8_t)i;
		}
		int n = c % 2 ? rlog_write_untimed_n(1026, small, 3, 64)
			      : rlog_write_untimed_n(1025, batch, 16, 64);
		if (n < 0 || n > 64) {
			ok(0, "call %llu returned %d", (unsigned long long)c, n);
			break;
		}
		written += (uint64_t)n;
		emitted += 64;
		short_calls += n < 64;
	}
	rlog_detach();
	ok(short_calls > 0, "the overload lost records (%llu short calls)",
	   (unsigned long long)short_calls);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, written, emitted - written);
	fsz = h_read_whole(path, file, sizeof file);
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	uint64_t smalls = 0, bad_small = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || ev.id != 1026)
			continue;
		smalls++;
		const uint8_t *b = ev.offset + 8 <= fsz ? file + ev.offset : NULL;
		uint8_t want[8] = { 0x03, 0x00, 0x02, 0x04, 0xa5, 0x5a, 0, 0 };
		/* the third payload byte is the record's index in its batch */
		if (b == NULL || ev.size != 8 || memcmp(b, want, 6) != 0 || b[6] > 63 || b[7] != 0)
			bad_small++;
	}
	rlog_reader_close(rd);
	ok(smalls > 0, "3-byte records written in the overload (%llu)", (unsigned long long)smalls);
	ASSERT_EQ_U64(bad_small, 0);
	unlink(path);

	/* 4. Two sessions, 4 KiB and 16 KiB buffers, and a thread whose first
	 * write is a batch: every record goes to both; 8,000-byte records
	 * fit only the second's buffers, which take them, as they take a
	 * single call's, while the call says -EMSGSIZE. */
	char na[64], nb[64], pa[256], pb[256];
	snprintf(na, sizeof na, "%s", h_session("untimed-n-a"));
	snprintf(nb, sizeof nb, "%s", h_session("untimed-n-b"));
	snprintf(pa, sizeof pa, "%s", h_path("untimed-n-a"));
	snprintf(pb, sizeof pb, "%s", h_path("untimed-n-b"));
	h_start(na, pa, "4", "64");
	h_start(nb, pb, "16", "64");
	ASSERT_EQ(rlog_attach(na), 0);
	ASSERT_EQ(rlog_attach_add(nb), 0);
	pthread_t tb;
	struct two_sessions ts = { 0 };
	ASSERT_EQ(pthread_create(&tb, NULL, write_two_sessions, &ts), 0);
	pthread_join(tb, NULL);
	rlog_detach();
	ASSERT_EQ(ts.first, 50);
	ASSERT_EQ_U64(ts.written, 500);
	ASSERT_EQ(ts.big, -EMSGSIZE);
	h_ringlog(&r, "stop", na, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, pa, 500, 0);
	h_ringlog(&r, "stop", nb, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, pb, 503, 0);
	unlink(pa);
	unlink(pb);
	return done_testing();
}
