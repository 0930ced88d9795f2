/*
 * fuzz_drain.c - libFuzzer target for the daemon's reading of a session
 * region, the one input it must treat as hostile (src/daemon/drain.c).
 *
 * A small region (4 buffers of 4 KiB, room for 8) is laid out in ordinary
 * memory; the input overwrites the buffer descriptors, the producer slots,
 * the process entries, the counter table, the header's category names and
 * pending --enable names, the free bitmap and the buffers' bytes; then the
 * daemon runs its passes (FULL, FLUSH, FINAL), grows the pool, enables
 * pending categories, reaps process entries, samples the counters (the
 * application's and the /proc figures, from the fuzzed counter mask and
 * period) and reports the final losses, writing the log through the
 * daemon's output (a sequential file sink) to /dev/null, and gives back
 * what each pass drained (commit).  The first byte chooses overwrite mode,
 * a flight recorder (no sink), and a snapshot request (its flags from the
 * input, written to /dev/null) served between passes.  Whatever the bytes,
 * it must not crash, read or write out of bounds, or hang.
 * Built and run by scripts/fuzz.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/categories.h"
#include "daemon/counters.h"
#include "daemon/drain.h"
#include "daemon/pool.h"
#include "daemon/sink_file.h"
#include "daemon/snapshot.h"

#define BUFS 4     /* MinimumBuffers */
#define CAP 8      /* capacity */
#define BUFSZ 4096u
#define SLOTS (BUFS + 64)

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static void marker(void *arg, struct rlog_log_marker *m)
{
	(void)arg;
	memset(m, 0, sizeof *m);
	m->tick_freq_hz = 1000000000u;
	m->tick_source = RLOG_TICK_MONOTONIC;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static struct rlog_shm_header hdr;
	static struct rlog_shm_desc desc[CAP];
	static struct rlog_shm_slot slots[SLOTS];
	static struct rlog_shm_proc procs[SLOTS];
	static struct rlog_shm_counter counters[RLOG_SHM_COUNTERS];
	static _Atomic uint64_t free_bits[1];
	/* Words, as the daemon reads them (rlog__load32_once): aligned and of
	 * that type, as a region's pages are. */
	static uint32_t buffer_words[CAP * BUFSZ / 4];
	uint8_t *buffers = (uint8_t *)buffer_words;
	static struct rlog_shm_ctl ctl;
	memset(&ctl, 0, sizeof ctl);
	uint8_t opts = 0;
	if (n > 0) {
		opts = d[0];
		d++, n--;
	}
	memset(&hdr, 0, sizeof hdr);
	memset(desc, 0, sizeof desc);
	memset(slots, 0, sizeof slots);
	memset(procs, 0, sizeof procs);
	memset(counters, 0, sizeof counters);
	memset(buffer_words, 0, sizeof buffer_words);
	free_bits[0] = 0;
	hdr.max_buffers = CAP;
	hdr.number_of_buffers = BUFS;
	hdr.enable_mask = 1;

	/* The input, in order: descriptors, slots, process entries, the
	 * category table and pending names, the free bitmap, buffer bytes. */
#define TAKE(dst, len)                                  \
	do {                                             \
		size_t k_ = n < (len) ? n : (len);       \
		memcpy((dst), d, k_);                    \
		d += k_, n -= k_;                        \
	} while (0)
	TAKE(desc, sizeof desc);
	TAKE(slots, sizeof slots);
	TAKE(procs, sizeof procs);
	TAKE(counters, sizeof counters);
	TAKE((uint8_t *)&hdr + offsetof(struct rlog_shm_header, counter_mask), 12);
	TAKE((uint8_t *)&hdr + offsetof(struct rlog_shm_header, categories),
	     sizeof hdr - offsetof(struct rlog_shm_header, categories));
	TAKE(free_bits, sizeof free_bits);
	TAKE(&ctl.flags, sizeof ctl.flags);
	TAKE(buffers, sizeof buffer_words);
#undef TAKE
	for (int i = 0; i < SLOTS; i++) {
		slots[i].pid = 0; /* no /proc or kill(2) on fuzzed pids */
		slots[i].claimer = 0;
		procs[i].pid = 0;
		procs[i].claimer = 0;
	}
	/* The counters' owners: none, this process, or nonsense above 2^31
	 * (never a fuzzed pid that /proc or kill(2) would be asked about);
	 * the sources: the application's and this process's /proc figures
	 * (no perf_event_open on every input). */
	for (int i = 0; i < RLOG_SHM_COUNTERS; i++) {
		uint32_t p = counters[i].pid;
		counters[i].pid = p & 1 ? (uint32_t)getpid() : p & 2 ? UINT32_MAX - (p & 0xffff) : 0;
	}
	hdr.counter_mask &= (UINT64_C(1) << RLOG_CTR_BIT_PERF) - 1;

	struct rlog__region r = {
		.hdr = &hdr, .desc = desc, .slots = slots, .procs = procs, .counters = counters,
		.free_bits = free_bits,
		.buffers = buffers, .size = 0, .buffer_size = BUFSZ, .buffer_count = CAP,
		.slot_count = SLOTS, .free_words = 1, .min_buffers = BUFS, .high_water_pct = 70,
		.ctl = &ctl, .overwrite = (opts & 1) != 0,
	};
	int fd = open("/dev/null", O_WRONLY);
	struct rlog__file_opts fo = { .fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = BUFSZ,
				      .pid = 1, .tid = 1, .marker = marker };
	struct rlog__output out;
	struct rlog__sink *fs;
	struct rlog__drain dr;
	rlog__output_init(&out, RLOG__META_LIMIT);
	if (fd < 0 || rlog__sink_file_open(&fo, &fs) < 0) {
		if (fd >= 0)
			close(fd);
		rlog__output_free(&out);
		return 0;
	}
	if (opts & 2)
		fs->ops->free(fs); /* a flight recorder: no sink */
	else
		rlog__output_add(&out, fs, true);
	if (rlog__drain_init(&dr, &r, &out, RLOG_TICK_MONOTONIC) == 0) {
		struct rlog__snap_state snap;
		rlog__snap_init(&snap, &dr, 1, 1);
		struct rlog__pending pending = { UINT32_MAX, 0 };
		rlog__categories_resolve(&r, &pending);
		rlog__pool_grow(&r, &dr.pool);
		rlog__drain_pass(&dr, RLOG_DRAIN_FULL);
		rlog__output_flush(&out);
		rlog__drain_commit(&dr);
		if (opts & 4) {
			ctl.kind = RLOG_CTL_SNAPSHOT;
			ctl.event_id = 1024;
			ctl.flags |= RLOG_SNAP_FORCE;
			snprintf(ctl.path, sizeof ctl.path, "/dev/null");
			ctl.req_seq = snap.served + 1;
			rlog__snap_poll(&snap, &dr, 0);
			rlog__snap_poll(&snap, &dr, UINT64_C(1) << 62);
		}
		rlog__procs_check_dead(&dr);
		rlog__drain_pass(&dr, RLOG_DRAIN_FLUSH);
		struct rlog__counters *ctr;
		if (rlog__counters_open(&r, RLOG_TICK_MONOTONIC, rlog__counters_to_output, &out,
					&ctr) == 0) {
			rlog__counters_tick(ctr, 1);
			rlog__counters_pass(ctr);
			rlog__counters_close(ctr);
		}
		rlog__output_flush(&out);
		rlog__drain_commit(&dr);
		rlog__drain_pass(&dr, RLOG_DRAIN_FINAL);
		rlog__output_flush(&out);
		rlog__drain_commit(&dr);
		rlog__drain_final_losses(&dr);
		rlog__output_flush(&out);
		rlog__drain_commit(&dr);
		rlog__snap_discard(&dr);
		rlog__drain_publish(&dr);
		rlog__snap_free(&snap);
		rlog__drain_free(&dr);
	}
	rlog__output_finish(&out, NULL);
	rlog__output_free(&out);
	return 0;
}
