/*
 * fuzz_reader.c - libFuzzer target for the log-file reader: every input is
 * opened from memory with a block visitor that walks each block's records,
 * read to the end in time order (for half of the inputs with the merge's
 * queue bound lowered to 0..3 blocks, so that threads find their blocks by
 * their own hops) with every event's schema, fields, names and ringlog
 * record (LOG_MARKER, DATA_LOSS, TIME_SYNC, RAW_*, COUNTER, COUNTER_NAME)
 * looked up and decoded,
 * and its damage list walked; then opened again counting, and every row of
 * the totals read; and for a quarter of the inputs read again through the
 * reader's runs (reader/batch.h, what the Perfetto converter reads with:
 * each run's records taken from the block up to a limit), which must give
 * exactly the events rlog_reader_next() gives (a difference aborts).
 * scripts/fuzz.sh builds and runs it from tests/fuzz/corpus/reader/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringlog/reader.h"
#include "reader/batch.h"
#include "reader/internal.h" /* rlog__merge_queue_max: the merge's bounded queues */

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static volatile uint8_t sink;

/* The visitor reads every byte it is handed. */
static int visit(void *arg, const struct rlog_block *b)
{
	(void)arg;
	const uint8_t *p = b->data;
	for (uint32_t i = 0; i < b->size; i++)
		sink ^= p[i];
	sink ^= (uint8_t)(b->first_ticks ^ b->last_ticks ^ b->record_count);
	return 0;
}

static bool same_event(const struct rlog_event *a, const struct rlog_event *b)
{
	return a->ticks == b->ticks && a->time_ns == b->time_ns && a->pid == b->pid &&
	       a->tid == b->tid && a->id == b->id && a->flag == b->flag && a->length == b->length &&
	       a->flagged == b->flagged && a->has_time == b->has_time &&
	       a->from_daemon == b->from_daemon &&
	       (a->length == 0 || memcmp(a->payload, b->payload, a->length) == 0) &&
	       a->offset == b->offset && a->size == b->size && a->block_offset == b->block_offset;
}

/* The runs against rlog_reader_next, on two readers of the same bytes;
 * up to limit records of a run taken from its block. */
