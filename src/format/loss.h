/*
 * loss.h - the DATA_LOSS record, laid out in one place (docs/FORMAT.md,
 * "DATA_LOSS"): a timestamped record of ID 2 whose payload is struct
 * rlog_data_loss (24 bytes), rlog_data_loss_blocks (32: the REAL_TIME
 * cause's block count) or rlog_data_loss_range (48: the OVERWRITTEN
 * cause's blocks and time range).  The daemon's drain, the single ring's
 * flush application and the live stream's framing write it; the reader
 * decodes it into struct rlog_loss (src/reader/records.c).
 */
#ifndef RLOG_FORMAT_LOSS_H
#define RLOG_FORMAT_LOSS_H

#include <stdint.h>

#include "ringlog/format.h"

/* The longest DATA_LOSS record: header, timestamp, the 48-byte payload. */
#define RLOG__LOSS_RECORD_MAX (8 + sizeof(struct rlog_data_loss_range))

/* Lays out a DATA_LOSS record at out (RLOG__LOSS_RECORD_MAX bytes): its
 * header with the timestamp (the low 32 bits of time), then the len bytes
 * of payload at pl (struct rlog_data_loss first; len 24, 32 or 48).
 * Returns the record's size, 8 + len. */
uint32_t rlog__loss_record(uint8_t *out, uint64_t time, const void *pl, uint32_t len);

/* Lays out at blk (48 + RLOG__LOSS_RECORD_MAX bytes) a daemon block (pid
 * 0, tid 0, base time time, number seq, format major major) holding one
 * DATA_LOSS of cause cause with the block count (Length 32, struct
 * rlog_data_loss_blocks).  Returns the record's size (the block is 48
 * bytes more). */
uint32_t rlog__loss_block(uint8_t *blk, unsigned major, uint64_t seq, uint64_t time,
			  uint32_t cause, uint64_t blocks, uint64_t events, uint64_t bytes);

#endif
