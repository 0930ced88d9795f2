/*
 * writer.h - an output's writer thread, for the converters (src/convert/):
 * it writes each full buffer while the caller fills the next.  Writing a
 * conversion's output (the kernel's copy into the page cache, the file
 * system's allocation) takes a large share of its time, which a second
 * core then overlaps with the conversion (docs/PERFORMANCE.md,
 * "Converting").  One buffer is written at a time, in the order handed
 * over, each whole: the bytes are those of writing in line.
 */
#ifndef RLOG_CONVERT_WRITER_H
#define RLOG_CONVERT_WRITER_H

#include "buf.h"

struct rlog__writer;

/* A writer whose spare buffer holds cap bytes, its thread started; NULL
 * if it cannot be (no memory, no thread: the caller writes in line). */
struct rlog__writer *rlog__writer_new(size_t cap);

/* Waits until the writer has written everything handed to it.  Returns
 * the first write's error (-errno), or 0. */
int rlog__writer_wait(struct rlog__writer *w);

/*
 * Hands b's bytes over, to be written to fd after those handed before;
 * b gets the writer's spare buffer, empty.  Waits for the writer to be
 * idle first.  Returns rlog__writer_wait's answer (nothing handed over if
 * it is an error).
 */
int rlog__writer_hand(struct rlog__writer *w, struct rlog__buf *b, int fd);

/* Stops the thread (after what was handed over) and frees the writer. */
void rlog__writer_free(struct rlog__writer *w);

#endif
