/*
 * batch.h - the reader's internal batch path, for the converters
 * (src/convert/): the events rlog_reader_next() would give, several per
 * call, with no change to the public interface.
 *
 * A converter spends most of a trace's time per event; a call per event
 * (its argument checks, the merge's entry) is a sizeable part of what the
 * reader costs.  A batch is what as many rlog_reader_next() calls give,
 * in the same order, and it ends at a COUNTER record: the reader follows
 * a counter's value as it hands the record out (rlog_event_counter()
 * answers for the latest), so the caller converts that record before the
 * reader reads further.  Everything else the caller asks the reader
 * about an event (its schema, its thread's and process's names) is fixed
 * by the open pass, and an event's payload points into the file, so the
 * events of a batch stay valid while the caller works through them.
 */
#ifndef RLOG_READER_BATCH_H
#define RLOG_READER_BATCH_H

#include <stddef.h>

#include "record.h"
#include "ringlog/reader.h"

/*
 * Up to max events into ev[0..).  Returns how many (0 at the end), or a
 * negative errno as rlog_reader_next() would have returned it; an error
 * met after some events of the batch is returned by the next call.
 */
int rlog__reader_next_batch(struct rlog_reader *r, struct rlog_event *ev, size_t max);

/*
 * A run: the event rlog_reader_next() would give next (head), and the
 * records after it in its block, which come next in the merge's order as
 * long as they are before (bound_ticks, bound_off), the least head of the
 * other threads (merge.c).  A converter takes them straight from the
 * block, with no event struct and no call per event: each record it takes
 * must pass rlog__record_plain (src/common/record.h; or, for a FLAGGED
 * record, rlog__record_flagged_plain), the same checks the reader makes
 * of it (the open pass validated the block; these say it has not changed
 * since), and its time and offset must be before the bound
 * (rlog__run_next).  Any other record ends what it takes; the reader
 * reads it the general way.
 */
struct rlog__run {
	struct rlog_event head;
	const uint8_t *p;      /* the records after head, avail bytes of them */
	uint32_t avail;
	uint64_t cursor;       /* the thread's time cursor after head (ticks) */
	uint64_t bound_ticks;  /* a record at ticks T, p + k: in the run if */
	uint64_t bound_k;      /* T < bound_ticks, or T == bound_ticks and k < bound_k */
	uint64_t foff;         /* the file offset of p (as rlog_event.offset) */
};

/*
 * The record at run->p + used (used < run->avail) if the run takes it:
 * rlog__record_plain or rlog__record_flagged_plain accepts it and it is
 * before the bound.  Returns its size, *cursor advanced to its time, *hw
 * its header word, *fw its flag word (0 if not FLAGGED); or 0 (*cursor
 * untouched): the run ends before it.
 */
static inline uint32_t rlog__run_next(const struct rlog__run *run, uint32_t used,
				      uint64_t *cursor, uint32_t *hw, uint32_t *fw)
{
	const uint8_t *q = run->p + used;
	uint64_t nc = *cursor;
	*fw = 0;
	if (run->avail - used < 4) /* never in a walk of whole records: cheap to be sure */
		return 0;
	uint32_t size = rlog__record_plain(q, run->avail - used, &nc, hw);
	if (!size && !(size = rlog__record_flagged_plain(q, run->avail - used, &nc, hw, fw)))
		return 0;
	if (nc > run->bound_ticks || (nc == run->bound_ticks && used >= run->bound_k))
		return 0;
	*cursor = nc;
	return size;
}

/* The record rlog__run_next took at run->p + used (size bytes, at ticks,
 * header word hw, flag word fw) as the event rlog_reader_next() gives;
 * time_ns is rlog_reader_time_ns(ticks). */
static inline void rlog__run_event(const struct rlog__run *run, uint32_t used, uint32_t size,
				   uint64_t ticks, int64_t time_ns, uint32_t hw, uint32_t fw,
				   struct rlog_event *ev)
{
	bool timed = rlog__hdr_has_time(hw);
	*ev = (struct rlog_event){
		.ticks = ticks,
		.time_ns = time_ns,
		.pid = run->head.pid,
		.tid = run->head.tid,
		.id = (uint16_t)(fw ? fw & 0xffffu : rlog__hdr_id(hw)),
		.flag = (uint16_t)(fw >> 16),
		.length = (uint16_t)rlog__hdr_length(hw),
		.flagged = fw != 0,
		.has_time = timed,
		.from_daemon = run->head.from_daemon,
		.payload = run->p + used + (timed ? 8 : 4) + (fw ? 4 : 0),
		.offset = run->foff + used,
		.size = size,
		.block_offset = run->head.block_offset,
	};
}

/*
 * The run that starts with the next event, without taking it (a peek).
 * Returns 1, 0 at the end, or a negative errno as rlog_reader_next()
 * would have returned it.  avail is 0 in a metadata block.
 */
int rlog__reader_run(struct rlog_reader *r, struct rlog__run *run);

/*
 * Takes run's head and the records in the first used bytes of run->p,
 * events of them (counted for the pacing of the reader's page drops),
 * after which the thread's time cursor is cursor (the time of the last).
 * head must not be a COUNTER record (batch.h's rule: the reader follows
 * its value; take it with rlog__reader_next_batch).  Returns 0, or
 * -ENOMEM (a damaged region found next could not be recorded).
 */
int rlog__reader_run_take(struct rlog_reader *r, const struct rlog__run *run, uint32_t used,
			  uint64_t cursor, uint32_t events);

/*
 * The schema of events (pid, id) when it has one version in the file,
 * and *from the time it is in force from: rlog_reader_schema() gives it
 * for every event (pid, id) after *from ticks.  NULL otherwise (no
 * schema, or several: ask rlog_reader_schema()).
 */
const struct rlog_schema *rlog__reader_schema_one(struct rlog_reader *r, uint32_t pid,
						  uint16_t id, uint64_t *from);

#endif
