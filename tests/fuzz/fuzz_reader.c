/*
 * fuzz_reader.c - libFuzzer target for the log-file reader: every input is
 * opened from memory, read to the end, and its damage list walked.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L \
 *     -Iinclude -Isrc/common -Isrc tests/fuzz/fuzz_reader.c src/reader/file.c src/reader/merge.c \
 *     src/reader/reader.c -lz -o /tmp/fuzz_reader && /tmp/fuzz_reader -max_total_time=60
 *
 * (Wiring it into CI with a seed corpus is part of the next issue.)
 */
#include <stddef.h>
#include <stdint.h>

#include "ringlog/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct rlog_reader *r;
	struct rlog_event ev;
	if (rlog_reader_open_mem(d, n, &r) < 0)
		return 0;
	rlog_reader_set_flags(r, n & 1 ? RLOG_READER_TIME_SYNC : 0);
	volatile uint8_t sink = 0;
	while (rlog_reader_next(r, &ev) == 1)
		for (size_t i = 0; i < ev.length; i++)
			sink ^= ((const uint8_t *)ev.payload)[i];
	for (size_t i = 0; i < rlog_reader_damage_count(r); i++) {
		struct rlog_damage dm;
		rlog_reader_damage(r, i, &dm);
	}
	rlog_reader_close(r);
	return 0;
}
