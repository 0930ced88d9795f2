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

#include "ringlog/reader.h"

/*
 * Up to max events into ev[0..).  Returns how many (0 at the end), or a
 * negative errno as rlog_reader_next() would have returned it; an error
 * met after some events of the batch is returned by the next call.
 */
int rlog__reader_next_batch(struct rlog_reader *r, struct rlog_event *ev, size_t max);

#endif
