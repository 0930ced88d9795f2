/*
 * loss.c - the DATA_LOSS record (loss.h).
 */
#include "format/loss.h"

#include <stdbool.h>
#include <string.h>

#include "record.h"

uint32_t rlog__loss_record(uint8_t *out, uint64_t time, const void *pl, uint32_t len)
{
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_DATA_LOSS, len, true), (uint32_t)time };
	memcpy(out, hw, 8);
	memcpy(out + 8, pl, len);
	return 8 + len;
}
