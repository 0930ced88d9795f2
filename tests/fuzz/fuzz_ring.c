/*
 * fuzz_ring.c - libFuzzer target for the single ring's flush application
 * reading a ring (src/ring/map.c, src/ring/flush.c), the one input it must
 * treat as hostile.
 *
 * The input is a ring image, header first (at most 192 + 4096 bytes; the
 * rest of the memory is zero).  If the header passes rlog__ring_check, the
 * flush application drains it into a log file in memory (memfd), then a
 * producer writes a few records into the same ring (its offsets are the
 * input's, so the writer's checks are fuzzed too), then a second drain and
 * the end of the flush.  Whatever the bytes, nothing may crash, read or
 * write out of bounds, or hang; and the log file written must be one the
 * reader opens without finding any damage (abort() otherwise), since the
 * flush application checks every record before it writes it.
 * A TSC ring is flushed as a MONOTONIC one: the TSC's calibration would
 * sleep 20 ms per input.  Built and run by scripts/fuzz.sh.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/flush.h"
#include "ring/map.h"
#include "ringlog/reader.h"

#define MAX_RING 4096u

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static void check_file(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	if (len <= 0)
		return; /* nothing written: the header was refused before */
	void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		abort();
	struct rlog_reader *rd;
	int err = rlog_reader_open_mem(m, (size_t)len, &rd);
	if (err < 0)
		abort(); /* ring-flush wrote a file the reader refuses */
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1)
		;
	if (rlog_reader_damage_count(rd) != 0)
		abort(); /* ring-flush wrote a damaged block */
	rlog_reader_close(rd);
	munmap(m, (size_t)len);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static _Alignas(64) unsigned char mem[RLOG_RING_HEADER_SIZE + MAX_RING];
	memset(mem, 0, sizeof mem);
	memcpy(mem, d, n < sizeof mem ? n : sizeof mem);
	/* The image's own length, at least a header: a short input is a
	 * ring file cut short. */
	size_t len = n < RLOG_RING_HEADER_SIZE ? RLOG_RING_HEADER_SIZE
		     : n < sizeof mem	      ? n
						      : sizeof mem;
	struct rlog__ring_view v;
	char why[256];
	if (rlog__ring_check(mem, len, &v, why, sizeof why) < 0)
		return 0;
	if (v.tick_source == RLOG_TICK_TSC)
		v.tick_source = RLOG_TICK_MONOTONIC;
	int fd = memfd_create("fuzz_ring", 0);
	if (fd < 0)
		return 0;
	struct rlog__ring_flush f;
	if (rlog__ring_flush_init(&f, &v, fd, "fuzz") == 0) {
		rlog__ring_flush_drain(&f);
		uint64_t p[2] = { 1, 2 };
		struct rlog_ring *r = v.hdr;
		for (uint32_t i = 0; i < 4; i++)
			rlog_ring_write(r, 1024 + i, p, 4 * i, 0x1000u * i);
		rlog_ring_write_flagged(r, 2000, 7, p, 16, 0x9000u);
		rlog__ring_flush_drain(&f);
		rlog__ring_flush_finish(&f);
		rlog__ring_flush_free(&f);
		check_file(fd);
	}
	close(fd);
	return 0;
}
