/*
 * test_counter_keep - the daemon's copy of its latest counter blocks, for
 * snapshots (src/daemon/counter_keep.c), through a sink of the test's own
 * that records what it is handed:
 *   - every block goes to the output's sinks as it is, and a copy is kept
 *     in which every COUNTER record carries its value (Length 24), the
 *     value followed from the counter's first record; other records are
 *     copied as they are;
 *   - --since-last hands over only what no earlier call took; a full call
 *     hands over everything kept, and counts as taken;
 *   - past the byte limit the oldest blocks go; a since-last call then
 *     starts at the oldest kept;
 *   - a gap in a counter's seq (a block lost before the keep saw it) makes
 *     its value unknown: its records are kept as they were until one that
 *     carries the value.
 */
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "sink.h"
#include "tap.h"

/* The test's sink: the blocks it was handed, each as bytes. */
struct got {
	uint32_t pid, tid, records, size;
	uint16_t flags;
	uint64_t base_time;
	uint8_t data[512];
};

static struct got got[64];
static int ngot;

static void take_block(struct rlog__sink *s, const struct rlog__out_block *b)
{
	(void)s;
	if (ngot == 64 || b->size > sizeof got[0].data)
		return;
	struct got *g = &got[ngot++];
	g->pid = b->pid;
	g->tid = b->tid;
	g->records = b->records;
	g->size = b->size;
	g->flags = b->flags;
	g->base_time = b->base_time;
	memcpy(g->data, b->data, b->size);
}

static int nothing(struct rlog__sink *s)
{
	(void)s;
	return 0;
}

static int finish(struct rlog__sink *s, const struct rlog_log_marker *m)
{
	(void)s;
	(void)m;
	return 0;
}

static void no_free(struct rlog__sink *s)
{
	(void)s;
}

static const struct rlog__sink_ops ops = { "test", take_block, nothing, NULL, finish, no_free };

/* A block being built: records time-stamped at 0x100. */
struct blk {
	uint8_t d[512];
	uint32_t len, records;
};

static void put(struct blk *b, unsigned id, const void *p, unsigned len)
{
	uint32_t hw[2] = { rlog__hdr_make(id, len, true), 0x100 };
	memcpy(b->d + b->len, hw, 8);
	memcpy(b->d + b->len + 8, p, len);
	b->len += rlog__record_size(id, len, true);
	b->records++;
}

static void counter(struct blk *b, uint32_t id, uint16_t seq, uint64_t delta, bool value,
		    uint64_t v)
{
	struct rlog_counter_delta d = { .counter_id = id, .seq = seq, .delta = delta, .value = v };
	d.flags = value ? RLOG_COUNTER_FLAG_VALUE : 0;
	put(b, RLOG_ID_COUNTER, &d, rlog__counter_len(d.flags));
}

static void name(struct blk *b, uint32_t id, const char *nm)
{
	uint8_t p[64];
	struct rlog_counter_name h = { .counter_id = id, .source = RLOG_COUNTER_SRC_APP,
				       .name_len = (uint8_t)strlen(nm) };
	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, nm, strlen(nm));
	put(b, RLOG_ID_COUNTER_NAME, p, (unsigned)(sizeof h + strlen(nm)));
}

static void emit(struct rlog__output *o, uint32_t pid, uint64_t base, struct blk *b)
{
	struct rlog__out_block ob = { .flags = RLOG_BLOCK_FLAG_DAEMON, .pid = pid, .tid = 0,
				      .base_time = base, .data = b->d, .size = b->len,
				      .records = b->records };
	rlog__output_counter_block(o, &ob);
	memset(b, 0, sizeof *b);
}

/* The COUNTER records of got[g]: seq, delta, flags, value (0 if none). */
struct crec {
	uint32_t id;
	uint16_t seq, flags;
	uint64_t delta, value;
	unsigned length;
};

static int counters_of(int g, struct crec *out, int max)
{
	int n = 0;
	for (uint32_t off = 0; off < got[g].size;) {
		struct rlog__record r;
		int sz = rlog__record_decode(got[g].data + off, got[g].size - off, &r);
		if (sz < 0)
			return -1;
		if (r.id == RLOG_ID_COUNTER && n < max) {
			struct rlog_counter_delta d = { 0 };
			memcpy(&d, r.payload, r.length < sizeof d ? r.length : sizeof d);
			out[n++] = (struct crec){ d.counter_id, d.seq, d.flags, d.delta,
						  (d.flags & RLOG_COUNTER_FLAG_VALUE) ? d.value : 0,
						  r.length };
		}
		off += (uint32_t)sz;
	}
	return n;
}