static void runs(const uint8_t *d, size_t n, uint32_t limit)
{
	struct rlog_reader *one, *rr;
	struct rlog_event ev, e;
	struct rlog__run run;
	if (rlog_reader_open_mem(d, n, &one) < 0)
		return;
	if (rlog_reader_open_mem(d, n, &rr) < 0)
		__builtin_trap();
	int got;
	while ((got = rlog__reader_run(rr, &run)) > 0) {
		if (!run.head.flagged && run.head.id == RLOG_ID_COUNTER) {
			if (rlog__reader_next_batch(rr, &e, 1) != 1 || rlog_reader_next(one, &ev) != 1 ||
			    !same_event(&ev, &e))
				__builtin_trap();
			continue;
		}
		if (rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &run.head))
			__builtin_trap();
		uint32_t used = 0, k = 0, hw, fw, size;
		uint64_t cur = run.cursor, nc = cur;
		while (k < limit && used < run.avail &&
		       (size = rlog__run_next(&run, used, &nc, &hw, &fw)) != 0) {
			rlog__run_event(&run, used, size, nc, rlog_reader_time_ns(rr, nc), hw, fw, &e);
			if (rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &e))
				__builtin_trap();
			used += size;
			cur = nc;
			k++;
		}
		if (rlog__reader_run_take(rr, &run, used, cur, k) < 0)
			break;
	}
	if (got == 0 && rlog_reader_next(one, &ev) != 0)
		__builtin_trap();
	rlog_reader_close(one);
	rlog_reader_close(rr);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if ((n & 12) == 12)
		runs(d, n, (uint32_t)(n >> 4) % 4 == 3 ? UINT32_MAX : (uint32_t)(n >> 4) % 4);
	struct rlog_reader *r;
	struct rlog_event ev;
	if (rlog_reader_open_mem_visit(d, n, visit, NULL, &r) < 0)
		return 0;
	rlog_reader_set_flags(r, n & 1 ? RLOG_READER_TIME_SYNC : 0);
	if (n & 2) /* queue at most 0 to 3 blocks: threads hop on their own */
		rlog__merge_queue_max(r, (n >> 2) & 3);
	while (rlog_reader_next(r, &ev) == 1) {
		for (size_t i = 0; i < ev.length; i++)
			sink ^= ((const uint8_t *)ev.payload)[i];
		const struct rlog_schema *s = rlog_reader_schema(r, &ev);
		if (s) {
			int nf = rlog_event_field_count(s, &ev);
			size_t off = 0;
			struct rlog_value v;
			for (int i = 0; i < nf; i++) {
				if (rlog_event_field(s, &ev, (unsigned)i, &off, &v) != 1)
					break;
				for (size_t k = 0; v.bytes && k < v.len; k++)
					sink ^= v.bytes[k];
			}
			sink ^= (uint8_t)s->name[0];
		}
		const char *tn = rlog_reader_thread_name(r, ev.pid, ev.tid);
		const char *pn = rlog_reader_process_name(r, ev.pid);
		sink ^= (uint8_t)((tn ? tn[0] : 0) ^ (pn ? pn[0] : 0));
		sink ^= (uint8_t)rlog_reader_time_ns(r, ev.ticks);
		struct rlog_marker m;
		struct rlog_loss l;
		uint64_t t;
		struct rlog_value v;
		if (rlog_event_marker(&ev, &m) == 0)
			sink ^= (uint8_t)(m.session_name[0] ^ m.tick_freq_hz);
		if (rlog_event_loss(&ev, &l) == 0)
			sink ^= (uint8_t)(l.events ^ l.cause);
		if (rlog_event_time_sync(&ev, &t) == 0)
			sink ^= (uint8_t)t;
		struct rlog_counter k;
		struct rlog_counter_desc kd;
		if (rlog_event_counter(r, &ev, &k) == 0)
			sink ^= (uint8_t)(k.delta ^ k.value ^ k.seq ^ (k.name ? k.name[0] : 0));
		if (rlog_event_counter_name(&ev, &kd) == 0)
			sink ^= (uint8_t)(kd.name[kd.name_len - 1] ^ kd.counter_id);
		int nr = rlog_event_raw_count(&ev);
		for (int i = 0; i < nr && rlog_event_raw_value(&ev, (unsigned)i, &v) == 1; i++)
			sink ^= (uint8_t)v.v.u;
	}
	for (size_t i = 0; i < rlog_reader_damage_count(r); i++) {
		struct rlog_damage dm;
		rlog_reader_damage(r, i, &dm);
	}
	uint64_t first;
	sink ^= (uint8_t)rlog_reader_bad_schemas(r, &first);
	rlog_reader_close(r);

	struct rlog_count c;
	if (rlog_reader_open_mem_count(d, n, &r) < 0 || rlog_reader_count(r, &c) < 0)
		return 0;
	struct rlog_count_id ci;
	struct rlog_count_thread ct;
	struct rlog_count_loss cl;
	for (size_t i = 0; i < c.ids && rlog_reader_count_id(r, i, &ci) == 0; i++)
		sink ^= (uint8_t)ci.events;
	for (size_t i = 0; i < c.threads && rlog_reader_count_thread(r, i, &ct) == 0; i++)
		sink ^= (uint8_t)ct.bytes;
	for (size_t i = 0; i < c.causes && rlog_reader_count_loss(r, i, &cl) == 0; i++)
		sink ^= (uint8_t)cl.records;
	struct rlog_count_counter cc;
	for (size_t i = 0; rlog_reader_count_counter(r, i, &cc) == 0; i++)
		sink ^= (uint8_t)(cc.total ^ cc.records ^ (cc.name ? cc.name[0] : 0));
	rlog_reader_close(r);
	return 0;
}
