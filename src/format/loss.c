/*
 * loss.c - the DATA_LOSS record (loss.h).
 */
#include "format/loss.h"

#include <stdbool.h>
#include <string.h>

#include "format/block.h"
#include "record.h"

uint32_t rlog__loss_record(uint8_t *out, uint64_t time, const void *pl, uint32_t len)
{
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_DATA_LOSS, len, true), (uint32_t)time };
	memcpy(out, hw, 8);
	memcpy(out + 8, pl, len);
	return 8 + len;
}

uint32_t rlog__loss_block(uint8_t *blk, unsigned major, uint64_t seq, uint64_t time,
			  uint32_t cause, uint64_t blocks, uint64_t events, uint64_t bytes)
{
	struct rlog_data_loss_blocks dl = {
		.loss = { .events = events, .bytes = bytes, .cause = cause },
		.blocks = blocks,
	};
	uint32_t n = rlog__loss_record(blk + RLOG__BLOCK_HDR_SIZE, time, &dl, sizeof dl);
	struct rlog_block_header h;
	rlog__block_header_make(&h, major, RLOG_BLOCK_FLAG_DAEMON, seq, 0, 0, time,
				blk + RLOG__BLOCK_HDR_SIZE, n, 1);
	rlog__block_encode(blk, &h);
	return n;
}