int main(void)
{
	struct rlog__output o;
	struct rlog__sink live = { .ops = &ops }, snap = { .ops = &ops };
	/* 3 blocks of 112 bytes fit in the keep (a copy grows by 8 per COUNTER
	 * record without the value): 400 bytes. */
	rlog__output_init(&o, 1 << 16);
	o.counters.limit = 400;
	ASSERT_EQ(rlog__output_add(&o, &live, true), 0);

	struct blk b = { 0 };
	name(&b, 1, "a.b");                      /* 24 bytes */
	counter(&b, 1, 0, 5, true, 5);           /* 32 */
	counter(&b, 2, 7, 3, false, 0);          /* 24: counter 2 never seen with a value */
	emit(&o, 42, 1000, &b);                  /* block 0: 80 bytes */
	counter(&b, 1, 1, 6, false, 0);
	counter(&b, 1, 2, 7, false, 0);
	emit(&o, 42, 2000, &b);                  /* block 1: 48 bytes */
	ASSERT_EQ(ngot, 2);
	ok(got[1].size == 48, "the live sink gets the block as it was (%u bytes)", got[1].size);

	/* A full call: both blocks, values filled in. */
	ngot = 0;
	rlog__output_counters_to(&o, &snap, false);
	ASSERT_EQ(ngot, 2);
	ASSERT_EQ(got[0].pid, 42);
	ASSERT_EQ(got[0].tid, 0);
	ASSERT_EQ(got[0].flags, RLOG_BLOCK_FLAG_DAEMON);
	ASSERT_EQ_U64(got[0].base_time, 1000);
	ASSERT_EQ(got[0].records, 3);
	struct crec c[8];
	ASSERT_EQ(counters_of(0, c, 8), 2);
	ok(c[0].length == 24 && c[0].value == 5, "the first record carries its value");
	ok(c[1].length == 16 && !(c[1].flags & RLOG_COUNTER_FLAG_VALUE),
	   "a counter whose value was never seen is copied as it was");
	ASSERT_EQ(counters_of(1, c, 8), 2);
	ok(c[0].length == 24 && (c[0].flags & RLOG_COUNTER_FLAG_VALUE) && c[0].value == 11 &&
	   c[0].delta == 6 && c[0].seq == 1, "seq 1 carries value 11");
	ok(c[1].value == 18 && c[1].delta == 7, "seq 2 carries value 18");
	ASSERT_EQ(got[1].size, 64);

	/* Since the last call: nothing new. */
	ngot = 0;
	rlog__output_counters_to(&o, &snap, true);
	ASSERT_EQ(ngot, 0);

	/* A gap in seq (3 is missing): unknown until the value comes again. */
	counter(&b, 1, 4, 9, false, 0);
	emit(&o, 42, 3000, &b);                  /* block 2 */
	counter(&b, 1, 5, 1, true, 40);
	counter(&b, 1, 6, 2, false, 0);
	emit(&o, 42, 4000, &b);                  /* block 3 */
	ngot = 0;
	rlog__output_counters_to(&o, &snap, true);
	ASSERT_EQ(ngot, 2);
	ASSERT_EQ_U64(got[0].base_time, 3000);
	ASSERT_EQ(counters_of(0, c, 8), 1);
	ok(c[0].length == 16 && c[0].seq == 4, "after a gap the record is copied as it was");
	ASSERT_EQ(counters_of(1, c, 8), 2);
	ok(c[0].value == 40 && c[1].value == 42 && c[1].length == 24,
	   "the value is followed again from the record that carries it");

	/* The limit.  Kept so far (values filled in): block 0 80 bytes,
	 * 1 64, 2 24, 3 64: 232.  Blocks 4 and 5 of three records, 96 bytes
	 * each, pass 400 at block 5: block 0 goes. */
	for (int k = 0; k < 2; k++) {
		counter(&b, 1, (uint16_t)(7 + 3 * k), 1, false, 0);
		counter(&b, 1, (uint16_t)(8 + 3 * k), 1, false, 0);
		counter(&b, 1, (uint16_t)(9 + 3 * k), 1, false, 0);
		emit(&o, 7, 5000 + (uint64_t)k, &b);
	}
	ASSERT_EQ_U64(o.counters.bytes, 344);
	ASSERT_EQ_U64(o.counters.first, 1);
	ngot = 0;
	rlog__output_counters_to(&o, &snap, false);
	ASSERT_EQ(ngot, 5);
	ASSERT_EQ_U64(got[0].base_time, 2000);
	ASSERT_EQ(got[4].pid, 7);
	ASSERT_EQ(counters_of(4, c, 8), 3);
	ok(c[2].value == 48 && c[2].seq == 12, "values followed across blocks: 42 + 6 = 48");

	/* Blocks 6 (32 bytes), 7 (96; seq 16 carries the value) and 8..10
	 * (96 each): the oldest go as they come; block 6 goes before any call
	 * took it, and a since-last call starts at the oldest kept, 7. */
	counter(&b, 1, 13, 1, false, 0);
	emit(&o, 7, 6000, &b);
	counter(&b, 1, 14, 1, false, 0);
	counter(&b, 1, 15, 1, false, 0);
	counter(&b, 1, 16, 1, true, 51);
	emit(&o, 7, 7000, &b);
	for (int k = 0; k < 3; k++) {
		counter(&b, 1, (uint16_t)(17 + 3 * k), 1, false, 0);
		counter(&b, 1, (uint16_t)(18 + 3 * k), 1, false, 0);
		counter(&b, 1, (uint16_t)(19 + 3 * k), 1, false, 0);
		emit(&o, 7, 8000 + (uint64_t)k, &b);
	}
	ASSERT_EQ_U64(o.counters.first, 7);
	ASSERT_EQ_U64(o.counters.bytes, 384);
	ngot = 0;
	rlog__output_counters_to(&o, &snap, true);
	ASSERT_EQ(ngot, 4);
	ASSERT_EQ_U64(got[0].base_time, 7000);
	ASSERT_EQ_U64(got[3].base_time, 8002);
	ASSERT_EQ(counters_of(3, c, 8), 3);
	ok(c[2].value == 60 && c[2].seq == 25, "seq 25: 51 + 9 = 60");
	ASSERT_EQ(got[3].size, 96);
	rlog__output_free(&o);
	return done_testing();
}
