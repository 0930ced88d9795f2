/*
 * fuzz_drain.c - libFuzzer target for the daemon's reading of a session
 * region, the one input it must treat as hostile (src/daemon/drain.c).
 *
 * A small region (4 buffers of 4 KiB) is laid out in ordinary memory; the
 * input overwrites the buffer descriptors, the producer slots and the
 * buffers' bytes; then the daemon runs its passes (FULL, FLUSH, FINAL) and
 * its final loss reports, writing the log to /dev/null.  Whatever the bytes,
 * it must not crash, read or write out of bounds, or hang.
 * Built and run by scripts/fuzz.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/drain.h"
#include "daemon/logfile.h"

#define BUFS 4
#define BUFSZ 4096u
#define SLOTS (BUFS + 64)

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static struct rlog_shm_header hdr;
	static struct rlog_shm_desc desc[BUFS];
	static struct rlog_shm_slot slots[SLOTS];
	static struct rlog_shm_proc procs[SLOTS]; /* all FREE: no process entries */
	static _Atomic uint64_t free_bits[1];
	static uint8_t buffers[BUFS * BUFSZ];
	memset(&hdr, 0, sizeof hdr);
	memset(desc, 0, sizeof desc);
	memset(slots, 0, sizeof slots);
	memset(procs, 0, sizeof procs);
	memset(buffers, 0, sizeof buffers);
	free_bits[0] = 0;

	/* The input, in order: descriptors, slots, buffer bytes. */
	size_t k = n < sizeof desc ? n : sizeof desc;
	memcpy(desc, d, k);
	d += k, n -= k;
	k = n < sizeof slots ? n : sizeof slots;
	memcpy(slots, d, k);
	d += k, n -= k;
	k = n < sizeof buffers ? n : sizeof buffers;
	memcpy(buffers, d, k);
	for (int i = 0; i < SLOTS; i++)
		slots[i].pid = 0; /* no kill(2) on fuzzed pids */

	struct rlog__region r = {
		.hdr = &hdr, .desc = desc, .slots = slots, .procs = procs, .free_bits = free_bits,
		.buffers = buffers, .size = 0, .buffer_size = BUFSZ, .buffer_count = BUFS,
		.slot_count = SLOTS, .free_words = 1, .high_water = 3,
	};
	int fd = open("/dev/null", O_WRONLY);
	struct rlog_log_marker m = { .tick_freq_hz = 1000000000u, .tick_source = RLOG_TICK_MONOTONIC };
	struct rlog__logfile lf;
	struct rlog__drain dr;
	if (fd < 0 || rlog__logfile_open(&lf, fd, BUFSZ, &m, 1, 1) < 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (rlog__drain_init(&dr, &r, &lf, RLOG_TICK_MONOTONIC) == 0) {
		rlog__drain_pass(&dr, RLOG_DRAIN_FULL);
		rlog__drain_pass(&dr, RLOG_DRAIN_FLUSH);
		rlog__drain_pass(&dr, RLOG_DRAIN_FINAL);
		rlog__drain_final_losses(&dr);
		rlog__logfile_flush(&lf);
		rlog__drain_publish(&dr);
		rlog__drain_free(&dr);
	}
	rlog__logfile_close(&lf);
	close(fd);
	return 0;
}
