/*
 * fuzz_chunk.c - libFuzzer target for a chunk as a collector receives it
 * from a message log (src/format/chunk.c): decoded, and, if it decodes,
 * its blocks walked.  Whatever the bytes, no crash, no read out of bounds.
 * scripts/fuzz.sh builds and runs it from tests/fuzz/corpus/chunk/ (its seed
 * is the chunk tests/test_format_chunk.c builds, written where
 * RINGLOG_CHUNK_SEED says).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/chunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	/* A copy of exactly n bytes: a read past them is caught. */
	uint8_t *p = malloc(n ? n : 1);
	if (!p)
		return 0;
	memcpy(p, d, n);
	struct rlog__chunk c;
	char err[200];
	if (rlog__chunk_decode(p, n, &c, err, sizeof err) == 0) {
		size_t off = 0, size;
		const uint8_t *b;
		while (rlog__chunk_next_block(&c, &off, &b, &size) == 1)
			sink ^= b[size - 1];
		sink ^= (uint8_t)c.host_name[0] ^ (uint8_t)c.session_name[0];
	} else {
		sink ^= (uint8_t)err[0];
	}
	free(p);
	return 0;
}
